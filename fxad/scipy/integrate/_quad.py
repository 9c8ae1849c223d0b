"""scipy.integrate.quad, differentiable in its limits (the fundamental theorem of calculus)
and in everything passed through `args` or closed over by the integrand (differentiation
under the integral sign: the derivative is again an integral, computed by SciPy's adaptive
quadrature, `quad_vec`, of the integrand's Jacobian). Because that integral is computed by
the same differentiable core, derivatives of every order work, and forward and reverse mode
use the same numbers (the derivative integral is a residual of a dot product)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import scipy.integrate

from ... import numpy as fnp
from ...api import jacfwd
from ...api.callback import ShapeDtypeStruct, pure_callback
from ...api.common import _leaf
from ...core import ShapedArray, Tracer, get_aval, trace_stack
from ...custom_derivatives import custom_jvp
from ...errors import ConcretizationError, FxadValueError, TracerArrayConversionError
from ...ir.codegen import compiled_for
from ...ir.intern import intern
from ...ir.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from ...ir.staging import stage
from ._odecore import carries_tangent
from ...tree_util import tree_flatten, tree_unflatten


@dataclass(frozen=True)
class _Config:
    epsabs: float
    epsrel: float
    limit: int
    points: tuple | None


def _integrate(cfg, fj, scalar, a, b, params):
    """(∫_a^b f, abserr) on concrete values: quad for a scalar integrand, quad_vec else."""
    run = compiled_for(fj)
    a, b = float(a), float(b)
    if scalar:
        def f(x):
            return float(run(np.float64(x), *params)[0][0])
        val, err = scipy.integrate.quad(f, a, b, epsabs=cfg.epsabs, epsrel=cfg.epsrel,
                                        limit=cfg.limit, points=cfg.points)
        return np.array([val]), np.float64(err)

    def fv(x):
        return np.asarray(run(np.float64(x), *params)[0], dtype=np.float64)
    val, err = scipy.integrate.quad_vec(fv, a, b, epsabs=cfg.epsabs, epsrel=cfg.epsrel,
                                        points=cfg.points)
    return np.asarray(val, dtype=np.float64), np.float64(err)


def _nonzero(t):
    return isinstance(t, Tracer) or bool(np.any(np.asarray(t) != 0))


def integral(fj, cfg, scalar, a, b, params):
    """(∫_a^b f(x, *params) dx, abserr) for f staged as `fj`: (x, *params) -> [(k,)]."""
    key = ("integral", cfg, scalar)
    fn = fj.cache.get(key)
    if fn is None:
        fn = fj.cache[key] = _integral_fn(fj, cfg, scalar)
    return fn(a, b, *params)


def _integral_fn(fj, cfg, scalar):
    k = fj.out_avals[0].shape[0]

    def primal(a, b, *params):
        out = (ShapeDtypeStruct((k,), np.float64), ShapeDtypeStruct((), np.float64))
        return list(pure_callback(lambda a_, b_, *p: _integrate(cfg, fj, scalar, a_, b_, p),
                                  out, a, b, *params, vmap_method="sequential"))

    fn = custom_jvp(primal)

    @fn.defjvp
    def fn_jvp(primals, tangents):
        a, b, *params = primals
        da, db, *dps = tangents
        val, err = fn(*primals)
        tan = fnp.zeros_like(val)
        for lim, d, sign in ((b, db, 1.0), (a, da, -1.0)):
            if _nonzero(d):  # the fundamental theorem (an infinite limit has no derivative)
                fin = fnp.isfinite(lim)
                at = eval_jaxpr(fj.jaxpr, fj.consts, fnp.where(fin, lim, 0.0), *params)[0]
                tan = tan + sign * fnp.where(fin, at, 0.0) * d
        mask = tuple(carries_tangent(p, t, "quad") for p, t in zip(params, dps))
        if any(mask):  # under the integral sign: G = ∫ ∂f/∂p dx, the tangent G · dp
            gj = _jacobian_integrand(fj, mask)
            G, _ = integral(gj, cfg, False, a, b, params)
            off = 0
            for p, d, m in zip(params, dps, mask):
                if m:
                    size = math.prod(map(int, get_aval(p).shape))
                    block = fnp.reshape(G[off * k:(off + size) * k], (size, k)).T
                    tan = tan + block @ fnp.ravel(d).astype(np.float64)
                    off += size
        return [val, err], [tan, fnp.zeros_like(err)]
    return fn


def _jacobian_integrand(fj, mask):
    """(x, *params) -> [∂f/∂p for the params in `mask`, raveled and concatenated]: the
    Jacobian blocks (k, size_p), flattened in order."""
    key = ("integrand jacobian", mask)
    hit = fj.cache.get(key)
    if hit is None:
        k = fj.out_avals[0].shape[0]
        idx = [i for i, m in enumerate(mask) if m]

        def g(x, *params):
            def f(*act):
                p = list(params)
                for i, v in zip(idx, act):
                    p[i] = v
                return eval_jaxpr(fj.jaxpr, fj.consts, x, *p)[0]
            jacs = jacfwd(f, argnums=tuple(range(len(idx))))(*[params[i] for i in idx])
            return [fnp.concatenate([fnp.reshape(j, (k, -1)).astype(np.float64)
                                     for j in jacs], axis=1).T.reshape(-1)]
        hit = fj.cache[key] = intern(stage(g, fj.in_avals, name="integrand jacobian"))
    return hit


def _stage_integrand(func, leaves, tree):
    def flat(x, *a):
        out = fnp.asarray(func(x, *tree_unflatten(tree, list(a))))
        if out.shape != ():
            raise FxadValueError(f"quad: the integrand must return a scalar, got shape "
                                 f"{out.shape}")
        return [fnp.reshape(out, (1,)).astype(np.float64)]
    avals = [ShapedArray((), np.float64)] + [ShapedArray(get_aval(x).shape, get_aval(x).dtype)
                                             for x in leaves]
    closed = stage(flat, avals, name="quad integrand")
    j = closed.jaxpr
    return intern(ClosedJaxpr(Jaxpr([], j.invars + j.constvars, j.eqns, j.outvars), [])), \
        list(closed.consts)


def quad(func: Callable, a: Any, b: Any, args: Any = (), full_output: int = 0,
         epsabs: float = 1.49e-08, epsrel: float = 1.49e-08, limit: int = 50,
         points: Any = None, weight: Any = None, wvar: Any = None, wopts: Any = None,
         maxp1: int = 50, limlst: int = 50, complex_func: bool = False) -> tuple:
    """scipy.integrate.quad: (∫_a^b func(x, *args) dx, abserr), differentiable in a, b and
    args (and what func closes over). Derivatives are integrals computed to the same
    tolerances. Weighted, complex and full_output forms are not supported."""
    if weight is not None or wvar is not None or wopts is not None:
        raise FxadValueError("quad: weight functions are not supported; multiply the "
                             "integrand by the weight instead")
    if complex_func:
        raise FxadValueError("quad: complex integrands are not supported; integrate the real "
                             "and imaginary parts separately")
    if full_output:
        raise FxadValueError("quad: full_output is not supported; call scipy.integrate.quad "
                             "directly for its diagnostics")
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    leaves, tree = tree_flatten(args)
    leaves = [_leaf(x) for x in leaves]
    cfg = _Config(float(epsabs), float(epsrel), int(limit),
                  None if points is None else tuple(np.ravel(points).tolist()))
    try:
        fj, consts = _stage_integrand(func, leaves, tree)
    except (ConcretizationError, TracerArrayConversionError):
        if trace_stack() or any(isinstance(x, Tracer) for x in leaves + [a, b]):
            raise
        return scipy.integrate.quad(func, a, b, args=args, epsabs=epsabs, epsrel=epsrel,
                                    limit=limit, points=points, maxp1=maxp1, limlst=limlst)
    val, err = integral(fj, cfg, True, fnp.asarray(a, dtype=np.float64),
                        fnp.asarray(b, dtype=np.float64), leaves + consts)
    return val[0], err

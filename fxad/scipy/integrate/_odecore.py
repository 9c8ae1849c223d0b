"""The differentiable ODE solve behind odeint and solve_ivp: SciPy's integrators on concrete
values (a pure_callback), differentiated by the adjoint method in reverse mode and by forward
sensitivities in forward mode.

`solve(rhs, cfg, y0, ts, params)` returns Y with Y[i] = y(ts[i]), where y' = f(y, t, *params),
y(ts[0]) = y0, and `rhs` is f staged as a jaxpr without constants (the front ends hoist
everything f closes over into `params`). It is a custom_jvp whose tangent is a linear_call
(fxad/rules/control/custom_linear.py):

  forward   (the linear_call's map) the sensitivity system z = (y, s),
            s' = ∂f/∂y s + ∂f/∂p dp,  s(t0) = dy0 - f(y0, t0) dt0,
            dY[i] = s(t_i) + f(Y[i], t_i) dt_i
  reverse   (its transpose) the adjoint system integrated backwards over each interval
            [t_i, t_{i-1}], with a jump a += G[i-1] at each observation:
            y' = f,  a' = -aᵀ ∂f/∂y,  a_p' = -aᵀ ∂f/∂p;
            ct_y0 = a(t0), ct_p = a_p(t0), ct_t_i = G[i]·f(Y[i], t_i),
            ct_t0 = -(a(t0) - G[0])·f(y0, t0)

Both augmented right-hand sides are built from f with fxad's jvp and vjp, and both systems
are integrated by `solve` itself, so they are differentiable the same way: a Hessian
(forward over reverse) integrates the forward sensitivities of the adjoint system, to any
order, in any composition. The adjoint reconstructs y by integrating backwards from each
stored Y[i] (as JAX's odeint does): for stiff, strongly damped systems that backward
reconstruction is ill-conditioned; forward mode has no such issue.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import numpy as np
import scipy.integrate

from ...api import jacfwd, vmap
from ...api.callback import ShapeDtypeStruct, pure_callback
from ...core import ShapedArray, Tracer
from ...custom_derivatives import custom_jvp
from ...errors import FxadTypeError, FxadValueError
from ...interpreters.jvp import Zero, jvp_flat
from ...interpreters.transpose import vjp_flat
from ...ir.codegen import compiled_for
from ...ir.jaxpr import eval_jaxpr
from ...ir.intern import intern
from ...ir.staging import stage
from ...rules.control.custom_linear import linear_call
from ... import numpy as fnp
from .._sparse_jacobian import UserPattern, sparse_jac, sparse_plan

IMPLICIT = ("BDF", "Radau", "LSODA", "odeint")  # methods that use the Jacobian fxad supplies


@dataclass(frozen=True)
class Config:
    """How to integrate: `method` is "odeint" (scipy.integrate.odeint) or a solve_ivp method;
    tolerances as SciPy takes them (atol a float or a tuple per component); `options` the
    other keyword arguments, as sorted (name, value) pairs."""
    method: str
    rtol: float | None
    atol: float | tuple | None
    options: tuple = ()
    purpose: str = ""  # what a failure message says this solve is for
    jac_sparsity: UserPattern | None = None  # the user's pattern of the primal system

    def tiled(self, k):
        """For a system of k stacked copies of the state."""
        cfg = replace(self, jac_sparsity=None)
        if isinstance(self.atol, tuple):
            return replace(cfg, atol=self.atol * k)
        return cfg

    def widened(self, n, extra):
        """For the adjoint state (y, a, a_p) of 2n + extra components: the per-component
        atol of y repeats for a, and the smallest covers a_p."""
        cfg = replace(self, purpose=ADJOINT, jac_sparsity=None)
        if isinstance(self.atol, tuple):
            return replace(cfg, atol=self.atol * 2 + (min(self.atol),) * extra)
        return cfg


ADJOINT = (" in the adjoint system, integrated backwards in time for reverse mode (a stiff, "
           "strongly damped system is unstable backwards: use forward mode, jacfwd or jvp, "
           "for it)")


def _f64(x):
    return x if isinstance(x, Tracer) and x.dtype == np.float64 else \
        fnp.asarray(x, dtype=np.float64)


# --- running SciPy -----------------------------------------------------------------------

def _numpy_rhs(rhs, params, purpose):
    run = compiled_for(rhs)

    def f(t, y):
        with np.errstate(all="ignore"):  # non-finite values raise below
            out = np.array(run(y, np.float64(t), *params)[0], dtype=np.float64)
        if not np.isfinite(out).all():  # a solver fed NaN can loop for ever
            raise FxadValueError(f"the right-hand side is not finite at t = {t}{purpose} "
                                 "(the solution blows up, or the model divides by zero)")
        return out
    return f


def _jacobian_program(rhs):
    hit = rhs.cache.get("ode jacobian")
    if hit is None:
        def jac(y, t, *p):
            return [jacfwd(lambda y_: eval_jaxpr(rhs.jaxpr, rhs.consts, y_, t, *p)[0])(y)]
        hit = rhs.cache["ode jacobian"] = stage(jac, rhs.in_avals, name="ode jacobian")
    return hit


def _numpy_jac(rhs, params, cfg):
    plan = sparse_plan(rhs, cfg.jac_sparsity)
    if plan is not None:
        return sparse_jac(plan, compiled_for(plan[1]), params,
                          dense=cfg.method in ("LSODA", "odeint"))
    run = compiled_for(_jacobian_program(rhs))

    def jac(t, y):
        return np.array(run(y, np.float64(t), *params)[0], dtype=np.float64)
    return jac


def _check_times(ts):
    if ts.ndim != 1 or ts.size == 0:
        raise FxadValueError(f"the evaluation times must be a non-empty 1-D array, got shape "
                             f"{ts.shape}")
    d = np.diff(ts)
    if not (np.all(d >= 0) or np.all(d <= 0)) or not np.all(np.isfinite(ts)):
        raise FxadValueError("the evaluation times must be finite and sorted (increasing or "
                             f"decreasing) from the initial time, got {ts}")


def integrate(cfg, rhs, y0, ts, params):
    """Y (len(ts), n) and SciPy's counters (nfev, njev, nlu) for concrete values. Repeated
    times are integrated once (so a solve may start at an evaluation time)."""
    y0 = np.asarray(y0, np.float64)
    ts = np.asarray(ts, np.float64)
    _check_times(ts)
    keep = np.concatenate([[True], np.diff(ts) != 0])
    if keep.sum() == 1:
        return np.repeat(y0[None], ts.size, axis=0), np.zeros(3)
    Y, stats = _scipy(cfg, rhs, y0, ts[keep], params)
    return Y[np.cumsum(keep) - 1], stats


def _scipy(cfg, rhs, y0, ts, params):
    f = _numpy_rhs(rhs, params, cfg.purpose)
    jac = _numpy_jac(rhs, params, cfg) if cfg.method in IMPLICIT else None
    opts = dict(cfg.options)
    tol = {k: v for k, v in (("rtol", cfg.rtol), ("atol", cfg.atol)) if v is not None}
    if isinstance(tol.get("atol"), tuple):
        tol["atol"] = np.array(tol["atol"])
    band = getattr(jac, "band", None)  # a banded Jacobian, packed (LSODA, odeint)
    if cfg.method == "odeint":
        if band is not None:
            opts["ml"], opts["mu"] = band
        with warnings.catch_warnings():  # a failure raises below, with SciPy's message
            warnings.simplefilter("ignore", scipy.integrate.ODEintWarning)
            Y, info = scipy.integrate.odeint(f, y0, ts, Dfun=jac, full_output=True, tfirst=True,
                                             **tol, **opts)
        if info["message"] != "Integration successful.":
            raise FxadValueError(f"odeint failed{cfg.purpose}: {info['message']} Try mxstep= "
                                 "(more steps), other tolerances, or check the model for "
                                 "blow-up.")
        return Y, np.array([info["nfe"][-1], info["nje"][-1], 0], dtype=np.float64)
    if jac is not None:
        opts["jac"] = jac
    if band is not None:
        opts["lband"], opts["uband"] = band
    sol = scipy.integrate.solve_ivp(f, (ts[0], ts[-1]), y0, method=cfg.method, t_eval=ts,
                                    **tol, **opts)
    if sol.status != 0 or sol.y.shape[1] != ts.size:
        raise FxadValueError(f"solve_ivp ({cfg.method}) failed{cfg.purpose}: {sol.message} Try other "
                             "tolerances or another method (e.g. 'BDF' or 'LSODA' for stiff "
                             "problems), or check the model for blow-up.")
    return sol.y.T.copy(), np.array([sol.nfev, sol.njev, sol.nlu], dtype=np.float64)


# --- the differentiable solve --------------------------------------------------------------

def solve(rhs, cfg, y0, ts, params):
    """(Y, counters) for Y[i] = y(ts[i]); differentiable in y0, ts and params."""
    key = ("ode solve", cfg, len(params))
    fn = rhs.cache.get(key)
    if fn is None:
        fn = rhs.cache[key] = _solver(rhs, cfg)
    return fn(_f64(y0), _f64(ts), *params)


def _nonzero(t):
    return isinstance(t, Tracer) or bool(np.any(np.asarray(t) != 0))


def carries_tangent(p, t, what):
    """Does this argument carry a tangent the rule must propagate? (Float arguments with a
    possibly non-zero tangent; a complex one is refused rather than silently dropped.)"""
    kind = np.dtype(p.dtype).kind
    if kind == "c" and _nonzero(t):
        raise FxadTypeError(f"differentiating {what} in a complex parameter is not "
                            "supported; pass its real and imaginary parts as real parameters")
    return kind == "f" and _nonzero(t)


def _solver(rhs, cfg):
    def primal(y0, ts, *params):
        n, m = y0.shape[0], ts.shape[0]
        out = (ShapeDtypeStruct((m, n), np.float64), ShapeDtypeStruct((3,), np.float64))
        return list(pure_callback(lambda *a: integrate(cfg, rhs, a[0], a[1], a[2:]), out,
                                  y0, ts, *params, vmap_method="sequential"))

    fn = custom_jvp(primal)

    @fn.defjvp
    def fn_jvp(primals, tangents):
        y0, ts, *params = primals
        Y, stats = fn(*primals)
        active = [carries_tangent(p, t, "an ODE solve") for p, t in zip(primals, tangents)]
        if not any(active):
            return [Y, stats], [fnp.zeros_like(Y), fnp.zeros_like(stats)]
        lin = [t for t, a in zip(tangents, active) if a]
        res = [y0, ts, *params, Y]
        k = len(res)
        (dY,) = linear_call(lambda *a: [_forward(rhs, cfg, active, a[:k], a[k:])],
                            lambda *a: _adjoint(rhs, cfg, active, a[:k], a[k]), k,
                            [ShapedArray(Y.shape, np.float64)], "ode sensitivities", *res, *lin)
        return [Y, stats], [dY, fnp.zeros_like(stats)]
    return fn


def _split_active(active, lin):
    """(dy0 or None, dts or None, [dp or None per param]) from the active tangents."""
    it = iter(lin)
    got = [next(it) if a else None for a in active]
    return got[0], got[1], got[2:]


def _rhs_values(rhs, Ys, ts, params):
    """f(Y[i], ts[i]) for every i, batched."""
    return vmap(lambda y, t: eval_jaxpr(rhs.jaxpr, rhs.consts, y, t, *params)[0])(Ys, ts)


def _forward(rhs, cfg, active, res, lin):
    """dY for tangents `lin` (the active ones): the forward sensitivity system."""
    y0, ts, params, Y = res[0], res[1], list(res[2:-1]), res[-1]
    dy0, dts, dps = _split_active(active, lin)
    n = y0.shape[0]
    s0 = dy0 if dy0 is not None else fnp.zeros_like(y0)
    if dts is not None:
        f0 = eval_jaxpr(rhs.jaxpr, rhs.consts, y0, ts[0], *params)[0]
        s0 = s0 - f0 * dts[0]
    p_mask = tuple(d is not None for d in dps)
    aug = _forward_rhs(rhs, p_mask)
    Z, _ = solve(aug, cfg.tiled(2), fnp.concatenate([y0, s0]), ts,
                 params + [d for d in dps if d is not None])
    dY = Z[:, n:]
    if dts is not None:
        dY = dY + _rhs_values(rhs, Y, ts, params) * dts[:, None]
    return dY


def _forward_rhs(rhs, p_mask):
    """(z = (y, s), t, *params, *active dp) -> (f, ∂f/∂y s + ∂f/∂p dp)."""
    key = ("ode forward", p_mask)
    hit = rhs.cache.get(key)
    if hit is not None:
        return hit
    n = rhs.in_avals[0].shape[0]
    p_avals = rhs.in_avals[2:]
    n_p = len(p_avals)

    def aug(z, t, *a):
        params, it = a[:n_p], iter(a[n_p:])
        tans = [z[n:]] + [next(it) if m else Zero(av) for m, av in zip(p_mask, p_avals)]
        (dy,), (ds,) = jvp_flat(lambda y, *p: eval_jaxpr(rhs.jaxpr, rhs.consts, y, t, *p),
                                [z[:n]] + list(params), tans, name="ode sensitivities")
        ds = fnp.zeros(n) if type(ds) is Zero else ds
        return [fnp.concatenate([dy, ds])]
    avals = [ShapedArray((2 * n,), np.float64), rhs.in_avals[1]] + list(p_avals) + \
        [av for m, av in zip(p_mask, p_avals) if m]
    hit = rhs.cache[key] = intern(stage(aug, avals, name="ode forward sensitivities"))
    return hit


def _adjoint(rhs, cfg, active, res, G):
    """Cotangents of the active (y0, ts, params) for the cotangent G of Y: the adjoint
    system, integrated backwards from one observation time to the previous one."""
    y0, ts, params, Y = res[0], res[1], list(res[2:-1]), res[-1]
    n, m = y0.shape[0], ts.shape[0]
    p_mask = tuple(active[2:])
    sizes = [math.prod(map(int, p.shape)) for p, a in zip(params, p_mask) if a]
    aug = _adjoint_rhs(rhs, p_mask)
    adj_cfg = cfg.widened(n, sum(sizes))
    a, ap = G[m - 1], fnp.zeros(sum(sizes))
    ct_t = [None] * m
    F = _rhs_values(rhs, Y, ts, params) if active[1] else None
    for i in range(m - 1, 0, -1):
        if F is not None:
            ct_t[i] = fnp.dot(G[i], F[i])
        Z, _ = solve(aug, adj_cfg, fnp.concatenate([Y[i], a, ap]), fnp.stack([ts[i], ts[i - 1]]),
                     params)
        a, ap = Z[1, n:2 * n] + G[i - 1], Z[1, 2 * n:]
    out = [a] if active[0] else []
    if active[1]:
        f0 = eval_jaxpr(rhs.jaxpr, rhs.consts, y0, ts[0], *params)[0]
        ct_t[0] = -fnp.dot(a - G[0], f0)
        out.append(fnp.stack(ct_t))
    offs = np.cumsum([0] + sizes)
    ps = [p for p, a_ in zip(params, p_mask) if a_]
    out += [fnp.reshape(ap[offs[k]:offs[k + 1]], p.shape).astype(p.dtype)
            for k, p in enumerate(ps)]
    return out


def _adjoint_rhs(rhs, p_mask):
    """(z = (y, a, a_p), t, *params) -> (f, -aᵀ ∂f/∂y, -aᵀ ∂f/∂p for the active params)."""
    key = ("ode adjoint", p_mask)
    hit = rhs.cache.get(key)
    if hit is not None:
        return hit
    n = rhs.in_avals[0].shape[0]
    p_avals = rhs.in_avals[2:]
    size = sum(math.prod(map(int, av.shape)) for av, m in zip(p_avals, p_mask) if m)

    def aug(z, t, *params):
        idx = [k for k, m in enumerate(p_mask) if m]

        def f(y, *active_p):
            p = list(params)
            for k, v in zip(idx, active_p):
                p[k] = v
            return eval_jaxpr(rhs.jaxpr, rhs.consts, y, t, *p)
        (dy,), pullback, _ = vjp_flat(f, [z[:n]] + [params[k] for k in idx], name="ode adjoint")
        cts = pullback([z[n:2 * n]])
        parts = [dy, -cts[0]] + [-fnp.ravel(c).astype(np.float64) for c in cts[1:]]
        return [fnp.concatenate(parts)]
    avals = [ShapedArray((2 * n + size,), np.float64), rhs.in_avals[1]] + list(p_avals)
    hit = rhs.cache[key] = intern(stage(aug, avals, name="ode adjoint system"))
    return hit

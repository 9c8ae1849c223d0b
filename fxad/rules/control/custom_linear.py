"""Linear maps whose transposes are given, not derived: the primitives behind
`fxad.custom_derivatives.linear_call` and `fxad.lax.custom_linear_solve` (JAX's names), and
through them fxad.scipy's differentiable solvers (implicit differentiation, ODE adjoints).

linear_call(*residuals, *linear; fun, transpose, n_res, out_avals, name)
  impl       fun(*residuals, *linear), linear in the `linear` operands
  JVP        in the linear operands: linear_call itself (so the tangent program stays linear
             and transposes with `transpose`); in the residuals: the JVP of `fun`, so `fun`
             (and `transpose`) must be written with fxad operations if the residuals carry
             derivatives. A solver's forward sensitivity in `fun` and its adjoint in
             `transpose`, each calling the differentiable solver again, gives derivatives of
             every order in both modes
  transpose  transpose(*residuals, *cotangents) -> one cotangent per linear operand
  batching   a linear_call of the vmapped fun and transpose (still linear)

linear_solve(*matvec_consts, *solve_consts, *tsolve_consts, *b; matvec, solve, tsolve, ...)
  x = A⁻¹ b with A given by `matvec` (a jaxpr of its constants and x), computed by the
  user's `solve` jaxpr; linear in b.
  JVP        dx = A⁻¹ (db - dA x): one more linear_solve, dA x the JVP of matvec in its
             constants (the solvers' own constants carry no derivative, as in JAX)
  transpose  the same primitive on the transposed system: tsolve solves, matvec's
             transpose (derived by fxad, cached) is the new matvec
  batching   the three jaxprs vmapped, every result batched along axis 0
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray, avals_key, get_aval
from ...errors import FxadTypeError
from ...interpreters.jvp import Zero, instantiate, jvp_flat
from ...interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined
from ...interpreters.named_axes import batching_key
from ...ir.codegen import compiled_for
from ...ir.jaxpr import eval_jaxpr
from ...ir.staging import stage
from ..helpers import batched_at_0, broadcast_batched, moveaxis, unbroadcast
from .. import ops


def _materialize(ct, aval):
    return np.zeros(aval.shape, aval.dtype) if ct is None or type(ct) is Zero else ct


def _add(a, b):
    if type(a) is Zero:
        return b
    return a if type(b) is Zero else ops.add(a, b)


# --- linear_call -------------------------------------------------------------------------

def _linear_call_jvp(primals, tangents, fun, transpose, n_res, out_avals, name):
    params = dict(fun=fun, transpose=transpose, n_res=n_res, out_avals=out_avals, name=name)
    res, lin = list(primals[:n_res]), list(primals[n_res:])
    outs = linear_call_p.bind(*primals, **params)
    t_res, t_lin = tangents[:n_res], tangents[n_res:]
    touts = [Zero(a) for a in out_avals]
    if any(type(t) is not Zero for t in t_lin):
        touts = linear_call_p.bind(*res, *[instantiate(t) for t in t_lin], **params)
    if any(type(t) is not Zero for t in t_res):
        _, t2 = jvp_flat(lambda *r: list(fun(*r, *lin)), res, list(t_res),
                         name=f"jvp of {name}")
        touts = [_add(a, b) for a, b in zip(touts, t2)]
    return outs, touts


def _linear_call_transpose(cts, *args, fun, transpose, n_res, out_avals, name):
    res, lin = args[:n_res], args[n_res:]
    if any(is_undefined(r) for r in res):
        raise FxadTypeError(f"cannot transpose '{name}' in its residual arguments: it is "
                            "linear only in its linear arguments")
    got = list(transpose(*res, *[_materialize(c, a) for c, a in zip(cts, out_avals)]))
    if len(got) != len(lin):
        raise FxadTypeError(f"the transpose of '{name}' returned {len(got)} cotangents for "
                            f"{len(lin)} linear arguments")
    # (in the operand's dtype and shape: a transpose written with NumPy promotion in mind
    # may return float64 for a float32 operand)
    return [None] * n_res + [unbroadcast(c, x.aval) if is_undefined(x) and c is not None
                             else None for c, x in zip(got, lin)]


def _linear_call_batch(vals, dims, fun, transpose, n_res, out_avals, name):
    n = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    res_dims, lin_dims = list(dims[:n_res]), list(dims[n_res:])

    def fun_b(*a):
        return batched_at_0(fun, a, dims, n)

    def transpose_b(*a):
        none = []

        def flat(*rc):
            out = list(transpose(*rc))
            none[:] = [c is None for c in out]
            return [c for c in out if c is not None]
        it = iter(batched_at_0(flat, list(a), res_dims + [0] * (len(a) - n_res), n))
        cts = [None if m else next(it) for m in none]
        # a linear operand shared by the batch gets the sum of the examples' cotangents
        return [None if c is None else ops.reduce_sum(c, (0,)) if d is None
                else moveaxis(c, 0, d) for c, d in zip(cts, lin_dims)]
    outs = linear_call_p.bind(*vals, fun=fun_b, transpose=transpose_b, n_res=n_res,
                              out_avals=tuple(ShapedArray((n,) + a.shape, a.dtype)
                                              for a in out_avals), name=name)
    return outs, [0] * len(outs)


linear_call_p = Primitive("linear_call", multiple_results=True)
linear_call_p.def_impl(lambda *args, fun, transpose, n_res, out_avals, name: list(fun(*args)))
linear_call_p.def_abstract_eval(lambda *avals, out_avals, **_: list(out_avals))
linear_call_p.def_jvp(_linear_call_jvp)
linear_call_p.def_transpose(_linear_call_transpose)  # linear in its linear operands
linear_call_p.def_batch(_linear_call_batch)


def linear_call(fun, transpose, n_res, out_avals, name, *args):
    return linear_call_p.bind(*args, fun=fun, transpose=transpose, n_res=n_res,
                              out_avals=tuple(out_avals), name=name)


# --- linear_solve --------------------------------------------------------------------------

def _split(args, *sizes):
    out, i = [], 0
    for s in sizes:
        out.append(list(args[i:i + s]))
        i += s
    out.append(list(args[i:]))
    return out


def transposed_matvec(matvec, n_m):
    """matvec's transpose in x, as a jaxpr of (its constants, y) (cached on matvec)."""
    hit = matvec.cache.get(("transposed", n_m))
    if hit is None:
        x_avals = matvec.in_avals[n_m:]

        def vecmat(*a):
            cm, y = a[:n_m], a[n_m:]
            cts = backward_pass(matvec.jaxpr, matvec.consts, list(y),
                                args=list(cm) + [UndefinedPrimal(v) for v in x_avals])
            return [_materialize(c, v) for c, v in zip(cts[n_m:], x_avals)]
        hit = matvec.cache[("transposed", n_m)] = stage(
            vecmat, matvec.in_avals[:n_m] + matvec.out_avals, name="custom_linear_solve matvec T")
    return hit


def _solve_impl(*args, matvec, solve, tsolve, n_m, n_s, n_t, n_x, name):
    _, cs, _, b = _split(args, n_m, n_s, n_t)
    return list(compiled_for(solve)(*cs, *b))


def _solve_jvp(primals, tangents, matvec, solve, tsolve, n_m, n_s, n_t, n_x, name):
    params = dict(matvec=matvec, solve=solve, tsolve=tsolve, n_m=n_m, n_s=n_s, n_t=n_t, n_x=n_x,
                  name=name)
    outs = linear_solve_p.bind(*primals, **params)
    cm, cs, ct, b = _split(primals, n_m, n_s, n_t)
    dm, _, _, db = _split(tangents, n_m, n_s, n_t)
    zeros = [Zero(get_aval(o)) for o in outs]
    nz_m = any(type(t) is not Zero for t in dm)
    if not nz_m and all(type(t) is Zero for t in db):
        return outs, zeros
    rhs = [_materialize(t, get_aval(v)) for t, v in zip(db, b)]
    if nz_m:  # dx = A⁻¹ (db - dA x)
        x = outs[:n_x]
        _, dax = jvp_flat(lambda *c: eval_jaxpr(matvec.jaxpr, matvec.consts, *c, *x),
                          list(cm), list(dm), name=f"jvp of {name} matvec")
        rhs = [r if type(d) is Zero else ops.sub(r, d) for r, d in zip(rhs, dax)]
    dx = linear_solve_p.bind(*cm, *cs, *ct, *rhs, **params)[:n_x]
    return outs, list(dx) + zeros[n_x:]


def _solve_transpose(cts, *args, matvec, solve, tsolve, n_m, n_s, n_t, n_x, name):
    cm, cs, ct, b = _split(args, n_m, n_s, n_t)
    if any(is_undefined(a) for a in cm + cs + ct):
        raise FxadTypeError(f"cannot transpose '{name}' in the values its matvec or solve "
                            "close over: it is linear only in b")
    if tsolve is None:
        raise FxadTypeError(f"reverse-mode differentiation of '{name}' needs transpose_solve "
                            "(a function solving the transposed system), or symmetric=True "
                            "if the matrix is symmetric")
    ct_x = [_materialize(c, a) for c, a in zip(cts[:n_x], solve.out_avals[:n_x])]
    out = linear_solve_p.bind(*cm, *ct, *cs, *ct_x, matvec=transposed_matvec(matvec, n_m),
                              solve=tsolve, tsolve=solve, n_m=n_m, n_s=n_t, n_t=n_s, n_x=n_x,
                              name=name + " transpose")[:n_x]
    return [None] * (n_m + n_s + n_t) + [c if is_undefined(v) else None
                                         for c, v in zip(out, b)]


def _batched(closed, avals, dims, n):
    """closed vmapped over `dims` (operands of these avals), every output at 0."""
    key = ("linear_solve vmap", tuple(dims), n, avals_key(avals), batching_key())
    hit = closed.cache.get(key)
    if hit is None:
        hit = closed.cache[key] = stage(
            lambda *a: batched_at_0(lambda *x: eval_jaxpr(closed.jaxpr, closed.consts, *x),
                                    a, dims, n), avals, name="custom_linear_solve vmap")
    return hit


def _solve_batch(vals, dims, matvec, solve, tsolve, n_m, n_s, n_t, n_x, name):
    n = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    cm, cs, ct, b = _split(vals, n_m, n_s, n_t)
    dm, ds, dt, db = _split(dims, n_m, n_s, n_t)
    b = [broadcast_batched(v, d, n) for v, d in zip(b, db)]
    av = lambda xs: [get_aval(x) for x in xs]  # noqa: E731
    x_avals = [ShapedArray((n,) + a.shape, a.dtype) for a in solve.out_avals[:n_x]]
    outs = linear_solve_p.bind(
        *cm, *cs, *ct, *b, matvec=_batched(matvec, av(cm) + x_avals, dm + [0] * n_x, n),
        solve=_batched(solve, av(cs + b), ds + [0] * len(b), n),
        tsolve=None if tsolve is None else _batched(tsolve, av(ct + b), dt + [0] * len(b), n),
        n_m=n_m, n_s=n_s, n_t=n_t, n_x=n_x, name=name)
    return outs, [0] * len(outs)


linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)
linear_solve_p.def_impl(_solve_impl)
linear_solve_p.def_abstract_eval(lambda *avals, solve, **_: [ShapedArray(a.shape, a.dtype)
                                                             for a in solve.out_avals])
linear_solve_p.def_jvp(_solve_jvp)
linear_solve_p.def_transpose(_solve_transpose)  # linear in b
linear_solve_p.def_batch(_solve_batch)

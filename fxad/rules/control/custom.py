"""The primitives behind custom rules (the user-facing classes are in
fxad/custom_derivatives.py). Their parameters are the user's functions, flattened:

custom_jvp_call(*args; fun, jvp, name)
  impl       fun(*args)
  JVP        the user's rule, run now (its tangent computation is what linearize stages, so
             reverse mode transposes it; it must be linear in the tangents)
  batching   a custom_jvp_call of the vmapped fun and rule
custom_vjp_call(*args; fun, fwd, bwd, name)
  impl       fun(*args)
  JVP        runs fwd now and stages one `custom_lin` equation, linear in the tangents
  batching   a custom_vjp_call of the vmapped fun, fwd and bwd
custom_lin(*primals, *residuals, *tangents; fwd, bwd, ...)
  impl       the JVP of fwd's primal output (forward mode through custom_vjp works); if fwd
             cannot be traced (opaque NumPy, a pure_callback), the transpose of bwd, the
             same linear map
  transpose  the user's bwd(residuals, cts): reverse mode uses the custom rule
  batching   the vmapped impl
"""
from __future__ import annotations

import threading

import numpy as np

from ...core import Primitive, ShapedArray, Tracer, get_aval, rule_source, trace_stack
from ...errors import (ConcretizationError, FxadTypeError, OpaqueFunctionError,
                       TracerArrayConversionError)
from ...interpreters.jvp import Zero, instantiate, jvp_flat
from ...interpreters.named_axes import batching_axis, current_batch_axis
from ...interpreters.transpose import backward_pass
from ...ir.staging import StagingTrace, stage
from ...tree_util import tree_flatten
from ..helpers import batched_at_0 as _batched_at_0, moveaxis
from .. import ops


def out_avals_of(fun, avals, name):
    """Output avals of a flat function, by staging it once per input signature (cached on
    the function, which lives as long as the call that made it). Under a staged
    transformation the call is recorded with `fun` and runs later, so `fun` must not close
    over a value of the trace recording it (or of one above): that value would be dead
    then, or be taken for a constant and its derivative silently lost. Refused, with the
    fix (JAX refuses differentiating such a value too)."""
    cache = fun.__dict__.setdefault("_fxad_avals", {})
    key = tuple(avals)
    if key not in cache:
        levels = [t.level for t in trace_stack() if isinstance(t, StagingTrace)]
        closed = stage(fun, avals)
        if levels:
            own = {id(x) for x in tree_flatten(getattr(fun, "nondiff", ()))[0]}
            if any(isinstance(c, Tracer) and id(c) not in own and
                   c._trace.level >= max(levels) for c in closed.consts):
                raise FxadTypeError(
                    f"custom rule function '{name}' closes over a value that a "
                    f"transformation traces (an argument of an enclosing jit or grad, a "
                    f"mapped or carried value): its rule gives derivatives with respect to its "
                    f"arguments only, and the recorded call cannot keep that value. Pass the "
                    f"value as an argument of '{name}' (and give its derivative in the rule, "
                    f"or list it in nondiff_argnums), or use fxad.checkpoint / a plain "
                    f"function, which close over traced values freely")
        cache[key] = [ShapedArray(a.shape, a.dtype) for a in closed.out_avals]
    return cache[key]


# --- custom_jvp_call -----------------------------------------------------------------------

def _custom_jvp_jvp(primals, tangents, fun, jvp, name):
    tangents = [instantiate(t) for t in tangents]
    with rule_source(name):
        outs, touts = jvp(primals, tangents)
    return outs, touts


def _custom_jvp_batch(vals, dims, fun, jvp, name):
    n_p = len(vals)
    batched_at_0 = _in_axis(current_batch_axis())

    def fun_b(*a):
        return batched_at_0(fun, a, dims)

    def jvp_b(p, t):
        counts = {}

        def flat(*pt):
            o, to = jvp(list(pt[:n_p]), list(pt[n_p:]))
            counts["n"] = len(o)
            return list(o) + list(to)
        res = batched_at_0(flat, list(p) + list(t), list(dims) * 2)
        return res[:counts["n"]], res[counts["n"]:]
    outs = custom_jvp_call_p.bind(*vals, fun=fun_b, jvp=jvp_b, name=name)
    return outs, [0] * len(outs)


custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
custom_jvp_call_p.def_impl(lambda *args, fun, jvp, name: fun(*args))
custom_jvp_call_p.def_abstract_eval(lambda *avals, fun, jvp, name: out_avals_of(fun, list(avals), name))
custom_jvp_call_p.def_jvp(_custom_jvp_jvp)
custom_jvp_call_p.derivable = False  # its parameters are user functions (eager grad: staged)
custom_jvp_call_p.def_batch(_custom_jvp_batch)


# --- custom_vjp_call -----------------------------------------------------------------------

def _custom_vjp_jvp(primals, tangents, fun, fwd, bwd, name):
    outs, residuals = fwd(*primals)
    outs, residuals = list(outs), list(residuals)
    nz = tuple(type(t) is not Zero for t in tangents)
    if not any(nz):
        return outs, [Zero(get_aval(o)) for o in outs]
    # Only the non-zero tangents enter the linear program (no zero arrays as residuals).
    touts = custom_lin_p.bind(*primals, *residuals, *[t for t in tangents if type(t) is not Zero],
                              fwd=fwd, bwd=bwd, n_p=len(primals), n_res=len(residuals), nz=nz,
                              out_avals=tuple(ShapedArray(get_aval(o).shape, get_aval(o).dtype)
                                              for o in outs), name=name)
    return outs, touts


def _in_axis(name):
    """batched_at_0 continuing the named axis being batched now, even when called later (a
    backward pass runs after the vmap that batched the rule has returned)."""
    def run(fun, args, dims):
        with batching_axis(name):
            return _batched_at_0(fun, args, dims)
    return run


def _custom_vjp_batch(vals, dims, fun, fwd, bwd, name):
    dims = tuple(dims)
    batched_at_0 = _in_axis(current_batch_axis())

    def fun_b(*a):
        return batched_at_0(fun, a, dims)

    def fwd_b(*a):
        counts = {}

        def flat(*x):
            o, r = fwd(*x)
            counts["n"] = len(o)
            return list(o) + list(r)
        res = batched_at_0(flat, a, dims)
        return res[:counts["n"]], res[counts["n"]:]

    def bwd_b(residuals, cts, needed=None):
        n_r = len(residuals)
        got = {}

        def flat(*rc):
            out = bwd(list(rc[:n_r]), list(rc[n_r:]), needed)
            got["none"] = [c is None for c in out]
            return [c for c in out if c is not None]
        it = iter(batched_at_0(flat, list(residuals) + list(cts), [0] * (n_r + len(cts))))
        cts_in = [None if none else next(it) for none in got["none"]]
        # batched at 0: sum over the batch for unbatched inputs, else back to their axis
        return [None if c is None else ops.reduce_sum(c, (0,)) if d is None
                else moveaxis(c, 0, d) for c, d in zip(cts_in, dims)]
    outs = custom_vjp_call_p.bind(*vals, fun=fun_b, fwd=fwd_b, bwd=bwd_b, name=name)
    return outs, [0] * len(outs)


custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_vjp_call_p.def_impl(lambda *args, fun, fwd, bwd, name: fun(*args))
custom_vjp_call_p.def_abstract_eval(
    lambda *avals, fun, fwd, bwd, name: out_avals_of(fun, list(avals), name))
custom_vjp_call_p.def_jvp(_custom_vjp_jvp)
custom_vjp_call_p.derivable = False
custom_vjp_call_p.def_batch(_custom_vjp_batch)


# --- custom_lin ----------------------------------------------------------------------------

class _Differentiating(threading.local):
    """The custom_vjp functions whose fwd this thread is differentiating (forward mode)."""
    def __init__(self):
        self.owners = set()


_differentiating = _Differentiating()


def _custom_lin_impl(*args, fwd, bwd, n_p, n_res, nz, out_avals, name):
    """Forward evaluation of the linear map: the JVP of fwd's primal outputs. If fwd cannot
    be traced (it calls opaque NumPy), or calls the custom function itself (JAX's documented
    pattern `f_fwd = lambda x: (f(x), res)`, whose JVP would come back here forever), the
    transpose of bwd, which is linear in its cotangent argument, gives the same map."""
    primals, residuals = args[:n_p], list(args[n_p:n_p + n_res])
    it = iter(args[n_p + n_res:])
    tangents = [next(it) if m else Zero(get_aval(p)) for p, m in zip(primals, nz)]
    owner = getattr(fwd, "owner", fwd)
    try:
        if owner in _differentiating.owners:
            raise _Reentered
        _differentiating.owners.add(owner)
        try:
            _, touts = jvp_flat(lambda *p: list(fwd(*p)[0]), list(primals), tangents,
                                name=f"jvp of {name} fwd")
        finally:
            _differentiating.owners.discard(owner)
    except (TracerArrayConversionError, ConcretizationError, OpaqueFunctionError,
            _Reentered):
        def bwd_flat(*cts):
            return [np.zeros(get_aval(p).shape, get_aval(p).dtype) if c is None else c
                    for c, p in zip(bwd(residuals, list(cts)), primals)]
        closed = stage(bwd_flat, list(out_avals), name=f"transpose of {name} bwd")
        touts = backward_pass(closed.jaxpr, closed.consts,
                              [instantiate(t) for t in tangents])
    return [instantiate(t) for t in touts]


class _Reentered(Exception):
    """fwd calls its own custom function: take the transpose of bwd instead."""


def _custom_lin_jvp(primals, tangents, **params):
    outs, touts = jvp_flat(lambda *a: _custom_lin_impl(*a, **params), list(primals),
                           list(tangents), name="custom_lin jvp")
    return outs, touts


def _custom_lin_transpose(cts, *args, fwd, bwd, n_p, n_res, nz, out_avals, name):
    residuals = list(args[n_p:n_p + n_res])
    cts_in = bwd(residuals, [instantiate(c) for c in cts], needed=nz)
    return [None] * (n_p + n_res) + [c for c, m in zip(cts_in, nz) if m]


def _custom_lin_batch(vals, dims, **params):
    outs = _batched_at_0(lambda *a: _custom_lin_impl(*a, **params), vals, dims)
    return outs, [0] * len(outs)


custom_lin_p = Primitive("custom_lin", multiple_results=True)
custom_lin_p.def_impl(_custom_lin_impl)
custom_lin_p.def_abstract_eval(lambda *avals, out_avals, **_: list(out_avals))
custom_lin_p.def_jvp(_custom_lin_jvp)
custom_lin_p.derivable = False
custom_lin_p.def_transpose(_custom_lin_transpose)  # linear in its tangent operands only
custom_lin_p.def_batch(_custom_lin_batch)

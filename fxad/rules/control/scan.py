"""`scan`: a loop over the leading axis of stacked inputs, with a carry. Bodies are closed
jaxprs without constants (closures are hoisted into operands by fxad.control_flow).

scan(*consts, *init, *xs; jaxpr, n_consts, n_carry, length, reverse): the body maps
(consts, carry, x slices) to (carry, y slices).
  impl       the whole loop as one generated Python function (the body's code inline)
  JVP        the JVP of the body, split by partial evaluation into a known scan (primal
             carry and outputs, plus the residuals stacked per step) and a linear scan
             (tangents), so `linearize` stores stacked arrays, not one object per step.
             Residuals that do not change across steps are passed as constants, not stacked.
  transpose  a scan in the other direction over the body's backward pass; cotangents of
             linear constants accumulate in the carry.
  batching   a scan of the vmapped body (carry batched, xs batched along axis 1).
  jet        a scan of the body's jet (the carry carries its Taylor coefficients).

Every scan is bound through `bind_scan`, which first moves loop-invariant work out of the
body (fxad/rules/control/_scan_plan.py), so eager runs, every transformation's scans and jit
all get it.
"""
from __future__ import annotations

import numpy as np

from ... import core
from ...core import Primitive, ShapedArray, avals_key, get_aval
from ...interpreters.jet import deinterleave, interleave, jet_jaxpr, series_nonzero
from ...interpreters.jvp import Zero, jvp_jaxpr
from ...interpreters.partial_eval import linearize_jaxpr
from ...interpreters.transpose import UndefinedPrimal, aval_of, backward_pass, is_undefined
from ...interpreters.named_axes import batching_key
from ...ir.codegen import compiled_for
from ...ir.jaxpr import ClosedJaxpr, Jaxpr
from ...ir.staging import stage
from .cond import call, materialize
from ..helpers import batched_at_0, broadcast_batched, moveaxis
from .. import ops
from ._scan_loop import compiled_loop_for
from ._scan_plan import plan_scan


def _split(xs, *sizes):
    out, i = [], 0
    for s in sizes:
        out.append(list(xs[i:i + s]))
        i += s
    out.append(list(xs[i:]))
    return out


def _reorder(closed, invars_perm, outvars_perm):
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, [j.invars[i] for i in invars_perm], j.eqns,
                             [j.outvars[i] for i in outvars_perm]), closed.consts)


# --- the primitive -------------------------------------------------------------------------

def _scan_impl(*args, jaxpr, n_consts, n_carry, length, reverse):
    if not core.nan_checking():  # the whole loop as generated code
        return compiled_loop_for(jaxpr, n_consts, n_carry, reverse).fn(length, *args)
    body = compiled_for(jaxpr)  # step by step, so debug_nans can check each step's body
    consts, carry, xs = _split(args, n_consts, n_carry)
    y_avals = jaxpr.out_avals[n_carry:]
    ys = [np.empty((length,) + a.shape, a.dtype) for a in y_avals]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        out = body(*consts, *carry, *[x[i] for x in xs])
        carry = out[:n_carry]
        for y, v in zip(ys, out[n_carry:]):
            y[i] = v
    return list(carry) + ys


scan_p = Primitive("scan", multiple_results=True)
scan_p.def_impl(_scan_impl)
scan_p.def_abstract_eval(lambda *avals, jaxpr, n_consts, n_carry, length, reverse: [
    ShapedArray(a.shape, a.dtype) for a in jaxpr.out_avals[:n_carry]] + [
    ShapedArray((length,) + a.shape, a.dtype) for a in jaxpr.out_avals[n_carry:]])


def _scan_split(jaxpr, n_consts, n_carry, nz_c, nz_carry, nz_x):
    """The JVP body split into a known body and a linear body (cached on the jaxpr)."""
    key = ("scan_jvp", n_consts, n_carry, tuple(nz_c), tuple(nz_carry), tuple(nz_x))
    hit = jaxpr.cache.get(key)
    if hit is not None:
        return hit
    n_y = len(jaxpr.out_avals) - n_carry
    # known: (consts, carry, xs) -> (carry, ys, residuals); linear: (residuals, t_consts,
    # t_carry, t_xs) -> (t_carry, t_ys), the nonzero tangents only (carry ones materialized).
    known, lin, out_nz, n_res = linearize_jaxpr(jaxpr, nz_c + nz_carry + nz_x,
                                                instantiate=nz_carry + [False] * n_y)
    k_c, k_carry = sum(nz_c), sum(nz_carry)
    # Residuals that are constants of the loop are passed as constants, not stacked.
    const_vars = known.jaxpr.invars[:n_consts]
    res_vars = known.jaxpr.outvars[n_carry + n_y:]
    res_const = [v for v in res_vars if v in const_vars]
    res_step = [v for v in res_vars if v not in const_vars]
    kj = known.jaxpr
    known = ClosedJaxpr(Jaxpr(kj.constvars, kj.invars, kj.eqns,
                              kj.outvars[:n_carry + n_y] + res_step), known.consts)
    lj = lin.jaxpr
    lin_in = lj.invars[n_res:]  # t_consts, t_carry, t_xs
    lin = ClosedJaxpr(Jaxpr(lj.constvars, res_const + lin_in[:k_c + k_carry] + res_step +
                            lin_in[k_c + k_carry:], lj.eqns, lj.outvars), lin.consts)
    const_pos = [const_vars.index(v) for v in res_const]
    hit = jaxpr.cache[key] = (known, lin, out_nz[n_carry:], const_pos, len(res_step))
    return hit


def _scan_jvp(primals, tangents, jaxpr, n_consts, n_carry, length, reverse):
    consts, init, xs = _split(primals, n_consts, n_carry)
    t_c, t_init, t_x = _split(tangents, n_consts, n_carry)
    nz_c = [type(t) is not Zero for t in t_c]
    nz_x = [type(t) is not Zero for t in t_x]
    nz_carry = [type(t) is not Zero for t in t_init]
    while True:  # a carry tangent is non-zero if the body can make it so: fixpoint
        _, out_nz = jvp_jaxpr(jaxpr, nz_c + nz_carry + nz_x)
        new = [a or b for a, b in zip(nz_carry, out_nz[:n_carry])]
        if new == nz_carry:
            break
        nz_carry = new
    known, lin, y_nz, const_pos, n_step = _scan_split(jaxpr, n_consts, n_carry, nz_c,
                                                      nz_carry, nz_x)
    res = bind_scan(consts, init, xs, known, length, reverse)
    n_y = len(jaxpr.out_avals) - n_carry
    outs, res_step = res[:n_carry + n_y], res[n_carry + n_y:]
    nzt = lambda ts, nz: [t for t, m in zip(ts, nz) if m]  # noqa: E731
    t_init = [materialize(t, get_aval(p)) for t, p, m in zip(t_init, init, nz_carry) if m]
    lin_c = [consts[i] for i in const_pos] + nzt(t_c, nz_c)
    touts = bind_scan(lin_c, t_init, list(res_step) + nzt(t_x, nz_x), lin, length, reverse)
    it = iter(touts)
    t_carry = [next(it) if m else Zero(get_aval(o)) for o, m in zip(outs[:n_carry], nz_carry)]
    t_ys = [next(it) if m else Zero(get_aval(o)) for o, m in zip(outs[n_carry:], y_nz)]
    return outs, t_carry + t_ys


def _scan_jet(primals, series, jaxpr, n_consts, n_carry, length, reverse):
    """A scan of the body's jet: the carry carries its Taylor coefficients."""
    order = len(series[0])
    nz_c, nz_carry, nz_x = _split(series_nonzero(series), n_consts, n_carry)
    n_y = len(jaxpr.out_avals) - n_carry
    while True:  # a carry has coefficients if the body can give it some: fixpoint
        body, out_nz = jet_jaxpr(jaxpr, order, nz_c + nz_carry + nz_x, nz_carry + [False] * n_y)
        new = [a or b for a, b in zip(nz_carry, out_nz[:n_carry])]
        if new == nz_carry:
            break
        nz_carry = new
    consts, init, xs = _split(primals, n_consts, n_carry)
    s_c, s_init, s_x = _split(series, n_consts, n_carry)
    flat = bind_scan(interleave(consts, s_c, nz_c, order),
                     interleave(init, s_init, nz_carry, order),
                     interleave(xs, s_x, nz_x, order), body, length, reverse)
    return deinterleave(flat, out_nz, order)


def _scan_transpose(cts, *args, jaxpr, n_consts, n_carry, length, reverse):
    consts, init, xs = _split(args, n_consts, n_carry)
    # The carry of a linear scan is all tangent. One given as a value is a materialized zero
    # (a tangent carry that starts at zero): linear too; its cotangent is not needed.
    init = [c if is_undefined(c) else UndefinedPrimal(get_aval(c)) for c in init]
    cu = [is_undefined(c) for c in consts]
    xu = [is_undefined(x) for x in xs]
    k_consts = [c for c, u in zip(consts, cu) if not u]
    k_xs = [x for x, u in zip(xs, xu) if not u]
    out_avals = scan_p.abstract_eval(*[aval_of(a) for a in args], jaxpr=jaxpr, n_consts=n_consts,
                                     n_carry=n_carry, length=length, reverse=reverse)
    cts = [materialize(c, a) for c, a in zip(cts, out_avals)]
    lin_c_avals = [c.aval for c in consts if is_undefined(c)]
    x_slice = [ShapedArray(x.aval.shape[1:], x.aval.dtype) for x in xs if is_undefined(x)]
    n_k, n_acc = len(k_consts), len(lin_c_avals)

    def body_t(*a):
        kc, ct_carry, acc, kx, ct_y = _split(a, n_k, n_carry, n_acc, len(k_xs))
        ic, ix = iter(kc), iter(kx)
        full = [UndefinedPrimal(c.aval) if u else next(ic) for c, u in zip(consts, cu)] + \
            [UndefinedPrimal(c.aval) for c in init] + \
            [UndefinedPrimal(ShapedArray(x.aval.shape[1:], x.aval.dtype)) if u else next(ix)
             for x, u in zip(xs, xu)]
        res = backward_pass(jaxpr.jaxpr, jaxpr.consts, list(ct_carry) + list(ct_y), args=full)
        rc, rcarry, rx = _split(res, n_consts, n_carry)
        ct_c = [r for r, u in zip(rc, cu) if u]
        # No contribution (e.g. it was hoisted out of the loop): the accumulator passes through.
        return [materialize(r, c.aval) for r, c in zip(rcarry, init)] + \
            [s if type(c) is Zero else ops.add(s, c) for s, c in zip(acc, ct_c)] + \
            [materialize(r, a) for r, a in zip([r for r, u in zip(rx, xu) if u], x_slice)]
    in_avals = [get_aval(c) for c in k_consts] + [c.aval for c in init] + lin_c_avals + \
        [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype) for x in k_xs] + \
        [ShapedArray(a.shape[1:], a.dtype) for a in out_avals[n_carry:]]
    key = ("scan_transpose", tuple(cu), tuple(xu), n_carry, avals_key(in_avals))
    tj = jaxpr.cache.get(key)
    if tj is None:
        tj = jaxpr.cache[key] = stage(body_t, in_avals, name="scan transpose")
    out = bind_scan(k_consts, list(cts[:n_carry]) + [np.zeros(a.shape, a.dtype)
                                                     for a in lin_c_avals],
                    list(k_xs) + list(cts[n_carry:]), tj, length, not reverse)
    ct_init, ct_c, ct_x = _split(out, n_carry, n_acc)
    ic, ix = iter(ct_c), iter(ct_x)
    return [next(ic) if u else None for u in cu] + ct_init + [next(ix) if u else None
                                                             for u in xu]


def _scan_batch(vals, dims, jaxpr, n_consts, n_carry, length, reverse):
    n = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    consts, init, xs = _split(vals, n_consts, n_carry)
    cd, _, xd = _split(dims, n_consts, n_carry)
    init = [broadcast_batched(c, d, n) for c, d in zip(init, dims[n_consts:])]
    xs = [x if d is None else moveaxis(x, d, 1) for x, d in zip(xs, xd)]
    slice_dims = [None if d is None else 0 for d in xd]
    avals = [get_aval(c) for c in consts] + \
        [ShapedArray(get_aval(c).shape, get_aval(c).dtype) for c in init] + \
        [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype) for x in xs]
    in_dims = list(cd) + [0] * n_carry + list(slice_dims)
    key = ("scan_vmap", tuple(in_dims), n, avals_key(avals), batching_key())
    body = jaxpr.cache.get(key)
    if body is None:
        body = jaxpr.cache[key] = stage(lambda *a: batched_at_0(call(jaxpr), a, in_dims, n),
                                        avals, name="scan vmap")
    out = bind_scan(consts, init, xs, body, length, reverse)
    return out, [0] * n_carry + [1] * (len(out) - n_carry)


scan_p.def_jvp(_scan_jvp)
scan_p.def_transpose(_scan_transpose)  # linear in its tangent operands, when its body is
scan_p.def_batch(_scan_batch)
scan_p.def_jet(_scan_jet)
def _scan_numba(ctx, args, jaxpr, n_consts, n_carry, length, reverse):
    """The loop in compiled code (jit's numba backend), the body inline and fused; None (the
    scan runs on NumPy) if some equation of the body does not compile."""
    consts, carry, xs = _split(args, n_consts, n_carry)
    y_avals = jaxpr.out_avals[n_carry:]
    k = [ctx.fresh("k") for _ in carry]
    ys = [ctx.fresh("y") for _ in y_avals]
    i = ctx.fresh("i")
    for name, c in zip(k, carry):
        ctx.emit(f"{name} = {c}")
    for name, a in zip(ys, y_avals):
        ctx.emit(f"{name} = _np.empty({(length,) + a.shape!r}, {ctx.dtype(a.dtype)})")
    ctx.emit(f"for {i} in {f'range({length - 1}, -1, -1)' if reverse else f'range({length})'}:")
    with ctx.indent():
        sl = [ctx.fresh("x") for _ in xs]
        for name, x in zip(sl, xs):
            ctx.emit(f"{name} = {x}[{i}]")
        outs = ctx.inline(jaxpr, list(consts) + k + sl)
        if outs is None:
            return None
        for y, o in zip(ys, outs[n_carry:]):
            ctx.emit(f"{y}[{i}] = {o}")
        if n_carry:  # every new carry is computed from the old ones: one tuple assignment
            ctx.emit(f"{', '.join(k)}, = {', '.join(outs[:n_carry])},")
    return k + ys

scan_p.def_lowering(_scan_numba, backend="numba")


def bind_scan(consts, init, xs, jaxpr, length, reverse):
    """scan_p.bind, with the body split into (pre, loop, post) by its Plan."""
    plan = plan_scan(jaxpr, len(consts), len(init)) if length > 0 else None
    if plan is None:
        return scan_p.bind(*consts, *init, *xs, jaxpr=jaxpr, n_consts=len(consts),
                           n_carry=len(init), length=length, reverse=reverse)
    consts = list(consts) + [init[i] for i in plan.fixed]  # pass-through carries

    def batched(closed, stacked):
        in_dims = [None] * len(consts) + [0] * len(stacked)
        return batched_at_0(call(closed), list(consts) + list(stacked), in_dims, length)
    xs = list(xs) + (list(batched(plan.pre, xs)) if plan.pre is not None else [])
    outs = scan_p.bind(*consts, *[init[i] for i in plan.moving], *xs,
                       jaxpr=plan.body, n_consts=len(consts),
                       n_carry=len(plan.moving), length=length, reverse=reverse)
    carry, loop_ys = outs[:len(plan.moving)], outs[len(plan.moving):]

    def stack(src):
        return xs[src[1]] if src[0] == "x" else loop_ys[src[1]]
    post = batched(plan.post, [stack(s) for s in plan.post_src]) \
        if plan.post is not None else []
    ys = [post[k] if kind == "post" else stack((kind, k)) for kind, k in plan.ys_src]
    it = iter(carry)
    out_carry = []
    for i, c in enumerate(init):
        if i in plan.fixed:
            out_carry.append(c)
        elif i in plan.accum:
            total = ops.reduce_sum(ys[plan.n_ys + plan.accum.index(i)], (0,))
            out_carry.append(ops.add(c, total))
        else:
            out_carry.append(next(it))
    return out_carry + ys[:plan.n_ys]

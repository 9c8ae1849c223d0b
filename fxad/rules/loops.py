"""Loops: `scan` and `while_loop`. Bodies are closed jaxprs without constants (closures are
hoisted into operands by fxad.control_flow).

scan(*consts, *init, *xs; jaxpr, n_consts, n_carry, length, reverse): the body maps
(consts, carry, x slices) to (carry, y slices).
  JVP        the JVP of the body, split by partial evaluation into a known scan (primal
             carry and outputs, plus the residuals stacked per step) and a linear scan
             (tangents), so `linearize` stores stacked arrays, not one object per step.
             Residuals that do not change across steps are passed as constants, not stacked.
  transpose  a scan in the other direction over the body's backward pass; cotangents of
             linear constants accumulate in the carry.
  batching   a scan of the vmapped body (carry batched, xs batched along axis 1).

while_loop(*cond_consts, *body_consts, *init; cond_jaxpr, body_jaxpr, n_cc, n_bc):
  JVP        when the loop's values are concrete (eager mode, even under vmap), the trip
             count is known: the loop is differentiated as a scan of that length, so reverse
             mode works (JAX refuses this). Otherwise (under jit) forward mode works and
             reverse mode raises an error that suggests fori_loop or scan.
  batching   a batched predicate keeps finished examples fixed with `select`.
"""
from __future__ import annotations

import numpy as np

from ..core import Primitive, ShapedArray, Tracer, avals_key, get_aval
from ..errors import FxadTypeError
from ..interpreters.batching import BatchTracer
from .helpers import broadcast_batched, moveaxis
from ..interpreters.jvp import JVPTracer, Zero, jvp_jaxpr
from ..interpreters.partial_eval import partial_eval_jaxpr
from ..interpreters.transpose import UndefinedPrimal, aval_of, backward_pass, is_undefined
from .. import core
from ..ir.codegen import compiled_for, compiled_scan_for
from ..ir.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from ..ir.staging import stage
from .cond import call, materialize
from .scan_hoist import bind_scan
from . import ops


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


# --- scan -------------------------------------------------------------------------------------

def _scan_impl(*args, jaxpr, n_consts, n_carry, length, reverse):
    if core._nan_hook is None:  # the whole loop as generated code
        return compiled_scan_for(jaxpr, n_consts, n_carry, reverse).fn(length, *args)
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
    n_in, n_out = len(jaxpr.in_avals), len(jaxpr.out_avals)
    n_x, n_y = n_in - n_consts - n_carry, n_out - n_carry
    nz = nz_c + nz_carry + nz_x
    jvp_closed, out_nz = jvp_jaxpr(jaxpr, nz, instantiate=nz_carry + [False] * n_y)
    k_c, k_carry, k_x = sum(nz_c), sum(nz_carry), sum(nz_x)
    # jvp layout (consts, carry, xs, t_consts, t_carry, t_xs) -> scan layout
    # (consts, t_consts, carry, t_carry, xs, t_xs); outputs (carry, t_carry, ys, t_ys).
    p, t = list(range(n_in)), list(range(n_in, n_in + k_c + k_carry + k_x))
    in_perm = p[:n_consts] + t[:k_c] + p[n_consts:n_consts + n_carry] + \
        t[k_c:k_c + k_carry] + p[n_consts + n_carry:] + t[k_c + k_carry:]
    k_y = sum(out_nz[n_carry:])
    o = list(range(n_out))
    ot = list(range(n_out, n_out + k_carry + k_y))
    out_perm = o[:n_carry] + ot[:k_carry] + o[n_carry:] + ot[k_carry:]
    body = _reorder(jvp_closed, in_perm, out_perm)
    unknown = [False] * n_consts + [True] * k_c + [False] * n_carry + [True] * k_carry + \
        [False] * n_x + [True] * k_x
    inst = [False] * n_carry + [True] * k_carry + [False] * n_y + [True] * k_y
    known, lin, _, n_res = partial_eval_jaxpr(body, unknown, inst)
    # Residuals that are constants of the loop are passed as constants, not stacked.
    const_vars = set(body.jaxpr.invars[:n_consts])
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
    const_pos = [body.jaxpr.invars.index(v) for v in res_const]
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
    from ..api import vmap
    n = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    consts, init, xs = _split(vals, n_consts, n_carry)
    cd, _, xd = _split(dims, n_consts, n_carry)
    init = [broadcast_batched(c, d, n) for c, d in zip(init, dims[n_consts:])]
    xs = [x if d is None else moveaxis(x, d, 1) for x, d in zip(xs, xd)]
    slice_dims = [None if d is None else 0 for d in xd]
    avals = [get_aval(c) for c in consts] + \
        [ShapedArray(get_aval(c).shape, get_aval(c).dtype) for c in init] + \
        [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype) for x in xs]
    in_axes = tuple(cd) + (0,) * n_carry + tuple(slice_dims)
    key = ("scan_vmap", in_axes, n, avals_key(avals))
    body = jaxpr.cache.get(key)
    if body is None:
        body = jaxpr.cache[key] = stage(
            lambda *a: vmap(call(jaxpr), in_axes=in_axes, axis_size=n)(*a), avals,
            name="scan vmap")
    out = bind_scan(consts, init, xs, body, length, reverse)
    return out, [0] * n_carry + [1] * (len(out) - n_carry)


scan_p.jvp = _scan_jvp
scan_p.linear = True  # in its tangent operands, when its body is (the linear half of a JVP)
scan_p.transpose = _scan_transpose
scan_p.batch = _scan_batch


# --- while_loop -------------------------------------------------------------------------------

def _while_impl(*args, cond_jaxpr, body_jaxpr, n_cc, n_bc):
    cond, body = compiled_for(cond_jaxpr), compiled_for(body_jaxpr)
    cc, bc, carry = _split(args, n_cc, n_bc)
    while bool(cond(*cc, *carry)[0]):
        carry = body(*bc, *carry)
    return list(carry)


while_p = Primitive("while_loop", multiple_results=True)
while_p.def_impl(_while_impl)
while_p.def_abstract_eval(lambda *avals, cond_jaxpr, body_jaxpr, n_cc, n_bc: [
    ShapedArray(a.shape, a.dtype) for a in avals[n_cc + n_bc:]])


def _concrete(x):
    """(concrete value, batch axis) behind a value, looking through outer JVP tracers and
    one level of vmap; None if the value is only known symbolically (e.g. under jit)."""
    while isinstance(x, JVPTracer):
        x = x.primal
    if not isinstance(x, Tracer):
        return x, None
    if isinstance(x, BatchTracer) and not isinstance(x.val, Tracer):
        return x.val, x.bdim
    return None


def _trip_count(args, cond_jaxpr, body_jaxpr, n_cc, n_bc):
    """The number of iterations, from the concrete values; under vmap, the largest count
    over the batch (and the loop body must then be guarded). None if not concrete."""
    found = [_concrete(a) for a in args]
    if any(f is None for f in found):
        return None
    vals, dims = [f[0] for f in found], [f[1] for f in found]
    count_cond = stage(lambda *a: eval_jaxpr(cond_jaxpr.jaxpr, [], *a[:n_cc], *a[n_cc + 1:]),
                       cond_jaxpr.in_avals[:n_cc] + [ShapedArray((), np.int64)] +
                       cond_jaxpr.in_avals[n_cc:])
    count_body = stage(lambda *a: [ops.add(a[n_bc], 1)] +
                       eval_jaxpr(body_jaxpr.jaxpr, [], *a[:n_bc], *a[n_bc + 1:]),
                       body_jaxpr.in_avals[:n_bc] + [ShapedArray((), np.int64)] +
                       body_jaxpr.in_avals[n_bc:])

    def count(*a):
        return while_p.bind(*a[:n_cc + n_bc], np.int64(0), *a[n_cc + n_bc:],
                            cond_jaxpr=count_cond, body_jaxpr=count_body, n_cc=n_cc,
                            n_bc=n_bc)[0]
    if all(d is None for d in dims):
        return int(count(*vals)), False
    from ..api import vmap
    return int(np.max(vmap(count, in_axes=tuple(dims))(*vals))), True


def _guarded_body(cond_jaxpr, body_jaxpr, n_cc, n_bc):
    """(cond consts, body consts, carry) -> carry, leaving finished examples unchanged."""
    def f(*a):
        cc, bc, carry = _split(a, n_cc, n_bc)
        go = eval_jaxpr(cond_jaxpr.jaxpr, [], *cc, *carry)[0]
        new = eval_jaxpr(body_jaxpr.jaxpr, [], *bc, *carry)
        return [ops.select(go, b, c) for b, c in zip(new, carry)]
    return stage(f, cond_jaxpr.in_avals[:n_cc] + body_jaxpr.in_avals, name="while guarded")


def _while_jvp(primals, tangents, cond_jaxpr, body_jaxpr, n_cc, n_bc):
    trips = _trip_count(primals, cond_jaxpr, body_jaxpr, n_cc, n_bc)
    if trips is not None:  # a scan of known length: every mode works
        n, guarded = trips
        if guarded:
            body, consts_p, consts_t = _guarded_body(cond_jaxpr, body_jaxpr, n_cc, n_bc), \
                primals[:n_cc + n_bc], tangents[:n_cc + n_bc]
        else:
            body, consts_p, consts_t = body_jaxpr, primals[n_cc:n_cc + n_bc], \
                tangents[n_cc:n_cc + n_bc]
        carry_p, carry_t = primals[n_cc + n_bc:], tangents[n_cc + n_bc:]
        return _scan_jvp(list(consts_p) + list(carry_p), list(consts_t) + list(carry_t),
                         jaxpr=body, n_consts=len(consts_p), n_carry=len(carry_p), length=n,
                         reverse=False)
    # Symbolic values (under jit): forward mode as a while over (carry, tangent carry).
    cc, bc, carry = _split(primals, n_cc, n_bc)
    _, tbc, tcarry = _split(tangents, n_cc, n_bc)
    nz_bc = [type(t) is not Zero for t in tbc]
    jvp_body, _ = jvp_jaxpr(body_jaxpr, nz_bc + [True] * len(carry), instantiate=True)
    nb, nc = n_bc, len(carry)
    perm = list(range(nb)) + list(range(nb + nc, nb + nc + sum(nz_bc))) + \
        list(range(nb, nb + nc)) + list(range(nb + nc + sum(nz_bc), nb + 2 * nc + sum(nz_bc)))
    jvp_body = _reorder(jvp_body, perm, list(range(2 * nc)))
    jvp_cond = stage(lambda *a: eval_jaxpr(cond_jaxpr.jaxpr, [], *a[:n_cc + nc]),
                     cond_jaxpr.in_avals + [c for c in cond_jaxpr.in_avals[n_cc:]])
    t_bc = [t for t in tbc if type(t) is not Zero]
    t_carry = [materialize(t, get_aval(c)) for t, c in zip(tcarry, carry)]
    out = while_p.bind(*cc, *bc, *t_bc, *carry, *t_carry, cond_jaxpr=jvp_cond,
                       body_jaxpr=jvp_body, n_cc=n_cc, n_bc=nb + len(t_bc))
    # The primal result comes from a primal-only loop, so it does not depend on the tangents
    # (partial evaluation then keeps it known; the tangent loop recomputes the primal).
    primal = while_p.bind(*cc, *bc, *carry, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                          n_cc=n_cc, n_bc=n_bc)
    return primal, out[nc:]


def _while_transpose(cts, *args, **params):
    raise FxadTypeError(
        "reverse-mode differentiation of while_loop needs its trip count, which is unknown "
        "when the loop is staged (under jit). Use fxad.lax.fori_loop with static bounds or "
        "fxad.lax.scan, or take the gradient outside jit (eager while_loop is reversible).")


def _while_batch(vals, dims, cond_jaxpr, body_jaxpr, n_cc, n_bc):
    from ..api import vmap
    n = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    cc, bc, carry = _split(vals, n_cc, n_bc)
    ccd, bcd, _ = _split(dims, n_cc, n_bc)
    carry = [broadcast_batched(c, d, n) for c, d in zip(carry, dims[n_cc + n_bc:])]
    carry_axes = (0,) * len(carry)
    avals = lambda xs: [get_aval(x) for x in xs]  # noqa: E731
    # Every example keeps its own predicate: the loop runs while any is true, and the
    # body leaves finished examples unchanged.
    any_cond = stage(lambda *a: [ops.reduce_max(ops.convert_element_type(
        vmap(call(cond_jaxpr), in_axes=tuple(ccd) + carry_axes, axis_size=n)(*a)[0],
        np.int8), (0,))], avals(cc) + avals(carry), name="while vmap cond")
    guarded = _guarded_body(cond_jaxpr, body_jaxpr, n_cc, n_bc)
    body = stage(lambda *a: vmap(call(guarded), in_axes=tuple(ccd) + tuple(bcd) + carry_axes,
                                 axis_size=n)(*a), avals(cc) + avals(bc) + avals(carry),
                 name="while vmap body")
    out = while_p.bind(*cc, *cc, *bc, *carry, cond_jaxpr=any_cond, body_jaxpr=body,
                       n_cc=n_cc, n_bc=n_cc + n_bc)
    return out, [0] * len(out)


while_p.jvp = _while_jvp
while_p.transpose = _while_transpose
while_p.batch = _while_batch

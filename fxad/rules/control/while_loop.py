"""`while_loop`: while cond(carry): carry = body(carry). Bodies are closed jaxprs without
constants (closures are hoisted into operands by fxad.control_flow).

while_loop(*cond_consts, *body_consts, *init; cond_jaxpr, body_jaxpr, n_cc, n_bc):
  JVP        when the loop's values are concrete (eager mode, even under vmap), the trip
             count is known: the loop is differentiated as a scan of that length, so reverse
             mode works (JAX refuses this). Otherwise (under jit) forward mode works and
             reverse mode raises an error that suggests fori_loop or scan.
  batching   a batched predicate keeps finished examples fixed with `select`.
  jet        a while loop of the body's jet; the predicate reads the primal carry.
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray, Tracer, get_aval
from ...errors import FxadTypeError
from ...interpreters.batching import BatchTracer
from ...interpreters.jet import deinterleave, interleave, jet_jaxpr, series_nonzero
from ...interpreters.jvp import JVPTracer, Zero, jvp_jaxpr
from ...interpreters.tape import TapeTracer
from ...ir.codegen import compiled_for
from ...ir.jaxpr import eval_jaxpr
from ...ir.staging import stage
from .cond import call, materialize
from ..helpers import batched_at_0, broadcast_batched
from .scan import _reorder, _scan_jvp, _split
from .. import ops


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
    while isinstance(x, (JVPTracer, TapeTracer)):  # both carry the concrete value inside
        x = x.primal if type(x) is JVPTracer else x.val
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
    return int(np.max(batched_at_0(lambda *a: [count(*a)], vals, dims)[0])), True


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
    n = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    cc, bc, carry = _split(vals, n_cc, n_bc)
    ccd, bcd, _ = _split(dims, n_cc, n_bc)
    carry = [broadcast_batched(c, d, n) for c, d in zip(carry, dims[n_cc + n_bc:])]
    carry_axes = [0] * len(carry)
    avals = lambda xs: [get_aval(x) for x in xs]  # noqa: E731
    # Every example keeps its own predicate: the loop runs while any is true, and the
    # body leaves finished examples unchanged.
    any_cond = stage(lambda *a: [ops.reduce_max(ops.convert_element_type(
        batched_at_0(call(cond_jaxpr), a, ccd + carry_axes, n)[0], np.int8), (0,))],
        avals(cc) + avals(carry), name="while vmap cond")
    guarded = _guarded_body(cond_jaxpr, body_jaxpr, n_cc, n_bc)
    body = stage(lambda *a: batched_at_0(call(guarded), a, ccd + bcd + carry_axes, n),
                 avals(cc) + avals(bc) + avals(carry), name="while vmap body")
    out = while_p.bind(*cc, *cc, *bc, *carry, cond_jaxpr=any_cond, body_jaxpr=body,
                       n_cc=n_cc, n_bc=n_cc + n_bc)
    return out, [0] * len(out)


while_p.def_jvp(_while_jvp)
while_p.derivable = False  # its JVP needs the concrete trip count (eager grad: staged path)
while_p.def_transpose(_while_transpose, linear=False)  # an error naming the fix
while_p.def_batch(_while_batch)


def _while_jet(primals, series, cond_jaxpr, body_jaxpr, n_cc, n_bc):
    """A while loop of the body's jet; the predicate sees the primal carry only."""
    order = len(series[0])
    _, nz_b, nz_carry = _split(series_nonzero(series), n_cc, n_bc)
    while True:  # fixpoint of the carry's pattern, as for scan
        body, out_nz = jet_jaxpr(body_jaxpr, order, nz_b + nz_carry, nz_carry)
        new = [a or b for a, b in zip(nz_carry, out_nz)]
        if new == nz_carry:
            break
        nz_carry = new
    key = ("jet cond", order, tuple(nz_carry))
    cond = cond_jaxpr.cache.get(key)
    if cond is None:
        def f(*a):
            carry = deinterleave(a[n_cc:], nz_carry, order)[0]
            return eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *a[:n_cc], *carry)
        carry_avals = []  # each carry's aval, then its coefficients
        for a, nz in zip(cond_jaxpr.in_avals[n_cc:], nz_carry):
            carry_avals += [a] * (1 + order * nz)
        cond = cond_jaxpr.cache[key] = stage(f, cond_jaxpr.in_avals[:n_cc] + carry_avals,
                                             name="while jet cond")
    cc, bc, carry = _split(primals, n_cc, n_bc)
    _, s_bc, s_carry = _split(series, n_cc, n_bc)
    bcs = interleave(bc, s_bc, nz_b, order)
    flat = while_p.bind(*cc, *bcs, *interleave(carry, s_carry, nz_carry, order),
                        cond_jaxpr=cond, body_jaxpr=body, n_cc=n_cc, n_bc=len(bcs))
    return deinterleave(flat, nz_carry, order)


while_p.def_jet(_while_jet)


def _while_numba(ctx, args, cond_jaxpr, body_jaxpr, n_cc, n_bc):
    """The loop in compiled code (jit's numba backend), predicate and body inline."""
    cc, bc, carry = _split(args, n_cc, n_bc)
    k = [ctx.fresh("k") for _ in carry]
    for name, c in zip(k, carry):
        ctx.emit(f"{name} = {c}")
    ctx.emit("while True:")
    with ctx.indent():
        go = ctx.inline(cond_jaxpr, list(cc) + k)
        if go is None:
            return None
        ctx.emit(f"if not {go[0]}:")
        ctx.emit("    break")
        outs = ctx.inline(body_jaxpr, list(bc) + k)
        if outs is None:
            return None
        if k:
            ctx.emit(f"{', '.join(k)}, = {', '.join(outs)},")
    return k


while_p.def_lowering(_while_numba, backend="numba")

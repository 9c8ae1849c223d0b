"""`cond`: choose one of several branch programs by an integer index (switch; cond is the
two-branch case). Branches are closed jaxprs without constants (closures are hoisted into
operands by fxad.control_flow), all with the same input and output types.

  JVP        concrete index: differentiate the branch taken, in place. Traced index (under
             jit): JVP every branch, split each by partial evaluation into a known and a
             linear part with one shared residual signature, and emit two conds.
  transpose  a cond of the branches' backward passes (the index is known).
  jet        concrete index: the jet of the branch taken; traced: a cond of the branches'
             jets (Taylor coefficients follow the primal's branch).
  batching   unbatched index: a cond of batched branches; batched index: run every branch
             on the whole batch and `select` per example.
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray, Tracer, get_aval
from ..helpers import batched_at_0, bdim_to_front
from ...interpreters.jet import deinterleave, interleave, jet_flat, jet_jaxpr, series_nonzero
from ...interpreters.jvp import Zero, jvp_flat
from ...interpreters.partial_eval import linearize_jaxpr
from ...interpreters.transpose import backward_pass, is_undefined
from ...ir.codegen import compiled_for
from ...ir.jaxpr import eval_jaxpr
from ...ir.staging import stage
from .. import ops


def call(closed):
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)


def materialize(ct, aval):
    return np.zeros(aval.shape, aval.dtype) if ct is None or type(ct) is Zero else ct


cond_p = Primitive("cond", multiple_results=True)
cond_p.def_impl(lambda index, *args, branches: list(compiled_for(branches[int(index)])(*args)))
cond_p.def_abstract_eval(lambda index, *avals, branches: [
    ShapedArray(a.shape, a.dtype) for a in branches[0].out_avals])


def _split_branches(branches, nonzero):
    """Known and linear branch programs with one residual signature: residual slots for
    every branch, each branch filling its own and zeros elsewhere."""
    key = ("cond_jvp", tuple(branches[1:]), tuple(nonzero))  # objects, not ids: ids get reused
    hit = branches[0].cache.get(key)
    if hit is not None:
        return hit
    n_out = len(branches[0].out_avals)
    splits = []
    for b in branches:
        known, lin, _, _ = linearize_jaxpr(b, nonzero, instantiate=True)
        splits.append((known, lin, known.out_avals[n_out:]))
    res_avals = [r for _, _, r in splits]
    offsets = np.cumsum([0] + [len(r) for r in res_avals])
    t_avals = [a for a, nz in zip(branches[0].in_avals, nonzero) if nz]

    def padded_known(i, known):
        def f(*args):
            o = eval_jaxpr(known.jaxpr, known.consts, *args)
            pad = []
            for j, avs in enumerate(res_avals):
                pad += o[n_out:] if j == i else [np.zeros(a.shape, a.dtype) for a in avs]
            return o[:n_out] + pad
        return stage(f, known.in_avals, name="cond known")

    def padded_lin(i, lin):
        def f(*args):
            mine = args[offsets[i]:offsets[i + 1]]
            return eval_jaxpr(lin.jaxpr, lin.consts, *mine, *args[offsets[-1]:])
        return stage(f, [a for r in res_avals for a in r] + t_avals, name="cond linear")
    hit = (tuple(padded_known(i, k) for i, (k, _, _) in enumerate(splits)),
           tuple(padded_lin(i, lz) for i, (_, lz, _) in enumerate(splits)))
    branches[0].cache[key] = hit
    return hit


def _cond_jvp(primals, tangents, branches):
    index, *args = primals
    targs = tangents[1:]
    if not isinstance(index, Tracer):  # the branch is known now: differentiate it in place
        return jvp_flat(call(branches[int(index)]), list(args), list(targs), name="cond")
    nonzero = [type(t) is not Zero for t in targs]
    known, lin = _split_branches(branches, nonzero)
    n_out = len(branches[0].out_avals)
    res = cond_p.bind(index, *args, branches=known)
    touts = cond_p.bind(index, *res[n_out:], *[t for t in targs if type(t) is not Zero],
                        branches=lin)
    return res[:n_out], touts


def _cond_transpose(cts, index, *args, branches):
    undef = [is_undefined(a) for a in args]
    known = [a for a in args if not is_undefined(a)]
    cts = [materialize(ct, a) for ct, a in zip(cts, branches[0].out_avals)]

    def transposed(b):
        def f(*xs):
            it = iter(xs[:len(known)])
            full = [a if u else next(it) for a, u in zip(args, undef)]
            res = backward_pass(b.jaxpr, b.consts, list(xs[len(known):]), args=full)
            return [materialize(r, a.aval) for r, a, u in zip(res, args, undef) if u]
        return stage(f, [get_aval(k) for k in known] + [get_aval(c) for c in cts],
                     name="cond transpose")
    out = iter(cond_p.bind(index, *known, *cts,
                           branches=tuple(transposed(b) for b in branches)))
    return [None] + [next(out) if u else None for u in undef]


def _cond_batch(vals, dims, branches):
    index, *args = vals
    idim, *adims = dims
    n = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    n_out = len(branches[0].out_avals)
    if idim is None:
        avals = [get_aval(a) for a in args]
        bs = tuple(stage(lambda *a, b=b: batched_at_0(call(b), a, adims, n), avals,
                         name="cond vmap") for b in branches)
        return cond_p.bind(index, *args, branches=bs), [0] * n_out
    # A batched index: every branch on the whole batch, then select per example.
    outs = [batched_at_0(call(b), args, adims, n) for b in branches]
    index = bdim_to_front(index, idim)
    result = list(outs[0])
    for i in range(1, len(branches)):
        for k in range(n_out):
            nd = len(get_aval(result[k]).shape)
            pick = ops.reshape(ops.eq(index, i), (n,) + (1,) * (nd - 1))
            result[k] = ops.select(pick, outs[i][k], result[k])
    return result, [0] * n_out


cond_p.def_jvp(_cond_jvp)
cond_p.derivable = False  # its JVP differentiates the branch taken when the index is known
# in its operands, when its branches are (the linear half of a JVP)
cond_p.def_transpose(_cond_transpose)
cond_p.def_batch(_cond_batch)


def _cond_jet(primals, series, branches):
    index, *args = primals
    order = len(series[0])
    if not isinstance(index, Tracer):  # the branch is known now: its jet in place
        return jet_flat(call(branches[int(index)]), list(args), series[1:], order,
                        name="cond")
    nz = series_nonzero(series[1:])
    inst = [any(col) for col in zip(*[jet_jaxpr(b, order, nz)[1] for b in branches])]
    jets = tuple(jet_jaxpr(b, order, nz, inst)[0] for b in branches)
    flat = cond_p.bind(index, *interleave(args, series[1:], nz, order), branches=jets)
    return deinterleave(flat, inst, order)


cond_p.def_jet(_cond_jet)


def _cond_numba(ctx, args, branches):
    """if/elif/else in compiled code (jit's numba backend); the index is in range (switch
    clamps it), as the impl's branches[index] needs."""
    index, *ops = args
    outs = [ctx.fresh("o") for _ in branches[0].out_avals]
    n = len(branches)
    for i, b in enumerate(branches):
        ctx.emit("else:" if i == n - 1 and n > 1 else
                 f"{'if' if i == 0 else 'elif'} {index} == {i}:" if n > 1 else "if True:")
        with ctx.indent():
            got = ctx.inline(b, ops)
            if got is None:
                return None
            for o, g in zip(outs, got):
                ctx.emit(f"{o} = {g}")
            if not outs:
                ctx.emit("pass")
    return outs


cond_p.def_lowering(_cond_numba, backend="numba")

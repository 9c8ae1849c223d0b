"""The SPMD map primitive that `pmap` and `shard_map` bind: one program (the *body*, staged
once for one shard) run for every index of a named axis, its collectives carried out across
the indices.

  spmd(*args, body, axis_name, size, in_dims, out_dims, executor)

`body` is a closed jaxpr taking (index, *one shard of each argument) and returning one shard
of each output; argument j is split along `in_dims[j]` (None: the same for every shard) and
output k is stacked along `out_dims[k]`. `executor` runs it: None runs it in process, as
`vmap(body, axis_name=axis_name)` (the reference semantics); a distributed executor
(fxad.distributed.DaskExecutor) runs the shards elsewhere. Every transformation of it
transforms the body and binds spmd again with the same executor, so the derivative of a
distributed program runs distributed too:

  JVP        the body linearized (per shard): a known program (outputs and residuals,
             residuals stacked along axis 0) and a linear one (tangents), both spmd calls
  transpose  the backward pass of the (linear) body, per shard, as an spmd call; the
             cotangent of an argument shared by all shards is the sum over shards
  batching   the body batched (per shard), the batch axis at 0 of every shard
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray, Tracer, get_aval, new_trace
from ...interpreters.batching import batch_jaxpr, vmap_flat
from ...interpreters.jvp import Zero
from ...interpreters.named_axes import axis_frame, batching_key
from ...interpreters.partial_eval import linearize_jaxpr
from ...interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined
from ...ir.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from ...ir.staging import StagingTrace
from .. import ops
from ..helpers import broadcast_batched, moveaxis

__all__ = ["spmd_p", "stage_body", "run_in_process"]


class _Replicated:
    """The owner of a body's axis while the body is staged: a collective none of whose
    operands is traced gets a value that is the same at every index, so it is computed now,
    by its batching rule with no batched operand, and the current index picks that index's
    result where they differ."""
    level = -1

    def __init__(self, name, size, index):
        self.name, self.size, self.index = name, size, index

    def process_primitive(self, prim, args, params):
        out, d = prim.batch(list(args), [None] * len(args), frame=(self.name, self.size),
                            **params)
        if d is None:
            return out
        if self.index is None:
            raise AssertionError("fxad internal error: a collective of replicated operands "
                                 "differs by index in a transformed SPMD body")
        return ops.getitem(moveaxis(out, d, 0), self.index)


def stage_body(fun, in_avals, axis_name, size):
    """Stage `fun(*shard args)` as a body (index, *shard args) -> shard outputs, with the axis
    bound: axis_index is the index input, collectives are recorded. Returns (closed jaxpr,
    lifted): values of enclosing transformations the body closes over (an outer map's
    index, a value being differentiated) become inputs after the index, the same for every
    shard; `lifted` lists them, to be passed first (the body is then valid for this call
    only)."""
    with new_trace(StagingTrace, "pmap") as trace:
        index = trace.new_arg(ShapedArray((), np.dtype(np.int32)))
        args = [trace.new_arg(a) for a in in_avals]
        with axis_frame(axis_name, size, _Replicated(axis_name, size, index), index):
            outs = fun(*args)
        # closed-over arrays are copied now (as jit does): later in-place changes to them do
        # not reach the cached body
        closed = trace.to_jaxpr(outs).snapshot()
    j = closed.jaxpr
    lift = [i for i, c in enumerate(closed.consts) if isinstance(c, Tracer)]
    if not lift:
        return closed, []
    keep = [i for i in range(len(j.constvars)) if i not in lift]
    new = Jaxpr([j.constvars[i] for i in keep],
                j.invars[:1] + [j.constvars[i] for i in lift] + j.invars[1:], j.eqns, j.outvars)
    return ClosedJaxpr(new, [closed.consts[i] for i in keep]), \
        [closed.consts[i] for i in lift]


def _retrace(fun, in_avals, axis_name, size):
    """Stage a transformation of a body: the axis is bound again (its collectives are
    applied to traced values)."""
    with new_trace(StagingTrace, "pmap") as trace:
        args = [trace.new_arg(a) for a in in_avals]
        with axis_frame(axis_name, size, _Replicated(axis_name, size, None)):
            outs = fun(*args)
        return trace.to_jaxpr(outs)


def _shard_aval(a, d):
    return a if d is None else ShapedArray(a.shape[:d] + a.shape[d + 1:], a.dtype)


def _global_aval(a, d, size):
    return ShapedArray(a.shape[:d] + (size,) + a.shape[d:], a.dtype)


def run_in_process(args, body, axis_name, size, in_dims, out_dims):
    """The reference executor: the body vmapped over the named axis."""
    index = np.arange(size, dtype=np.int32)
    outs, dims = vmap_flat(lambda i, *a: eval_jaxpr(body.jaxpr, body.consts, i, *a),
                           [index, *args], [0, *in_dims], size, name="pmap",
                           axis_name=axis_name)
    res = []
    for o, d, od in zip(outs, dims, out_dims):
        if d is None:
            o, d = broadcast_batched(o, None, size), 0
        res.append(moveaxis(o, d, od))
    return res


def _impl(*args, body, axis_name, size, in_dims, out_dims, executor):
    if executor is None:
        return run_in_process(list(args), body, axis_name, size, in_dims, out_dims)
    return executor.run(list(args), body, axis_name, size, in_dims, out_dims)


def _abstract(*avals, body, axis_name, size, in_dims, out_dims, executor):
    return [_global_aval(a, d, size) for a, d in zip(body.out_avals, out_dims)]


def _params(body, p, in_dims, out_dims):
    return dict(body=body, axis_name=p["axis_name"], size=p["size"], in_dims=tuple(in_dims),
                out_dims=tuple(out_dims), executor=p["executor"])


# --- JVP -----------------------------------------------------------------------------------------

def _jvp(primals, tangents, **p):
    body, name, size, in_dims = p["body"], p["axis_name"], p["size"], p["in_dims"]
    nonzero = tuple(type(t) is not Zero for t in tangents)
    key = ("spmd jvp", nonzero)
    split = body.cache.get(key)
    if split is None:
        with axis_frame(name, size, _Replicated(name, size, None)):
            known, linear, out_nz, n_res = linearize_jaxpr(body, (False,) + nonzero)
        # the linear program takes the index too (unused), as every body does
        lin_avals = linear.in_avals
        linear = _retrace(lambda i, *a: eval_jaxpr(linear.jaxpr, linear.consts, *a),
                          [ShapedArray((), np.dtype(np.int32))] + lin_avals, name, size)
        split = body.cache[key] = (known, linear, out_nz, n_res)
    known, linear, out_nz, n_res = split
    n_out = len(body.out_avals)
    res = spmd_p.bind(*primals, **_params(known, p, in_dims,
                                          tuple(p["out_dims"]) + (0,) * n_res))
    outs, residuals = res[:n_out], res[n_out:]
    nz_t = [t for t in tangents if type(t) is not Zero]
    nz_dims = [d for d, t in zip(in_dims, tangents) if type(t) is not Zero]
    out_dims_nz = [d for d, nz in zip(p["out_dims"], out_nz) if nz]
    touts = iter(spmd_p.bind(*residuals, *nz_t,
                             **_params(linear, p, (0,) * n_res + tuple(nz_dims), out_dims_nz))
                 if out_dims_nz else [])
    return outs, [next(touts) if nz else Zero(get_aval(o)) for o, nz in zip(outs, out_nz)]


# --- transpose -----------------------------------------------------------------------------------

def _transpose(cts, *args, **p):
    body, name, size = p["body"], p["axis_name"], p["size"]
    in_dims, out_dims = p["in_dims"], p["out_dims"]
    lin = [is_undefined(a) for a in args]
    ct_avals = [_shard_aval(a, None) for a in body.out_avals]
    key = ("spmd transpose", tuple(lin))
    tbody = body.cache.get(key)
    if tbody is None:
        shard_in = body.in_avals[1:]
        res_avals = [a for a, u in zip(shard_in, lin) if not u]

        def backward(i, *vals):
            res, cts_ = iter(vals[:len(res_avals)]), vals[len(res_avals):]
            full = [UndefinedPrimal(a) if u else next(res) for a, u in zip(shard_in, lin)]
            got = backward_pass(body.jaxpr, body.consts, list(cts_), args=[i] + full)[1:]
            return [np.zeros(a.shape, a.dtype) if type(g) is Zero else g
                    for g, a, u in zip(got, shard_in, lin) if u]
        tbody = body.cache[key] = _retrace(
            backward, [ShapedArray((), np.dtype(np.int32))] + res_avals + ct_avals, name, size)
    values = [a for a, u in zip(args, lin) if not u]
    value_dims = [d for d, u in zip(in_dims, lin) if not u]
    cts = [np.zeros(a.shape, a.dtype) if type(ct) is Zero or ct is None else ct
           for ct, a in zip(cts, _abstract(**p))]
    lin_dims = [d for d, u in zip(in_dims, lin) if u]
    # a cotangent of a shared argument comes back per shard (at axis 0) and is summed
    outs = spmd_p.bind(*values, *cts, **_params(
        tbody, p, tuple(value_dims) + tuple(out_dims),
        [0 if d is None else d for d in lin_dims]))
    outs = iter([ops.reduce_sum(o, (0,)) if d is None else o for o, d in zip(outs, lin_dims)])
    return [next(outs) if u else None for u in lin]


# --- batching ------------------------------------------------------------------------------------

def _batch(vals, dims, **p):
    body, in_dims, out_dims = p["body"], p["in_dims"], p["out_dims"]
    n = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    moved, new_in, shard_dims = [], [], []
    for v, d, m in zip(vals, dims, in_dims):
        if d is None:
            moved.append(v)
            new_in.append(m)
            shard_dims.append(None)
            continue
        # the batch axis first; the mapped axis (at m of the unbatched value) follows it
        moved.append(moveaxis(v, d, 0))
        new_in.append(None if m is None else m + 1)
        shard_dims.append(0)
    key = ("spmd vmap", tuple(shard_dims), n, batching_key())
    hit = body.cache.get(key)
    if hit is None:
        def front(outs, ds):
            return [o if d is None else moveaxis(o, d, 0) for o, d in zip(outs, ds)], \
                [None if d is None else 0 for d in ds]
        with axis_frame(p["axis_name"], p["size"], _Replicated(p["axis_name"], p["size"], None)):
            hit = body.cache[key] = batch_jaxpr(body, [None] + shard_dims, n, front)
    batched, shard_out = hit
    new_out = [od if d is None else od + 1 for od, d in zip(out_dims, shard_out)]
    outs = spmd_p.bind(*moved, **_params(batched, p, new_in, new_out))
    return outs, [None if d is None else 0 for d in shard_out]


spmd_p = Primitive("spmd", multiple_results=True)
spmd_p.def_impl(_impl)
spmd_p.def_abstract_eval(_abstract)
spmd_p.def_jvp(_jvp)
spmd_p.derivable = False  # its parameters hold an executor (eager grad: staged)
spmd_p.def_transpose(_transpose)
spmd_p.def_batch(_batch)
spmd_p.def_lowering(lambda ctx, args, **params: None)  # a call of its impl: the executor

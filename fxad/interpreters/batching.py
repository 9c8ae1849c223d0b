"""vmap's interpreter: tracers carry (value, batch axis); each primitive's batching rule maps a
batched application to one call of (usually) the same primitive on the whole batch.

A rule is `rule(vals, dims, **params) -> (out, out_dim)` (lists for multiple results), where a
dim is an int axis of that value or None (not batched). Values whose dim is None are left
unboxed, so work that does not depend on the mapped inputs is done once. The helpers rules
use to move batch axes (moveaxis, broadcast_batched, ...) bind primitives, so they live with
the rules, in fxad/rules/helpers.py.
"""
from __future__ import annotations

from ..core import ShapedArray, Trace, Tracer, get_aval, missing_rule, new_trace


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim", "_aval")

    def __init__(self, trace, val, bdim):
        self._trace = trace
        self.val = val
        self.bdim = bdim
        self._aval = None

    @property
    def aval(self):  # the per-example value: the batch axis removed
        a = self._aval
        if a is None:
            v = get_aval(self.val)
            a = self._aval = ShapedArray(v.shape[:self.bdim] + v.shape[self.bdim + 1:], v.dtype)
        return a


class BatchTrace(Trace):
    kind = "vmap"

    def __init__(self, level, name=None, axis_size=None):
        super().__init__(level, name)
        self.axis_size = axis_size

    def unbox(self, x):
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.bdim
        return x, None

    def box(self, val, bdim):
        return val if bdim is None else BatchTracer(self, val, bdim)

    def process_primitive(self, prim, args, params):
        vals, dims = zip(*[self.unbox(a) for a in args])
        rule = prim.batch
        if rule is None:
            raise missing_rule("Batching", prim)
        out, out_dim = rule(list(vals), list(dims), **params)
        if prim.multiple_results:
            return [self.box(o, d) for o, d in zip(out, out_dim)]
        return self.box(out, out_dim)


# --- entry points ----------------------------------------------------------------------------

def vmap_flat(fun, args, in_dims, axis_size, name="vmap"):
    """Run `fun` (flat args -> list of outputs) batched: arguments with a dim in `in_dims`
    carry that batch axis, the others are shared. Returns (outputs, out_dims), each output's
    batch axis where the rules left it (None: the output does not depend on the batch).
    Moving axes is the caller's business (rules/helpers.py has moveaxis)."""
    with new_trace(BatchTrace, name, axis_size=axis_size) as trace:
        outs = fun(*[trace.box(x, d) for x, d in zip(args, in_dims)])
        pairs = [trace.unbox(o) for o in outs]
    return [v for v, _ in pairs], [d for _, d in pairs]


def batch_jaxpr(closed, in_dims, axis_size, out_dims_fn=None):
    """A closed jaxpr batched along `in_dims` (its inputs' avals given with their batch
    axes), staged. Returns (jaxpr, out_dims). `out_dims_fn(outs, dims) -> outs` may move the
    outputs' axes while staging (then it returns the new dims as its second result)."""
    from ..ir.jaxpr import eval_jaxpr
    from ..ir.staging import stage
    avals = [a if d is None else ShapedArray(a.shape[:d] + (axis_size,) + a.shape[d:], a.dtype)
             for a, d in zip(closed.in_avals, in_dims)]
    found = []

    def fun(*args):
        outs, dims = vmap_flat(lambda *a: eval_jaxpr(closed.jaxpr, closed.consts, *a),
                               list(args), in_dims, axis_size, name="vmap of a jaxpr")
        if out_dims_fn is not None:
            outs, dims = out_dims_fn(outs, dims)
        found[:] = dims
        return outs
    return stage(fun, avals, name="vmap of a jaxpr"), found

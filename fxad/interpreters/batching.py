"""vmap's interpreter: tracers carry (value, batch axis); each primitive's batching rule maps a
batched application to one call of (usually) the same primitive on the whole batch.

A rule is `rule(vals, dims, **params) -> (out, out_dim)` (lists for multiple results), where a
dim is an int axis of that value or None (not batched). Values whose dim is None are left
unboxed, so work that does not depend on the mapped inputs is done once. The helpers rules
use to move batch axes (moveaxis, broadcast_batched, ...) bind primitives, so they live with
the rules, in fxad/rules/helpers.py.

Named axes: a trace may carry an axis name (`vmap(f, axis_name='i')`); it then owns that name
in the axis environment (fxad/interpreters/named_axes.py) and collectives over it reduce along
its batch dimension. A collective's batching rule is given the trace's `frame=(name, size)`.
While a named trace runs a rule, batching started by the rule (a jit call's or a loop's body
vmapped) continues the same named axis.
"""
from __future__ import annotations

from ..core import ShapedArray, Trace, Tracer, get_aval, missing_rule, new_trace
from .named_axes import _env, axis_frame

_INHERIT = object()  # vmap_flat's default axis name: the axis whose rule is running now


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

    def __init__(self, level, name=None, axis_size=None, axis_name=None):
        super().__init__(level, name)
        self.axis_size = axis_size
        self.axis_name = axis_name

    def unbox(self, x):
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.bdim
        return x, None

    def box(self, val, bdim):
        return val if bdim is None else BatchTracer(self, val, bdim)

    def process_primitive(self, prim, args, params):
        vals, dims = [], []
        for a in args:
            v, d = self.unbox(a)
            vals.append(v)
            dims.append(d)
        rule = prim.batch
        if rule is None:
            raise missing_rule("Batching", prim)
        env = _env
        prev = env.batch_axis
        if prev is self.axis_name and not prim.collective:  # the common case: nothing to set
            out, out_dim = rule(vals, dims, **params)
        else:
            env.batch_axis = self.axis_name
            try:
                if prim.collective:
                    out, out_dim = rule(vals, dims, frame=(self.axis_name, self.axis_size),
                                        **params)
                else:
                    out, out_dim = rule(vals, dims, **params)
            finally:
                env.batch_axis = prev
        if prim.multiple_results:
            return [self.box(o, d) for o, d in zip(out, out_dim)]
        return self.box(out, out_dim)


# --- entry points ----------------------------------------------------------------------------

def vmap_flat(fun, args, in_dims, axis_size, name="vmap", axis_name=_INHERIT):
    """Run `fun` (flat args -> list of outputs) batched: arguments with a dim in `in_dims`
    carry that batch axis, the others are shared. Returns (outputs, out_dims), each output's
    batch axis where the rules left it (None: the output does not depend on the batch).
    Moving axes is the caller's business (rules/helpers.py has moveaxis). `axis_name`: the
    name the batch axis binds (default: that of the batching rule running now, if any)."""
    if axis_name is _INHERIT:
        axis_name = _env.batch_axis
    with new_trace(BatchTrace, name, axis_size=axis_size, axis_name=axis_name) as trace, \
            axis_frame(axis_name, axis_size, trace):
        outs = fun(*[trace.box(x, d) for x, d in zip(args, in_dims)])
        pairs = [trace.unbox(o) for o in outs]
    return [v for v, _ in pairs], [d for _, d in pairs]


def batch_jaxpr(closed, in_dims, axis_size, out_dims_fn=None, axis_name=_INHERIT):
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
                               list(args), in_dims, axis_size, name="vmap of a jaxpr",
                               axis_name=axis_name)
        if out_dims_fn is not None:
            outs, dims = out_dims_fn(outs, dims)
        found[:] = dims
        return outs
    return stage(fun, avals, name="vmap of a jaxpr"), found

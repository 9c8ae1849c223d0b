"""vmap's interpreter: tracers carry (value, batch axis); each primitive's batching rule maps a
batched application to one call of (usually) the same primitive on the whole batch.

A rule is `rule(vals, dims, **params) -> (out, out_dim)` (lists for multiple results), where a
dim is an int axis of that value or None (not batched). Values whose dim is None are left
unboxed, so work that does not depend on the mapped inputs is done once.
"""
from __future__ import annotations

from ..core import ShapedArray, Trace, Tracer, get_aval, missing_rule
from .. import lax  # resolved at call time (lax imports the rule files)


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


# --- helpers for rules -----------------------------------------------------------------------

def ndim_of(x):
    return len(get_aval(x).shape)


def moveaxis(x, src, dst):
    """Move axis `src` of a value to position `dst` with the transpose primitive."""
    nd = ndim_of(x)
    src, dst = src % nd, dst % nd
    if src == dst:
        return x
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return lax.transpose(x, tuple(perm))


def bdim_to_front(x, d):
    return x if d == 0 else moveaxis(x, d, 0)


def broadcast_batched(x, d, size):
    """A value with its batch axis at 0, broadcasting an unbatched one to `size`."""
    if d is None:
        shape = tuple(x.shape) if hasattr(x, "shape") else get_aval(x).shape
        return lax.broadcast_to(lax.reshape(x, (1,) + shape), (size,) + shape)
    return bdim_to_front(x, d)


def batch_size(vals, dims):
    for v, d in zip(vals, dims):
        if d is not None:
            return v.shape[d] if hasattr(v, "shape") else get_aval(v).shape[d]
    raise ValueError("no batched operand")


def defbatch_elementwise(prim):
    """Batching for NumPy-broadcasting primitives: batch axes go to the front and operands
    are aligned by rank; unbatched operands broadcast as they are."""
    def rule(vals, dims, **params):
        ranks = [ndim_of(v) - (d is not None) for v, d in zip(vals, dims)]
        rank = max(ranks)
        bd = {d for d in dims if d is not None}
        if len(bd) == 1:
            d0 = bd.pop()
            # Fast path: batched operands agree on rank and axis, unbatched ones are scalars.
            if all((r == rank) if d is not None else r == 0 for r, d in zip(ranks, dims)):
                return prim.bind(*vals, **params), d0
        new = []
        for v, d, r in zip(vals, dims, ranks):
            if d is not None:
                v = bdim_to_front(v, d)
                if r < rank:
                    shape = v.shape
                    v = lax.reshape(v, (shape[0],) + (1,) * (rank - r) + tuple(shape[1:]))
            new.append(v)
        return prim.bind(*new, **params), 0
    prim.batch = rule


def defbatch_unary_axes(prim, axes_param="axes"):
    """Batching for one-operand primitives whose params name axes of the operand (reductions,
    flip, ...): put the batch axis in front and shift the axes by one."""
    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        x = bdim_to_front(x, d)
        axes = params[axes_param]
        if isinstance(axes, int):
            params = dict(params, **{axes_param: axes + 1})
        else:
            params = dict(params, **{axes_param: tuple(a + 1 for a in axes)})
        out = prim.bind(x, **params)
        return out, 0
    prim.batch = rule

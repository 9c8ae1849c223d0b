"""Collective reductions over named axes: psum, pmax, pmin (and pmean, axis_size and
axis_index, which build on them), with JAX's semantics.

Every value inside a named axis is one per index of the axis; psum gives every index the sum
over the axis (over each group of `axis_index_groups`). Under `vmap(axis_name=...)` that is a
sum along the batch dimension, broadcast back; a `pmap` or `shard_map` records the collective
and its executor carries it out between the shards.

Derivatives follow JAX's (pmap's) convention: outputs are one per index, so psum's transpose
is psum (the cotangents of every index's copy of the sum add up), pmean's is pmean. pmax and
pmin have a JVP (JAX has none): the tangent where the maximum is attained, averaged over ties.
"""
from __future__ import annotations

import math

import numpy as np

from ...core import ShapedArray
from ...errors import FxadTypeError, FxadValueError
from ...interpreters.jvp import Zero
from ...interpreters.named_axes import CollectivePrimitive, axis_size as _axis_size, lookup
from ...tree_util import tree_map
from .. import ops
from ..helpers import broadcast_batched, deflinear, get_aval

__all__ = ["psum", "pmean", "pmax", "pmin", "axis_index", "axis_size"]


# --- shared pieces -----------------------------------------------------------------------------

def axis_names(axis_name, where):
    """`axis_name` as a tuple of names (a tuple lists several axes)."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        if n is None:
            raise FxadValueError(f"{where}: axis_name must name an axis, got None")
        try:
            hash(n)
        except TypeError:
            raise FxadValueError(f"{where}: axis names must be hashable, got {n!r}") from None
    return names


def check_groups(groups, names, where):
    """axis_index_groups as a tuple of tuples, checked: JAX's rule is that the groups cover
    every index of the (single) axis exactly once and have one size."""
    if groups is None:
        return None
    if len(names) != 1:
        raise FxadValueError(f"{where}: axis_index_groups needs exactly one axis name, got "
                             f"{names!r}")
    n = lookup(names[0], where).size
    groups = tuple(tuple(int(i) for i in g) for g in groups)
    flat = sorted(i for g in groups for i in g)
    if flat != list(range(n)) or len({len(g) for g in groups}) != 1:
        raise FxadValueError(
            f"{where}: axis_index_groups={[list(g) for g in groups]} must split the indices "
            f"0..{n - 1} of axis {names[0]!r} into groups of one size, each index in one group")
    return groups


def group_size(names, groups, where):
    return len(groups[0]) if groups is not None else _axis_size(names, where)


def split_names(frame, axis_name):
    """(is the batching trace's axis among the names, the other names)."""
    name = frame[0]
    if name is None or name not in axis_name:
        return False, axis_name
    return True, tuple(a for a in axis_name if a != name)


def grouped(xb, groups, reduce):
    """Per index i (axis 0 of xb), `reduce(rows of i's group, axis=1)`."""
    n = get_aval(xb).shape[0]
    g, k = len(groups), len(groups[0])
    order = np.array([i for grp in groups for i in grp])
    group_of = np.empty(n, np.int64)
    for gi, grp in enumerate(groups):
        group_of[list(grp)] = gi
    rows = ops.getitem(xb, order)
    rows = ops.reshape(rows, (g, k) + tuple(get_aval(xb).shape[1:]))
    return ops.getitem(reduce(rows), group_of)


def rebind(prim):
    """The impl of a collective: bind again, so the transformation that owns the axis answers
    it (a compiled program calls impls directly); with no axis bound, an UnboundAxisError."""
    return lambda *args, **params: prim.bind(*args, **params)


def _check_operand(x, where):
    dt = get_aval(x).dtype
    if dt.kind not in "iufc":
        raise FxadTypeError(f"{where} of a {dt} value: collectives take numbers; convert "
                            "booleans with .astype(int) first")
    return x


def _leaves_op(fn, x):
    return tree_map(fn, x)


# --- psum, pmax, pmin -------------------------------------------------------------------------

def _reduction(name, reduce, unbatched):
    """A collective reduction: `reduce(x, axes)` along the batch dimension under vmap, and
    `unbatched(x, n)` for a value that is the same at every index."""
    p = CollectivePrimitive(name)
    p.def_impl(rebind(p))
    p.def_abstract_eval(lambda x, axis_name, axis_index_groups: ShapedArray(x.shape, x.dtype))

    def batch(vals, dims, *, frame, axis_name, axis_index_groups):
        (x,), (d,) = vals, dims
        mine, rest = split_names(frame, axis_name)
        if not mine:  # another axis: elementwise along this one
            return p.bind(x, axis_name=axis_name, axis_index_groups=axis_index_groups), d
        n = frame[1]
        if axis_index_groups is None:
            y, yd = (unbatched(x, n) if d is None else reduce(x, (d,))), None
        else:
            y, yd = grouped(broadcast_batched(x, d, n), axis_index_groups,
                            lambda r: reduce(r, (1,))), 0
        if rest:
            y = p.bind(y, axis_name=rest, axis_index_groups=None)
        return y, yd
    p.def_batch(batch)
    return p


psum_p = _reduction("psum", ops.reduce_sum, lambda x, n: ops.mul(x, n))
deflinear(psum_p, lambda ct, x, axis_name, axis_index_groups: [
    psum_p.bind(ct, axis_name=axis_name, axis_index_groups=axis_index_groups)])
psum_p.def_lowering(lambda ctx, args, axis_name, axis_index_groups: None)


def _extremum_jvp(prim):
    """The tangent where the extremum is attained, averaged over the indices that tie."""
    def jvp(primals, tangents, axis_name, axis_index_groups):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axis_name=axis_name, axis_index_groups=axis_index_groups)
        if type(t) is Zero:
            return ans, Zero.like(ans)
        at = ops.convert_element_type(ops.eq(x, ans), get_aval(t).dtype)
        kw = dict(axis_name=axis_name, axis_index_groups=axis_index_groups)
        return ans, ops.div(psum_p.bind(ops.mul(t, at), **kw), psum_p.bind(at, **kw))
    return jvp


pmax_p = _reduction("pmax", ops.reduce_max, lambda x, n: x)
pmax_p.def_jvp(_extremum_jvp(pmax_p))
pmax_p.def_lowering(lambda ctx, args, axis_name, axis_index_groups: None)

pmin_p = _reduction("pmin", ops.reduce_min, lambda x, n: x)
pmin_p.def_jvp(_extremum_jvp(pmin_p))
pmin_p.def_lowering(lambda ctx, args, axis_name, axis_index_groups: None)


def _reducer(prim, where):
    def op(x, axis_name, *, axis_index_groups=None):
        names = axis_names(axis_name, where)
        positional = tuple(a for a in names if isinstance(a, int) and not isinstance(a, bool))
        named = tuple(a for a in names if a not in positional)
        groups = check_groups(axis_index_groups, named, where) if named else None

        def leaf(v):
            v = _check_operand(v, where)
            if positional:  # JAX also reduces over array axes given by number
                red = {"psum": ops.reduce_sum, "pmax": ops.reduce_max,
                       "pmin": ops.reduce_min}[prim.name]
                v = red(v, tuple(a % len(get_aval(v).shape) for a in positional))
            if not named:
                return v
            return prim.bind(v, axis_name=named, axis_index_groups=groups)
        return _leaves_op(leaf, x)
    return op


_psum = _reducer(psum_p, "psum")
_pmax = _reducer(pmax_p, "pmax")
_pmin = _reducer(pmin_p, "pmin")


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of `x` (a pytree of arrays) over the named axis (or tuple of axes), the same
    at every index; JAX's `lax.psum`. With `axis_index_groups` (a partition of the axis
    indices into equal groups), sums within each group. Integer axis numbers among the names
    sum over those array axes. Differentiable: its JVP is psum of the tangent and its
    transpose psum (the cotangents of every index's copy add up, as in JAX's pmap)."""
    return _psum(x, axis_name, axis_index_groups=axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of `x` over the named axis (or each group of `axis_index_groups`): psum
    divided by the number of indices summed; JAX's `lax.pmean`. Integers give floats."""
    names = axis_names(axis_name, "pmean")
    named = tuple(a for a in names if not isinstance(a, int) or isinstance(a, bool))
    groups = check_groups(axis_index_groups, named, "pmean") if named else None
    count = group_size(named, groups, "pmean") if named else 1

    def leaf(v):
        s = psum(v, axis_name, axis_index_groups=axis_index_groups)
        n = count * math.prod(int(get_aval(v).shape[a]) for a in names if a not in named)
        if get_aval(s).dtype.kind in "iub":
            s = ops.convert_element_type(s, np.float64)
        return ops.div(s, np.asarray(n, get_aval(s).dtype))
    return tree_map(leaf, x)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of `x` over the named axis, the same at every index; JAX's `lax.pmax`.
    Its JVP (which JAX lacks) is the tangent at the indices holding the maximum, averaged
    over ties."""
    return _pmax(x, axis_name, axis_index_groups=axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of `x` over the named axis; JAX's `lax.pmin`. JVP as pmax's."""
    return _pmin(x, axis_name, axis_index_groups=axis_index_groups)


def axis_size(axis_name):
    """The size of the named axis (the product of the sizes for a tuple of names), a Python
    int; JAX's `lax.axis_size`. An UnboundAxisError outside a transformation binding it."""
    return _axis_size(axis_names(axis_name, "axis_size"), "axis_size")


# --- axis_index -------------------------------------------------------------------------------

def _axis_index_jvp(primals, tangents, axis_name):
    ans = axis_index_p.bind(axis_name=axis_name)
    return ans, Zero.like(ans)


def _axis_index_batch(vals, dims, *, frame, axis_name):
    if frame[0] != axis_name[0]:
        return axis_index_p.bind(axis_name=axis_name), None
    return np.arange(frame[1], dtype=np.int32), 0


axis_index_p = CollectivePrimitive("axis_index")  # one name; axis_index() combines several
axis_index_p.def_impl(rebind(axis_index_p))
axis_index_p.def_abstract_eval(lambda axis_name: ShapedArray((), np.int32))
axis_index_p.def_jvp(_axis_index_jvp)
axis_index_p.def_batch(_axis_index_batch)
axis_index_p.def_lowering(lambda ctx, args, axis_name: None)


def axis_index(axis_name):
    """The index along the named axis (int32), JAX's `lax.axis_index`; for a tuple of names,
    the index in the flattened axes (the first name major)."""
    names = axis_names(axis_name, "axis_index")
    out, stride = None, 1
    for name in reversed(names):
        i = axis_index_p.bind(axis_name=(name,))
        if stride != 1:
            i = ops.mul(i, np.int32(stride))
        out = i if out is None else ops.add(i, out)
        stride *= lookup(name, "axis_index").size
    return out

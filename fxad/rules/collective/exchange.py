"""Collectives that move data between the indices of a named axis: all_gather, psum_scatter,
all_to_all and ppermute, with JAX's semantics. The primitives take one axis name and are
untiled; the `tiled=` forms are reshapes around them. All four are linear, and each one's
transpose is another of them (all_gather <-> psum_scatter, all_to_all with its axes swapped,
ppermute by the inverse permutation)."""
from __future__ import annotations

import numpy as np

from ...core import ShapedArray
from ...errors import FxadValueError
from ...interpreters.named_axes import CollectivePrimitive, lookup
from ...tree_util import tree_map
from .. import ops
from ..helpers import broadcast_batched, deflinear, get_aval, moveaxis
from .reductions import axis_names, check_groups, grouped, rebind, split_names

__all__ = ["all_gather", "psum_scatter", "all_to_all", "ppermute", "pshuffle", "pswapaxes"]


def _one_name(axis_name, where):
    names = axis_names(axis_name, where)
    if len(names) != 1:
        raise FxadValueError(f"{where} over several axes {names!r} is not supported; apply it "
                             "once per axis")
    return names


def _size(names, groups):
    return len(groups[0]) if groups is not None else lookup(names[0]).size


def _axis(a, nd, where, extra=0):
    if not -(nd + extra) <= a < nd + extra:
        raise FxadValueError(f"{where}: axis {a} is out of range for a value of rank {nd}")
    return int(a) % (nd + extra)


def _no_groups(groups, where):
    if groups is not None:
        raise FxadValueError(f"{where}: axis_index_groups is supported by psum, pmean, pmax, "
                             "pmin and all_gather only")


# --- all_gather --------------------------------------------------------------------------------

all_gather_p = CollectivePrimitive("all_gather")
all_gather_p.def_impl(rebind(all_gather_p))


def _all_gather_shape(x, axis_name, axis, axis_index_groups):
    n = _size(axis_name, axis_index_groups)
    return ShapedArray(x.shape[:axis] + (n,) + x.shape[axis:], x.dtype)


def _all_gather_batch(vals, dims, *, frame, axis_name, axis, axis_index_groups):
    (x,), (d,) = vals, dims
    mine, _ = split_names(frame, axis_name)
    if not mine:
        if d is None:
            return all_gather_p.bind(x, axis_name=axis_name, axis=axis,
                                     axis_index_groups=axis_index_groups), None
        x = broadcast_batched(x, d, frame[1])
        return all_gather_p.bind(x, axis_name=axis_name, axis=axis + 1,
                                 axis_index_groups=axis_index_groups), 0
    xb = broadcast_batched(x, d, frame[1])
    if axis_index_groups is None:  # the whole batch, the same for every index
        return moveaxis(xb, 0, axis), None
    rows = grouped(xb, axis_index_groups, lambda r: r)  # (n, k, ...): i's group's rows
    return moveaxis(rows, 1, axis + 1), 0


all_gather_p.def_abstract_eval(_all_gather_shape)
deflinear(all_gather_p, lambda ct, x, axis_name, axis, axis_index_groups: [
    psum_scatter_p.bind(ct, axis_name=axis_name, scatter_dimension=axis,
                        axis_index_groups=axis_index_groups)])
all_gather_p.def_batch(_all_gather_batch)
all_gather_p.def_lowering(lambda ctx, args, **params: None)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every index's `x` (a pytree of arrays), stacked along a new axis `axis` (or, with
    `tiled=True`, concatenated along `axis`), the same at every index; JAX's
    `lax.all_gather`. With `axis_index_groups`, gathers within each group. Linear: its
    transpose is psum_scatter."""
    names = _one_name(axis_name, "all_gather")
    groups = check_groups(axis_index_groups, names, "all_gather")

    def leaf(v):
        shape = get_aval(v).shape
        a = _axis(axis, len(shape), "all_gather", extra=0 if tiled else 1)
        out = all_gather_p.bind(v, axis_name=names, axis=a, axis_index_groups=groups)
        if not tiled:
            return out
        s = get_aval(out).shape
        return ops.reshape(out, s[:a] + (s[a] * s[a + 1],) + s[a + 2:])
    return tree_map(leaf, x)


# --- psum_scatter ------------------------------------------------------------------------------

psum_scatter_p = CollectivePrimitive("psum_scatter")
psum_scatter_p.def_impl(rebind(psum_scatter_p))


def _psum_scatter_shape(x, axis_name, scatter_dimension, axis_index_groups):
    n = _size(axis_name, axis_index_groups)
    if x.shape[scatter_dimension] != n:
        raise FxadValueError(f"psum_scatter: dimension {scatter_dimension} of the operand has "
                             f"size {x.shape[scatter_dimension]}, but axis "
                             f"{axis_name[0]!r} has {n} indices; they must be equal "
                             "(or use tiled=True for a multiple)")
    return ShapedArray(x.shape[:scatter_dimension] + x.shape[scatter_dimension + 1:], x.dtype)


def _psum_scatter_batch(vals, dims, *, frame, axis_name, scatter_dimension, axis_index_groups):
    (x,), (d,) = vals, dims
    mine, _ = split_names(frame, axis_name)
    if not mine:
        if d is None:
            return psum_scatter_p.bind(x, axis_name=axis_name,
                                       scatter_dimension=scatter_dimension,
                                       axis_index_groups=axis_index_groups), None
        x = broadcast_batched(x, d, frame[1])
        return psum_scatter_p.bind(x, axis_name=axis_name, scatter_dimension=scatter_dimension
                                   + 1, axis_index_groups=axis_index_groups), 0
    n = frame[1]
    if axis_index_groups is None:
        total = ops.mul(x, n) if d is None else ops.reduce_sum(x, (d,))
        return moveaxis(total, scatter_dimension, 0), 0  # index i keeps row i of the sum
    # each index: its group's sum, of which it keeps the row of its place in the group
    sums = grouped(broadcast_batched(x, d, n), axis_index_groups,
                   lambda r: ops.reduce_sum(r, (1,)))
    place = np.empty(n, np.int64)
    for grp in axis_index_groups:
        place[list(grp)] = np.arange(len(grp))
    sums = moveaxis(sums, scatter_dimension + 1, 1)
    return ops.getitem(sums, (np.arange(n), place)), 0


psum_scatter_p.def_abstract_eval(_psum_scatter_shape)
deflinear(psum_scatter_p, lambda ct, x, axis_name, scatter_dimension, axis_index_groups: [
    all_gather_p.bind(ct, axis_name=axis_name, axis=scatter_dimension,
                      axis_index_groups=axis_index_groups)])
psum_scatter_p.def_batch(_psum_scatter_batch)
psum_scatter_p.def_lowering(lambda ctx, args, **params: None)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """psum of `x`, of which each index keeps its own slice along `scatter_dimension` (whose
    size must be the axis size; with `tiled=True` a multiple of it, each index keeping one
    block); JAX's `lax.psum_scatter`. Linear: its transpose is all_gather."""
    names = _one_name(axis_name, "psum_scatter")
    groups = check_groups(axis_index_groups, names, "psum_scatter")

    def leaf(v):
        shape = get_aval(v).shape
        sd = _axis(scatter_dimension, len(shape), "psum_scatter")
        if tiled:
            n = _size(names, groups)
            if shape[sd] % n:
                raise FxadValueError(f"psum_scatter: dimension {sd} has size {shape[sd]}, "
                                     f"not a multiple of the {n} indices of {names[0]!r}")
            v = ops.reshape(v, shape[:sd] + (n, shape[sd] // n) + shape[sd + 1:])
        # checked here too: a batching rule given an unbatched operand does not see the shape
        _psum_scatter_shape(get_aval(v), names, sd, groups)
        return psum_scatter_p.bind(v, axis_name=names, scatter_dimension=sd,
                                   axis_index_groups=groups)
    return tree_map(leaf, x)


# --- all_to_all --------------------------------------------------------------------------------

all_to_all_p = CollectivePrimitive("all_to_all")
all_to_all_p.def_impl(rebind(all_to_all_p))


def _all_to_all_shape(x, axis_name, split_axis, concat_axis, axis_index_groups):
    n = _size(axis_name, axis_index_groups)
    if x.shape[split_axis] != n:
        raise FxadValueError(f"all_to_all: split_axis {split_axis} has size "
                             f"{x.shape[split_axis]}, but axis {axis_name[0]!r} has {n} "
                             "indices; they must be equal (or use tiled=True)")
    rest = x.shape[:split_axis] + x.shape[split_axis + 1:]
    return ShapedArray(rest[:concat_axis] + (n,) + rest[concat_axis:], x.dtype)


def _all_to_all_batch(vals, dims, *, frame, axis_name, split_axis, concat_axis,
                      axis_index_groups):
    (x,), (d,) = vals, dims
    mine, _ = split_names(frame, axis_name)
    if not mine and d is None:
        return all_to_all_p.bind(x, axis_name=axis_name, split_axis=split_axis,
                                 concat_axis=concat_axis, axis_index_groups=axis_index_groups), None
    xb = broadcast_batched(x, d, frame[1])
    if not mine:
        return all_to_all_p.bind(xb, axis_name=axis_name, split_axis=split_axis + 1,
                                 concat_axis=concat_axis + 1,
                                 axis_index_groups=axis_index_groups), 0
    _no_groups(axis_index_groups, "all_to_all under vmap")
    # Index i receives slice i of every index j's split axis, j along concat_axis: the split
    # axis becomes the batch axis and the batch axis the concatenated one.
    y = moveaxis(xb, split_axis + 1, 0)
    return moveaxis(y, 1, concat_axis + 1), 0


all_to_all_p.def_abstract_eval(_all_to_all_shape)
deflinear(all_to_all_p, lambda ct, x, axis_name, split_axis, concat_axis, axis_index_groups: [
    all_to_all_p.bind(ct, axis_name=axis_name, split_axis=concat_axis, concat_axis=split_axis,
                      axis_index_groups=axis_index_groups)])
all_to_all_p.def_batch(_all_to_all_batch)
all_to_all_p.def_lowering(lambda ctx, args, **params: None)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Index i gets slice i (along `split_axis`) of every index j's `x`, placed at position j
    of a new axis at `concat_axis` (the split axis removed); with `tiled=True`, the split
    axis is cut into blocks and they are concatenated along `concat_axis`. JAX's
    `lax.all_to_all`. Linear: its transpose is all_to_all with the two axes swapped."""
    names = _one_name(axis_name, "all_to_all")
    groups = check_groups(axis_index_groups, names, "all_to_all")

    def leaf(v):
        shape = get_aval(v).shape
        nd = len(shape)
        s = _axis(split_axis, nd, "all_to_all")
        c = _axis(concat_axis, nd, "all_to_all")
        if not tiled:
            _all_to_all_shape(get_aval(v), names, s, c, groups)  # as psum_scatter's
            return all_to_all_p.bind(v, axis_name=names, split_axis=s, concat_axis=c,
                                     axis_index_groups=groups)
        n = _size(names, groups)
        if shape[s] % n:
            raise FxadValueError(f"all_to_all: split_axis {s} has size {shape[s]}, not a "
                                 f"multiple of the {n} indices of {names[0]!r}")
        v = ops.reshape(v, shape[:s] + (n, shape[s] // n) + shape[s + 1:])
        out = all_to_all_p.bind(v, axis_name=names, split_axis=s, concat_axis=c,
                                axis_index_groups=groups)
        o = get_aval(out).shape  # n inserted at c, before the concatenated axis
        return ops.reshape(out, o[:c] + (o[c] * o[c + 1],) + o[c + 2:])
    return tree_map(leaf, x)


# --- ppermute ----------------------------------------------------------------------------------

ppermute_p = CollectivePrimitive("ppermute")
ppermute_p.def_impl(rebind(ppermute_p))


def _ppermute_batch(vals, dims, *, frame, axis_name, perm):
    (x,), (d,) = vals, dims
    mine, _ = split_names(frame, axis_name)
    if not mine:
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    n = frame[1]
    xb = broadcast_batched(x, d, n)
    src = np.zeros(n, np.int64)
    got = np.zeros(n, bool)
    for s, t in perm:
        src[t], got[t] = s, True
    moved = ops.getitem(xb, src)
    if got.all():
        return moved, 0
    shape = get_aval(moved).shape
    mask = got.reshape((n,) + (1,) * (len(shape) - 1))
    return ops.select(mask, moved, np.zeros((), get_aval(moved).dtype)), 0


ppermute_p.def_abstract_eval(lambda x, axis_name, perm: ShapedArray(x.shape, x.dtype))
deflinear(ppermute_p, lambda ct, x, axis_name, perm: [
    ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((t, s) for s, t in perm))])
ppermute_p.def_batch(_ppermute_batch)
ppermute_p.def_lowering(lambda ctx, args, **params: None)


def ppermute(x, axis_name, perm):
    """Index `dst` gets the `x` of index `src` for each pair (src, dst) in `perm` (each index
    at most once as a source and once as a destination); indices that receive nothing get
    zeros. JAX's `lax.ppermute`. Linear: its transpose is the inverse permutation."""
    names = _one_name(axis_name, "ppermute")
    n = lookup(names[0], "ppermute").size
    perm = tuple((int(s), int(t)) for s, t in perm)
    srcs, dsts = [s for s, _ in perm], [t for _, t in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts) or \
            not all(0 <= i < n for i in srcs + dsts):
        raise FxadValueError(f"ppermute: perm={list(perm)} must pair indices of axis "
                             f"{names[0]!r} (0..{n - 1}), each at most once as a source and "
                             "once as a destination")
    return tree_map(lambda v: ppermute_p.bind(v, axis_name=names, perm=perm), x)


def pshuffle(x, axis_name, perm):
    """Index i gets the `x` of index perm[i]; JAX's `lax.pshuffle` (a ppermute)."""
    return ppermute(x, axis_name, [(int(s), t) for t, s in enumerate(perm)])


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """all_to_all with split and concatenation at `axis`; JAX's `lax.pswapaxes`."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)

"""The rest of `jax.lax` that JAX programs use: slices at traced positions, sorting by
several keys, top_k, running reductions with `reverse`, clamp, pad with negative and interior
padding, map, associative_scan, and small shape functions. Composites of the primitives in
fxad/rules (the new primitives: dynamic_slice, dynamic_update_slice, lexsort, top_k, cummax,
cummin, cumlogsumexp); `fxad.lax` re-exports them."""
from __future__ import annotations

import builtins
from typing import Any, Callable

import numpy as np

from ..api.batching import vmap
from ..control_flow import scan
from ..core import Tracer
from ..errors import FxadTypeError, FxadValueError
from ..rules import ops
from ..rules.helpers import dtype_of, shape_of
from ..rules.structural.indexing import parse_index, scatter_add
from ..tree_util import tree_flatten, tree_map, tree_unflatten


def _ndim(x):
    return len(shape_of(x))


def _axis(axis, nd, what="axis"):
    if not -nd <= axis < builtins.max(nd, 1):
        raise FxadValueError(f"{what} {axis} is out of range for an array of rank {nd}")
    return axis % nd if nd else 0


# --- slices at traced positions ---------------------------------------------------------------

def _starts(operand, start_indices, allow_negative_indices, what):
    """The start indices as a list of integer scalars; negative ones count from the end
    (JAX's default), then the primitive clamps them so the slice fits."""
    if isinstance(start_indices, (Tracer, np.ndarray)) and _ndim(start_indices) == 1:
        start_indices = [start_indices[i] for i in range(shape_of(start_indices)[0])]
    starts = list(start_indices)
    shape = shape_of(operand)
    if len(starts) != len(shape):
        raise FxadValueError(f"{what}: {len(starts)} start indices for an array of rank "
                             f"{len(shape)}; give one per dimension")
    allow = allow_negative_indices if isinstance(allow_negative_indices, (list, tuple)) \
        else [allow_negative_indices] * len(starts)
    out = []
    for s, d, neg in zip(starts, shape, allow):
        if not isinstance(s, Tracer):
            s = int(s)
            out.append(s + d if neg and s < 0 else s)
        else:
            if dtype_of(s).kind not in "iu" or shape_of(s) != ():
                raise FxadTypeError(f"{what}: start indices must be integer scalars, got "
                                    f"{s.aval.str_short()}")
            out.append(ops.select(ops.lt(s, 0), ops.add(s, d), s) if neg else s)
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """operand[s0:s0+n0, s1:s1+n1, ...] for (traced) starts and static sizes; each start is
    clamped so the slice lies in bounds (a negative one counts from the end first)."""
    return ops.dynamic_slice(operand, _starts(operand, start_indices, allow_negative_indices,
                                              "dynamic_slice"), slice_sizes)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """operand with `update` written at the (traced, clamped) starts."""
    return ops.dynamic_update_slice(operand, update, _starts(
        operand, start_indices, allow_negative_indices, "dynamic_update_slice"))


def _in_dim(operand, index, axis, what):
    nd = _ndim(operand)
    axis = _axis(axis, nd)
    starts = [0] * nd
    starts[axis] = index
    return axis, starts


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    axis, starts = _in_dim(operand, start_index, axis, "dynamic_slice_in_dim")
    sizes = list(shape_of(operand))
    sizes[axis] = int(slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    if keepdims:
        return out
    axis = _axis(axis, _ndim(operand))
    return ops.reshape(out, tuple(d for i, d in enumerate(shape_of(out)) if i != axis))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    _, starts = _in_dim(operand, start_index, axis, "dynamic_update_slice_in_dim")
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    axis = _axis(axis, _ndim(operand))
    if _ndim(update) == _ndim(operand) - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


# --- static slices and shapes -----------------------------------------------------------------

def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001  (JAX's name)
    strides = strides or (1,) * len(start_indices)
    return ops.getitem(operand, tuple(builtins.slice(int(a), int(b), int(s)) for a, b, s in
                                      zip(start_indices, limit_indices, strides)))


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    nd = _ndim(operand)
    axis = _axis(axis, nd)
    n = shape_of(operand)[axis]
    start = 0 if start_index is None else int(start_index) % n if int(start_index) < 0 \
        else int(start_index)
    limit = n if limit_index is None else int(limit_index) % n if int(limit_index) < 0 \
        else int(limit_index)
    return ops.getitem(operand, (builtins.slice(None),) * axis +
                       (builtins.slice(start, limit, int(stride)),))


def index_in_dim(operand, index, axis=0, keepdims=True):
    nd = _ndim(operand)
    axis = _axis(axis, nd)
    out = ops.getitem(operand, (builtins.slice(None),) * axis + (int(index),))
    return expand_dims(out, (axis,)) if keepdims else out


def squeeze(array, dimensions):
    nd = _ndim(array)
    dims = {_axis(d, nd) for d in dimensions}
    if any(shape_of(array)[d] != 1 for d in dims):
        raise FxadValueError(f"squeeze: dimensions {tuple(dimensions)} of shape "
                             f"{shape_of(array)} are not all of size 1")
    return ops.reshape(array, tuple(n for i, n in enumerate(shape_of(array)) if i not in dims))


def expand_dims(array, dimensions):
    shape = list(shape_of(array))
    nd = len(shape) + len(dimensions)
    for d in sorted(_axis(d, nd) for d in dimensions):
        shape.insert(d, 1)
    return ops.reshape(array, tuple(shape))


def broadcast(operand, sizes):
    """New leading dimensions `sizes`."""
    return ops.broadcast_to(operand, tuple(sizes) + tuple(shape_of(operand)))


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """operand's dimension i becomes dimension broadcast_dimensions[i] of `shape`."""
    shape = tuple(int(d) for d in shape)
    if len(broadcast_dimensions) != _ndim(operand):
        raise FxadValueError("broadcast_in_dim: one broadcast dimension per operand dimension")
    mid = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        mid[d] = shape_of(operand)[i]
    return ops.broadcast_to(ops.reshape(operand, tuple(mid)), shape)


def rev(operand, dimensions):
    return ops.flip(operand, tuple(dimensions)) if len(dimensions) else operand


def collapse(operand, start_dimension, stop_dimension=None):
    shape = shape_of(operand)
    stop = len(shape) if stop_dimension is None else stop_dimension
    size = int(np.prod(shape[start_dimension:stop], dtype=np.int64))
    return ops.reshape(operand, shape[:start_dimension] + (size,) + shape[stop:])


def iota(dtype, size):
    return np.arange(int(size), dtype=dtype)


def full(shape, fill_value, dtype=None):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if isinstance(fill_value, Tracer):
        v = fill_value if dtype is None else ops.convert_element_type(fill_value, dtype)
        return ops.broadcast_to(v, shape)
    return np.full(shape, fill_value, dtype)


def full_like(x, fill_value, dtype=None, shape=None):
    return full(shape_of(x) if shape is None else shape, fill_value,
                dtype_of(x) if dtype is None else dtype)


def zeros_like_array(x):
    return np.zeros(shape_of(x), dtype_of(x))


def square(x):
    return ops.integer_pow(x, 2)


def reciprocal(x):
    return ops.integer_pow(x, -1)


def select_n(which, *cases):
    """cases[which] elementwise (`which` boolean for two cases, else an integer)."""
    if not cases:
        raise FxadValueError("select_n needs at least one case")
    if len(cases) == 1:
        return cases[0]
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        out = ops.select(ops.eq(which, i) if dtype_of(which) != np.bool_ or i else
                         ops.logical_not(which), cases[i], out)
    return out


def _arg(op, operand, axis, index_dtype, keepdims):
    if isinstance(index_dtype, (bool, np.bool_)):  # fxad's older (x, axis, keepdims) form
        index_dtype, keepdims = None, bool(index_dtype)
    out = op(operand, axis, keepdims)
    return out if index_dtype is None else ops.convert_element_type(out, index_dtype)


def argmax(operand, axis, index_dtype=None, keepdims=False):
    """JAX's signature: the third argument is the index dtype (default intp); a bool there
    is taken as keepdims, fxad's older signature."""
    return _arg(ops.argmax, operand, axis, index_dtype, keepdims)


def argmin(operand, axis, index_dtype=None, keepdims=False):
    return _arg(ops.argmin, operand, axis, index_dtype, keepdims)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None):
    """Vector/matrix products contracting lhs's last axis with rhs's first (or
    `dimension_numbers`); `precision` is accepted (NumPy always computes in full)."""
    if dimension_numbers is None:
        dimension_numbers = (((_ndim(lhs) - 1,), (0,)), ((), ()))
    out = ops.dot_general(lhs, rhs, dimension_numbers)
    return out if preferred_element_type is None else \
        ops.convert_element_type(out, preferred_element_type)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    out = ops.dot_general(lhs, rhs, dimension_numbers)
    return out if preferred_element_type is None else \
        ops.convert_element_type(out, preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    nd = _ndim(lhs)
    batch = tuple(range(nd - 2))
    return ops.dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)))


# --- sorting ----------------------------------------------------------------------------------

def _take(x, perm, axis):
    nd = _ndim(x)
    idx = [np.arange(n).reshape(tuple(n if j == i else 1 for j in range(nd)))
           for i, n in enumerate(shape_of(x))]
    idx[axis] = perm
    return ops.getitem(x, tuple(idx))


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort along `dimension`; with several operands, all are permuted by the order of the
    first `num_keys` (lexicographic, the first key primary). Sorting is always stable here.
    Values carry derivatives (a gather); the order itself has none."""
    single = not isinstance(operand, (tuple, list))
    ops_ = [operand] if single else list(operand)
    if not 1 <= num_keys <= len(ops_):
        raise FxadValueError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                             f"operands ({len(ops_)})")
    if any(shape_of(o) != shape_of(ops_[0]) for o in ops_):
        raise FxadValueError("sort: every operand must have the same shape")
    if not shape_of(ops_[0]):
        return operand
    axis = _axis(dimension, _ndim(ops_[0]), "dimension")
    perm = ops.argsort(ops_[0], axis) if num_keys == 1 else ops.lexsort(*ops_[:num_keys],
                                                                       axis=axis)
    out = [_take(o, perm, axis) for o in ops_]
    return out[0] if single else tuple(out)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    return sort((keys, values), dimension, is_stable, num_keys=1)


def top_k(operand, k, *, axis=-1):
    """(values, indices) of the k largest along `axis`, largest first (ties in index order;
    NaN counts as largest, as in np.sort)."""
    nd = _ndim(operand)
    axis = _axis(axis, nd)
    if axis == nd - 1:
        return tuple(ops.top_k(operand, k))
    perm = tuple(i for i in range(nd) if i != axis) + (axis,)
    back = tuple(np.argsort(perm))
    v, i = ops.top_k(ops.transpose(operand, perm), k)
    return ops.transpose(v, back), ops.transpose(i, back)


# --- running reductions -----------------------------------------------------------------------

def _running(op, operand, axis, reverse):
    axis = _axis(axis, _ndim(operand), f"{op.__name__}: axis")
    if not reverse:
        return op(operand, axis)
    return ops.flip(op(ops.flip(operand, (axis,)), axis), (axis,))


def cumsum(operand, axis=0, reverse=False):
    return _running(ops.cumsum, operand, axis, reverse)


def cumprod(operand, axis=0, reverse=False):
    return _running(ops.cumprod, operand, axis, reverse)


def cummax(operand, axis=0, reverse=False):
    return _running(ops.cummax, operand, axis, reverse)


def cummin(operand, axis=0, reverse=False):
    return _running(ops.cummin, operand, axis, reverse)


def cumlogsumexp(operand, axis=0, reverse=False):
    return _running(ops.cumlogsumexp, operand, axis, reverse)


# --- clamp and pad ----------------------------------------------------------------------------

def clamp(min, x, max):  # noqa: A002  (JAX's argument names and order)
    """x clipped into [min, max]. Its derivative is x's strictly inside and the bound's at
    and beyond it (JAX gives 0 to x at the bounds too)."""
    inside = ops.logical_and(ops.gt(x, min), ops.lt(x, max))
    lo = ops.broadcast_to(ops.convert_element_type(min, dtype_of(x)), shape_of(x))
    hi = ops.broadcast_to(ops.convert_element_type(max, dtype_of(x)), shape_of(x))
    return ops.select(inside, x, ops.select(ops.le(x, min), lo, hi))


def pad(operand, padding_value, padding_config):
    """Pad with (low, high, interior) per dimension: interior puts that many padding values
    between neighbours; negative low/high remove elements from that end."""
    shape = shape_of(operand)
    config = [tuple(int(v) for v in c) for c in padding_config]
    if len(config) != len(shape) or any(len(c) != 3 or c[2] < 0 for c in config):
        raise FxadValueError(f"pad: padding_config needs one (low, high, interior) per "
                             f"dimension, interior >= 0; got {padding_config}")
    if _ndim(padding_value) != 0:
        raise FxadTypeError("pad: padding_value must be a scalar")
    grown, place = [], []
    for n, (lo, hi, inner) in zip(shape, config):
        size = builtins.max(lo, 0) + builtins.max(hi, 0) + (n + builtins.max(n - 1, 0) * inner
                                                            if n else 0)
        grown.append(size)
        start = builtins.max(lo, 0)
        place.append(builtins.slice(start, start + (n - 1) * (inner + 1) + 1 if n else start,
                                    inner + 1))
    grown = tuple(grown)
    dt = dtype_of(operand)
    mask = np.zeros(grown, bool)
    mask[tuple(place)] = True
    spec, arrays = parse_index(tuple(place))
    placed = scatter_add(np.zeros(grown, dt), arrays, operand, spec)
    out = ops.select(mask, placed, ops.broadcast_to(ops.convert_element_type(padding_value, dt),
                                                    grown))
    crop = tuple(builtins.slice(-lo if lo < 0 else 0, size + hi if hi < 0 else size)
                 for size, (lo, hi, _) in zip(grown, config))
    if any(c.start or c.stop != size for c, size in zip(crop, grown)):
        out = ops.getitem(out, crop)
    return out


# --- map and associative_scan -----------------------------------------------------------------

def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """[f(x) for x along the leading axis of xs], stacked: a scan with no carry. With
    `batch_size`, f is vmapped over chunks of that many (the remainder in one more chunk)."""
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), None, xs)[1]
    leaves = tree_flatten(xs)[0]
    n = shape_of(leaves[0])[0] if leaves else 0
    b = int(batch_size)
    full_n = n - n % b
    out = None
    if full_n:
        chunks = tree_map(lambda x: ops.reshape(x[:full_n], (full_n // b, b) +
                                                tuple(shape_of(x)[1:])), xs)
        out = scan(lambda c, x: (c, vmap(f)(x)), None, chunks)[1]
        out = tree_map(lambda y: ops.reshape(y, (full_n,) + tuple(shape_of(y)[2:])), out)
    if full_n < n:
        rest = vmap(f)(tree_map(lambda x: x[full_n:], xs))
        out = rest if out is None else tree_map(lambda a, r: ops.concatenate([a, r], 0),
                                                out, rest)
    return out


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """All prefix combinations [e0, fn(e0, e1), fn(fn(e0, e1), e2), ...] along `axis` for an
    associative `fn` (applied to whole slices of the pytree `elems`), in O(log n) rounds:
    pairs are combined, their prefixes found recursively, and the even positions filled in."""
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    nd = _ndim(leaves[0])
    axis = _axis(axis, nd)
    n = shape_of(leaves[0])[axis]
    if any(shape_of(x)[axis] != n for x in leaves):
        raise FxadValueError("associative_scan: every leaf needs the same length along axis")

    def sl(xs, start, stop, step=1):
        return [ops.getitem(x, (builtins.slice(None),) * axis +
                            (builtins.slice(start, stop, step),)) for x in xs]

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        got, got_tree = tree_flatten(out)
        if got_tree != tree:
            raise FxadTypeError(f"associative_scan: fn returned {got_tree}, but the elements "
                                f"are {tree}; it must return their structure")
        return got

    def interleave(even, odd, m):
        out = []
        for e, o in zip(even, odd):
            if shape_of(o)[axis] < shape_of(e)[axis]:  # one more even: pad odd, trim after
                o = ops.concatenate([o, ops.getitem(e, (builtins.slice(None),) * axis +
                                                    (builtins.slice(0, 1),))], axis)
            s = list(shape_of(e))
            both = ops.concatenate([expand_dims(e, (axis + 1,)), expand_dims(o, (axis + 1,))],
                                   axis + 1)
            s[axis] *= 2
            flat = ops.reshape(both, tuple(s))
            out.append(ops.getitem(flat, (builtins.slice(None),) * axis +
                                   (builtins.slice(0, m),)))
        return out

    def scan_(xs, m):
        if m < 2:
            return xs
        odd = scan_(combine(sl(xs, 0, m - 1, 2), sl(xs, 1, m, 2)), m // 2)
        if m % 2 == 0:
            even = combine(sl(odd, 0, m // 2 - 1), sl(xs, 2, m, 2))
        else:
            even = combine(odd, sl(xs, 2, m, 2))
        even = [ops.concatenate([a, b], axis) for a, b in zip(sl(xs, 0, 1), even)]
        return interleave(even, odd, m)

    if reverse:
        leaves = [ops.flip(x, (axis,)) for x in leaves]
    out = scan_(leaves, n)
    if reverse:
        out = [ops.flip(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


# --- JAX's names for functions fxad has under other names -------------------------------------

from ..rules.ops import (  # noqa: E402  (lax spells them differently)
    arccos as acos, arccosh as acosh, arcsin as asin, arcsinh as asinh, arctan as atan,
    arctan2 as atan2, arctanh as atanh, isfinite as is_finite)
from ..rules.special import basic as _special  # noqa: E402


def erf(x):
    return _special.erf(x)


def erfc(x):
    return _special.erfc(x)


def erf_inv(x):
    return _special.erfinv(x)


def lgamma(x):
    return _special.gammaln(x)


def digamma(x):
    return _special.digamma(x)


def polygamma(m, x):
    """JAX's argument order (the order m first); m must be a concrete integer."""
    return _special.polygamma(x, int(m))


def split(operand, sizes, axis=0):
    """Pieces of the given sizes along `axis` (they must add up to its length)."""
    axis = _axis(axis, _ndim(operand))
    if sum(sizes) != shape_of(operand)[axis]:
        raise FxadValueError(f"split: sizes {tuple(sizes)} do not add up to the length "
                             f"{shape_of(operand)[axis]} of axis {axis}")
    out, start = [], 0
    for n in sizes:
        out.append(ops.getitem(operand, (builtins.slice(None),) * axis +
                               (builtins.slice(start, start + int(n)),)))
        start += int(n)
    return out


def stack(operands, axis=0):
    nd = _ndim(operands[0]) + 1
    axis = _axis(axis, nd)
    return ops.concatenate([expand_dims(o, (axis,)) for o in operands], axis)


def unstack(x, axis=0):
    axis = _axis(axis, _ndim(x))
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(shape_of(x)[axis]))


def tile(operand, reps):
    reps = tuple(int(r) for r in reps)
    s = tuple(shape_of(operand))
    x = ops.reshape(operand, tuple(d for pair in zip((1,) * len(s), s) for d in pair))
    x = ops.broadcast_to(x, tuple(d for pair in zip(reps, s) for d in pair))
    return ops.reshape(x, tuple(r * d for r, d in zip(reps, s)))


def empty(shape, dtype):
    return np.zeros(shape, dtype)


def broadcasted_iota(dtype, shape, dimension):
    shape = tuple(int(d) for d in shape)
    return np.broadcast_to(np.arange(shape[dimension], dtype=dtype).reshape(
        tuple(n if i == dimension else 1 for i, n in enumerate(shape))), shape).copy()


def broadcast_to_rank(x, rank):
    s = tuple(shape_of(x))
    return ops.reshape(x, (1,) * (rank - len(s)) + s) if len(s) < rank else x


def broadcast_shapes(*shapes):
    return tuple(np.broadcast_shapes(*shapes))


def reduce_and(operand, axes):
    return ops.eq(ops.reduce_sum(ops.convert_element_type(ops.logical_not(operand), np.int64),
                                 tuple(axes)), 0)


def reduce_or(operand, axes):
    return ops.ne(ops.reduce_sum(ops.convert_element_type(ops.ne(operand, 0), np.int64),
                                 tuple(axes)), 0)


__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "is_finite", "digamma",
           "erf", "erfc", "erf_inv", "lgamma", "polygamma", "split", "stack",
           "unstack", "tile", "empty", "broadcasted_iota", "broadcast_to_rank",
           "broadcast_shapes", "reduce_and", "reduce_or"]
__all__ += ["dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim",
           "dynamic_index_in_dim", "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim",
           "slice", "slice_in_dim", "index_in_dim", "squeeze", "expand_dims", "broadcast",
           "broadcast_in_dim", "rev", "collapse", "iota", "full", "full_like",
           "zeros_like_array", "square", "reciprocal", "select_n", "argmax", "argmin", "dot",
           "dot_general", "batch_matmul", "sort", "sort_key_val", "top_k", "cumsum", "cumprod",
           "cummax", "cummin", "cumlogsumexp", "clamp", "pad", "map", "associative_scan"]

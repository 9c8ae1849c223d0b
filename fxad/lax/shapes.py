"""Shapes and layouts (JAX's lax signatures): squeeze, expand_dims, the broadcasts, rev,
collapse, iota, full, stack, tile, and pad with negative and interior padding."""
from __future__ import annotations

import builtins
import math

import numpy as np

from ..core import Tracer
from ..errors import FxadTypeError, FxadValueError
from ..rules import ops
from ..rules.helpers import dtype_of, shape_of
from ..rules.structural.indexing import parse_index, scatter_add
from ._axes import _axis, _ndim


def squeeze(array, dimensions):
    """array without the axes `dimensions`, each of size 1."""
    nd = _ndim(array)
    dims = {_axis(d, nd) for d in dimensions}
    if any(shape_of(array)[d] != 1 for d in dims):
        raise FxadValueError(f"squeeze: dimensions {tuple(dimensions)} of shape "
                             f"{shape_of(array)} are not all of size 1")
    return ops.reshape(array, tuple(n for i, n in enumerate(shape_of(array)) if i not in dims))


def expand_dims(array, dimensions):
    """array with axes of size 1 inserted at the positions `dimensions` (of the result)."""
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
    """operand reversed along each axis of `dimensions` (JAX's name for flip); differentiable to
    any order in forward and reverse mode."""
    return ops.flip(operand, tuple(dimensions)) if len(dimensions) else operand


def collapse(operand, start_dimension, stop_dimension=None):
    """operand with its axes start_dimension ... stop_dimension - 1 merged into one, as JAX's."""
    shape = shape_of(operand)
    stop = len(shape) if stop_dimension is None else stop_dimension
    size = math.prod(map(int, shape[start_dimension:stop]))
    return ops.reshape(operand, shape[:start_dimension] + (size,) + shape[stop:])


def iota(dtype, size):
    """[0, 1, ..., size - 1] as an array of `dtype`."""
    return np.arange(int(size), dtype=dtype)


def full(shape, fill_value, dtype=None):
    """An array of `shape` filled with fill_value (of `dtype`, else fill_value's)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if isinstance(fill_value, Tracer):
        v = fill_value if dtype is None else ops.convert_element_type(fill_value, dtype)
        return ops.broadcast_to(v, shape)
    return np.full(shape, fill_value, dtype)


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like x (its shape and dtype unless `shape`/`dtype` are given) filled with
    fill_value."""
    return full(shape_of(x) if shape is None else shape, fill_value,
                dtype_of(x) if dtype is None else dtype)


def zeros_like_array(x):
    """An array of zeros with x's shape and dtype."""
    return np.zeros(shape_of(x), dtype_of(x))


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


def stack(operands, axis=0):
    """The arrays of `operands` stacked along a new axis `axis`; differentiable to any order in
    forward and reverse mode in each."""
    nd = _ndim(operands[0]) + 1
    axis = _axis(axis, nd)
    return ops.concatenate([expand_dims(o, (axis,)) for o in operands], axis)


def tile(operand, reps):
    """operand repeated `reps` times along each axis, as `numpy.tile`."""
    reps = tuple(int(r) for r in reps)
    s = tuple(shape_of(operand))
    x = ops.reshape(operand, tuple(d for pair in zip((1,) * len(s), s) for d in pair))
    x = ops.broadcast_to(x, tuple(d for pair in zip(reps, s) for d in pair))
    return ops.reshape(x, tuple(r * d for r, d in zip(reps, s)))


def empty(shape, dtype):
    """An array of `shape` and `dtype`, filled with zeros (JAX's `empty` is not uninitialized
    memory either)."""
    return np.zeros(shape, dtype)


def broadcasted_iota(dtype, shape, dimension):
    """An array of `shape` and `dtype` whose values count 0, 1, ... along `dimension`."""
    shape = tuple(int(d) for d in shape)
    return np.broadcast_to(np.arange(shape[dimension], dtype=dtype).reshape(
        tuple(n if i == dimension else 1 for i, n in enumerate(shape))), shape).copy()


def broadcast_to_rank(x, rank):
    """x with leading axes of size 1 added until it has `rank` axes, as JAX's."""
    s = tuple(shape_of(x))
    return ops.reshape(x, (1,) * (rank - len(s)) + s) if len(s) < rank else x


def broadcast_shapes(*shapes):
    """The shape NumPy's broadcasting gives to arrays of the given shapes (an error if they do not
    broadcast)."""
    return tuple(np.broadcast_shapes(*shapes))


__all__ = ["squeeze", "expand_dims", "broadcast", "broadcast_in_dim", "rev", "collapse", "iota",
           "full", "full_like", "zeros_like_array", "empty", "broadcasted_iota", "broadcast_to_rank",
           "broadcast_shapes", "stack", "tile", "pad"]

"""Slices at traced positions (JAX's `dynamic_slice`, `dynamic_update_slice`): the slice's
size is static, its start is a (traced) integer per dimension, clamped so the slice lies in
bounds, as in JAX. Both are linear in their array operands, never in the starts.

dynamic_slice(x, *starts; slice_sizes)
  transpose   dynamic_update_slice of the cotangent into zeros
  batching    unbatched starts: one more dimension; batched starts: a gather with per-example
              index arrays (start + arange(size) in each dimension)
dynamic_update_slice(x, update, *starts)
  transpose   x: the cotangent with the slice zeroed; update: the slice of the cotangent
  batching    unbatched starts: one more dimension; batched starts: a scatter into zeros
              selected where the slices lie
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ...errors import FxadTypeError, FxadValueError
from ..helpers import (bdim_to_front, broadcast_batched, deflinear, dtype_of, is_undefined,
                      shape_of, unbroadcast)
from .indexing import parse_index
from .. import ops


def clamped_starts(shape, starts, sizes):
    """Concrete starts, each clamped into [0, dim - size] (JAX's rule: the slice fits)."""
    return [min(max(int(s), 0), d - n) for s, d, n in zip(starts, shape, sizes)]


def _check_starts(name, x, starts):
    if len(starts) != len(x.shape):
        raise FxadValueError(f"{name}: {len(starts)} start indices for an array of rank "
                             f"{len(x.shape)}; give one per dimension")
    for s in starts:
        if s.shape != () or s.dtype.kind not in "iu":
            raise FxadTypeError(f"{name}: start indices must be integer scalars, got "
                                f"{s.str_short()}")


def _check_sizes(name, shape, sizes):
    if len(sizes) != len(shape) or any(not 0 <= n <= d for n, d in zip(sizes, shape)):
        raise FxadValueError(f"{name}: slice sizes {tuple(sizes)} do not fit an array of shape "
                             f"{tuple(shape)} (one size per dimension, each at most its length)")


def _slices(shape, starts, sizes, name):
    """The clamped slices, checked as the shape rule checks them (the eager path runs the
    impl without the shape rule, and a bad size must not wrap around silently)."""
    _check_starts(name, ShapedArray(shape, np.float64), [ShapedArray(np.shape(s),
                                                                     np.asarray(s).dtype)
                                                         for s in starts])
    _check_sizes(name, shape, sizes)
    return tuple(slice(s, s + n) for s, n in zip(clamped_starts(shape, starts, sizes), sizes))


def _gather_index(x_shape, starts, dims, sizes, n):
    """Index arrays (iota over the batch, then start_k + arange(size_k) per dimension) that
    gather each example's slice from a batched-at-0 array: the batched-starts path."""
    r = len(sizes)
    idx = [np.arange(n).reshape((n,) + (1,) * r)]
    for k, (s, d, size) in enumerate(zip(starts, dims, sizes)):
        s = ops.convert_element_type(s, np.intp)
        s = ops.min(ops.max(s, 0), x_shape[k + 1] - size)  # clamped, per example
        if d is not None:
            s = ops.reshape(bdim_to_front(s, d), (n,) + (1,) * r)
        ar = np.arange(size).reshape((1,) + tuple(size if j == k else 1 for j in range(r)))
        idx.append(ops.add(s, ar))
    return tuple(idx)


dynamic_slice_p = Primitive("dynamic_slice", memory="views")
dynamic_slice_p.def_impl(lambda x, *starts, slice_sizes:
                         np.asarray(x)[_slices(np.shape(x), starts, slice_sizes,
                                               "dynamic_slice")])
def _dynamic_slice_shape(x, *starts, slice_sizes):
    _check_starts("dynamic_slice", x, starts)
    _check_sizes("dynamic_slice", x.shape, slice_sizes)
    return ShapedArray(slice_sizes, x.dtype)
dynamic_slice_p.def_abstract_eval(_dynamic_slice_shape)
deflinear(dynamic_slice_p, lambda ct, x, *starts, slice_sizes: [
    dynamic_update_slice(np.zeros(x.aval.shape, dtype_of(ct)), ct, starts)] + [None] * len(starts),
    linear_args=(0,))
def _dynamic_slice_batch(vals, dims, slice_sizes):
    (x, *starts), (xd, *sd) = vals, dims
    if all(d is None for d in sd):
        x = bdim_to_front(x, xd)
        return dynamic_slice(x, [0] + list(starts), (shape_of(x)[0],) + slice_sizes), 0
    n = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not None)
    x = broadcast_batched(x, xd, n)
    return ops.getitem(x, _gather_index(shape_of(x), starts, sd, slice_sizes, n)), 0
dynamic_slice_p.def_batch(_dynamic_slice_batch)
def dynamic_slice(x, starts, slice_sizes):
    return dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(int(n) for n in slice_sizes))


def _dus_impl(x, update, *starts):
    out = np.array(x, copy=True)
    if np.ndim(update) != out.ndim:
        raise FxadValueError(f"dynamic_update_slice: the update has rank {np.ndim(update)}, "
                             f"the array {out.ndim}; they must be equal")
    out[_slices(out.shape, starts, np.shape(update), "dynamic_update_slice")] = update
    return out


dynamic_update_slice_p = Primitive("dynamic_update_slice", memory="fresh")
dynamic_update_slice_p.def_impl(_dus_impl)
def _dus_shape(x, update, *starts):
    _check_starts("dynamic_update_slice", x, starts)
    if len(update.shape) != len(x.shape):
        raise FxadValueError(f"dynamic_update_slice: the update has rank {len(update.shape)}, "
                             f"the array {len(x.shape)}; they must be equal")
    _check_sizes("dynamic_update_slice", x.shape, update.shape)
    return ShapedArray(x.shape, x.dtype)
dynamic_update_slice_p.def_abstract_eval(_dus_shape)
def _dus_transpose(ct, x, update, *starts):
    ct_x = ct_u = None
    if is_undefined(x):
        ct_x = unbroadcast(dynamic_update_slice(
            ct, np.zeros(update.aval.shape if is_undefined(update) else shape_of(update),
                         dtype_of(ct)), starts), x.aval)
    if is_undefined(update):
        ct_u = unbroadcast(dynamic_slice(ct, starts, update.aval.shape), update.aval)
    return [ct_x, ct_u] + [None] * len(starts)
deflinear(dynamic_update_slice_p, _dus_transpose, linear_args=(0, 1))
def _dus_batch(vals, dims):
    (x, u, *starts), (xd, ud, *sd) = vals, dims
    n = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not None)
    x, u = broadcast_batched(x, xd, n), broadcast_batched(u, ud, n)
    if all(d is None for d in sd):
        return dynamic_update_slice(x, u, [0] + list(starts)), 0
    idx = _gather_index(shape_of(x), starts, sd, shape_of(u)[1:], n)
    spec, arrays = parse_index(idx)
    placed = ops.scatter_add(np.zeros(shape_of(x), dtype_of(x)), arrays,
                             ops.convert_element_type(u, dtype_of(x)), spec)
    hit = ops.scatter_add(np.zeros(shape_of(x), np.int8), arrays,
                          np.ones(shape_of(u), np.int8), spec)
    return ops.select(ops.ne(hit, 0), placed, x), 0
dynamic_update_slice_p.def_batch(_dus_batch)
def dynamic_update_slice(x, update, starts):
    return dynamic_update_slice_p.bind(x, update, *starts)

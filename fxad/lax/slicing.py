"""Slices (JAX's lax signatures): at traced positions (dynamic_slice and friends, built on the
dynamic_slice and dynamic_update_slice primitives), static ones, and splitting an axis into
pieces."""
from __future__ import annotations

import builtins

import numpy as np

from ..core import Tracer
from ..errors import FxadTypeError, FxadValueError
from ..rules import ops
from ..rules.helpers import dtype_of, shape_of
from ._axes import _axis, _ndim
from .shapes import expand_dims


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
    """slice_size elements of operand along `axis` from start_index (a traced value, clamped so
    the slice fits, as JAX's); differentiable in operand."""
    axis, starts = _in_dim(operand, start_index, axis, "dynamic_slice_in_dim")
    sizes = list(shape_of(operand))
    sizes[axis] = int(slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    """The slice of operand at `index` along `axis` (kept as an axis of size 1 if keepdims), the
    index a traced value; negative indices count from the end unless
    allow_negative_indices=False. Differentiable in operand."""
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    if keepdims:
        return out
    axis = _axis(axis, _ndim(operand))
    return ops.reshape(out, tuple(d for i, d in enumerate(shape_of(out)) if i != axis))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    """operand with update written along `axis` from start_index (traced, clamped so the update
    fits, as JAX's); differentiable in operand and update."""
    _, starts = _in_dim(operand, start_index, axis, "dynamic_update_slice_in_dim")
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """operand with its slice at `index` along `axis` replaced by update (the index traced);
    differentiable in operand and update."""
    axis = _axis(axis, _ndim(operand))
    if _ndim(update) == _ndim(operand) - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001  (JAX's name)
    """operand[start:limit:stride] along every axis (static bounds), as JAX's; differentiable to
    any order in forward and reverse mode."""
    strides = strides or (1,) * len(start_indices)
    return ops.getitem(operand, tuple(builtins.slice(int(a), int(b), int(s)) for a, b, s in
                                      zip(start_indices, limit_indices, strides)))


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """operand[start_index:limit_index:stride] along `axis` (static bounds); differentiable to any
    order in forward and reverse mode."""
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
    """The slice of operand at the static `index` along `axis` (kept as an axis of size 1 if
    keepdims); differentiable in operand."""
    nd = _ndim(operand)
    axis = _axis(axis, nd)
    out = ops.getitem(operand, (builtins.slice(None),) * axis + (int(index),))
    return expand_dims(out, (axis,)) if keepdims else out


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


def unstack(x, axis=0):
    """The slices of x along `axis`, as a list of arrays; differentiable in x."""
    axis = _axis(axis, _ndim(x))
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(shape_of(x)[axis]))


__all__ = ["dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim",
           "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "slice", "slice_in_dim",
           "index_in_dim", "split", "unstack"]

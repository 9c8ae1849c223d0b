"""Shape manipulation with NumPy's signatures."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..core import Tracer
from ..errors import FxadValueError
from ..rules.helpers import shape_of
from .reductions import normalize_axes


def shape(a):
    return tuple(shape_of(a))


def ndim(a):
    return len(shape_of(a))


def size(a):
    return int(np.prod(shape_of(a), dtype=np.int64))


def reshape(a, newshape, order="C"):
    if order != "C":
        raise FxadValueError("fxad reshape supports order='C' only")
    if isinstance(newshape, (int, np.integer)):
        newshape = (newshape,)
    newshape = [int(d) for d in newshape]
    if newshape.count(-1) > 1:
        raise FxadValueError("can only specify one unknown dimension (-1)")
    if -1 in newshape:
        known = int(np.prod([d for d in newshape if d != -1], dtype=np.int64))
        total = size(a)
        if known == 0 or total % known:
            raise FxadValueError(f"cannot reshape an array of size {total} into shape "
                                 f"{tuple(newshape)}")
        newshape[newshape.index(-1)] = total // known
    return lax.reshape(a, tuple(newshape))


def ravel(a):
    return lax.reshape(a, (size(a),))


def transpose(a, axes=None):
    nd = ndim(a)
    axes = tuple(reversed(range(nd))) if axes is None else tuple(int(x) % nd for x in axes)
    return lax.transpose(a, axes)


def moveaxis(a, source, destination):
    nd = ndim(a)
    src = [s % nd for s in ((source,) if isinstance(source, int) else source)]
    dst = [d % nd for d in ((destination,) if isinstance(destination, int) else destination)]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax.transpose(a, tuple(order))


def swapaxes(a, axis1, axis2):
    perm = list(range(ndim(a)))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return lax.transpose(a, tuple(perm))


def broadcast_to(a, shape):
    return lax.broadcast_to(a, tuple(shape) if not isinstance(shape, int) else (shape,))


def expand_dims(a, axis):
    s = list(shape_of(a))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out_nd = len(s) + len(axes)
    for ax in sorted(a % out_nd for a in axes):
        s.insert(ax, 1)
    return lax.reshape(a, tuple(s))


def squeeze(a, axis=None):
    s = shape_of(a)
    if axis is None:
        axes = [i for i, d in enumerate(s) if d == 1]
    else:
        axes = normalize_axes(axis, len(s))
        if any(s[i] != 1 for i in axes):
            raise FxadValueError(f"cannot squeeze an axis whose size is not 1 (shape {s})")
    return lax.reshape(a, tuple(d for i, d in enumerate(s) if i not in axes))


def atleast_1d(a):
    return a if ndim(a) >= 1 else lax.reshape(a, (1,))


def concatenate(arrays, axis=0):
    arrays = list(arrays)
    if axis is None:
        return lax.concatenate([ravel(a) for a in arrays], 0)
    nd = ndim(arrays[0])
    return lax.concatenate(arrays, int(axis) % nd)


def stack(arrays, axis=0):
    arrays = list(arrays)
    if not arrays:
        raise FxadValueError("need at least one array to stack")
    nd = ndim(arrays[0]) + 1
    return lax.concatenate([expand_dims(a, axis % nd) for a in arrays], axis % nd)


def split(a, indices_or_sections, axis=0):
    n = shape_of(a)[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        if n % indices_or_sections:
            raise FxadValueError("array split does not result in an equal division")
        step = n // indices_or_sections
        bounds = list(range(0, n + 1, step))
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    pre = (slice(None),) * (axis % ndim(a))
    return [a[pre + (slice(lo, hi),)] for lo, hi in zip(bounds[:-1], bounds[1:])]


def flip(m, axis=None):
    return lax.flip(m, normalize_axes(axis, ndim(m)))


def nonzero(a):
    if isinstance(a, Tracer):
        a = a.concrete_value("nonzero (its output shape depends on the values)")
    return np.nonzero(a)

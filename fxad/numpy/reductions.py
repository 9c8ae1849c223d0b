"""Reductions and statistics with NumPy's axis / keepdims / dtype conventions."""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import lax
from ..errors import FxadValueError
from ..rules.helpers import dtype_of, shape_of


def normalize_axes(axis, ndim):
    """None -> all axes; an int or tuple -> sorted, non-negative, checked."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < builtins.max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise FxadValueError(f"axis {a} is out of bounds for an array of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise FxadValueError(f"repeated axis in {axis}")
    return tuple(sorted(out)) if ndim else ()


def sum(a, axis=None, dtype=None, keepdims=False, *, initial=None, where=None):
    if dtype is not None:
        a = lax.convert_element_type(a, dtype)
    if where is not None:
        a = lax.select(where, a, 0)
    out = lax.reduce_sum(a, normalize_axes(axis, len(shape_of(a))), keepdims)
    return out if initial is None else lax.add(out, initial)


def prod(a, axis=None, dtype=None, keepdims=False, *, initial=None, where=None):
    if dtype is not None:
        a = lax.convert_element_type(a, dtype)
    if where is not None:
        a = lax.select(where, a, 1)
    out = lax.reduce_prod(a, normalize_axes(axis, len(shape_of(a))), keepdims)
    return out if initial is None else lax.mul(out, initial)


def _extreme(reduce, pick, name, a, axis, keepdims, initial, where):
    """max/min; `initial` joins every slice (so where= needs it, as NumPy's identity-free
    maximum does)."""
    if where is not None:
        if initial is None:
            raise FxadValueError(f"{name} with where= needs initial= (the value of a slice "
                                 "that where= leaves empty), as in NumPy")
        a = lax.select(where, a, initial)
    out = reduce(a, normalize_axes(axis, len(shape_of(a))), keepdims)
    return out if initial is None else pick(out, initial)


def max(a, axis=None, keepdims=False, *, initial=None, where=None):
    return _extreme(lax.reduce_max, lax.max, "max", a, axis, keepdims, initial, where)


def min(a, axis=None, keepdims=False, *, initial=None, where=None):
    return _extreme(lax.reduce_min, lax.min, "min", a, axis, keepdims, initial, where)


amax, amin = max, min


def _count(a, axes):
    shape = shape_of(a)
    return math.prod([shape[i] for i in axes])


def mean(a, axis=None, dtype=None, keepdims=False, *, where=None):
    axes = normalize_axes(axis, len(shape_of(a)))
    if dtype is None and dtype_of(a).kind not in "fc":
        dtype = np.float64
    if where is not None:  # the count of each slice's selected elements
        count = sum(lax.convert_element_type(lax.broadcast_to(where, tuple(shape_of(a))),
                                             dtype or dtype_of(a)), axes, keepdims=keepdims)
        return lax.div(sum(a, axes, dtype, keepdims, where=where), count)
    return lax.div(sum(a, axes, dtype, keepdims), _count(a, axes))


def var(a, axis=None, dtype=None, ddof=0, keepdims=False):
    axes = normalize_axes(axis, len(shape_of(a)))
    d = lax.sub(a, mean(a, axes, dtype, keepdims=True))
    return lax.div(sum(lax.mul(d, d), axes, keepdims=keepdims), _count(a, axes) - ddof)


def std(a, axis=None, dtype=None, ddof=0, keepdims=False):
    return lax.sqrt(var(a, axis, dtype, ddof, keepdims))


def _arg(fn, a, axis, keepdims):
    if axis is None:
        out = fn(_ravel(a), 0)
        return lax.reshape(out, (1,) * len(shape_of(a))) if keepdims else out
    return fn(a, normalize_axes(axis, len(shape_of(a)))[0], keepdims)


def _ravel(a):
    return lax.reshape(a, (int(np.prod(shape_of(a), dtype=np.int64)),))


def argmax(a, axis=None, keepdims=False):
    return _arg(lax.argmax, a, axis, keepdims)


def argmin(a, axis=None, keepdims=False):
    return _arg(lax.argmin, a, axis, keepdims)


def _axis_or_flat(a, axis):
    """NumPy's cumulative convention: axis=None works on the flattened array."""
    if axis is None:
        return _ravel(a), 0
    return a, normalize_axes(axis, len(shape_of(a)))[0]


def cumsum(a, axis=None, dtype=None):
    a, ax = _axis_or_flat(a if dtype is None else lax.convert_element_type(a, dtype), axis)
    return lax.cumsum(a, ax)


def cumprod(a, axis=None, dtype=None):
    a, ax = _axis_or_flat(a if dtype is None else lax.convert_element_type(a, dtype), axis)
    return lax.cumprod(a, ax)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        wsum = lax.convert_element_type(np.asarray(_count(a, normalize_axes(
            axis, len(shape_of(a))))), dtype_of(avg))
    else:
        nd = len(shape_of(a))
        if len(shape_of(weights)) == 1 and nd > 1 and axis is not None:
            ax = normalize_axes(axis, nd)[0]
            weights = lax.reshape(weights, tuple(shape_of(a)[ax] if i == ax else 1
                                                 for i in range(nd)))
        wsum = sum(lax.broadcast_to(weights, tuple(shape_of(a))), axis, keepdims=keepdims)
        avg = lax.div(sum(lax.mul(a, weights), axis, keepdims=keepdims), wsum)
    return (avg, lax.broadcast_to(wsum, tuple(shape_of(avg)))) if returned else avg


def nansum(a, axis=None, dtype=None, keepdims=False):
    return sum(lax.select(lax.isnan(a), 0.0, a), axis, dtype, keepdims)


def nanmean(a, axis=None, dtype=None, keepdims=False):
    ok = lax.logical_not(lax.isnan(a))
    total = nansum(a, axis, dtype, keepdims)
    return lax.div(total, sum(lax.convert_element_type(ok, dtype_of(total)), axis,
                              keepdims=keepdims))


def count_nonzero(a, axis=None, *, keepdims=False):
    return sum(lax.convert_element_type(lax.ne(a, 0), np.int64), axis, keepdims=keepdims)


def any(a, axis=None, keepdims=False):  # noqa: A001  (NumPy's name; no derivative)
    return lax.ne(count_nonzero(a, axis, keepdims=keepdims), 0)


def all(a, axis=None, keepdims=False):  # noqa: A001
    n = _count(a, normalize_axes(axis, len(shape_of(a))))
    return lax.eq(count_nonzero(a, axis, keepdims=keepdims), n)

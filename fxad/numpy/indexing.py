"""Indexing with NumPy's signatures: take (with NumPy's and JAX's modes), take_along_axis,
choose, select, insert and delete, and the functional forms of NumPy's in-place put,
put_along_axis and fill_diagonal (JAX's inplace=False: they return the result)."""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import lax
from ..core import Tracer
from ..errors import FxadValueError
from ..rules.helpers import dtype_of, shape_of
from ..rules.structural.indexing import getitem
from .at import at
from .creation import asarray
from .manipulation import concatenate, ndim, ravel, reshape, shape, size
from ._lists import stack_traced_lists


@stack_traced_lists
def take(a, indices, axis=None, out=None, mode=None, *, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """NumPy's take (modes 'raise' (the default: out of bounds is an IndexError), 'wrap',
    'clip'), and JAX's 'fill' (out-of-bounds positions get fill_value, NaN for floats) and
    'promise_in_bounds'."""
    # getitem, not a[...]: `a` may be a NumPy array indexed by traced indices
    if out is not None:
        raise FxadValueError("take: out= must be None; fxad returns new arrays")
    if mode not in (None, "raise", "promise_in_bounds"):
        return _take_with_mode(a, indices, axis, mode, fill_value)
    if axis is None:
        return getitem(ravel(a), indices)
    return getitem(a, (slice(None),) * (axis % ndim(a)) + (indices,))


@stack_traced_lists
def take_along_axis(arr, indices, axis):
    """The elements of arr at `indices` along `axis`, as NumPy's; differentiable to any order in
    arr."""
    axis %= ndim(arr)
    s = shape(arr)
    idx = []
    for i in range(ndim(arr)):
        if i == axis:
            idx.append(indices)
        else:  # an arange that broadcasts along every other axis
            idx.append(np.arange(s[i]).reshape(tuple(-1 if j == i else 1
                                                     for j in range(ndim(arr)))))
    return getitem(arr, tuple(idx))


def choose(a, choices, mode="raise"):
    """choices[a] elementwise (a concrete or traced integer array; mode='raise' only)."""
    if mode != "raise":
        raise FxadValueError("fxad's choose supports mode='raise' only")
    out = choices[-1]
    for i in range(len(choices) - 2, -1, -1):
        out = lax.select(lax.eq(a, i), choices[i], out)
    return out


def select(condlist, choicelist, default=0):
    """The first choice whose condition holds, elementwise; `default` where none does."""
    if len(condlist) != len(choicelist):
        raise FxadValueError("list of cases must be same length as list of conditions")
    out = default
    for cond, choice in zip(reversed(condlist), reversed(choicelist)):
        out = lax.select(cond, choice, out)
    return out


@stack_traced_lists
def delete(arr, obj, axis=None):
    """arr without the entries `obj` (static indices, a slice or a mask) along `axis`, as NumPy's;
    differentiable to any order."""
    if isinstance(obj, Tracer):
        raise FxadValueError("delete needs concrete indices (the output shape depends on them)")
    if axis is None:
        arr, axis = ravel(arr), 0
    n = shape(arr)[axis]
    return take(arr, np.delete(np.arange(n), obj), axis)


@stack_traced_lists
def insert(arr, obj, values, axis=None):
    """np.insert for 1-d results (axis=None, or a 1-d array). NumPy's own insert places
    markers shaped like `values` into an arange, which says where each output comes from."""
    if isinstance(obj, Tracer):
        raise FxadValueError("insert needs concrete indices (the output shape depends on them)")
    if axis is None:
        arr = ravel(arr)
    elif ndim(arr) != 1:
        raise FxadValueError("fxad's insert supports 1-d results only (axis=None or a 1-d "
                             "array)")
    n = shape(arr)[0]
    marks = np.insert(np.arange(n), obj, -1 - np.arange(size(values)).reshape(shape(values)))
    order = np.where(marks >= 0, marks, n - 1 - marks)  # marker -1-j -> values.flat[j]
    vals = lax.convert_element_type(ravel(values), dtype_of(arr))
    return take(concatenate([arr, vals], 0), order)


def _take_with_mode(a, indices, axis, mode, fill_value):
    """take with mode 'wrap', 'clip' (NumPy's: indices clamped, negative ones to 0) or
    'fill' (JAX's: out of [-n, n) gives fill_value; negative indices count from the end)."""
    if axis is None:
        a, axis = ravel(a), 0
    axis %= ndim(a)
    n = shape_of(a)[axis]
    i = lax.convert_element_type(asarray(indices), np.intp)
    pre = (slice(None),) * axis
    if mode == "wrap":
        return getitem(a, pre + (lax.rem(lax.add(lax.rem(i, n), n), n),))
    if mode == "clip":
        return getitem(a, pre + (lax.clamp(0, i, n - 1),))
    if mode != "fill":
        raise FxadValueError(f"take: mode must be 'raise', 'wrap', 'clip', 'fill' or "
                             f"'promise_in_bounds', got {mode!r}")
    ok = lax.logical_and(lax.ge(i, -n), lax.lt(i, n))
    i = lax.clamp(0, lax.select(lax.lt(i, 0), lax.add(i, n), i), builtins.max(n - 1, 0))
    g = getitem(a, pre + (i,))
    dt = dtype_of(a)
    if fill_value is None:
        fill_value = np.nan if dt.kind in "fc" else True if dt.kind == "b" else \
            np.iinfo(dt).min if dt.kind == "i" else np.iinfo(dt).max
    rest = ndim(g) - axis - ndim(i)
    mask = lax.reshape(ok, (1,) * axis + tuple(shape_of(ok)) + (1,) * rest)
    return lax.select(mask, g, lax.convert_element_type(fill_value, dt))


@stack_traced_lists
def resize(a, new_shape):
    """np.resize: the flattened array repeated (or cut) to fill `new_shape`."""
    new_shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    flat = ravel(a)
    n, total = shape_of(flat)[0], math.prod(map(int, new_shape))
    if n == 0 or total == 0:
        return np.zeros(new_shape, dtype_of(a))
    return reshape(take(flat, np.arange(total) % n), new_shape)


@stack_traced_lists
def fill_diagonal(a, val, wrap=False, *, inplace=False):
    """A copy of `a` with its main diagonal set to `val` (repeated as needed; `wrap` for tall
    2-d arrays as in NumPy). NumPy fills in place and returns None; fxad returns the result
    (JAX's inplace=False)."""
    if inplace:
        raise FxadValueError("fill_diagonal: fxad cannot change an array in place; call "
                             "it with inplace=False and use the result")
    s = shape_of(a)
    if len(s) < 2 or (len(s) > 2 and len(set(s)) != 1):
        raise FxadValueError("fill_diagonal: the array must be 2-d, or have equal dimensions")
    size = math.prod(map(int, s))
    step = s[1] + 1 if len(s) == 2 else 1 + int(np.cumprod(s[:-1]).sum())  # NumPy's
    end = size if (len(s) > 2 or wrap) else min(size, s[1] * s[1])
    pos = np.arange(0, end, step)
    vals = ravel(asarray(val))
    n = shape_of(vals)[0]
    vals = take(vals, np.arange(len(pos)) % n) if n != len(pos) else vals
    return reshape(at(ravel(a))[pos].set(vals), s)


@stack_traced_lists
def put_along_axis(arr, indices, values, axis, inplace=False, *, mode=None):
    """A copy of `arr` with `values` put at `indices` along `axis` (JAX's inplace=False)."""
    if inplace:
        raise FxadValueError("put_along_axis: fxad cannot change an array in place; pass "
                             "inplace=False and use the result")
    if axis is None:
        return put_along_axis(ravel(arr), ravel(indices), values, 0)
    s = shape_of(arr)
    axis %= len(s)
    idx = [np.arange(n).reshape(tuple(n if j == i else 1 for j in range(len(s))))
           for i, n in enumerate(s)]
    idx[axis] = indices
    return at(arr)[tuple(idx)].set(values, mode=mode)


@stack_traced_lists
def put(a, ind, v, mode=None, *, inplace=False):
    """A copy of `a` with v put at the flat indices `ind` (JAX's inplace=False)."""
    if inplace:
        raise FxadValueError("put: fxad cannot change an array in place; pass inplace=False "
                             "and use the result")
    flat_ind = ravel(asarray(ind))
    vals = ravel(asarray(v))
    k, n = shape_of(flat_ind)[0], shape_of(vals)[0]
    if n != k and n:
        vals = take(vals, np.arange(k) % n)
    m = {"raise": None, "wrap": "wrap", "clip": "clip"}.get(mode, mode)
    if m == "wrap":
        size = builtins.max(math.prod(map(int, shape_of(a))), 1)
        flat_ind = lax.rem(lax.add(lax.rem(flat_ind, size), size), size)
        m = None
    return reshape(at(ravel(a))[flat_ind].set(vals, mode=m), shape_of(a))


__all__ = ["take", "take_along_axis", "choose", "select", "delete", "insert", "resize",
           "fill_diagonal", "put_along_axis", "put"]

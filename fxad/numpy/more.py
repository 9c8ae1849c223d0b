"""More of NumPy's (and jax.numpy's) names: shape helpers, index helpers, functional
versions of in-place functions, NumPy 2.1's cumulative_*, and keyword options of existing
functions that need their own code (take modes, computed pad modes, `size=` for nonzero and
unique). More names are in functional.py, poly.py and index_tricks.py."""
from __future__ import annotations

import builtins

import numpy as np

from .. import lax
from ..rules import ops
from ..core import Tracer
from ..errors import ConcretizationError, FxadValueError
from ..rules.helpers import dtype_of, shape_of
from ..rules.structural.indexing import getitem
from .at import at
from .creation import asarray
from .manipulation import (argsort, concatenate, moveaxis, ndim,
                           ravel, reshape, split, take, transpose)
from .reductions import cumprod, cumsum, max as _max, mean as _mean, min as _min, sum as _sum
from .statistics import median as _median


def _concrete(a, what):
    try:
        return a.concrete_value(what) if isinstance(a, Tracer) else np.asarray(a)
    except ConcretizationError:
        raise ConcretizationError(f"{what} needs concrete values (its output shape depends on "
                                  "them); pass size= where the function takes it, or compute "
                                  "it outside jit/vmap") from None


# --- shapes -----------------------------------------------------------------------------------

def rollaxis(a, axis, start=0):
    """NumPy's rollaxis: move `axis` to before position `start`."""
    n = ndim(a)
    axis %= n
    start = start + n if start < 0 else start
    if not 0 <= start <= n:
        raise FxadValueError(f"rollaxis: start {start} is out of range for rank {n}")
    if axis < start:
        start -= 1
    return a if axis == start else moveaxis(a, axis, start)


def vsplit(ary, indices_or_sections):
    if ndim(ary) < 2:
        raise FxadValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def hsplit(ary, indices_or_sections):
    if ndim(ary) == 0:
        raise FxadValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if ndim(ary) > 1 else 0)


def dsplit(ary, indices_or_sections):
    if ndim(ary) < 3:
        raise FxadValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


def row_stack(tup):
    from .manipulation import vstack
    return vstack(tup)


def concat(arrays, /, *, axis=0):
    """The Array API's name for concatenate."""
    return concatenate(arrays, axis)


def permute_dims(a, /, axes):
    return transpose(a, axes)


def resize(a, new_shape):
    """np.resize: the flattened array repeated (or cut) to fill `new_shape`."""
    new_shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    flat = ravel(a)
    n, total = shape_of(flat)[0], int(np.prod(new_shape, dtype=np.int64))
    if n == 0 or total == 0:
        return np.zeros(new_shape, dtype_of(a))
    return reshape(take(flat, np.arange(total) % n), new_shape)


# --- indices ----------------------------------------------------------------------------------

tril_indices, triu_indices = np.tril_indices, np.triu_indices
diag_indices, mask_indices, indices, tri = np.diag_indices, np.mask_indices, np.indices, np.tri


def tril_indices_from(arr, k=0):
    return np.tril_indices(shape_of(arr)[-2], k, shape_of(arr)[-1])


def triu_indices_from(arr, k=0):
    return np.triu_indices(shape_of(arr)[-2], k, shape_of(arr)[-1])


def diag_indices_from(arr):
    s = shape_of(arr)
    if len(s) < 2 or len(set(s)) != 1:
        raise FxadValueError("diag_indices_from: all dimensions of the input must be equal")
    return np.diag_indices(s[0], len(s))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat index of each tuple of indices (integers, traced or not). mode 'raise' does
    not check bounds of traced indices (they stage); 'wrap' and 'clip' apply per dimension."""
    if order != "C":
        raise FxadValueError("ravel_multi_index: order='C' only")
    dims = tuple(int(d) for d in dims)
    strides = np.cumprod((dims + (1,))[::-1])[::-1][1:]
    out = np.zeros((), np.intp)
    modes = mode if isinstance(mode, (tuple, list)) else (mode,) * len(dims)
    for i, d, s, m in zip(multi_index, dims, strides, modes):
        i = lax.convert_element_type(i, np.intp)
        if m == "wrap":
            i = lax.rem(lax.add(lax.rem(i, d), d), d)
        elif m == "clip":
            i = lax.clamp(0, i, d - 1)
        elif not isinstance(i, Tracer) and np.any((np.asarray(i) < 0) | (np.asarray(i) >= d)):
            raise FxadValueError("ravel_multi_index: invalid entry in coordinates array")
        out = lax.add(out, lax.mul(i, int(s)))
    return out


def unravel_index(indices, shape):
    """The tuple of indices (per dimension) of each flat index; negative ones count from the
    end, as in JAX."""
    shape = (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)
    total = int(np.prod(shape, dtype=np.int64))
    i = lax.convert_element_type(indices, np.intp)
    i = lax.select(lax.lt(i, 0), lax.add(i, total), i)
    out = []
    for d in reversed(shape):
        out.append(lax.rem(i, d))
        i = lax.floor_divide(i, d)
    return tuple(reversed(out))


def lexsort(keys, axis=-1):
    """NumPy's lexsort: the LAST key is the primary one."""
    keys = list(keys)
    return ops.lexsort(*keys[::-1], axis=axis)


def sort_complex(a):
    a = asarray(a)
    if dtype_of(a).kind != "c":
        a = lax.convert_element_type(a, np.result_type(dtype_of(a), np.complex64))
    flat = ravel(a) if ndim(a) != 1 else a
    return take(flat, ops.lexsort(lax.real(flat), lax.imag(flat), axis=0)) if ndim(a) == 1 \
        else reshape(take(flat, ops.lexsort(lax.real(flat), lax.imag(flat), axis=0)),
                     shape_of(a))


# --- functional versions of in-place functions ------------------------------------------------

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
    size = int(np.prod(s, dtype=np.int64))
    step = s[1] + 1 if len(s) == 2 else 1 + int(np.cumprod(s[:-1]).sum())  # NumPy's
    end = size if (len(s) > 2 or wrap) else min(size, s[1] * s[1])
    pos = np.arange(0, end, step)
    vals = ravel(asarray(val))
    n = shape_of(vals)[0]
    vals = take(vals, np.arange(len(pos)) % n) if n != len(pos) else vals
    return reshape(at(ravel(a))[pos].set(vals), s)


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
        size = builtins.max(int(np.prod(shape_of(a), dtype=np.int64)), 1)
        flat_ind = lax.rem(lax.add(lax.rem(flat_ind, size), size), size)
        m = None
    return reshape(at(ravel(a))[flat_ind].set(vals, mode=m), shape_of(a))


# --- cumulative (NumPy 2.1 names) -------------------------------------------------------------

def _cumulative(fn, x, axis, dtype, include_initial, initial):
    if axis is None:
        if ndim(x) > 1:
            raise FxadValueError("cumulative_*: axis is required for arrays of rank > 1")
        axis = 0
    out = fn(x, axis, dtype)
    if include_initial:
        s = list(shape_of(out))
        s[axis % len(s)] = 1
        out = concatenate([np.full(s, initial, dtype_of(out)), out], axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative(cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative(cumprod, x, axis, dtype, include_initial, 1)


# --- keyword options of existing functions ----------------------------------------------------

def take_with_mode(a, indices, axis, mode, fill_value):
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


def _pad_widths(pad_width, nd):
    return np.broadcast_to(np.asarray(pad_width, dtype=int), (nd, 2))


def _per_axis(v, nd, name):
    """A scalar, a pair, or one pair per axis -> one (before, after) pair per axis."""
    if v is None:
        return [(None, None)] * nd
    arr = np.asarray(v, dtype=object)
    try:
        return [tuple(r) for r in np.broadcast_to(arr, (nd, 2))]
    except ValueError:
        raise FxadValueError(f"pad: {name} must be a scalar, a pair, or one pair per "
                             "axis") from None


def pad_computed(array, pad_width, mode, stat_length, end_values):
    """pad's modes whose values are computed from the array: linear_ramp (from the edge
    value to `end_values`), and maximum, minimum, mean, median (of the `stat_length`
    elements nearest each end). Axes are padded in turn, as NumPy does."""
    nd = ndim(array)
    widths = _pad_widths(pad_width, nd)
    stats = _per_axis(stat_length, nd, "stat_length")
    ends = _per_axis(end_values, nd, "end_values")
    stat = {"maximum": _max, "minimum": _min, "mean": _mean, "median": _median}.get(mode)
    for ax in range(nd):
        lo, hi = (int(w) for w in widths[ax])
        if not (lo or hi):
            continue
        n = shape_of(array)[ax]
        pre = (slice(None),) * ax
        parts = []
        for side, width in (("lo", lo), ("hi", hi)):
            if not width:
                parts.append(None)
                continue
            shape = list(shape_of(array))
            shape[ax] = width
            if mode == "linear_ramp":
                edge = getitem(array, pre + (slice(0, 1) if side == "lo" else slice(n - 1, n),))
                end = ends[ax][0 if side == "lo" else 1]
                steps = np.arange(width, dtype=np.float64) / width
                steps = steps if side == "lo" else (np.arange(1, width + 1) / width)
                w = steps.reshape(tuple(width if i == ax else 1 for i in range(nd)))
                a0, a1 = (end, edge) if side == "lo" else (edge, end)
                ramp = lax.add(a0, lax.mul(lax.sub(a1, a0), w))
                part = lax.broadcast_to(ramp, tuple(shape))
            else:
                k = stats[ax][0 if side == "lo" else 1]
                k = n if k is None else builtins.min(builtins.max(int(k), 1), n)
                window = getitem(array, pre + (slice(0, k) if side == "lo" else slice(n - k, n),))
                v = stat(window, axis=ax, keepdims=True)
                part = lax.broadcast_to(v, tuple(shape))
            if dtype_of(part) != dtype_of(array):
                part = lax.convert_element_type(
                    lax.round(part) if dtype_of(array).kind in "iu" else part, dtype_of(array))
            parts.append(part)
        array = concatenate([p for p in (parts[0], array, parts[1]) if p is not None], ax)
    return array


def nonzero_sized(a, size, fill_value=None):
    """The indices of the nonzero elements (row-major order), `size` of them per dimension:
    the first `size` if there are more, `fill_value` (default 0) after the last if fewer.
    A stable sort of `a == 0` puts the nonzero positions first."""
    a = asarray(a)
    s = shape_of(a)
    if not s:
        a, s = reshape(a, (1,)), (1,)
    flat = ravel(a)
    n = shape_of(flat)[0]
    nz = lax.ne(flat, 0)
    order = argsort(lax.convert_element_type(lax.logical_not(nz), np.int8), 0)
    size = int(size)
    pos = take(order, np.arange(size) % builtins.max(n, 1)) if n else np.zeros(size, np.intp)
    count = _sum(lax.convert_element_type(nz, np.intp))
    used = lax.lt(np.arange(size), count)
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(s)
    out = []
    for idx, fv in zip(unravel_index(pos, s), fills):
        out.append(lax.select(used, idx, 0 if fv is None else fv))
    return tuple(out)


def unique_sized(ar, size, fill_value=None, return_index=False, return_inverse=False,
                 return_counts=False, equal_nan=True):
    """unique with a static `size`: the sorted distinct values (gathered from `ar`, so they
    carry derivatives), the first `size` of them, then `fill_value` (default: the smallest
    value). Index, inverse and counts as NumPy's, padded with 0."""
    flat = ravel(asarray(ar))
    n = shape_of(flat)[0]
    size = int(size)
    perm = argsort(flat, 0)
    srt = take(flat, perm)
    prev = concatenate([srt[:1], srt[:-1]]) if n else srt
    new = lax.ne(srt, prev)
    if equal_nan and dtype_of(flat).kind in "fc":
        new = lax.logical_and(new, lax.logical_not(lax.logical_and(lax.isnan(srt),
                                                                   lax.isnan(prev))))
    if n:
        new = at(new)[0].set(True)
    starts = argsort(lax.convert_element_type(lax.logical_not(new), np.int8), 0)
    count = _sum(lax.convert_element_type(new, np.intp))
    used = lax.lt(np.arange(size), count)
    pick = take(starts, np.arange(size) % builtins.max(n, 1)) if n else np.zeros(size, np.intp)
    vals = take(srt, pick) if n else np.zeros(size, dtype_of(flat))
    fill = srt[0] if fill_value is None and n else (0 if fill_value is None else fill_value)
    out = [lax.select(used, vals, lax.convert_element_type(fill, dtype_of(flat)))]
    if return_index:
        out.append(lax.select(used, take(perm, pick), 0))
    if return_inverse:
        inv_sorted = lax.sub(cumsum(lax.convert_element_type(new, np.intp)), 1)
        inv = take(inv_sorted, argsort(perm, 0))
        out.append(reshape(inv, shape_of(ar)) if ndim(ar) > 1 else inv)
    if return_counts:
        nxt = take(starts, (np.arange(size) + 1) % builtins.max(n, 1)) if n else pick
        ends = lax.select(lax.lt(np.arange(size) + 1, count), nxt, n)
        out.append(lax.select(used, lax.sub(ends, pick), 0))
    return out[0] if len(out) == 1 else tuple(out)


__all__ = ["rollaxis", "vsplit", "hsplit", "dsplit", "row_stack", "concat", "permute_dims",
           "resize", "tril_indices", "triu_indices", "diag_indices", "mask_indices", "indices",
           "tri", "tril_indices_from", "triu_indices_from", "diag_indices_from",
           "ravel_multi_index", "unravel_index", "lexsort", "sort_complex", "fill_diagonal",
           "put_along_axis", "put", "cumulative_sum", "cumulative_prod"]


def accept_sequences(f):
    """`f` taking its first argument as fxad.numpy.asarray does: a list or tuple of traced
    values is stacked (`fxad.numpy.mean([t0, t1])`; NumPy itself cannot dispatch that)."""
    import functools

    @functools.wraps(f)
    def g(a, *args, **kwargs):
        if isinstance(a, (list, tuple)):
            a = asarray(a)
        return f(a, *args, **kwargs)
    return g


from . import manipulation as _manipulation  # noqa: E402

_manipulation.register_extended(nonzero_sized=nonzero_sized, pad_computed=pad_computed,
                                take_with_mode=take_with_mode, unique_sized=unique_sized)

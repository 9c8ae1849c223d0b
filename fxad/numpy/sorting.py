"""Sorting, searching and counting with NumPy's signatures: sort and argsort (stable; JAX's
`descending`), partitions, lexsort, and the functions whose output shape depends on the values
(nonzero, flatnonzero, argwhere, unique), which need concrete values or, as in JAX, a static
`size=`, with which they stage under jit and vmap."""
from __future__ import annotations

import builtins

import numpy as np

from .. import lax
from ..core import Tracer
from ..errors import ConcretizationError, FxadValueError
from ..rules import ops
from ..rules.helpers import dtype_of, shape_of
from .at import at
from .creation import asarray
from .index_tricks import unravel_index
from .indexing import take, take_along_axis
from .manipulation import concatenate, ndim, ravel, reshape, shape, stack
from .reductions import cumsum, sum as _sum
from ._lists import stack_traced_lists


def _concrete(a, what):
    try:
        return a.concrete_value(what) if isinstance(a, Tracer) else np.asarray(a)
    except ConcretizationError:
        raise ConcretizationError(f"{what} needs concrete values (its output shape depends on "
                                  "them); pass size= where the function takes it, or compute "
                                  "it outside jit/vmap") from None


@stack_traced_lists
def nonzero(a, *, size=None, fill_value=None):
    """With `size` (JAX's): that many indices per dimension, padded with fill_value (0):
    a static shape, so it stages under jit and vmap."""
    if size is not None:
        return _nonzero_sized(a, size, fill_value)
    return np.nonzero(_concrete(a, "nonzero (its output shape depends on the values)"))


@stack_traced_lists
def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """The stable sorting permutation (whatever `kind` or `stable` say: a stable sort is a
    valid answer to every request); `descending` keeps ties in index order, as JAX."""
    if order is not None:
        raise FxadValueError("argsort: order= (structured arrays) is not supported")
    if axis is None:
        a, axis = ravel(a), 0
    axis %= ndim(a)
    if not descending:
        return lax.argsort(a, axis)
    n = shape(a)[axis]
    return lax.sub(n - 1, lax.flip(lax.argsort(lax.flip(a, (axis,)), axis), (axis,)))


@stack_traced_lists
def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """Sorted values, differentiable: a gather by the (integer) sorting permutation."""
    if axis is None:
        a, axis = ravel(a), 0
    return take_along_axis(a, argsort(a, axis, kind, order, descending=descending), axis)


@stack_traced_lists
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A sorted array is a valid partition for every kth (NumPy leaves the order within the
    parts unspecified; fxad's is sorted)."""
    return sort(a, axis)


@stack_traced_lists
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition a around its kth element along `axis` (a full stable argsort, which
    is one such partition); an integer result, so not differentiable."""
    return argsort(a, axis)


@stack_traced_lists
def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the non-zero elements of the flattened a, as NumPy's; an integer result, so
    not differentiable; under `jit` the result's size depends on the data: give `size=` (and
    `fill_value=`) as in JAX."""
    if size is not None:
        return _nonzero_sized(ravel(a), size, fill_value)[0]
    return np.flatnonzero(_concrete(a, "flatnonzero (its output shape depends on the values)"))


@stack_traced_lists
def argwhere(a, *, size=None, fill_value=None):
    """The indices of the non-zero elements, one row each, as NumPy's; an integer result, so not
    differentiable; under `jit` the result's size depends on the data: give `size=` (and
    `fill_value=`) as in JAX."""
    if size is not None:
        return stack(_nonzero_sized(a, size, fill_value), -1) if ndim(a) else \
            np.zeros((min(size, 1), 0), np.intp)
    return np.argwhere(_concrete(a, "argwhere (its output shape depends on the values)"))


@stack_traced_lists
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted distinct values, gathered from `ar` at their first occurrences (so they
    carry derivatives); the indices and counts are plain integers. With `size` (JAX's):
    exactly that many values, padded with fill_value (the smallest value), staged."""
    if size is not None:
        return _unique_sized(ar, size, fill_value, return_index, return_inverse,
                             return_counts, equal_nan)
    if axis is not None:
        raise FxadValueError("fxad's unique supports axis=None only")
    flat = ravel(ar)
    _, first, inverse, counts = np.unique(
        _concrete(flat, "unique (its output shape depends on the values)"), return_index=True,
        return_inverse=True, return_counts=True, equal_nan=equal_nan)
    out = [take(flat, first)]
    if return_index:
        out.append(first)
    if return_inverse:
        out.append(inverse.reshape(shape(ar)) if ndim(ar) > 1 else inverse)
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def lexsort(keys, axis=-1):
    """NumPy's lexsort: the LAST key is the primary one."""
    keys = list(keys)
    return ops.lexsort(*keys[::-1], axis=axis)


@stack_traced_lists
def sort_complex(a):
    """a sorted by real part, then imaginary part, as a complex array, as NumPy's; differentiable
    to any order."""
    a = asarray(a)
    if dtype_of(a).kind != "c":
        a = lax.convert_element_type(a, np.result_type(dtype_of(a), np.complex64))
    # NumPy's order for complex values is sort_complex's (real part, then imaginary part);
    # like it, along the last axis
    return sort(a, axis=-1)


def _nonzero_sized(a, size, fill_value=None):
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


def _unique_sized(ar, size, fill_value=None, return_index=False, return_inverse=False,
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


__all__ = ["argsort", "sort", "partition", "argpartition", "lexsort", "sort_complex", "nonzero",
           "flatnonzero", "argwhere", "unique"]

"""NumPy's index helpers: r_, c_ (joining arrays, traced ones too), s_, index_exp, mgrid,
ogrid, ix_, the index arrays of triangles and diagonals, and conversions between flat and
multi-dimensional indices (traced ones too)."""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from ..core import Tracer
from ..errors import FxadValueError
from ..rules.helpers import shape_of
from .creation import asarray
from .manipulation import concatenate
from ._lists import stack_traced_lists


def _has_tracer(items):
    return any(isinstance(i, Tracer) for i in items)


class _Concatenator:
    """`r_[...]` / `c_[...]`, NumPy's rules for traced pieces too: slices become aranges (or
    linspaces, for a complex step), every piece gets at least `ndmin` dimensions (a 1-d one
    placed along `trans1d`), numbers take part in the dtype as NumPy's weak scalars, and the
    pieces are joined along `axis`. A leading string sets 'axis[,ndmin[,trans1d]]'; the
    matrix directives 'r' and 'c' need a matrix type fxad does not have."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        if items and isinstance(items[0], str) and items[0] in ("r", "c"):
            raise FxadValueError("r_/c_: the 'r' and 'c' matrix directives are not supported "
                                 "(fxad has no matrix type)")
        if not _has_tracer(items):
            return asarray((np.r_ if self.trans1d == -1 else np.c_)[key])
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        pieces, kinds = [], []
        for k, it in enumerate(items):
            if isinstance(it, str):
                if k != 0:
                    raise FxadValueError("special directives must be the first entry.")
                parts = [int(p) for p in it.split(",")]
                axis = parts[0]
                if len(parts) > 1:
                    ndmin = parts[1]
                if len(parts) > 2:
                    trans1d = parts[2]
                continue
            if type(it) in np.ScalarType:  # a number: NumPy's weak scalar, no trans1d
                pieces.append(("scalar", it))
                kinds.append(it)
                continue
            if isinstance(it, slice):
                a, nd = asarray(np.r_[it]), 1
            else:
                a, nd = asarray(it), np.ndim(it) if not isinstance(it, Tracer) else it.ndim
            a = _at_least(a, ndmin)
            if trans1d != -1 and nd < ndmin:
                k2, k1 = ndmin - nd, trans1d
                if k1 < 0:
                    k1 += k2 + 1
                order = list(range(ndmin))
                a = lax.transpose(a, tuple(order[:k1] + order[k2:] + order[k1:k2]))
            pieces.append(("array", a))
            kinds.append(a.dtype)
        dtype = np.result_type(*kinds)
        arrays = [_at_least(asarray(v, dtype=dtype), ndmin) for _, v in pieces]
        return concatenate(arrays, axis)


def _at_least(a, ndmin):
    """a with leading length-1 axes up to ndmin dimensions (np.array's ndmin=)."""
    nd = len(shape_of(a))
    return a if nd >= ndmin else lax.reshape(a, (1,) * (ndmin - nd) + tuple(shape_of(a)))


r_ = _Concatenator(0, 1, -1)
c_ = _Concatenator(-1, 2, 0)
s_ = np.s_
index_exp = np.index_exp
mgrid = np.mgrid
ogrid = np.ogrid


def ix_(*args):
    """Open-mesh index arrays: the k-th has shape (1, ..., n_k, ..., 1) (traced ones too)."""
    n = len(args)
    out = []
    for k, a in enumerate(args):
        a = asarray(a)
        if a.ndim != 1:
            raise FxadValueError("ix_: cross index must be 1 dimensional")
        if a.dtype == np.bool_:
            a = np.nonzero(np.asarray(a))[0] if not isinstance(a, Tracer) else a
        out.append(lax.reshape(a, tuple(shape_of(a)[0] if j == k else 1 for j in range(n))))
    return tuple(out)


tril_indices, triu_indices = np.tril_indices, np.triu_indices


diag_indices, mask_indices, indices, tri = np.diag_indices, np.mask_indices, np.indices, np.tri


@stack_traced_lists
def tril_indices_from(arr, k=0):
    """The index arrays of the lower triangle (from the k-th diagonal) of arr, as NumPy's."""
    return np.tril_indices(shape_of(arr)[-2], k, shape_of(arr)[-1])


@stack_traced_lists
def triu_indices_from(arr, k=0):
    """The index arrays of the upper triangle (from the k-th diagonal) of arr, as NumPy's."""
    return np.triu_indices(shape_of(arr)[-2], k, shape_of(arr)[-1])


@stack_traced_lists
def diag_indices_from(arr):
    """The index arrays of the main diagonal of the square array arr, as NumPy's."""
    s = shape_of(arr)
    if len(s) < 2 or len(set(s)) != 1:
        raise FxadValueError("diag_indices_from: all dimensions of the input must be equal")
    return np.diag_indices(s[0], len(s))


@stack_traced_lists
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


@stack_traced_lists
def unravel_index(indices, shape):
    """The tuple of indices (per dimension) of each flat index; negative ones count from the
    end, as in JAX."""
    shape = (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)
    total = math.prod(map(int, shape))
    i = lax.convert_element_type(indices, np.intp)
    i = lax.select(lax.lt(i, 0), lax.add(i, total), i)
    out = []
    for d in reversed(shape):
        out.append(lax.rem(i, d))
        i = lax.floor_divide(i, d)
    return tuple(reversed(out))


__all__ = ["r_", "c_", "s_", "index_exp", "mgrid", "ogrid", "ix_", "tril_indices", "triu_indices",
           "diag_indices", "mask_indices", "indices", "tri", "tril_indices_from",
           "triu_indices_from", "diag_indices_from", "ravel_multi_index", "unravel_index"]

"""Piecewise-constant statistics primitives: their values are SciPy's, their derivatives are 0
(a quantile of a discrete distribution, ranks, the position of the mode). They are primitives
so that jit and vmap can run them on traced values."""
from __future__ import annotations

import math

import numpy as np

from ...core import Primitive, ShapedArray
from ..helpers import elementwise
from ..helpers import bdim_to_front, defjvp_zero, shape_of
from .. import ops


def _stats():
    import scipy.stats  # heavy: imported when first used
    return scipy.stats


discrete_ppf_p = elementwise(  # the quantile of scipy.stats.<dist> (a discrete distribution)
    "discrete_ppf", lambda q, *params, dist: getattr(_stats(), dist).ppf(q, *params))
defjvp_zero(discrete_ppf_p)
def discrete_ppf(dist, q, *params): return discrete_ppf_p.bind(q, *params, dist=dist)


def _rank_impl(a, method, axis):
    return np.asarray(_stats().rankdata(a, method=method, axis=axis), np.float64)


rankdata_p = Primitive("rankdata")  # axis: an int, or None: ranks of the flattened array (1-d)
rankdata_p.def_impl(_rank_impl)
rankdata_p.def_abstract_eval(lambda a, method, axis: ShapedArray(
    a.shape if axis is not None else (math.prod(map(int, a.shape)),),
    np.dtype(np.float64)))
defjvp_zero(rankdata_p)


def _rankdata_batch(vals, dims, method, axis):
    a = bdim_to_front(vals[0], dims[0])
    if axis is not None:
        return rankdata(a, method, axis + 1), 0
    shape = shape_of(a)
    flat = ops.reshape(a, (shape[0], math.prod(map(int, shape[1:]))))
    return rankdata(flat, method, 1), 0


rankdata_p.def_batch(_rankdata_batch)
def rankdata(a, method, axis): return rankdata_p.bind(a, method=method, axis=axis)


def _mode_index_impl(a, axis):
    """For each slice along `axis`, the index of the first occurrence of scipy.stats.mode's
    value (the smallest most frequent one), with the axis kept (size 1)."""
    m = _stats().mode(a, axis=axis, keepdims=True).mode
    hit = np.asarray(a == m)
    return np.argmax(hit, axis=axis, keepdims=True).astype(np.int64)


mode_index_p = Primitive("mode_index")
mode_index_p.def_impl(_mode_index_impl)
mode_index_p.def_abstract_eval(lambda a, axis: ShapedArray(
    a.shape[:axis] + (1,) + a.shape[axis + 1:], np.dtype(np.int64)))
defjvp_zero(mode_index_p)
mode_index_p.def_batch(lambda vals, dims, axis: (
    mode_index(bdim_to_front(vals[0], dims[0]), axis + 1), 0))
def mode_index(a, axis): return mode_index_p.bind(a, axis=int(axis))


__all__ = ["discrete_ppf", "rankdata", "mode_index"]

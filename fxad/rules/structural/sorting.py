"""Sorting: argsort, lexsort (several keys) and searchsorted, integer-valued with no
derivative, and top_k, whose values are a gather along the last axis."""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ...errors import FxadValueError
from ..helpers import bdim_to_front, broadcast_batched, defbatch_unary_axes
from ...interpreters.jvp import Zero
from ..helpers import defjvp_zero, norm_axes, shape_of
from .. import ops


argsort_p = Primitive("argsort", memory="fresh")  # stable, so ties keep their order as in NumPy
argsort_p.def_impl(lambda x, axis: np.argsort(x, axis=axis, kind="stable"))
argsort_p.def_abstract_eval(lambda x, axis: ShapedArray(x.shape, np.intp))
defjvp_zero(argsort_p)
defbatch_unary_axes(argsort_p, "axis")
def argsort(x, axis):
    """The indices that sort x along `axis` (a stable sort); integers, so not differentiable."""
    return argsort_p.bind(x, axis=norm_axes(x, (axis,), 'argsort')[0])


# Insertion indices of v into sorted 1-d a (integer, no derivative). Batched v is one call;
# a batched a (a different sorted sequence per example) counts the elements below each v.
searchsorted_p = Primitive("searchsorted", memory="fresh")
searchsorted_p.def_impl(lambda a, v, side: np.searchsorted(a, v, side=side))
searchsorted_p.def_abstract_eval(lambda a, v, side: ShapedArray(v.shape, np.intp))
defjvp_zero(searchsorted_p)
def _searchsorted_batch(vals, dims, side):
    (a, v), (da, dv) = vals, dims
    if da is None:
        return searchsorted(a, v, side), dv
    a, v = bdim_to_front(a, da), bdim_to_front(v, dv) if dv is not None else v
    nb = shape_of(a)[0]
    if dv is None:
        v = ops.broadcast_to(v, (nb,) + tuple(shape_of(v)))
    vv = ops.reshape(v, tuple(shape_of(v)) + (1,))                  # (b, ..., 1)
    aa = ops.reshape(a, (nb,) + (1,) * (len(shape_of(v)) - 1) + (shape_of(a)[1],))
    below = ops.lt(aa, vv) if side == "left" else ops.le(aa, vv)
    count = ops.reduce_sum(ops.convert_element_type(below, np.intp), (len(shape_of(v)),), False)
    return count, 0
searchsorted_p.def_batch(_searchsorted_batch)
def searchsorted(a, v, side="left"):
    """The indices where the elements of v would be inserted in the sorted array a to keep it
    sorted (`side` "left" or "right"), as NumPy's; integers, so not differentiable."""
    return searchsorted_p.bind(a, v, side=side)


# The stable permutation sorting by keys[0], ties broken by keys[1], ... (np.lexsort takes
# the primary key last). NaNs sort last, as in np.sort.
lexsort_p = Primitive("lexsort", memory="fresh")
lexsort_p.def_impl(lambda *keys, axis: np.lexsort(keys[::-1], axis=axis))
def _lexsort_shape(*keys, axis):
    if any(k.shape != keys[0].shape for k in keys):
        raise FxadValueError(f"lexsort: keys of shapes {[k.shape for k in keys]} differ; "
                             "every key must have the same shape")
    return ShapedArray(keys[0].shape, np.intp)
lexsort_p.def_abstract_eval(_lexsort_shape)
defjvp_zero(lexsort_p)
lexsort_p.def_batch(lambda vals, dims, axis: (lexsort(
    *[broadcast_batched(v, d, _size(vals, dims)) for v, d in zip(vals, dims)], axis=axis + 1), 0))
def lexsort(*keys, axis): return lexsort_p.bind(*keys, axis=norm_axes(keys[0], (axis,), 'lexsort')[0])


def _size(vals, dims):
    return next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not None)


def _top_k_indices(x, k):
    """Indices of the k largest along the last axis, largest first; ties in index order and
    NaN counted largest (np.sort's order, reversed): a stable ascending sort of the reversed
    array, read backwards."""
    n = x.shape[-1]
    order = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1]
    return (n - 1 - order[..., :k]).astype(np.intp)


top_k_p = Primitive("top_k", multiple_results=True, memory="fresh")  # -> (values, indices)
def _top_k_impl(x, k):
    _top_k_shape(ShapedArray(np.shape(x), np.asarray(x).dtype), k)  # eager runs check too
    idx = _top_k_indices(np.asarray(x), k)
    return [np.take_along_axis(np.asarray(x), idx, axis=-1), idx]
top_k_p.def_impl(_top_k_impl)
def _top_k_shape(x, k):
    if not x.shape or not 0 <= k <= x.shape[-1]:
        raise FxadValueError(f"top_k: k={k} must be between 0 and the last dimension of "
                             f"{x.str_short()}")
    shape = x.shape[:-1] + (k,)
    return [ShapedArray(shape, x.dtype), ShapedArray(shape, np.intp)]
top_k_p.def_abstract_eval(_top_k_shape)
def _top_k_jvp(primals, tangents, k):
    (x,), (t,) = primals, tangents
    vals, idx = top_k_p.bind(x, k=k)
    if type(t) is Zero:
        return [vals, idx], [Zero.like(vals), Zero.like(idx)]
    return [vals, idx], [take_last(t, idx), Zero.like(idx)]
top_k_p.def_jvp(_top_k_jvp)
top_k_p.def_batch(lambda vals, dims, k: (top_k_p.bind(bdim_to_front(vals[0], dims[0]), k=k),
                                          [0, 0]))
def top_k(x, k): return top_k_p.bind(x, k=int(k))


def take_last(x, idx):
    """x gathered along its last axis at `idx` (same leading shape): take_along_axis."""
    shape = shape_of(idx)
    lead = [np.arange(n).reshape(tuple(n if j == i else 1 for j in range(len(shape))))
            for i, n in enumerate(shape[:-1])]
    return ops.getitem(x, tuple(lead) + (idx,))


# the bind wrappers fxad.lax exports (through rules/ops.py)
__all__ = ["argsort", "searchsorted"]

"""Cumulative reductions along one axis (cumsum, cumprod, cummax, cummin, cumlogsumexp),
and sorting (argsort, lexsort, searchsorted: integer, no derivative; top_k)."""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ..helpers import bdim_to_front, broadcast_batched, defbatch_unary_axes
from ...interpreters.jvp import Zero, jvp_flat
from ..helpers import defjvp_zero, deflinear, dtype_of, norm_axes, probe_dtype, shape_of
from .. import ops


def _cumulative(name, impl):
    p = Primitive(name, memory="fresh")
    p.def_impl(lambda x, axis: impl(x, axis=axis))
    p.def_abstract_eval(lambda x, axis: ShapedArray(x.shape, probe_dtype(p, [x], {"axis": 0})
                                                    if x.ndim else x.dtype))
    defbatch_unary_axes(p, "axis")
    return p


cumsum_p = _cumulative("cumsum", np.cumsum)
# Transpose of a running sum: a running sum from the other end.
deflinear(cumsum_p, lambda ct, x, axis: [ops.flip(cumsum(ops.flip(ct, (axis,)), axis), (axis,))])
def cumsum(x, axis): return cumsum_p.bind(x, axis=norm_axes(x, (axis,), 'cumsum')[0])


def _cumprod_by_doubling(x, axis):
    """cumprod as log2(n) rounds of elementwise `mul` with shifted copies (Hillis-Steele).
    Its derivative is the product of the others at every order, zeros included."""
    n, d = shape_of(x)[axis], 1
    while d < n:
        pre = (slice(None),) * axis
        ones_shape = tuple(d if i == axis else s for i, s in enumerate(shape_of(x)))
        shifted = ops.concatenate([np.ones(ones_shape, dtype_of(x)),
                                   ops.getitem(x, pre + (slice(0, n - d),))], axis)
        x = ops.mul(x, shifted)
        d *= 2
    return x


def _cumprod_jvp(primals, tangents, axis):
    (x,), (t,) = primals, tangents
    ans = cumprod(x, axis)
    if type(t) is Zero:
        return ans, Zero.like(ans)
    _, (dt,) = jvp_flat(lambda v: [_cumprod_by_doubling(v, axis)], [x], [t],
                        name="cumprod jvp")
    return ans, dt


cumprod_p = _cumulative("cumprod", np.cumprod)
cumprod_p.def_jvp(_cumprod_jvp)
def cumprod(x, axis): return cumprod_p.bind(x, axis=norm_axes(x, (axis,), 'cumprod')[0])


argsort_p = Primitive("argsort", memory="fresh")  # stable, so ties keep their order as in NumPy
argsort_p.def_impl(lambda x, axis: np.argsort(x, axis=axis, kind="stable"))
argsort_p.def_abstract_eval(lambda x, axis: ShapedArray(x.shape, np.intp))
defjvp_zero(argsort_p)
defbatch_unary_axes(argsort_p, "axis")
def argsort(x, axis): return argsort_p.bind(x, axis=norm_axes(x, (axis,), 'argsort')[0])


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
def searchsorted(a, v, side="left"): return searchsorted_p.bind(a, v, side=side)


# --- running max / min / logsumexp: JVPs from a doubling composite ----------------------------

def _shift_combine(x, axis, combine):
    """log2(n) rounds of x_i = combine(x_i, x_{i-d}) for i >= d (Hillis-Steele). Elements
    without a predecessor are selected unchanged, not combined with a padding value: an
    identity (-inf for max) would tie with an equal element and take half its tangent."""
    n, d = shape_of(x)[axis], 1
    nd = len(shape_of(x))
    pre = (slice(None),) * axis
    while d < n:
        shifted = ops.concatenate([ops.getitem(x, pre + (slice(0, d),)),
                                   ops.getitem(x, pre + (slice(0, n - d),))], axis)
        has_pred = (np.arange(n) >= d).reshape(tuple(n if i == axis else 1 for i in range(nd)))
        x = ops.select(has_pred, combine(x, shifted), x)
        d *= 2
    return x


def _logaddexp2(a, b):
    """log(exp(a) + exp(b)) = hi + log1p(exp(lo - hi)) from primitives, with derivatives
    exp(a - out) and exp(b - out) at every order. When hi is infinite the correction is a
    constant 0 (no inf - inf is ever computed: hi is replaced by 0 in the difference)."""
    hi, lo = ops.max(a, b), ops.min(a, b)
    finite = ops.isfinite(hi)
    diff = ops.select(finite, ops.sub(lo, ops.select(finite, hi, 0.0)), -np.inf)
    return ops.add(hi, ops.log1p(ops.exp(diff)))


def _running_jvp(prim, combine):
    """The JVP of a running reduction: the JVP of the doubling composite (the primal comes
    from NumPy's accumulate). Ties of max/min split the tangent evenly at each pairwise
    step, as `max` does."""
    def jvp(primals, tangents, axis):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axis=axis)
        if type(t) is Zero:
            return ans, Zero.like(ans)
        _, (dt,) = jvp_flat(lambda v: [_shift_combine(v, axis, combine())], [x], [t],
                            name=f"{prim.name} jvp")
        return ans, dt
    prim.def_jvp(jvp)


cummax_p = _cumulative("cummax", np.maximum.accumulate)
_running_jvp(cummax_p, lambda: ops.max)
def cummax(x, axis): return cummax_p.bind(x, axis=norm_axes(x, (axis,), 'cummax')[0])


cummin_p = _cumulative("cummin", np.minimum.accumulate)
_running_jvp(cummin_p, lambda: ops.min)
def cummin(x, axis): return cummin_p.bind(x, axis=norm_axes(x, (axis,), 'cummin')[0])


cumlogsumexp_p = _cumulative("cumlogsumexp", np.logaddexp.accumulate)
_running_jvp(cumlogsumexp_p, lambda: _logaddexp2)
def cumlogsumexp(x, axis):
    return cumlogsumexp_p.bind(x, axis=norm_axes(x, (axis,), 'cumlogsumexp')[0])


# --- sorting by several keys, and the k largest -----------------------------------------------

# The stable permutation sorting by keys[0], ties broken by keys[1], ... (np.lexsort takes
# the primary key last). NaNs sort last, as in np.sort.
lexsort_p = Primitive("lexsort", memory="fresh")
lexsort_p.def_impl(lambda *keys, axis: np.lexsort(keys[::-1], axis=axis))
def _lexsort_shape(*keys, axis):
    if any(k.shape != keys[0].shape for k in keys):
        from ...errors import FxadValueError
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
        from ...errors import FxadValueError
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

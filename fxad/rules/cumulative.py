"""Cumulative reductions along one axis, and sorting (argsort, searchsorted: integer, no
derivative)."""
from __future__ import annotations

import numpy as np

from ..core import Primitive, ShapedArray
from .helpers import bdim_to_front, defbatch_unary_axes
from ..interpreters.jvp import Zero, jvp_flat
from .helpers import defjvp_zero, deflinear, dtype_of, norm_axes, probe_dtype, shape_of
from . import ops


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

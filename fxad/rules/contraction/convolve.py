"""Full 1-d discrete convolution, bilinear like mul. NumPy's own convolve does the work in
O(n + k) memory; the tangent is a convolution in each operand, and each transpose is a
correlation (a convolution with the other operand reversed) cut to the operand's length."""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ..helpers import bdim_to_front, defbilinear, dtype_of, shape_of
from .. import ops

convolve_p = Primitive("convolve")  # (n,), (k,) -> (n + k - 1,): NumPy's mode 'full'
convolve_p.def_impl(lambda a, v: np.convolve(a, v))
convolve_p.def_abstract_eval(lambda a, v: ShapedArray((a.shape[0] + v.shape[0] - 1,),
                                                      np.result_type(a.dtype, v.dtype)))


def _cut(ct, other, start, length, like):
    """ct correlated with `other`, the `length` entries from `start`, in `like`'s dtype
    (a real operand takes the real part, as every complex transpose here does)."""
    out = ops.getitem(convolve(ct, ops.flip(other, (0,))), (slice(start, start + length),))
    if like.dtype.kind != "c":
        out = ops.real(out)
    return ops.convert_element_type(out, like.dtype)


defbilinear(convolve_p,  # each transpose: a correlation with the other, cut to length
            lambda ct, a, v: _cut(ct, v, shape_of(v)[0] - 1, a.shape[0], a),
            lambda ct, a, v: _cut(ct, a, shape_of(a)[0] - 1, v.shape[0], v))


def _convolve_batch(vals, dims):
    """A batch of convolutions: windows of the zero-padded longer rows times the reversed
    shorter rows (NumPy's convolve takes 1-d operands only)."""
    (a, v), (da, dv) = vals, dims
    size = shape_of(a)[da] if da is not None else shape_of(v)[dv]
    a, v = [ops.broadcast_to(x, (size,) + tuple(shape_of(x))) if d is None else
            bdim_to_front(x, d) for x, d in ((a, da), (v, dv))]
    if shape_of(a)[1] < shape_of(v)[1]:
        a, v = v, a
    n, k = shape_of(a)[1], shape_of(v)[1]
    zeros = np.zeros((size, k - 1), np.result_type(dtype_of(a), dtype_of(v)))
    padded = ops.concatenate([zeros, a, zeros], 1)
    windows = ops.getitem(padded, (slice(None), np.arange(n + k - 1)[:, None] + np.arange(k)))
    out = ops.dot_general(windows, ops.flip(v, (1,)), (((2,), (1,)), ((0,), (0,))))
    return out, 0


convolve_p.def_batch(_convolve_batch)
def convolve(a, v):
    """The full 1-d convolution of a and v, as `numpy.convolve(a, v)`; differentiable to any order
    in forward and reverse mode in both."""
    return convolve_p.bind(a, v)


__all__ = ["convolve"]


# the bind wrappers fxad.lax exports (through rules/ops.py)
__all__ = ["convolve"]

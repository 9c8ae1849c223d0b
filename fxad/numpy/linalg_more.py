"""numpy.linalg's Array API functions (matrix_norm, vector_norm, trace, cross) and the tensor
solvers (tensorsolve, tensorinv), from fxad.numpy.linalg's building blocks."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..errors import FxadValueError
from ..rules.helpers import shape_of
from .linalg import _matrix_norm, _vector_norm, as_float, inv, solve
from .manipulation import diagonal, moveaxis, reshape
from .reductions import normalize_axes, sum as _sum


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The norm of each matrix (the last two axes)."""
    x = as_float(x)
    nd = len(shape_of(x))
    if nd < 2:
        raise FxadValueError("matrix_norm: x must have at least two dimensions")
    return _matrix_norm(x, ord, nd - 2, nd - 1, keepdims)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm over `axis` (all axes by default, the array taken as one vector)."""
    x = as_float(x)
    nd = len(shape_of(x))
    if axis is None:
        out = _vector_norm(reshape(x, (-1,)), ord, (0,), False)
        return lax.reshape(out, (1,) * nd) if keepdims else out
    return _vector_norm(x, ord, normalize_axes(axis, nd), keepdims)


def trace(x, /, *, offset=0, dtype=None):
    """The sum of each matrix's diagonal (the last two axes; numpy.trace uses the first
    two)."""
    d = diagonal(x, offset, -2, -1)
    return _sum(d, axis=-1, dtype=dtype)


def cross(x1, x2, /, *, axis=-1):
    """Cross products of 3-vectors along `axis` (the Array API's: no 2-vectors)."""
    from .products import cross as _cross
    if shape_of(x1)[axis] != 3 or shape_of(x2)[axis] != 3:
        raise FxadValueError("linalg.cross: both inputs need 3 elements along axis")
    return _cross(x1, x2, axis=axis)


def tensorinv(a, ind=2):
    """The inverse of `a` seen as a linear map from its last dims to its first `ind` dims."""
    s = shape_of(a)
    head, tail = s[:ind], s[ind:]
    n, m = int(np.prod(head, dtype=np.int64)), int(np.prod(tail, dtype=np.int64))
    if n != m:
        raise FxadValueError(f"tensorinv: the first {ind} dims ({head}) and the rest ({tail}) "
                             "must have equal products")
    return reshape(inv(reshape(a, (n, m))), tail + head)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b."""
    a = as_float(a)
    nd = len(shape_of(a))
    if axes is not None:
        axes = [ax % nd for ax in axes]
        a = moveaxis(a, axes, list(range(nd - len(axes), nd)))
    bs = shape_of(b)
    xs = shape_of(a)[len(bs):]
    n = int(np.prod(bs, dtype=np.int64))
    m = int(np.prod(xs, dtype=np.int64))
    if n != m:
        raise FxadValueError(f"tensorsolve: a's shape {shape_of(a)} does not give a square "
                             f"system for b of shape {bs}")
    return reshape(solve(reshape(a, (n, m)), reshape(b, (n,))), xs)


__all__ = ["matrix_norm", "vector_norm", "trace", "cross", "tensorinv", "tensorsolve"]

"""NumPy's names and signatures on arrays and traced values (float64 by default; NumPy's
dtype promotion)."""
from numpy import (  # noqa: F401  dtypes and constants, as in NumPy
    bool_, complex64, complex128, e, float16, float32, float64, inf, int8, int16, int32,
    int64, nan, newaxis, pi, uint8, dtype, ndarray)

from .ufuncs import *  # noqa: F401,F403
from .ufuncs import abs, pow, round  # noqa: F401  (names star-import skips or shadows)
from .reductions import (  # noqa: F401
    amax, amin, argmax, argmin, average, cumprod, cumsum, max, mean, min, nanmean, nansum,
    prod, std, sum, var)
from .manipulation import (  # noqa: F401
    argsort, array_split, atleast_1d, atleast_2d, atleast_3d, broadcast_to, column_stack,
    concatenate, diag, diagonal, dstack, expand_dims, flip, hstack, moveaxis, ndim, nonzero,
    pad, ravel, repeat, reshape, roll, shape, size, sort, split, squeeze, stack, swapaxes,
    take, take_along_axis, tile, trace, transpose, tril, triu, vstack)
from .products import cross, dot, einsum, inner, kron, matmul, outer, tensordot, vdot  # noqa: F401
from .creation import (  # noqa: F401
    arange, array, asarray, copy, empty, eye, full, full_like, identity, linspace, ones, ones_like,
    zeros, zeros_like)
from . import methods as _methods  # noqa: F401  (operators and NumPy protocols on Tracer)
from . import linalg  # noqa: F401

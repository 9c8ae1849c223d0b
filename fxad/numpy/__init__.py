"""NumPy's names and signatures on arrays and traced values (float64 by default; NumPy's
dtype promotion)."""
from numpy import (  # noqa: F401  dtypes and constants, as in NumPy
    bool_, complex64, complex128, e, float16, float32, float64, inf, int8, int16, int32,
    int64, nan, newaxis, pi, uint8, dtype, ndarray)

from .ufuncs import *  # noqa: F401,F403
from .ufuncs import abs, pow, round  # noqa: F401  (names star-import skips or shadows)
from .reductions import (  # noqa: F401
    amax, amin, argmax, argmin, max, mean, min, prod, std, sum, var)
from .manipulation import (  # noqa: F401
    atleast_1d, broadcast_to, concatenate, expand_dims, flip, moveaxis, ndim, nonzero, ravel,
    reshape, shape, size, split, squeeze, stack, swapaxes, transpose)
from .products import dot, einsum, inner, matmul, outer, tensordot, vdot  # noqa: F401
from .creation import (  # noqa: F401
    arange, array, asarray, empty, eye, full, full_like, identity, linspace, ones, ones_like,
    zeros, zeros_like)
from . import methods as _methods  # noqa: F401  (operators and NumPy protocols on Tracer)

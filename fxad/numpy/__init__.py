"""NumPy's names and signatures on arrays and traced values (float64 by default; NumPy's
dtype promotion)."""
from numpy import (  # noqa: F401  dtypes and constants, as in NumPy
    bool_, complex64, complex128, e, float16, float32, float64, inf, int8, int16, int32,
    int64, nan, newaxis, pi, uint8, dtype, ndarray)

from .ufuncs import *  # noqa: F401,F403
from .ufuncs import abs, pow, round  # noqa: F401  (names star-import skips or shadows)
from .reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, average, count_nonzero, cumprod, cumsum, max, mean,
    min, nanmean, nansum, prod, std, sum, var)
from .statistics import (  # noqa: F401
    corrcoef, cov, median, nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmedian,
    nanmin, nanpercentile, nanprod, nanquantile, nanstd, nanvar, percentile, ptp, quantile)
from .series import (  # noqa: F401
    allclose, array_equal, bincount, convolve, correlate, diff, digitize, ediff1d, gradient,
    interp, isclose, polyfit, polyval, searchsorted, trapezoid, vander)
from .manipulation import (  # noqa: F401
    append, argpartition, argsort, argwhere, array_split, block, choose, diagflat,
    matrix_transpose, partition, select, unstack, atleast_1d, atleast_2d, atleast_3d, broadcast_arrays,
    broadcast_to, column_stack, concatenate, delete, diag, diagonal, dstack, expand_dims, flip,
    flatnonzero, fliplr, flipud, hstack, insert, meshgrid, moveaxis, ndim, nonzero, pad, ravel,
    repeat, reshape, roll, rot90, shape, size, sort, split, squeeze, stack, swapaxes, take,
    take_along_axis, tile, trace, transpose, tril, triu, unique, vstack)
from .products import cross, dot, einsum, inner, kron, matmul, outer, tensordot, vdot  # noqa: F401
from .creation import (  # noqa: F401
    arange, array, asarray, astype, copy, empty, empty_like, eye, full, full_like, geomspace,
    identity, linspace, logspace, ones, ones_like, result_type, zeros, zeros_like)
from . import methods as _methods  # noqa: F401  (operators and NumPy protocols on Tracer)
from .at import at  # noqa: F401
from .more import *  # noqa: F401,F403  (more of NumPy's and jax.numpy's names)
from .functional import *  # noqa: F401,F403
from .poly import *  # noqa: F401,F403
from .index_tricks import *  # noqa: F401,F403
from .ufuncs import arccosh as acosh, arcsinh as asinh, arctanh as atanh  # noqa: F401
from .ufuncs import invert as bitwise_invert  # noqa: F401
from numpy import (  # noqa: F401  dtypes, dtype helpers and constants, as NumPy's
    bool, can_cast, cdouble, character, complexfloating, csingle, double,
    euler_gamma, finfo, flexible, floating, generic, iinfo, inexact, int_, integer, isdtype,
    issubdtype, number, object_, promote_types, signedinteger, single, uint, uint16, uint32,
    uint64, unsignedinteger, broadcast_shapes, bartlett, blackman, hamming, hanning, kaiser,
    get_printoptions, printoptions, set_printoptions, array_repr, array_str, load, save,
    savez, frombuffer, fromfile, fromiter, fromstring)
from numpy import complex128 as complex_, float64 as float_  # noqa: F401  (JAX's aliases)
from numpy import (  # noqa: F401  the rest of NumPy's scalar type names
    byte, clongdouble, half, intc, intp, long, longdouble, longlong, short, ubyte, uintc,
    uintp, ulong, ulonglong, ushort)
from numpy.exceptions import ComplexWarning  # noqa: F401
from .more import accept_sequences as _seq  # noqa: E402

# Reductions accept a list of traced values (stacked), as asarray does.
(sum, prod, mean, var, std, max, min, amax, amin, all, any, argmax, argmin, cumsum, cumprod,
 median, average, ptp, nansum, nanmean, nanmax, nanmin, nanstd, nanvar, nanprod, quantile,
 percentile, count_nonzero) = map(_seq, (
    sum, prod, mean, var, std, max, min, amax, amin, all, any, argmax, argmin, cumsum,
    cumprod, median, average, ptp, nansum, nanmean, nanmax, nanmin, nanstd, nanvar, nanprod,
    quantile, percentile, count_nonzero))
from . import fft, linalg  # noqa: F401,E402
from .more import lift_sequences as _lift_sequences, stack_traced_lists as _stack_traced  # noqa: E402
from ..core import set_sequence_hook as _set_sequence_hook  # noqa: E402


# Functions of rules/ that look at their argument's dtype before binding (the others are one
# bind, which stacks lists itself, with no wrapper's cost).
_READ_DTYPE_FIRST = ("real", "imag", "conj", "conjugate", "sign", "angle")
# Functions whose list argument is a sequence of arrays, not one array.
_TAKE_SEQUENCES = ("array", "asarray", "concatenate", "concat", "stack", "vstack", "hstack",
                   "dstack", "column_stack", "row_stack", "block", "einsum", "select",
                   "piecewise", "choose", "lexsort", "ix_", "meshgrid", "broadcast_arrays",
                   "multi_dot", "savez", "apply_along_axis", "apply_over_axes", "vectorize",
                   "frompyfunc", "fromfunction")


def _accept_traced_lists(namespace):
    """A list of traced values is an array_like wherever NumPy takes one: primitives stack it
    in bind (the hook); functions written in Python stack it before they start."""
    import types
    for name, f in list(namespace.items()):
        if name.startswith("_") or name in _TAKE_SEQUENCES or \
                not isinstance(f, types.FunctionType) or getattr(f, "_stacks_lists", False):
            continue
        if f.__module__.startswith(("fxad.numpy", "fxad.scipy")) or name in _READ_DTYPE_FIRST:
            g = _stack_traced(f)
            g._stacks_lists = True
            namespace[name] = g


_set_sequence_hook(_lift_sequences)
_accept_traced_lists(globals())
_accept_traced_lists(vars(linalg))
_accept_traced_lists(vars(fft))

# NumPy dispatch (fxad/numpy/methods.py) finds fxad's counterparts of NumPy functions here.
import sys as _sys  # noqa: E402

_methods.register_counterparts(**{"numpy": _sys.modules[__name__], "numpy.linalg": linalg,
                                  "numpy.fft": fft})

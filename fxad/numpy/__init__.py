"""NumPy's names and signatures on arrays and traced values (float64 by default; NumPy's
dtype promotion)."""
from types import ModuleType as _ModuleType

from numpy import (  # noqa: F401  dtypes and constants, as in NumPy
    bool_, complex64, complex128, e, float16, float32, float64, inf, int8, int16, int32,
    int64, nan, newaxis, pi, uint8, dtype, ndarray)

from .ufuncs import *  # noqa: F401,F403
from .ufuncs import abs, pow, round  # noqa: F401  (names star-import skips or shadows)
from .reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, average, count_nonzero, cumprod, cumsum,
    cumulative_prod, cumulative_sum, max, mean, min, nanmean, nansum, prod, std, sum, var)
from .statistics import (  # noqa: F401
    corrcoef, cov, median, nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmedian,
    nanmin, nanpercentile, nanprod, nanquantile, nanstd, nanvar, percentile, ptp, quantile)
from .series import (  # noqa: F401
    allclose, array_equal, bincount, convolve, correlate, diff, digitize, ediff1d, gradient,
    interp, isclose, polyfit, polyval, searchsorted, trapezoid, vander)
from .manipulation import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .padding import pad  # noqa: F401
from .products import cross, dot, einsum, einsum_path, inner, kron, matmul, outer, tensordot, vdot  # noqa: F401
from .creation import (  # noqa: F401
    arange, array, asarray, astype, copy, empty, empty_like, eye, full, full_like, geomspace,
    identity, linspace, logspace, ones, ones_like, result_type, zeros, zeros_like)
from . import methods as _methods  # noqa: F401  (operators and NumPy protocols on Tracer)
from .at import at  # noqa: F401
from .functional import *  # noqa: F401,F403
from .poly import *  # noqa: F401,F403
from .index_tricks import *  # noqa: F401,F403
from .ufuncs import arccosh as acosh, arcsinh as asinh, arctanh as atanh  # noqa: F401
from .bitwise import *  # noqa: F401,F403
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
from . import fft, linalg  # noqa: F401

# Every function, class and constant imported above (the star-imported modules list theirs in
# their own __all__), and the public submodules.
__all__ = sorted([n for n, v in globals().items() if not n.startswith("_") and n != "annotations"
                  and not isinstance(v, _ModuleType)] + ["fft", "linalg"])

# NumPy dispatch (fxad/numpy/methods.py) finds fxad's counterparts of NumPy functions here.
import sys as _sys  # noqa: E402

_methods.register_counterparts(**{"numpy": _sys.modules[__name__], "numpy.linalg": linalg,
                                  "numpy.fft": fft})

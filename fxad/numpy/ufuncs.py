"""NumPy's elementwise functions (ufunc names) on arrays and tracers."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..core import get_aval as _get_aval
from ..errors import (ConcretizationError as _ConcretizationError, FxadTypeError,
                      FxadValueError as _FxadValueError)
from ..lax.products import to_preferred as _to_preferred
from ..rules import ops as _ops
from ..rules.helpers import dtype_of as _dtype_of, shape_of as _shape_of
from ..rules.elementwise import floating_point as _floats, ufunc_math as _ufunc_math
from ..rules.elementwise.floating_point import copysign, heaviside, ldexp, modf  # noqa: F401
from ..rules.special.basic import logaddexp, logaddexp2, sinc  # noqa: F401  (NumPy's own impls)
from .manipulation import ravel as _ravel
from .creation import asarray as _asarray
from .reductions import all as _all, any as _any, sum as _sum
from .sorting import nonzero as _nonzero
from ._lists import stack_traced_lists as _stack_traced_lists

# One-to-one with a primitive.
negative = lax.neg
add, subtract, multiply = lax.add, lax.sub, lax.mul
divide = true_divide = _ops.div  # (lax.div is JAX's: integers round toward zero)
exp, log, log1p, expm1, sqrt = lax.exp, lax.log, lax.log1p, lax.expm1, lax.sqrt
exp2, log2, log10, hypot = lax.exp2, lax.log2, lax.log10, lax.hypot
sin, cos, tan, arcsin, arccos, arctan = lax.sin, lax.cos, lax.tan, lax.arcsin, lax.arccos, lax.arctan
sinh, cosh, tanh = lax.sinh, lax.cosh, lax.tanh
arcsinh, arccosh, arctanh, arctan2 = lax.arcsinh, lax.arccosh, lax.arctanh, lax.arctan2
absolute = abs = lax.abs
floor, ceil = lax.floor, lax.ceil
sign = _stack_traced_lists(lax.sign)  # (reads its argument's dtype before binding)
maximum, minimum = lax.max, lax.min
equal, not_equal, less, less_equal, greater, greater_equal = (
    lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge)
logical_and, logical_or, logical_not = lax.logical_and, lax.logical_or, lax.logical_not
isfinite, isnan, cbrt = lax.isfinite, lax.isnan, lax.cbrt
trunc, fix, fmod, signbit = lax.trunc, lax.trunc, lax.fmod, lax.signbit
asin, acos, atan, atan2 = arcsin, arccos, arctan, arctan2


def _is_int_scalar(y):
    return isinstance(y, (int, np.integer)) and not isinstance(y, (bool, np.bool_))


@_stack_traced_lists
def power(x, y):
    """x ** y; an integer Python exponent becomes `integer_pow` (exact, and safe at x = 0)."""
    if (type(y) is int or _is_int_scalar(y)) and not isinstance(x, (int, np.integer)):
        return lax.integer_pow(x, int(y))
    return lax.pow(x, y)


pow = power


@_stack_traced_lists
def square(x):
    """x * x elementwise, as NumPy's; differentiable to any order."""
    return lax.integer_pow(x, 2)


@_stack_traced_lists
def reciprocal(x):
    """1 / x elementwise, as NumPy's; differentiable to any order."""
    return lax.integer_pow(x, -1)


@_stack_traced_lists
def round(x, decimals=0):
    """a rounded to `decimals` decimal places, ties to even, as `numpy.round` (alias `around`);
    its derivative is 0."""
    return _ops.round(x, decimals)


around = round


def _probe(x):
    """A 0-d stand-in for x in NumPy's promotion: a Python number (also traced, as jit passes
    it: weakly typed) stays one, anything else is a 0-d array of its dtype."""
    if type(x) in (bool, int, float, complex):
        return x
    weak = _get_aval(x).weak
    return weak(0) if weak is not None else np.zeros((), _dtype_of(x))


def _loop_dtype(ufunc, *xs):
    """The dtype NumPy's `ufunc` computes these operands in (its loop for them)."""
    return ufunc(*map(_probe, xs)).dtype


def _float_loop(ufunc, x):
    """x in the dtype NumPy's `ufunc`, which has float loops only, computes integers and
    booleans in (float16 from int8, float32 from int16, float64 from int32 / int64); other x
    as it is."""
    if np.dtype(_dtype_of(x)).kind in "iub":
        return lax.convert_element_type(x, _loop_dtype(ufunc, x))
    return x


@_stack_traced_lists
def rint(x):
    """x rounded to the nearest integer, ties to even, as `numpy.rint` (integers in NumPy's
    float for them, where `round` keeps their dtype); its derivative is 0."""
    return _ops.round(_float_loop(np.rint, x), 0)


floor_divide = lax.floor_divide
remainder = mod = _ops.rem  # the sign of y (lax.rem is JAX's: the sign of x)


@_stack_traced_lists
def logical_xor(x, y):
    """x xor y elementwise (truth values), as NumPy's; a boolean result, so not differentiable."""
    return lax.ne(lax.ne(x, 0), lax.ne(y, 0))


@_stack_traced_lists
def where(condition, x=None, y=None):
    """x where condition holds, y elsewhere (with broadcasting), as NumPy's; differentiable to any
    order in x and y. With only condition: the indices of its non-zero elements (under `jit`
    the result's size depends on the data: give `size=` (and `fill_value=`) as in JAX)."""
    if x is None and y is None:
        return _nonzero(condition)
    if x is None or y is None:
        raise TypeError("where takes one argument (the condition) or three")
    return lax.select(condition, x, y)


@_stack_traced_lists
def clip(a, a_min=None, a_max=None, *, min=None, max=None):  # noqa: A002  (NumPy 2 names)
    """a limited to [a_min, a_max] (NumPy 2's `min=`/`max=` too); differentiable to any order in a
    (1 inside, 0 where clipped) and in the bounds where they apply."""
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    if a_min is not None:
        a = lax.max(a, a_min)
    if a_max is not None:
        a = lax.min(a, a_max)
    return a


# --- more elementwise math, composed from primitives where that is exact ---------------------

@_stack_traced_lists
def deg2rad(x):
    """Degrees to radians (alias `radians`), elementwise; differentiable to any order."""
    return lax.mul(_float_loop(np.deg2rad, x), float(np.pi / 180))


@_stack_traced_lists
def rad2deg(x):
    """Radians to degrees (alias `degrees`), elementwise; differentiable to any order."""
    return lax.mul(_float_loop(np.rad2deg, x), float(180 / np.pi))


radians, degrees = deg2rad, rad2deg


@_stack_traced_lists
def fabs(x):
    """|x| for real x, as `numpy.fabs` (integers in NumPy's float for them, where `absolute`
    keeps their dtype); differentiable to any order."""
    return absolute(_float_loop(np.fabs, x))


@_stack_traced_lists
def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """x with NaN replaced by `nan` and infinities by `posinf`/`neginf` (the dtype's extremes by
    default), as NumPy's; differentiable to any order (0 at the replaced elements)."""
    if _dtype_of(x).kind == "c":  # NumPy's: the real and imaginary parts separately
        return lax.complex(nan_to_num(lax.real(x), nan, posinf, neginf),
                           nan_to_num(lax.imag(x), nan, posinf, neginf))
    info = np.finfo(_dtype_of(x)) if np.issubdtype(_dtype_of(x), np.floating) else None
    if info is None:
        return x
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = lax.select(lax.isnan(x), nan, x)
    x = lax.select(lax.eq(x, np.inf), posinf, x)
    return lax.select(lax.eq(x, -np.inf), neginf, x)


@_stack_traced_lists
def isinf(x):
    """Whether each element is +inf or -inf, as NumPy's; a boolean result, so not differentiable."""
    return lax.logical_not(lax.logical_or(lax.isfinite(x), lax.isnan(x)))


@_stack_traced_lists
def isposinf(x):
    """Whether each element is +inf, as NumPy's; a boolean result, so not differentiable."""
    return lax.logical_and(isinf(x), lax.logical_not(lax.signbit(x)))


@_stack_traced_lists
def isneginf(x):
    """Whether each element is -inf, as NumPy's; a boolean result, so not differentiable."""
    return lax.logical_and(isinf(x), lax.signbit(x))


@_stack_traced_lists
def fmax(x1, x2):
    """maximum that ignores a NaN operand (NaN only if both are)."""
    return lax.select(lax.isnan(x2), x1, lax.select(lax.isnan(x1), x2, lax.max(x1, x2)))


@_stack_traced_lists
def fmin(x1, x2):
    """The smaller of x1 and x2 elementwise, ignoring NaN (NaN only where both are), as NumPy's;
    differentiable to any order."""
    return lax.select(lax.isnan(x2), x1, lax.select(lax.isnan(x1), x2, lax.min(x1, x2)))


@_stack_traced_lists
def float_power(x1, x2):
    """power computed in float64 (complex128 for complex operands), by NumPy's own loop."""
    wide = np.complex128 if "c" in (np.dtype(_dtype_of(x1)).kind + np.dtype(
        _dtype_of(x2)).kind) else np.float64
    return lax.float_power(lax.convert_element_type(x1, wide), lax.convert_element_type(x2, wide))


@_stack_traced_lists
def divmod(x1, x2):  # noqa: A001  (NumPy's name)
    """(floor_divide(x1, x2), remainder(x1, x2)), as NumPy's; the quotient's derivative is 0, the
    remainder's is differentiable to any order."""
    return floor_divide(x1, x2), remainder(x1, x2)


@_stack_traced_lists
def positive(x):
    """+x (a copy), elementwise, as NumPy's; differentiable to any order."""
    return x


@_stack_traced_lists
def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) over `axis` (broadcasting the others). As NumPy's gufunc, both
    operands need that axis, of one length (a scalar is not broadcast into it). JAX's
    `precision` is checked and ignored, `preferred_element_type` converts the operands."""
    (x1, x2), finish = _to_preferred((x1, x2), preferred_element_type, precision, "vecdot")
    s1, s2 = _shape_of(x1), _shape_of(x2)
    if not s1 or not s2 or s1[axis] != s2[axis]:
        raise _FxadValueError(f"vecdot: operands of shapes {s1} and {s2} do not both have the "
                             f"axis {axis} (signature (n),(n)->()), of one length")
    out = _sum(lax.mul(lax.conj(x1), x2), axis=axis)
    rt = np.result_type(_dtype_of(x1), _dtype_of(x2))
    if rt.kind in "iub":  # NumPy's gufunc sums in the operands' type (sum widens to int64)
        out = lax.convert_element_type(out, rt)
    return finish(out)


@_stack_traced_lists
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Membership (no derivative): element compared with every test element."""
    tests = _ravel(test_elements)
    hit = _any(lax.eq(lax.reshape(element, tuple(_shape_of(element)) + (1,)), tests), axis=-1)
    return lax.logical_not(hit) if invert else hit


# --- complex numbers --------------------------------------------------------------------------

# These look at their argument's dtype before binding, so they stack a list of traced values
# first (the one-bind functions leave that to bind).
real, imag = _stack_traced_lists(lax.real), _stack_traced_lists(lax.imag)
conj = conjugate = _stack_traced_lists(lax.conj)


@_stack_traced_lists
def angle(z, deg=False):
    """arctan2(imag, real); a real z has a constant 0 imaginary part (no tangent), so its
    angle (0 or π) has derivative 0, not 0 · (1/z) = NaN at tiny z."""
    im = lax.imag(z) if _dtype_of(z).kind == "c" else np.zeros((), _dtype_of(z))
    a = lax.arctan2(im, lax.real(z))
    return rad2deg(a) if deg else a


@_stack_traced_lists
def real_if_close(a, tol=100):
    """The real part when every imaginary part is below tol (in units of the dtype's
    epsilon when tol > 1), else `a` itself: NumPy's function, whose output dtype depends on
    the values. Where the values are known (arrays; eager grad, jvp, vjp) that is decided as
    NumPy does, and the derivative is that of the branch taken (the real part's, or the
    identity's); under jit and vmap the values are not known when the program is built, and
    a complex input is refused (a real one is returned as is)."""
    a = _asarray(a)
    dt = _dtype_of(a)
    if dt.kind != "c":
        return a
    if tol > 1:
        tol = float(np.finfo(dt).eps) * tol
    try:
        close = bool(_all(lax.lt(lax.abs(lax.imag(a)), tol)))
    except _ConcretizationError:
        raise _ConcretizationError(
            "real_if_close returns a real or a complex array depending on the values, which "
            "are not known under jit or vmap (a traced result needs one dtype). Use "
            "fxad.numpy.real(a) if the imaginary parts are known to be negligible, keep the "
            "complex array, or call it outside the transformation.") from None
    return lax.real(a) if close else a


def _integer_args(name, *xs):
    for x in xs:
        if _dtype_of(x).kind not in "iub":
            raise FxadTypeError(f"{name} works on integer values (as NumPy's), got dtype "
                                f"{_dtype_of(x)}")


@_stack_traced_lists
def gcd(x1, x2):
    """The greatest common divisor of |x1| and |x2| elementwise (gcd(0, 0) = 0), as NumPy's,
    with its broadcasting and promotion; integers only, an integer result (no derivative)."""
    _integer_args("gcd", x1, x2)
    return _ufunc_math.gcd(x1, x2)


@_stack_traced_lists
def lcm(x1, x2):
    """The least common multiple of |x1| and |x2| elementwise (0 if either is 0), as NumPy's,
    with its broadcasting and promotion; integers only, an integer result (no derivative)."""
    _integer_args("lcm", x1, x2)
    return _ufunc_math.lcm(x1, x2)


def _inexact(x):
    """x as a float array (integers as float64, as NumPy's float ufuncs take them)."""
    x = _asarray(x)
    return x if _dtype_of(x).kind in "fc" else lax.convert_element_type(x, np.float64)


@_stack_traced_lists
def frexp(x):
    """(mantissa, exponent) with x = mantissa * 2 ** exponent and 0.5 <= |mantissa| < 1
    (both 0 at 0; inf and NaN keep their value with exponent 0), as NumPy's: the exponent is
    int32. The mantissa is differentiable (its derivative is 2 ** -exponent); the exponent is
    an integer (no derivative)."""
    x = _inexact(x)
    e = _floats.frexp_exponent(lax.stop_gradient(x))
    return _floats.ldexp(x, lax.neg(e)), e


@_stack_traced_lists
def nextafter(x1, x2):
    """The next representable float after x1 towards x2 elementwise, as NumPy's (in NumPy's
    result dtype: Python numbers do not widen a float32 array). Differentiable as x1 plus one
    unit in the last place: derivative 1 in x1 and 0 in x2 (JAX's has none)."""
    dt = _loop_dtype(np.nextafter, x1, x2)
    return lax.nextafter(lax.convert_element_type(_asarray(x1), dt),
                         lax.convert_element_type(_asarray(x2), dt))


@_stack_traced_lists
def spacing(x):
    """The distance from x to the next representable float away from zero (negative for
    negative x), elementwise, as NumPy's; piecewise constant, so its derivative is 0."""
    return _floats.spacing(_inexact(x))

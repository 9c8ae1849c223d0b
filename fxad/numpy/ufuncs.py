"""NumPy's elementwise functions (ufunc names) on arrays and tracers."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..errors import FxadTypeError
from ..rules.helpers import dtype_of as _dtype_of, shape_of as _shape_of
from ..rules.special import logaddexp  # noqa: F401  (a primitive: smooth weights at ties)

# One-to-one with a primitive.
negative = lax.neg
add, subtract, multiply = lax.add, lax.sub, lax.mul
divide = true_divide = lax.div
exp, log, log1p, expm1, sqrt = lax.exp, lax.log, lax.log1p, lax.expm1, lax.sqrt
sin, cos, tan, arcsin, arccos, arctan = lax.sin, lax.cos, lax.tan, lax.arcsin, lax.arccos, lax.arctan
sinh, cosh, tanh = lax.sinh, lax.cosh, lax.tanh
arcsinh, arccosh, arctanh, arctan2 = lax.arcsinh, lax.arccosh, lax.arctanh, lax.arctan2
absolute = abs = lax.abs
sign, floor, ceil = lax.sign, lax.floor, lax.ceil
maximum, minimum = lax.max, lax.min
equal, not_equal, less, less_equal, greater, greater_equal = (
    lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge)
logical_and, logical_or, logical_not = lax.logical_and, lax.logical_or, lax.logical_not
isfinite, isnan, cbrt = lax.isfinite, lax.isnan, lax.cbrt
trunc, fix, fmod, signbit = lax.trunc, lax.trunc, lax.fmod, lax.signbit
asin, acos, atan, atan2 = arcsin, arccos, arctan, arctan2


def _is_int_scalar(y):
    return isinstance(y, (int, np.integer)) and not isinstance(y, (bool, np.bool_))


def power(x, y):
    """x ** y; an integer Python exponent becomes `integer_pow` (exact, and safe at x = 0)."""
    if _is_int_scalar(y) and not isinstance(x, (int, np.integer)):
        return lax.integer_pow(x, int(y))
    return lax.pow(x, y)


pow = power


def square(x):
    return lax.integer_pow(x, 2)


def reciprocal(x):
    return lax.integer_pow(x, -1)


def round(x, decimals=0):
    return lax.round(x, decimals)


around = rint = round


floor_divide = lax.floor_divide
remainder = mod = lax.rem


def _boolean_only(name, logical):
    def op(*xs):
        if any(_dtype_of(x) != np.bool_ for x in xs):
            raise FxadTypeError(f"fxad supports {name} on boolean values only (as the logical "
                                "operation); integer bit operations are not provided")
        return logical(*xs)
    op.__name__ = name
    return op


bitwise_and = _boolean_only("bitwise_and", lax.logical_and)
bitwise_or = _boolean_only("bitwise_or", lax.logical_or)
bitwise_not = invert = _boolean_only("bitwise_not", lax.logical_not)
bitwise_xor = _boolean_only("bitwise_xor", lax.ne)


def logical_xor(x, y):
    return lax.ne(lax.ne(x, 0), lax.ne(y, 0))


def where(condition, x=None, y=None):
    if x is None and y is None:
        from .manipulation import nonzero
        return nonzero(condition)
    if x is None or y is None:
        raise TypeError("where takes one argument (the condition) or three")
    return lax.select(condition, x, y)


def clip(a, a_min=None, a_max=None, *, min=None, max=None):  # noqa: A002  (NumPy 2 names)
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    if a_min is not None:
        a = lax.max(a, a_min)
    if a_max is not None:
        a = lax.min(a, a_max)
    return a


# --- more elementwise math, composed from primitives ------------------------------------------

_LN2, _LN10 = float(np.log(2.0)), float(np.log(10.0))


def logaddexp2(x, y):
    return lax.div(logaddexp(lax.mul(x, _LN2), lax.mul(y, _LN2)), _LN2)


def exp2(x):
    return lax.exp(lax.mul(x, _LN2))


def log2(x):
    return lax.div(lax.log(x), _LN2)


def log10(x):
    return lax.div(lax.log(x), _LN10)


def hypot(x, y):
    """sqrt(x² + y²), with derivative 0 (not NaN) at the origin."""
    r2 = lax.add(lax.mul(x, x), lax.mul(y, y))
    zero = lax.eq(r2, 0)
    return lax.select(zero, lax.mul(r2, 0), lax.sqrt(lax.select(zero, 1.0, r2)))


def deg2rad(x):
    return lax.mul(x, float(np.pi / 180))


def rad2deg(x):
    return lax.mul(x, float(180 / np.pi))


radians, degrees = deg2rad, rad2deg
fabs = absolute


# sinc's Maclaurin series in u = (πx)², used for |πx| < 0.5, where it is exact to rounding
# (next term < 1e-20) and, unlike sin(πx)/(πx), has the right derivatives of every order at 0.
_SINC_COEFFS = [(-1.0) ** k / float(np.prod(np.arange(1, 2 * k + 2))) for k in range(10)]


def sinc(x):
    """sin(πx)/(πx), 1 at 0; the series near 0 keeps it smooth at every order."""
    px = lax.mul(x, float(np.pi))
    near = lax.lt(lax.abs(px), 0.5)
    u = lax.mul(px, px)
    series = _SINC_COEFFS[-1]
    for c in reversed(_SINC_COEFFS[:-1]):
        series = lax.add(lax.mul(series, u), c)
    far = lax.select(near, 1.0, px)  # the division never sees 0
    return lax.select(near, series, lax.div(lax.sin(far), far))


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    info = np.finfo(_dtype_of(x)) if np.issubdtype(_dtype_of(x), np.floating) else None
    if info is None:
        return x
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = lax.select(lax.isnan(x), nan, x)
    x = lax.select(lax.eq(x, np.inf), posinf, x)
    return lax.select(lax.eq(x, -np.inf), neginf, x)


def isinf(x):
    return lax.logical_not(lax.logical_or(lax.isfinite(x), lax.isnan(x)))


def isposinf(x):
    return lax.logical_and(isinf(x), lax.logical_not(lax.signbit(x)))


def isneginf(x):
    return lax.logical_and(isinf(x), lax.signbit(x))


def copysign(x1, x2):
    """|x1| with x2's sign bit (so -0.0 and signed NaNs count), derivative ±1."""
    return lax.select(lax.ne(lax.signbit(x1), lax.signbit(x2)), lax.neg(x1), x1)


def heaviside(x1, x2):
    """0 below zero, 1 above, x2 at zero, NaN at NaN; piecewise constant in x1."""
    dt = np.result_type(*(x if type(x) in (int, float) else _dtype_of(x) for x in (x1, x2)))
    step = lax.select(lax.lt(x1, 0), dt.type(0), dt.type(1))
    return lax.select(lax.eq(x1, 0), x2, lax.select(lax.isnan(x1), x1, step))


def fmax(x1, x2):
    """maximum that ignores a NaN operand (NaN only if both are)."""
    return lax.select(lax.isnan(x2), x1, lax.select(lax.isnan(x1), x2, lax.max(x1, x2)))


def fmin(x1, x2):
    return lax.select(lax.isnan(x2), x1, lax.select(lax.isnan(x1), x2, lax.min(x1, x2)))


def float_power(x1, x2):
    """power computed in float64 (complex128 for complex operands), as NumPy does."""
    wide = np.complex128 if "c" in (np.dtype(_dtype_of(x1)).kind + np.dtype(
        _dtype_of(x2)).kind) else np.float64
    return power(lax.convert_element_type(x1, wide), lax.convert_element_type(x2, wide))


def divmod(x1, x2):  # noqa: A001  (NumPy's name)
    return floor_divide(x1, x2), remainder(x1, x2)


def positive(x):
    return x


def ldexp(x1, x2):
    """x1 · 2**x2 (x2 integer), in x1's float dtype."""
    dt = _dtype_of(x1) if np.dtype(_dtype_of(x1)).kind == "f" else np.float64
    return lax.mul(x1, lax.pow(2.0, lax.convert_element_type(x2, dt)))


def modf(x):
    """(fractional part, integral part), both with x's sign."""
    whole = lax.trunc(x)
    return lax.sub(x, whole), whole


def vecdot(x1, x2, axis=-1):
    """sum(conj(x1) * x2) over `axis` (broadcasting the others)."""
    from .reductions import sum
    return sum(lax.mul(lax.conj(x1), x2), axis=axis)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Membership (no derivative): element compared with every test element."""
    from .manipulation import ravel
    from .reductions import any
    tests = ravel(test_elements)
    hit = any(lax.eq(lax.reshape(element, tuple(_shape_of(element)) + (1,)), tests), axis=-1)
    return lax.logical_not(hit) if invert else hit


# --- complex numbers --------------------------------------------------------------------------

real, imag = lax.real, lax.imag
conj = conjugate = lax.conj


def angle(z, deg=False):
    a = lax.arctan2(lax.imag(z), lax.real(z))
    return rad2deg(a) if deg else a

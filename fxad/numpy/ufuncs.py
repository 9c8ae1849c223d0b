"""NumPy's elementwise functions (ufunc names) on arrays and tracers."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..errors import FxadTypeError

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
isfinite, isnan = lax.isfinite, lax.isnan
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
        from ..rules.helpers import dtype_of
        if any(dtype_of(x) != np.bool_ for x in xs):
            raise FxadTypeError(f"fxad supports {name} on boolean values only (as the logical "
                                "operation); integer bit operations are not provided")
        return logical(*xs)
    op.__name__ = name
    return op


bitwise_and = _boolean_only("bitwise_and", lax.logical_and)
bitwise_or = _boolean_only("bitwise_or", lax.logical_or)
bitwise_not = invert = _boolean_only("bitwise_not", lax.logical_not)


def where(condition, x=None, y=None):
    if x is None and y is None:
        from .manipulation import nonzero
        return nonzero(condition)
    if x is None or y is None:
        raise TypeError("where takes one argument (the condition) or three")
    return lax.select(condition, x, y)


def clip(a, a_min=None, a_max=None):
    if a_min is not None:
        a = lax.max(a, a_min)
    if a_max is not None:
        a = lax.min(a, a_max)
    return a

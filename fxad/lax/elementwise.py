"""Elementwise functions of JAX's lax beyond one-primitive wrappers (square, reciprocal,
select_n, clamp) and JAX's spellings of primitives fxad names as NumPy does (acos, atan2,
is_finite, ...)."""
from __future__ import annotations

import enum

import numpy as np

from ..errors import FxadTypeError, FxadValueError
from ..rules import ops
from ..rules.elementwise import floating_point as _floats
from ..rules.helpers import dtype_of, shape_of
from ..rules.ops import (  # noqa: F401  (lax spells them differently)
    arccos as acos, arccosh as acosh, arcsin as asin, arcsinh as asinh, arctan as atan,
    arctan2 as atan2, arctanh as atanh, isfinite as is_finite)


def square(x):
    """x * x, elementwise, with NumPy broadcasting; differentiable to any order in forward and
    reverse mode."""
    return ops.integer_pow(x, 2)


def reciprocal(x):
    """1 / x, elementwise, with NumPy broadcasting; differentiable to any order in forward and
    reverse mode."""
    return ops.integer_pow(x, -1)


def select_n(which, *cases):
    """cases[which] elementwise (`which` boolean for two cases, else an integer)."""
    if not cases:
        raise FxadValueError("select_n needs at least one case")
    if len(cases) == 1:
        return cases[0]
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        out = ops.select(ops.eq(which, i) if dtype_of(which) != np.bool_ or i else
                         ops.logical_not(which), cases[i], out)
    return out


def clamp(min, x, max):  # noqa: A002  (JAX's argument names and order)
    """x clipped into [min, max]. Its derivative is x's strictly inside and the bound's at
    and beyond it (JAX gives 0 to x at the bounds too)."""
    inside = ops.logical_and(ops.gt(x, min), ops.lt(x, max))
    lo = ops.broadcast_to(ops.convert_element_type(min, dtype_of(x)), shape_of(x))
    hi = ops.broadcast_to(ops.convert_element_type(max, dtype_of(x)), shape_of(x))
    return ops.select(inside, x, ops.select(ops.le(x, min), lo, hi))


def _integers(x, y):
    return dtype_of(x).kind in "iub" and dtype_of(y).kind in "iub"


def div(x, y):
    """x / y, elementwise, with NumPy broadcasting, as JAX's `lax.div`: integers are divided
    rounding toward zero and stay integers (C's division: -7 / 2 is -3; NumPy's `//` rounds
    down, to -4); other dtypes divide exactly. Differentiable to any order in x and y (the
    integer quotient is not differentiable)."""
    if not _integers(x, y):
        return ops.div(x, y)
    q = ops.floor_divide(x, y)
    inexact = ops.ne(ops.rem(x, y), ops.mul(q, 0))  # NumPy's remainder: 0 exactly when exact
    opposite = ops.ne(ops.lt(x, ops.mul(x, 0)), ops.lt(y, ops.mul(y, 0)))
    return ops.select(ops.logical_and(inexact, opposite), ops.add(q, ops.convert_element_type(
        1, dtype_of(q))), q)


def rem(x, y):
    """The remainder of x / y with the sign of x, as JAX's `lax.rem` (C's fmod: x - trunc(x /
    y) y; NumPy's `remainder`, `fxad.numpy.remainder`, takes the sign of y). Elementwise, with
    NumPy broadcasting; differentiable to any order in x and y (piecewise)."""
    return ops.fmod(x, y)


class RoundingMethod(enum.IntEnum):
    """How `round` breaks ties, as JAX's `lax.RoundingMethod`."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001  (JAX's name)
    """x rounded to the nearest integer value, elementwise, as JAX's `lax.round`: ties away
    from zero by default (2.5 -> 3, -2.5 -> -3), or to even with
    `RoundingMethod.TO_NEAREST_EVEN` (NumPy's `round`, `fxad.numpy.round`). Its derivative is 0
    almost everywhere."""
    try:
        method = RoundingMethod(rounding_method)
    except ValueError:
        raise FxadValueError(f"lax.round: rounding_method must be a lax.RoundingMethod "
                             f"(AWAY_FROM_ZERO or TO_NEAREST_EVEN), not {rounding_method!r}"
                             ) from None
    if dtype_of(x).kind in "iub":
        return x
    if method is RoundingMethod.TO_NEAREST_EVEN:
        return ops.round(x)
    t = ops.trunc(x)  # x - trunc(x) is exact in floating point, so the tie test is exact
    return ops.select(ops.ge(ops.abs(ops.sub(x, t)), 0.5), ops.add(t, ops.sign(x)), t)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """operand rounded to a float format with `exponent_bits` exponent bits and
    `mantissa_bits` mantissa bits, kept in operand's dtype, as JAX's `lax.reduce_precision`
    (e.g. (8, 7) emulates bfloat16, (5, 10) float16): the mantissa rounds to nearest even,
    values beyond the format's range become infinities, values below its smallest normal
    number become zeros (no subnormals), NaNs stay NaN. Its derivative is the tangent rounded
    the same way, as JAX's (so gradients flow through emulated low precision)."""
    dtype = np.dtype(dtype_of(operand))
    if dtype not in (np.float16, np.float32, np.float64):
        raise FxadTypeError(f"reduce_precision works on float16/32/64 values, got {dtype}")
    have_e, have_m = {2: (5, 10), 4: (8, 23), 8: (11, 52)}[dtype.itemsize]
    e, m = int(exponent_bits), int(mantissa_bits)
    if not (1 <= e and 0 <= m):
        raise FxadValueError(f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits "
                             f">= 0, got {exponent_bits} and {mantissa_bits}")
    if e >= have_e and m >= have_m:
        return operand
    return _floats.reduce_precision(operand, min(e, have_e), min(m, have_m))


__all__ = ["reduce_precision", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh",
           "is_finite", "square", "reciprocal", "select_n", "clamp", "div", "rem", "RoundingMethod", "round"]

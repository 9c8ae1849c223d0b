"""Bit-level functions under JAX's lax names: bitwise logic, shifts, bit counts, a bit-for-bit
reinterpretation and `nextafter`, on the primitives of fxad/rules/elementwise/bitwise.py.
Integer results carry no derivative (their tangents are symbolic zeros)."""
from __future__ import annotations

from ..rules.elementwise import bitwise as _bits


def bitwise_and(x, y):
    """x & y elementwise on integers or booleans, with NumPy broadcasting."""
    return _bits.bitwise_and(x, y)


def bitwise_or(x, y):
    """x | y elementwise on integers or booleans, with NumPy broadcasting."""
    return _bits.bitwise_or(x, y)


def bitwise_xor(x, y):
    """x ^ y elementwise on integers or booleans, with NumPy broadcasting."""
    return _bits.bitwise_xor(x, y)


def bitwise_not(x):
    """~x elementwise on integers (every bit flipped) or booleans (logical not)."""
    return _bits.bitwise_not(x)


def shift_left(x, y):
    """x << y elementwise on integers; a shift by the bit width or more gives 0."""
    return _bits.shift_left(x, y)


def shift_right_logical(x, y):
    """x >> y elementwise on integers with zeros shifted in from the left, signed values
    included (their bit pattern shifts); a shift by the bit width or more gives 0."""
    return _bits.shift_right_logical(x, y)


def shift_right_arithmetic(x, y):
    """x >> y elementwise on integers with copies of the top (sign) bit shifted in from the
    left, unsigned values included (their bit pattern shifts as a signed one); a shift by the
    bit width or more gives 0 or -1 (all ones)."""
    return _bits.shift_right_arithmetic(x, y)


def population_count(x):
    """The number of 1 bits in each integer's two's-complement pattern, in x's dtype (-1 as
    int8 has 8; NumPy's `bitwise_count`, `fxad.numpy.bitwise_count`, counts the bits of |x|
    and returns uint8)."""
    return _bits.population_count(x)


def clz(x):
    """The number of leading zero bits of each integer's bit pattern, in x's dtype (0 has
    all of them: 32 for int32; a negative value has none)."""
    return _bits.clz(x)


def bitcast_convert_type(operand, new_dtype):
    """The same bits read as `new_dtype`, a bool, integer or real float dtype of the same
    size (float64 <-> int64/uint64, float32 <-> int32/uint32, ...). JAX also converts between
    sizes (adding or removing a trailing axis); fxad refuses that with FxadValueError."""
    return _bits.bitcast_convert_type(operand, new_dtype)


def nextafter(x1, x2):
    """The next representable float after x1 in the direction of x2, elementwise with NumPy
    broadcasting. Differentiable as x1 plus one unit in the last place: derivative 1 in x1 and
    0 in x2 (JAX defines no derivative)."""
    return _bits.nextafter(x1, x2)


__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left",
           "shift_right_logical", "shift_right_arithmetic", "population_count", "clz",
           "bitcast_convert_type", "nextafter"]

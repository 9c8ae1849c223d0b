"""NumPy's bit functions on integer (and boolean) arrays and traced values: bitwise logic,
shifts, bit counts, packbits/unpackbits. Values and dtypes are NumPy's (its promotion of the
two operands); integer results carry no derivative."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..errors import FxadTypeError, FxadValueError
from ..rules.helpers import dtype_of as _dtype_of, shape_of as _shape_of
from ._lists import stack_traced_lists as _stack_traced_lists
from .creation import asarray as _asarray, result_type as _result_type
from .manipulation import moveaxis as _moveaxis, ravel as _ravel
from .padding import pad as _pad
from .reductions import sum as _sum


def _integers(name, *xs):
    for x in xs:
        if _dtype_of(x).kind not in "biu":
            raise FxadTypeError(f"{name} works on integer or boolean values (as NumPy's), got "
                                f"dtype {_dtype_of(x)}")


def _promoted(name, x1, x2, *, bool_as=None):
    """Both operands in NumPy's result dtype of the two (bool as `bool_as` if given). A Python
    int out of that dtype's range raises OverflowError, as NumPy's loop does (a cast would
    wrap it silently)."""
    _integers(name, x1, x2)
    dt = np.dtype(_result_type(x1, x2))
    if dt == np.bool_ and bool_as is not None:
        dt = np.dtype(bool_as)
    for x in (x1, x2):
        if type(x) is int and dt.kind in "iu" and not \
                np.iinfo(dt).min <= x <= np.iinfo(dt).max:
            raise OverflowError(f"{name}: Python integer {x} out of bounds for {dt}")
    return lax.convert_element_type(x1, dt), lax.convert_element_type(x2, dt), dt


@_stack_traced_lists
def bitwise_and(x1, x2):
    """x1 & x2 elementwise on integers or booleans, with NumPy's broadcasting and promotion."""
    _integers("bitwise_and", x1, x2)
    return lax.bitwise_and(*_promoted("bitwise_and", x1, x2)[:2])


@_stack_traced_lists
def bitwise_or(x1, x2):
    """x1 | x2 elementwise on integers or booleans, with NumPy's broadcasting and promotion."""
    return lax.bitwise_or(*_promoted("bitwise_or", x1, x2)[:2])


@_stack_traced_lists
def bitwise_xor(x1, x2):
    """x1 ^ x2 elementwise on integers or booleans, with NumPy's broadcasting and promotion."""
    return lax.bitwise_xor(*_promoted("bitwise_xor", x1, x2)[:2])


@_stack_traced_lists
def bitwise_not(x):
    """~x elementwise: every bit flipped for integers, logical not for booleans, as NumPy's
    `invert`."""
    _integers("bitwise_not", x)
    return lax.bitwise_not(x)


invert = bitwise_invert = bitwise_not


@_stack_traced_lists
def left_shift(x1, x2):
    """x1 << x2 elementwise on integers, with NumPy's broadcasting and promotion (booleans
    shift as int8); bits shifted past the width are lost (a shift by the width or more
    gives 0)."""
    a, b, _ = _promoted("left_shift", x1, x2, bool_as=np.int8)
    return lax.shift_left(a, b)


@_stack_traced_lists
def right_shift(x1, x2):
    """x1 >> x2 elementwise on integers, as NumPy's: arithmetic (sign-filling) for a signed
    result dtype, logical for an unsigned one; NumPy's broadcasting and promotion (booleans
    shift as int8)."""
    a, b, dt = _promoted("right_shift", x1, x2, bool_as=np.int8)
    return (lax.shift_right_logical if dt.kind == "u" else lax.shift_right_arithmetic)(a, b)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift  # (the array API's names)


@_stack_traced_lists
def bitwise_count(x):
    """The number of 1 bits in |x| elementwise, as uint8, as NumPy's (-1 has one; for the
    bits of the two's-complement pattern use `fxad.lax.population_count`)."""
    _integers("bitwise_count", x)
    if _dtype_of(x) == np.bool_:
        return lax.convert_element_type(x, np.uint8)
    return lax.convert_element_type(lax.population_count(lax.abs(x)), np.uint8)


def _bitorder(name, bitorder):
    if bitorder not in ("big", "little"):
        raise FxadValueError(f"{name}: bitorder must be 'big' or 'little', got {bitorder!r}")
    return bitorder


@_stack_traced_lists
def packbits(a, axis=None, bitorder="big"):
    """The truth of each element of a (integers or booleans: nonzero is 1) packed 8 to a
    uint8 along `axis` (the flattened array if None), the last byte padded with zeros, as
    NumPy's; `bitorder` 'big' puts the first element in the top bit."""
    a = _asarray(a)
    _integers("packbits", a)
    _bitorder("packbits", bitorder)
    if axis is None:
        a, axis = _ravel(a), 0
    bits = _moveaxis(lax.convert_element_type(lax.ne(a, 0), np.uint8), axis, -1)
    n = _shape_of(bits)[-1]
    bits = _pad(bits, [(0, 0)] * (len(_shape_of(bits)) - 1) + [(0, -n % 8)])
    bits = lax.reshape(bits, _shape_of(bits)[:-1] + ((n + 7) // 8, 8))
    weights = 2 ** np.arange(8)[::-1] if bitorder == "big" else 2 ** np.arange(8)
    packed = _sum(lax.mul(bits, weights.astype(np.uint8)), axis=-1, dtype=np.uint8)
    return _moveaxis(packed, -1, axis)


@_stack_traced_lists
def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array as 0/1 uint8 values along `axis` (the flattened array if
    None), 8 per byte, as NumPy's; `count` keeps that many (negative: drops that many from
    the end; past the end: pads with zeros)."""
    a = _asarray(a)
    if _dtype_of(a) != np.uint8:
        raise FxadTypeError(f"unpackbits works on uint8 values (as NumPy's), got {_dtype_of(a)}")
    _bitorder("unpackbits", bitorder)
    if axis is None:
        a, axis = _ravel(a), 0
    a = _moveaxis(a, axis, -1)
    shifts = np.arange(8, dtype=np.uint8)[::-1] if bitorder == "big" else \
        np.arange(8, dtype=np.uint8)
    bits = lax.bitwise_and(lax.shift_right_logical(lax.reshape(a, _shape_of(a) + (1,)),
                                                   shifts), np.uint8(1))
    bits = lax.reshape(bits, _shape_of(a)[:-1] + (8 * _shape_of(a)[-1],))
    if count is not None:
        n, count = _shape_of(bits)[-1], int(count)
        keep = count if count >= 0 else max(n + count, 0)
        bits = bits[..., :keep] if keep <= n else \
            _pad(bits, [(0, 0)] * (len(_shape_of(bits)) - 1) + [(0, keep - n)])
    return _moveaxis(bits, -1, axis)


__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "invert",
           "bitwise_invert", "left_shift", "right_shift", "bitwise_left_shift",
           "bitwise_right_shift", "bitwise_count", "packbits", "unpackbits"]

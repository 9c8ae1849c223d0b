"""Bit-level primitives (JAX's lax names): shifts and bitwise logic on integers, a bit-for-bit
reinterpretation between same-size dtypes, `nextafter`, and `fma` (x*y + z rounded once,
emulated with rounding tricks). fxad.random builds its samplers from them exactly as JAX does
(random bits -> mantissa -> float; XLA's CPU code fuses uniform's scale-and-shift into an
FMA), so the streams agree bit for bit. Integer results have no derivative: their tangents are
symbolic zeros.
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ...errors import FxadTypeError, FxadValueError
from ..helpers import elementwise
from ..helpers import defderiv, defjvp, defjvp_zero, dtype_of

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _integers_only(name, *xs, booleans=True):
    for x in xs:
        kind = dtype_of(x).kind
        if kind == "b" and not booleans:
            raise FxadTypeError(f"{name} works on integer values, got bool")
        if kind not in "biu":
            raise FxadTypeError(f"{name} works on integer (or boolean) values, got dtype "
                                f"{dtype_of(x)}; bit operations on floats need "
                                "bitcast_convert_type to a same-size integer type first")


shift_left_p = elementwise("shift_left", np.left_shift)
defjvp_zero(shift_left_p)
def shift_left(x, y):
    _integers_only("shift_left", x, y)
    return shift_left_p.bind(x, y)


def _shift_right_as(kind, x, y):
    """NumPy's right_shift of x's bits read as the `kind` ('u' or 'i') integer of x's width:
    unsigned shifts in zeros (logical), signed copies of the sign bit (arithmetic), whatever
    x's own signedness (NumPy's right_shift follows it)."""
    x = np.asarray(x)
    if x.dtype.kind not in "iu" or x.dtype.kind == kind:
        return np.right_shift(x, y)
    as_type = np.dtype(f"{kind}{x.dtype.itemsize}")
    return np.right_shift(x.view(as_type), np.asarray(y).astype(as_type)).view(x.dtype)


def _shift_right_logical(x, y):
    return _shift_right_as("u", x, y)


shift_right_logical_p = elementwise("shift_right_logical", _shift_right_logical)
defjvp_zero(shift_right_logical_p)
def shift_right_logical(x, y):
    _integers_only("shift_right_logical", x, y)
    return shift_right_logical_p.bind(x, y)


bitwise_and_p = elementwise("bitwise_and", np.bitwise_and)
defjvp_zero(bitwise_and_p)
def bitwise_and(x, y):
    _integers_only("bitwise_and", x, y)
    return bitwise_and_p.bind(x, y)


bitwise_or_p = elementwise("bitwise_or", np.bitwise_or)
defjvp_zero(bitwise_or_p)
def bitwise_or(x, y):
    _integers_only("bitwise_or", x, y)
    return bitwise_or_p.bind(x, y)


bitwise_xor_p = elementwise("bitwise_xor", np.bitwise_xor)
defjvp_zero(bitwise_xor_p)
def bitwise_xor(x, y):
    _integers_only("bitwise_xor", x, y)
    return bitwise_xor_p.bind(x, y)


bitwise_not_p = elementwise("bitwise_not", np.invert)
defjvp_zero(bitwise_not_p)
def bitwise_not(x):
    _integers_only("bitwise_not", x)
    return bitwise_not_p.bind(x)


def _shift_right_arithmetic(x, y):
    return _shift_right_as("i", x, y)


shift_right_arithmetic_p = elementwise("shift_right_arithmetic", _shift_right_arithmetic)
defjvp_zero(shift_right_arithmetic_p)
def shift_right_arithmetic(x, y):
    _integers_only("shift_right_arithmetic", x, y)
    return shift_right_arithmetic_p.bind(x, y)


def _as_unsigned(x):
    x = np.asarray(x)
    return x if x.dtype.kind == "u" else x.view(_UNSIGNED[x.dtype.itemsize])


def _population_count(x):
    """The number of 1 bits of x's two's-complement pattern, in x's dtype (NumPy's
    bitwise_count counts the bits of |x|, as uint8)."""
    x = np.asarray(x)
    return np.bitwise_count(_as_unsigned(x)).astype(x.dtype)


population_count_p = elementwise("population_count", _population_count)
defjvp_zero(population_count_p)
def population_count(x):
    _integers_only("population_count", x, booleans=False)
    return population_count_p.bind(x)


def _clz(x):
    """Leading zero bits of x's bit pattern, in x's dtype: halve the window each step (shift
    the value up when its top half is zero), then the top bit decides the last one."""
    x = np.asarray(x)
    u = _as_unsigned(x).copy()
    width = 8 * x.dtype.itemsize
    n = np.zeros(u.shape, np.int64)
    s = width // 2
    while s:
        top_zero = (u >> (width - s)) == 0
        n += top_zero * s
        u = np.where(top_zero, u << u.dtype.type(s), u)
        s //= 2
    n += (u >> (width - 1)) == 0
    return n.astype(x.dtype)


clz_p = elementwise("clz", _clz)
defjvp_zero(clz_p)
def clz(x):
    _integers_only("clz", x, booleans=False)
    return clz_p.bind(x)

# The same bits read as another dtype of the same size (float64 <-> uint64, ...): a view.
bitcast_convert_type_p = Primitive("bitcast_convert_type", memory="views")
bitcast_convert_type_p.def_impl(lambda x, new_dtype: np.asarray(x).view(new_dtype))
bitcast_convert_type_p.def_abstract_eval(lambda x, new_dtype: ShapedArray(x.shape, new_dtype))
defjvp_zero(bitcast_convert_type_p)  # a reinterpretation of bits has no derivative
bitcast_convert_type_p.def_batch(lambda vals, dims, new_dtype: (
    bitcast_convert_type_p.bind(vals[0], new_dtype=new_dtype), dims[0]))
def bitcast_convert_type(x, new_dtype):
    new_dtype, old = np.dtype(new_dtype), dtype_of(x)
    if new_dtype.itemsize != old.itemsize:
        raise FxadValueError(f"bitcast_convert_type: {old} and {new_dtype} differ in size; fxad "
                             "reinterprets only between dtypes of the same size")
    if new_dtype.kind not in "biuf" or old.kind not in "biuf":
        raise FxadTypeError(f"bitcast_convert_type: {old} -> {new_dtype} is not supported "
                            "(bool, integer and real float dtypes only)")
    return x if new_dtype == old else bitcast_convert_type_p.bind(x, new_dtype=new_dtype)


# The next representable float after x towards y. As a function of x it is x plus one ulp,
# so its derivative in x is 1 (and 0 in y): clipping to nextafter(bound) stays smooth.
nextafter_p = elementwise("nextafter", np.nextafter)
defjvp(nextafter_p, lambda t, x, y: t, None)
def nextafter(x, y): return nextafter_p.bind(x, y)


# --- fused multiply-add: x*y + z with one rounding ------------------------------------------

def _two_sum(a, b):
    """s = fl(a + b) and its exact error e: a + b = s + e (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_product(a, b):
    """p = fl(a * b) and its exact error (Veltkamp splitting, Dekker's product)."""
    p = a * b
    c = 134217729.0 * a  # 2**27 + 1
    ah = c - (c - a)
    c = 134217729.0 * b
    bh = c - (c - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _round_to_odd_sum(a, b):
    """a + b rounded to odd: when inexact, the neighbour whose last bit is 1. Summing the
    pieces of an exact value this way and rounding once more to nearest is correctly rounded
    (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums", IEEE TC 2008)."""
    s, e = _two_sum(a, b)
    even = (s.view(_UNSIGNED[s.dtype.itemsize]) & 1) == 0
    return np.where((e != 0) & even, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)


def fma_np(x, y, z):
    """Correctly rounded x*y + z for float16/32/64 arrays (where an intermediate overflows:
    x*y + z rounded twice)."""
    dtype = np.result_type(x, y, z)
    with np.errstate(all="ignore"):
        if dtype == np.float64:
            x, y, z = [np.asarray(v, np.float64) for v in np.broadcast_arrays(x, y, z)]
            uh, ul = _two_product(x, y)
            th, tl = _two_sum(z, uh)
            out = th + _round_to_odd_sum(tl, ul)
            plain = x * y + z
            out = np.where(np.isfinite(out) & np.isfinite(uh * 134217729.0), out, plain)
        elif dtype.kind == "f" and dtype.itemsize < 8:  # exact product in float64, one rounding
            x, y, z = [np.asarray(v, np.float64) for v in np.broadcast_arrays(x, y, z)]
            out = _round_to_odd_sum(x * y, z).astype(dtype)
        else:
            return np.add(np.multiply(x, y), z)
    return out if out.ndim else out[()]


fma_p = elementwise("fma", fma_np)
defderiv(fma_p, lambda needed, x, y, z: [y if needed[0] else None, x if needed[1] else None,
                                         1.0 if needed[2] else None])
def fma(x, y, z): return fma_p.bind(x, y, z)


__all__ = ["fma", "shift_left", "shift_right_logical", "shift_right_arithmetic",
           "population_count", "clz", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_not", "bitcast_convert_type", "nextafter"]

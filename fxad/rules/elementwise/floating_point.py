"""Floating-point and piecewise functions, each NumPy's own ufunc as its impl (so values,
signed zeros, infinities, NaNs and dtypes are NumPy's by construction): copysign, heaviside,
ldexp, modf, frexp's exponent, spacing; and reduce_precision (rounding to a narrower float
format)."""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ...interpreters.jvp import Zero
from .arithmetic import mul, select
from .piecewise import eq
from ..helpers import elementwise
from ..helpers import defderiv, defjvp, defjvp_zero, deflinear, fit, unbroadcast

copysign_p = elementwise("copysign", np.copysign)  # |x| with y's sign bit (also -0.0, NaNs)
defderiv(copysign_p, lambda needed, x, y: [
    mul(copysign(1.0, x), copysign(1.0, y)) if needed[0] else None, None])
def copysign(x, y):
    """The magnitude of x with the sign of y, elementwise, as NumPy's; differentiable to any order
    in x (the derivative in y is 0)."""
    return copysign_p.bind(x, y)


heaviside_p = elementwise("heaviside", np.heaviside)  # 0 below 0, 1 above, y at 0, NaN at NaN
defjvp(heaviside_p, None, lambda t, x, y: select(eq(x, 0), t, 0.0))
def heaviside(x, y):
    """The Heaviside step function (x2 at x1 == 0), as NumPy's; its derivative is 0."""
    return heaviside_p.bind(x, y)


# x · 2**e for an integer e, exactly (no 2**e that overflows or underflows on its own):
# linear in x, and its own transpose.
ldexp_p = elementwise("ldexp", np.ldexp)
deflinear(ldexp_p, lambda ct, x, e: [unbroadcast(ldexp(ct, e), x.aval), None], linear_args=(0,))
def ldexp(x, e):
    """x * 2 ** e, elementwise, as NumPy's; differentiable to any order in x."""
    return ldexp_p.bind(x, e)


modf_p = Primitive("modf", multiple_results=True, memory="fresh")  # (fraction, integral part), x's sign
modf_p.def_impl(lambda x: np.modf(x))
modf_p.def_abstract_eval(lambda x: [ShapedArray(x.shape, np.modf(x.sample())[0].dtype)] * 2)
def _modf_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    frac, whole = modf(x)
    return [frac, whole], [Zero.like(frac) if type(t) is Zero else fit(t, frac),
                           Zero.like(whole)]  # the integral part is piecewise constant
modf_p.def_jvp(_modf_jvp)
modf_p.def_batch(lambda vals, dims: (modf(vals[0]), [dims[0]] * 2))
def modf(x):
    """(fractional part, integral part) of x elementwise, as NumPy's; the fractional part's
    derivative is 1, the integral part's 0."""
    return tuple(modf_p.bind(x))  # a tuple, as NumPy's


# The exponent e of x = m 2**e with 0.5 <= |m| < 1 (0 for 0, inf and NaN), as int32:
# piecewise constant, so no derivative. frexp's mantissa is ldexp(x, -e), differentiable.
frexp_exponent_p = elementwise("frexp_exponent", lambda x: np.frexp(x)[1])
defjvp_zero(frexp_exponent_p)
def frexp_exponent(x): return frexp_exponent_p.bind(x)


spacing_p = elementwise("spacing", np.spacing)  # the gap to the next float away from 0
defjvp_zero(spacing_p)  # (constant between powers of 2)
def spacing(x): return spacing_p.bind(x)


_FLOAT_BITS = {np.dtype(np.float16): (5, 10), np.dtype(np.float32): (8, 23),
               np.dtype(np.float64): (11, 52)}
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _reduce_precision(x, exponent_bits, mantissa_bits):
    """XLA's ReducePrecision on the bit pattern: round the mantissa to nearest even, then
    values past the narrow format's largest exponent become infinities and those below its
    smallest normal exponent become (signed) zeros; NaNs stay NaN."""
    x = np.asarray(x)
    ebits, mbits = _FLOAT_BITS[x.dtype]
    ut = _UINT[x.dtype.itemsize]
    u = x.view(ut).copy()
    one = ut(1)
    if mantissa_bits < mbits:
        shift = ut(mbits - mantissa_bits)
        last = (u >> shift) & one
        u = (u + ((one << (shift - one)) - one + last)) & ~((one << shift) - one)
    if exponent_bits < ebits:
        sign = u & (one << ut(ebits + mbits))
        exponent = (u >> ut(mbits)) & ut((1 << ebits) - 1)
        src_bias, dst_bias = (1 << (ebits - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        inf = ut(((1 << ebits) - 1) << mbits)
        u = np.where(exponent > ut(src_bias + dst_bias), sign | inf, u)
        u = np.where(exponent <= ut(src_bias - dst_bias), sign, u)
    out = np.where(np.isnan(x), x, u.view(x.dtype))
    return out if out.ndim else out[()]


# Rounding to a narrower format, as JAX's lax.reduce_precision: its derivative is taken as
# the same rounding of the tangent (JAX's rule: it emulates low precision, rather than being
# a step function to differentiate).
reduce_precision_p = elementwise("reduce_precision", _reduce_precision)
deflinear(reduce_precision_p, lambda ct, x, exponent_bits, mantissa_bits: [
    reduce_precision(ct, exponent_bits, mantissa_bits)])
def reduce_precision(x, exponent_bits, mantissa_bits):
    return reduce_precision_p.bind(x, exponent_bits=int(exponent_bits),
                                   mantissa_bits=int(mantissa_bits))


__all__ = ["copysign", "heaviside", "ldexp", "modf"]

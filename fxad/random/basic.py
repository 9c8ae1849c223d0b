"""The building blocks: uniform floats from random bits, normals, Bernoulli draws (JAX's
constructions: the same key gives JAX's numbers)."""
from __future__ import annotations

import numpy as np

from ..core import get_aval
from ..errors import FxadTypeError
from ..rules import ops
from ..rules.random.bits import UINT_BY_BITS, exact_scale
from ..rules.special.basic import erfinv
from .common import canonical_shape, check_key, check_shape, float_dtype
from .keys import split


def _uniform(key, shape, dtype, minval, maxval):
    """Random mantissa bits under the exponent of 1.0 give [1, 2); minus 1, scaled, shifted.
    The scale-and-shift is one fused multiply-add in float32 and float64, as XLA's CPU code
    computes it (a plain product is the same value when the span is a power of two, e.g.
    [0, 1)); float16 rounds the product and the sum separately, as XLA does."""
    minval = ops.convert_element_type(minval, dtype)
    maxval = ops.convert_element_type(maxval, dtype)
    info = np.finfo(dtype)
    u = UINT_BY_BITS[info.bits]
    b = ops.random_bits(key, info.bits, shape)
    mant = ops.bitwise_or(ops.shift_right_logical(b, u.type(info.bits - info.nmant)),
                          np.array(1.0, dtype).view(u))
    floats = ops.sub(ops.bitcast_convert_type(mant, dtype), dtype.type(1))
    span = ops.sub(maxval, minval)
    scaled = ops.add(ops.mul(floats, span), minval) if exact_scale(span) or \
        dtype == np.float16 else ops.fma(floats, span, minval)
    return ops.max(minval, scaled)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform on [minval, maxval) (differentiable in minval and maxval)."""
    key = check_key("uniform", key)
    dtype = float_dtype("uniform", dtype)
    shape = check_shape("uniform", canonical_shape("uniform", shape), minval, maxval)
    return _uniform(key, shape, dtype, minval, maxval)


def _erfinv(u, dtype):
    return ops.convert_element_type(erfinv(u), dtype)  # SciPy's float16 erfinv is float32


def _normal_real(key, shape, dtype):
    lo = np.nextafter(dtype.type(-1), dtype.type(0))
    u = _uniform(key, shape, dtype, lo, dtype.type(1))
    return ops.mul(dtype.type(np.sqrt(2)), _erfinv(u, dtype))


def normal(key, shape=(), dtype=None):
    """Standard normal, sqrt(2) erfinv(u) for u uniform on (-1, 1); complex dtypes draw the
    real and imaginary parts from split keys, each with variance 1/2."""
    key = check_key("normal", key)
    dtype = float_dtype("normal", dtype, complex_ok=True)
    shape = canonical_shape("normal", shape)
    if dtype.kind != "c":
        return _normal_real(key, shape, dtype)
    real = np.dtype(f"f{dtype.itemsize // 2}")
    k_re, k_im = split(key)
    re, im = _normal_real(k_re, shape, real), _normal_real(k_im, shape, real)
    return ops.div(ops.complex(re, im), dtype.type(np.sqrt(2)))


def bernoulli(key, p=0.5, shape=None, mode="low"):
    """True with probability p: uniform(key, shape, dtype of p) < p. mode "high" compares
    with twice the bits, for p below the float's resolution."""
    if mode not in ("low", "high"):
        raise ValueError(f"bernoulli: mode must be 'low' or 'high', got {mode!r}")
    key = check_key("bernoulli", key)
    dtype = get_aval(p).dtype
    if dtype.kind != "f":
        raise FxadTypeError(f"bernoulli: p must be a float, got dtype {dtype}")
    shape = check_shape("bernoulli", canonical_shape("bernoulli", shape), p)
    if mode == "low":
        return ops.lt(_uniform(key, shape, dtype, 0.0, 1.0), p)
    both = _uniform(key, (2,) + shape, dtype, 0.0, 1.0)
    u1, u2 = both[0], ops.mul(both[1], 2.0 ** -np.finfo(dtype).nmant)
    return ops.lt(u2, ops.sub(p, u1))


def rademacher(key, shape=(), dtype=None):
    """-1 or +1 with equal probability."""
    key, dtype = check_key("rademacher", key), np.dtype(np.int64 if dtype is None else dtype)
    b = ops.convert_element_type(bernoulli(key, 0.5, canonical_shape("rademacher", shape)), dtype)
    return ops.convert_element_type(ops.sub(ops.mul(2, b), 1), dtype)


__all__ = ["uniform", "normal", "bernoulli", "rademacher"]

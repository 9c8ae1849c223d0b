"""Continuous samplers that transform uniform draws (JAX's constructions, so the same key gives
the same numbers). Each is a composite of fxad primitives: under jit it is staged with the key
as an input, and every parameter is differentiable through the transform
(reparameterization: d/dloc (loc + scale * normal(k)) = 1, and so on).
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..rules import ops
from ..rules.special.basic import erf
from .basic import _erfinv, _uniform, normal, rademacher, uniform
from .common import canonical_shape, check_key, check_shape, float_dtype, inexact_dtype
from .keys import split


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal restricted to (lower, upper), by the inverse CDF: differentiable in
    the bounds."""
    key = check_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    shape = check_shape("truncated_normal", canonical_shape("truncated_normal", shape),
                        lower, upper)
    sqrt2 = dtype.type(np.sqrt(2))
    lower = ops.convert_element_type(lower, dtype)
    upper = ops.convert_element_type(upper, dtype)
    a, b = erf(ops.div(lower, sqrt2)), erf(ops.div(upper, sqrt2))
    out = ops.mul(sqrt2, _erfinv(_uniform(key, shape, dtype, a, b), dtype))
    lo = ops.nextafter(ops.stop_gradient(lower), dtype.type(np.inf))
    hi = ops.nextafter(ops.stop_gradient(upper), dtype.type(-np.inf))
    return ops.min(ops.max(out, lo), hi)


def _finfo_uniform(name, key, shape, dtype, lo, hi=1.0):
    key = check_key(name, key)
    dtype = float_dtype(name, dtype)
    shape = canonical_shape(name, shape)
    info = np.finfo(dtype)
    return _uniform(key, shape, dtype, getattr(info, lo) if isinstance(lo, str) else lo, hi), \
        dtype


def exponential(key, shape=(), dtype=None):
    """-log(1 - u): rate 1 (divide by a rate to change it)."""
    u, _ = _finfo_uniform("exponential", key, shape, dtype, 0.0)
    return ops.neg(ops.log1p(ops.neg(u)))


def laplace(key, shape=(), dtype=None):
    """Standard Laplace samples (density exp(-|x|) / 2) of the given shape and float dtype, as
    JAX's (sign(u) log1p(-|u|) for u uniform on (-1, 1))."""
    key, dtype = check_key("laplace", key), float_dtype("laplace", dtype)
    u = _uniform(key, canonical_shape("laplace", shape), dtype,
                 -1.0 + np.finfo(dtype).epsneg, 1.0)
    return ops.mul(ops.sign(u), ops.log1p(ops.neg(ops.abs(u))))


def logistic(key, shape=(), dtype=None):
    """Standard logistic samples, log(u) - log1p(-u) for u uniform on (0, 1), as JAX's."""
    x, _ = _finfo_uniform("logistic", key, shape, dtype, "tiny")
    return ops.sub(ops.log(x), ops.log1p(ops.neg(x)))


def gumbel(key, shape=(), dtype=None, mode=None):
    """-log(-log(u)). mode "low" (default) uses one uniform per value; "high" two, for the
    far tail (JAX's "highest" is not provided)."""
    mode = "low" if mode is None else mode
    if mode not in ("low", "high"):
        raise ValueError(f"gumbel: mode must be 'low' or 'high', got {mode!r}")
    key, dtype = check_key("gumbel", key), float_dtype("gumbel", dtype)
    shape, info = canonical_shape("gumbel", shape), np.finfo(dtype)
    if mode == "low":
        u = _uniform(key, shape, dtype, info.tiny, 1.0)
        return ops.neg(ops.log(ops.neg(ops.log(u))))
    both = _uniform(key, (2,) + shape, dtype, 0.0, 1.0)
    high, low = both[0], both[1]
    x = ops.select(ops.ge(high, 0.5), high,
                   ops.add(ops.add(high, ops.mul(2.0 ** -info.nmant, low)), info.tiny))
    return ops.neg(ops.log(ops.neg(ops.log1p(ops.neg(x)))))


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy samples, tan(pi (u - 1/2)) for u uniform, as JAX's."""
    u, dtype = _finfo_uniform("cauchy", key, shape, dtype, "eps")
    return ops.tan(ops.mul(dtype.type(np.pi), ops.sub(u, 0.5)))


def _param(name, key, shape, dtype, *params):
    key, dtype = check_key(name, key), float_dtype(name, dtype)
    shape = check_shape(name, canonical_shape(name, shape), *params)
    return key, shape, dtype, [ops.convert_element_type(p, dtype) for p in params]


def pareto(key, b, shape=None, dtype=None):
    """Pareto samples with shape b (support [1, inf)): exp(e / b), e standard exponential.
    Reparameterized: differentiable in b at a fixed key."""
    key, shape, dtype, (b,) = _param("pareto", key, shape, dtype, b)
    return ops.exp(ops.div(exponential(key, shape, dtype), b))


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """exp(sigma z), z standard normal: log-normal samples; differentiable in sigma at a fixed
    key."""
    key, shape, dtype, (sigma,) = _param("lognormal", key, shape, dtype, sigma)
    return ops.exp(ops.mul(normal(key, shape, dtype), sigma))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh samples with the given scale, scale sqrt(-2 log u); differentiable in scale at a
    fixed key."""
    key, shape, dtype, (scale,) = _param("rayleigh", key, shape, dtype, scale)
    u = uniform(key, shape, dtype)
    return ops.mul(fnp.broadcast_to(scale, shape), ops.sqrt(ops.mul(ops.log(u), dtype.type(-2))))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples, scale (-log1p(-u)) ** (1 / concentration); differentiable in scale and
    concentration at a fixed key."""
    key, dtype = check_key("weibull_min", key), float_dtype("weibull_min", dtype)
    u = _uniform(key, canonical_shape("weibull_min", shape), dtype, 0, 1)
    return ops.mul(fnp.power(ops.neg(ops.log1p(ops.neg(u))), ops.div(1.0, concentration)), scale)


def maxwell(key, shape=(), dtype=None):
    """Maxwell samples: the norm of three independent standard normals, as JAX's."""
    key, dtype = check_key("maxwell", key), float_dtype("maxwell", dtype)
    z = normal(key, canonical_shape("maxwell", shape) + (3,), dtype)
    return fnp.linalg.norm(z, axis=-1)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """loc + scale r s, r Maxwell and s a random sign: the double-sided Maxwell distribution, as
    JAX's (the shape is `shape` followed by the parameters' broadcast shape); differentiable in
    loc and scale at a fixed key."""
    key, dtype = check_key("double_sided_maxwell", key), float_dtype("double_sided_maxwell", dtype)
    params = tuple(np.broadcast_shapes(tuple(fnp.shape(loc)), tuple(fnp.shape(scale))))
    shape = (canonical_shape("double_sided_maxwell", shape) or params) + params  # as JAX
    k_max, k_sign = split(key)
    r = ops.mul(rademacher(k_sign, shape, dtype), maxwell(k_max, shape, dtype))
    return ops.add(ops.mul(r, scale), loc)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) samples with the given mean and unit shape parameter, by
    Michael, Schucany and Haas's transformation, as JAX's; differentiable in mean at a fixed
    key."""
    key, shape, dtype, (mean,) = _param("wald", key, shape, dtype, mean)
    k1, k2 = split(key)
    mean = fnp.broadcast_to(mean, shape)
    v, z = normal(k1, shape, dtype), uniform(k2, shape, dtype)
    y = ops.integer_pow(v, 2)
    mean_sq = ops.integer_pow(mean, 2)
    root = ops.sqrt(ops.add(ops.mul(ops.mul(4, mean), y),
                            ops.mul(mean_sq, ops.integer_pow(y, 2))))
    x = ops.sub(ops.add(mean, ops.div(ops.mul(mean_sq, y), 2)), ops.mul(ops.div(mean, 2), root))
    return ops.select(ops.le(z, ops.div(mean, ops.add(mean, x))), x, ops.div(mean_sq, x))


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Samples of the triangular distribution on [left, right] with its peak at mode, by the
    inverse CDF; differentiable in left, mode and right at a fixed key."""
    key, shape, dtype, (left, mode, right) = _param("triangular", key, shape, dtype,
                                                    left, mode, right)
    left, mode, right = [fnp.broadcast_to(p, shape) for p in (left, mode, right)]
    width = ops.sub(right, left)
    u = uniform(key, shape, dtype)
    below = ops.add(left, ops.sqrt(ops.mul(ops.mul(u, width), ops.sub(mode, left))))
    above = ops.sub(right, ops.sqrt(ops.mul(ops.mul(ops.sub(1, u), width), ops.sub(right, mode))))
    return ops.select(ops.lt(u, ops.div(ops.sub(mode, left), width)), below, above)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """mean + L z with L L^T = cov (Cholesky, or eigh / svd factors): differentiable in mean
    and cov."""
    key = check_key("multivariate_normal", key)
    if method not in ("cholesky", "eigh", "svd"):
        raise ValueError("multivariate_normal: method must be 'cholesky', 'eigh' or 'svd'")
    dt = inexact_dtype(mean, cov)
    mean, cov = ops.convert_element_type(mean, dt), ops.convert_element_type(cov, dt)
    dtype = dt if dtype is None else float_dtype("multivariate_normal", dtype)
    ms, cs = tuple(fnp.shape(mean)), tuple(fnp.shape(cov))
    if len(ms) < 1 or len(cs) < 2 or cs[-2:] != (ms[-1], ms[-1]):
        raise ValueError(f"multivariate_normal: mean must have shape (..., n) and cov (..., n, n),"
                         f" got {ms} and {cs}")
    batch = np.broadcast_shapes(ms[:-1], cs[:-2])
    shape = tuple(batch) if shape is None else check_shape(
        "multivariate_normal", canonical_shape("multivariate_normal", shape),
        np.empty(ms[:-1]), np.empty(cs[:-2]))
    if method == "cholesky":
        factor = fnp.linalg.cholesky(cov)
    elif method == "eigh":
        w, v = fnp.linalg.eigh(cov)
        factor = ops.mul(v, fnp.expand_dims(ops.sqrt(w), -2))
    else:
        u, s, _ = fnp.linalg.svd(cov)
        factor = ops.mul(u, fnp.expand_dims(ops.sqrt(s), -2))
    z = normal(key, shape + ms[-1:], dtype)
    return ops.add(mean, fnp.einsum("...ij,...j->...i", factor, z))


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """A uniformly (Haar) distributed n x m matrix with orthonormal columns or rows: the Q of
    a Gaussian matrix, its columns' signs fixed by R's diagonal."""
    key, dtype = check_key("orthogonal", key), float_dtype("orthogonal", dtype)
    m = n if m is None else m
    shape = canonical_shape("orthogonal", shape)
    z = normal(key, shape + (max(n, m), min(n, m)), dtype)
    q, r = fnp.linalg.qr(z)
    d = fnp.diagonal(r, axis1=-2, axis2=-1)
    x = ops.mul(q, fnp.expand_dims(ops.sign(d), -2))
    return fnp.swapaxes(x, -1, -2) if n < m else x


__all__ = ["truncated_normal", "exponential", "laplace", "logistic",
           "gumbel", "cauchy", "pareto", "lognormal", "rayleigh", "weibull_min", "maxwell",
           "double_sided_maxwell", "wald", "triangular", "multivariate_normal", "orthogonal"]

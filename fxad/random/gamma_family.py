"""Samplers built on the gamma sampler. Their derivatives in the shape parameters come from
gamma's implicit reparameterization (fxad/rules/random/gamma.py): d sample / d alpha at a
fixed key, first order."""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..rules import ops
from .common import canonical_shape, check_key, check_shape, float_dtype
from .basic import normal, rademacher
from .continuous import exponential
from .keys import split


def _gamma(name, key, a, shape, dtype, log_space):
    key, dtype = check_key(name, key), float_dtype(name, dtype)
    shape = canonical_shape(name, shape)
    shape = tuple(fnp.shape(a)) if shape is None else check_shape(name, shape, a)
    a = ops.convert_element_type(a, dtype)
    if tuple(fnp.shape(a)) != shape:
        a = ops.broadcast_to(a, shape)
    return ops.random_gamma(key, a, log_space)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) samples (Marsaglia-Tsang); differentiable in a (implicitly)."""
    return _gamma("gamma", key, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) samples, computed in log space (exact for tiny a, where the samples
    underflow)."""
    return _gamma("loggamma", key, a, shape, dtype, True)


def beta(key, a, b, shape=None, dtype=None):
    """X / (X + Y) for X ~ Gamma(a), Y ~ Gamma(b), in log space."""
    key, dtype = check_key("beta", key), float_dtype("beta", dtype)
    shape = check_shape("beta", canonical_shape("beta", shape), a, b)
    k_a, k_b = split(key)
    a = ops.broadcast_to(ops.convert_element_type(a, dtype), shape)
    b = ops.broadcast_to(ops.convert_element_type(b, dtype), shape)
    log_a, log_b = loggamma(k_a, a, shape, dtype), loggamma(k_b, b, shape, dtype)
    top = ops.max(log_a, log_b)
    ga, gb = ops.exp(ops.sub(log_a, top)), ops.exp(ops.sub(log_b, top))
    return ops.div(ga, ops.add(ga, gb))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Normalized gammas over the last axis of alpha (a softmax of log-gammas)."""
    key, dtype = check_key("dirichlet", key), float_dtype("dirichlet", dtype)
    ashape = tuple(fnp.shape(alpha))
    if len(ashape) < 1:
        raise ValueError(f"dirichlet: alpha must have at least one axis, got shape {ashape}")
    shape = canonical_shape("dirichlet", shape)
    if shape is None:
        shape = ashape[:-1]
    else:
        check_shape("dirichlet", shape, np.empty(ashape[:-1]))
    alpha = ops.convert_element_type(alpha, dtype)
    logs = loggamma(key, alpha, shape + ashape[-1:], dtype)
    e = ops.exp(ops.sub(logs, ops.stop_gradient(fnp.max(logs, axis=-1, keepdims=True))))
    return ops.div(e, fnp.sum(e, axis=-1, keepdims=True))


def t(key, df, shape=None, dtype=None):
    """Student's t: normal * sqrt(df / chi2(df)); differentiable in df."""
    key, dtype = check_key("t", key), float_dtype("t", dtype)
    shape = check_shape("t", canonical_shape("t", shape), df)
    df = ops.convert_element_type(df, dtype)
    k_n, k_g = split(key)
    n = normal(k_n, shape, dtype)
    half = ops.div(df, dtype.type(2))
    g = gamma(k_g, half, shape, dtype)
    return ops.mul(n, ops.sqrt(ops.div(half, g)))


def chisquare(key, df, shape=None, dtype=None):
    """Chi-squared samples with df degrees of freedom: 2 Gamma(df / 2), via `loggamma` (no
    underflow for small df); differentiable in df at a fixed key (implicit reparameterization)."""
    key, dtype = check_key("chisquare", key), float_dtype("chisquare", dtype)
    shape = check_shape("chisquare", canonical_shape("chisquare", shape), df)
    half = ops.div(ops.convert_element_type(df, dtype), dtype.type(2))
    return ops.mul(ops.exp(loggamma(key, half, shape, dtype)), dtype.type(2))


def f(key, dfnum, dfden, shape=None, dtype=None):
    """Snedecor's F: (chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)."""
    key, dtype = check_key("f", key), float_dtype("f", dtype)
    shape = check_shape("f", canonical_shape("f", shape), dfnum, dfden)
    dfnum = ops.convert_element_type(dfnum, dtype)
    dfden = ops.convert_element_type(dfden, dtype)
    k_den, k_num = split(key)
    num = ops.div(chisquare(k_num, dfnum, shape, dtype), dfnum)
    return ops.div(num, ops.div(chisquare(k_den, dfden, shape, dtype), dfden))


def generalized_normal(key, p, shape=(), dtype=None):
    """Density proportional to exp(-|x|^p): a random sign times Gamma(1/p)^(1/p)."""
    key, dtype = check_key("generalized_normal", key), float_dtype("generalized_normal", dtype)
    shape = canonical_shape("generalized_normal", shape)
    k_g, k_r = split(key)
    g = gamma(k_g, ops.div(1, p), shape, dtype)
    return ops.mul(rademacher(k_r, shape, dtype), ops.pow(g, ops.div(1, p)))


def ball(key, d, p=2, shape=(), dtype=None):
    """Uniform in the unit p-norm ball of dimension d (Barthe et al.'s construction)."""
    key, dtype = check_key("ball", key), float_dtype("ball", dtype)
    shape = canonical_shape("ball", shape)
    k1, k2 = split(key)
    g = generalized_normal(k1, p, shape + (int(d),), dtype)
    e = exponential(k2, shape, dtype)
    norm = ops.pow(ops.add(fnp.sum(ops.pow(ops.abs(g), p), axis=-1), e), ops.div(1, p))
    return ops.div(g, fnp.expand_dims(norm, -1))


__all__ = ["gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f",
           "generalized_normal", "ball"]

"""The gamma sampler and its implicit reparameterization.

`random_gamma(keys, a, log_space)`: Marsaglia and Tsang's rejection sampler ("A simple method
for generating gamma variables", ACM TOMS 2000), with JAX's key schedule: each element gets its
own key (split of the call's key), and each try splits it again, so a sample depends on its
key and its alpha only, eagerly, under jit and under vmap alike. Vectorized: a loop over
tries, each one hashing only the elements still rejected.

Its derivative in alpha is the implicit one: `random_gamma_grad(a, x)`, the derivative of the
quantile at a fixed CDF value (fxad/rules/random/gamma_grad.py), differentiable to any order.
"""
from __future__ import annotations

import math

import numpy as np

from ...core import Primitive, ShapedArray, get_aval, is_float
from ...errors import FxadValueError
from ...interpreters.jvp import Zero
from ..helpers import broadcast_batched
from .bits import check_keys, normal_np, split_np, uniform_np
from .gamma_grad import random_gamma_grad
from .. import ops


def _gamma_one_np(keys, alpha, log_space):
    """One sample per (key, alpha) pair: keys (N, 2), alpha (N,)."""
    dt = alpha.dtype.type
    one, third = dt(1), dt(1 / 3)
    boost = alpha >= one  # alpha < 1: sample alpha + 1, then scale by u^(1/alpha)
    d = np.where(boost, alpha, alpha + one) - third
    c = third / np.sqrt(d)
    first = split_np(keys, (2,))
    key, subkey = first[:, 0].copy(), first[:, 1]
    V = np.ones_like(alpha)
    active = np.ones(alpha.shape, bool)
    while active.any():
        i = np.flatnonzero(active)
        three = split_np(key[i], (3,))
        key[i] = three[:, 0]
        x_key, ci = three[:, 1].copy(), c[i]
        x, v = np.zeros(len(i), alpha.dtype), np.full(len(i), -1, alpha.dtype)
        pending = np.ones(len(i), bool)
        while pending.any():  # a normal x with v = 1 + c x > 0
            j = np.flatnonzero(pending)
            two = split_np(x_key[j], (2,))
            x_key[j] = two[:, 0]
            x[j] = normal_np(two[:, 1], (), alpha.dtype)
            v[j] = one + x[j] * ci[j]
            pending[j] = v[j] <= 0
        X, Vi = x * x, v * v * v
        U = uniform_np(three[:, 2], (), alpha.dtype)
        V[i] = Vi
        with np.errstate(divide="ignore", invalid="ignore"):
            active[i] = (U >= one - dt(0.0331) * (X * X)) & (
                np.log(U) >= X * dt(0.5) + d[i] * ((one - Vi) + np.log(Vi)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if log_space:
            log_u = np.log1p(-uniform_np(subkey, (), alpha.dtype))
            log_boost = np.where(boost | (log_u == 0), dt(0), log_u * (one / alpha))
            return (np.log(d) + np.log(V)) + log_boost
        u = one - uniform_np(subkey, (), alpha.dtype)
        return (d * V) * np.where(boost, one, u ** (one / alpha))


def gamma_np(keys, a, log_space=False):
    """keys (*K, 2), a (*K, *S): one gamma sample per element of a, element i of each key's
    block drawn with key split(key, prod(S))[i]."""
    keys, a = np.asarray(keys), np.asarray(a)
    lead = keys.shape[:-1]
    n = math.prod(a.shape[len(lead):])
    per_element = split_np(keys.reshape(-1, 2), (n,)).reshape(-1, 2)
    return _gamma_one_np(per_element, a.reshape(-1), log_space).reshape(a.shape)


random_gamma_p = Primitive("random_gamma", memory="fresh")
random_gamma_p.def_impl(gamma_np)
def _gamma_shape(keys, a, log_space):
    lead = check_keys(keys, "random_gamma")
    if a.shape[:len(lead)] != lead or not is_float(a.dtype) or a.dtype.kind == "c":
        raise FxadValueError(f"random_gamma: alpha must be real floats with the keys' leading "
                             f"shape {lead} in front, got {a.str_short()}")
    return ShapedArray(a.shape, a.dtype)
random_gamma_p.def_abstract_eval(_gamma_shape)
def _gamma_jvp(primals, tangents, log_space):
    (keys, a), (_, ta) = primals, tangents
    ans = random_gamma(keys, a, log_space)
    if type(ta) is Zero:
        return ans, Zero.like(ans)
    if not log_space:
        return ans, ops.mul(ta, random_gamma_grad(a, ans))
    x = ops.exp(ans)  # d log x / da = (dx/da) / x; x may underflow to 0: use the tiniest float
    x = ops.select(ops.eq(x, 0), np.finfo(get_aval(ans).dtype).tiny, x)
    return ans, ops.mul(ta, ops.div(random_gamma_grad(a, x), x))
random_gamma_p.def_jvp(_gamma_jvp)
def _gamma_batch(vals, dims, log_space):
    (keys, a), (dk, da) = vals, dims
    n = get_aval(keys).shape[dk] if dk is not None else get_aval(a).shape[da]
    return random_gamma_p.bind(broadcast_batched(keys, dk, n), broadcast_batched(a, da, n),
                               log_space=log_space), 0
random_gamma_p.def_batch(_gamma_batch)
def random_gamma(keys, a, log_space=False):
    check_keys(get_aval(keys), "random_gamma")
    return random_gamma_p.bind(keys, a, log_space=bool(log_space))


__all__ = ["random_gamma"]

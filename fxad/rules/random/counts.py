"""Count samplers: Poisson and binomial, with JAX's algorithms and key schedules.

Each draws whole arrays per try from one key (split once per try), as JAX's while loops do:
  poisson    Knuth's product of uniforms for lam < 10, Hoermann's transformed rejection
             (PTRS, "The transformed rejection method for generating Poisson random
             variables", 1993) otherwise; float32 arithmetic, as JAX.
  binomial   inversion by sums of geometric variables when n min(p, 1-p) <= 10, Hoermann's
             BTRS ("The generation of binomial random variates", 1993) otherwise.
A batch of keys (leading axes) loops each key's block until that block is done, so
vmap over keys equals a loop over them. Counts have no derivative (symbolic zeros).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ...core import Primitive, ShapedArray, get_aval
from ...errors import FxadValueError
from ..helpers import broadcast_batched, defjvp_zero
from ..elementwise.bitwise import fma_np
from .bits import check_keys, split_np, uniform_np


def _rows(keys, *params):
    """(m, 2) keys and each parameter as (m, n): one row per key."""
    keys = np.asarray(keys)
    m = math.prod(map(int, keys.shape[:-1]))
    return keys.reshape(m, 2).copy(), [np.asarray(p).reshape(m, -1) for p in params]


def _next(keys, rows, count):
    """Split each key of `rows` into `count`: the first replaces it, the rest are returned."""
    parts = split_np(keys[rows], (count,))
    keys[rows] = parts[:, 0]
    return [parts[:, k] for k in range(1, count)]


def _knuth(keys, lam, dtype):
    k = np.zeros(lam.shape, dtype)
    log_prod = np.zeros(lam.shape, np.float32)
    rows = (log_prod > -lam).any(axis=1)
    while rows.any():
        r = np.flatnonzero(rows)
        (sub,) = _next(keys, r, 2)
        live = log_prod[r] > -lam[r]
        k[r] = np.where(live, k[r] + 1, k[r])
        with np.errstate(divide="ignore"):
            log_prod[r] += np.log(uniform_np(sub, lam.shape[1:], np.float32))
        rows = (log_prod > -lam).any(axis=1)
    return (k - 1).astype(dtype)


def _ptrs(keys, lam, dtype):
    f = np.float32
    log_lam = np.log(lam)
    # Multiply-adds are fused (one rounding) where XLA's CPU code fuses them.
    b = fma_np(f(2.53), np.sqrt(lam), f(0.931))
    a = fma_np(f(0.02483), b, f(-0.059))
    inv_alpha = f(1.1239) + f(1.1328) / (b - f(3.4))
    v_r = f(0.9277) - f(3.6224) / (b - f(2))
    k_out = np.full(lam.shape, -1, f)
    accepted = np.zeros(lam.shape, bool)
    rows = np.ones(len(keys), bool)
    while rows.any():
        r = np.flatnonzero(rows)
        k0, k1 = _next(keys, r, 3)
        u = uniform_np(k0, lam.shape[1:], f) - f(0.5)
        v = uniform_np(k1, lam.shape[1:], f)
        ar, br, lr = a[r], b[r], lam[r]
        us = f(0.5) - np.abs(u)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            k = np.floor(fma_np(f(2) * ar / us + br, u, lr) + f(0.43))
            s = np.log(v * inv_alpha[r] / (ar / (us * us) + br))
            t = fma_np(k, log_lam[r], -lr) - sc.gammaln(k + f(1))
        accept1 = (us >= f(0.07)) & (v <= v_r[r])
        reject = (k < 0) | ((us < f(0.013)) & (v > us))
        accept = accept1 | (~reject & (s <= t))
        k_out[r] = np.where(accept, k, k_out[r])  # as JAX: a later acceptance overwrites
        accepted[r] |= accept
        rows = ~accepted.all(axis=1)
    return k_out.astype(dtype)


def poisson_np(keys, lam, dtype):
    """keys (*K, 2), lam (*K, *S) (float32): counts of `dtype`, shape lam.shape."""
    shape = np.shape(lam)
    keys, (lam,) = _rows(keys, np.asarray(lam, np.float32))
    knuth = np.isnan(lam) | (lam < 10)
    out = np.zeros(lam.shape, dtype)
    if knuth.any():  # each method only where some element needs it: same values, less work
        out = np.where(knuth, _knuth(keys.copy(), np.where(knuth, lam, 0), dtype), out)
    if not knuth.all():
        out = np.where(knuth, out, _ptrs(keys.copy(), np.where(knuth, np.float32(1e5), lam),
                                         dtype))
    return np.where(lam == 0, 0, out).astype(dtype).reshape(shape)


def _keyed_batch(prim):
    """Batching for (keys, *params): every operand's batch axis in front, unbatched ones
    broadcast (the impls take leading key axes)."""
    def rule(vals, dims, **params):
        n = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
        return prim.bind(*[broadcast_batched(v, d, n) for v, d in zip(vals, dims)], **params), 0
    prim.def_batch(rule)


def _keyed_shape(name, dtype_of_out):
    def rule(keys, *params, **kw):
        lead = check_keys(keys, name)
        shape = params[0].shape
        for p in params:
            if p.shape != shape or p.shape[:len(lead)] != lead:
                raise FxadValueError(f"{name}: parameters must share one shape with the keys' "
                                     f"leading shape {lead} in front, got "
                                     f"{[q.str_short() for q in params]}")
        return ShapedArray(shape, dtype_of_out(params, kw))
    return rule


random_poisson_p = Primitive("random_poisson", memory="fresh")
random_poisson_p.def_impl(poisson_np)
random_poisson_p.def_abstract_eval(_keyed_shape("random_poisson", lambda p, kw: kw["dtype"]))
defjvp_zero(random_poisson_p)
_keyed_batch(random_poisson_p)
def random_poisson(keys, lam, dtype):
    return random_poisson_p.bind(keys, lam, dtype=np.dtype(dtype))


# --- binomial ---------------------------------------------------------------------------------

def _inversion(keys, count, prob, dtype):
    log_q = np.log1p(-prob)
    num = np.zeros(prob.shape, prob.dtype)
    total = np.zeros(prob.shape, prob.dtype)
    rows = (total <= count).any(axis=1)
    while rows.any():
        r = np.flatnonzero(rows)
        parts = split_np(keys[r], (2,))  # (subkey, key): the second one carries on
        keys[r] = parts[:, 1]
        num[r] = np.where(total[r] <= count[r], num[r] + 1, num[r])
        with np.errstate(divide="ignore", invalid="ignore"):
            geom = np.ceil(np.log(uniform_np(parts[:, 0], prob.shape[1:], prob.dtype)) / log_q[r])
        total[r] = total[r] + geom
        rows = (total <= count).any(axis=1)
    return (num - 1).astype(dtype)


# Hoermann's table of log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2], k = 0..9.
_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                           0.00833056343336287])


def _stirling_tail(k):
    """The table for k <= 9, else the series 1/12 - ... (evaluated at k clipped to [0, 9], as
    JAX does, so streams agree)."""
    small = k <= 9
    kc = np.clip(k, 0, 9)
    kp1sq = (kc + 1) * (kc + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (kc + 1)
    table = _STIRLING_TAIL.astype(k.dtype)[np.nan_to_num(np.floor(kc)).astype(np.int32)]
    return np.where(small, table, approx)


def _btrs(keys, count, prob, dtype):
    dt = prob.dtype.type
    stddev = np.sqrt(count * prob * (1 - prob))
    b = dt(1.15) + dt(2.53) * stddev
    a = dt(-0.0873) + dt(0.0248) * b + dt(0.01) * prob
    c = count * prob + dt(0.5)
    v_r = dt(0.92) - dt(4.2) / b
    r_ = prob / (1 - prob)
    alpha = (dt(2.83) + dt(5.1) / b) * stddev
    m = np.floor((count + 1) * prob)
    k_out = np.full(prob.shape, -1, prob.dtype)
    accepted = np.zeros(prob.shape, bool)
    rows = np.ones(len(keys), bool)
    while rows.any():
        r = np.flatnonzero(rows)
        k0, k1 = _next(keys, r, 3)
        u = uniform_np(k0, prob.shape[1:], prob.dtype)
        v = uniform_np(k1, prob.shape[1:], prob.dtype)
        u = u - dt(0.5)
        us = dt(0.5) - np.abs(u)
        ar, br, n, mr, rr = a[r], b[r], count[r], m[r], r_[r]
        accept1 = (us >= dt(0.07)) & (v <= v_r[r])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            k = np.floor((dt(2) * ar / us + br) * u + c[r])
            reject = (k < 0) | (k > n)
            v = np.log(v * alpha[r] / (ar / (us * us) + br))
            ub = ((mr + dt(0.5)) * np.log((mr + 1) / (rr * (n - mr + 1)))
                  + (n + 1) * np.log((n - mr + 1) / (n - k + 1))
                  + (k + dt(0.5)) * np.log(rr * (n - k + 1) / (k + 1))
                  + _stirling_tail(mr) + _stirling_tail(n - mr)
                  - _stirling_tail(k) - _stirling_tail(n - k))
        accept = accept1 | (~reject & (v <= ub))
        k_out[r] = np.where(accept, k, k_out[r])
        accepted[r] |= accept
        rows = ~accepted.all(axis=1)
    return k_out.astype(dtype)


def binomial_np(keys, count, prob, dtype):
    """keys (*K, 2); count and prob (*K, *S) in one float dtype: samples of `dtype`."""
    shape = np.shape(prob)
    keys, (count, prob) = _rows(keys, count, prob)
    dt = prob.dtype.type
    with np.errstate(invalid="ignore"):
        p_low = prob < 0.5
        q = np.where(p_low, prob, dt(1) - prob)
        bad_count = np.isnan(count) | (count < 0)
        inf_count, q_nan, q_neg = np.isinf(count), np.isnan(q), q < 0
        q = np.where(q_nan | q_neg, dt(0.01), q)
        inversion = bad_count | (count * q <= 10)
        count = np.floor(count)
        out = np.zeros(prob.shape, dtype)
        if inversion.any():
            out = np.where(inversion, _inversion(keys.copy(), np.where(inversion, count, 0), q,
                                                 dtype), out)
        if not inversion.all():
            out = np.where(inversion, out, _btrs(keys.copy(), np.where(inversion, dt(1e4), count),
                                                 np.where(inversion, dt(0.5), q), dtype))
        invalid = q_neg | q_nan | bad_count
        out = np.where(invalid, np.nan, out)
        out = np.where(inf_count & ~invalid, np.inf, out)
        out = np.where(p_low | bad_count | q_nan | inf_count, out, count.astype(dtype) - out)
    return out.astype(dtype).reshape(shape)


random_binomial_p = Primitive("random_binomial", memory="fresh")
random_binomial_p.def_impl(binomial_np)
random_binomial_p.def_abstract_eval(_keyed_shape("random_binomial", lambda p, kw: kw["dtype"]))
defjvp_zero(random_binomial_p)
_keyed_batch(random_binomial_p)
def random_binomial(keys, count, prob, dtype):
    return random_binomial_p.bind(keys, count, prob, dtype=np.dtype(dtype))


__all__ = ["random_poisson", "random_binomial"]

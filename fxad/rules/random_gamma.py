"""The gamma sampler and its implicit reparameterization.

`random_gamma(keys, a, log_space)`: Marsaglia and Tsang's rejection sampler ("A simple method
for generating gamma variables", ACM TOMS 2000), with JAX's key schedule: each element gets its
own key (split of the call's key), and each try splits it again, so a sample depends on its
key and its alpha only, eagerly, under jit and under vmap alike. Vectorized: a loop over
tries, each one hashing only the elements still rejected.

Its derivative in alpha is the implicit one (Figurnov et al., "Implicit reparameterization
gradients", NeurIPS 2018): the sample x solves F(x; a) = u for the gamma CDF F, so
dx/da = -(dF/da) / (dF/dx) at fixed u. `random_gamma_grad(a, x)` computes it from the series
(x < a + 1) or the continued fraction (otherwise) of the regularized incomplete gamma
function, differentiated in a by a complex step (exact to rounding: no subtraction), with
dF/dx = x^(a-1) e^(-x) / Gamma(a) cancelled analytically, so nothing overflows:

  series            P = x^a e^-x S / Gamma(a),  S = sum_n x^n / (a (a+1) ... (a+n))
                    dx/da = -x (S (log x - digamma(a)) + dS/da)
  continued frac.   Q = x^a e^-x C / Gamma(a),  C = 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/...))
                    dx/da =  x (C (log x - digamma(a)) + dC/da)

Its own derivative in x is closed-form (below); in a it would need d2F/da2, which is not
implemented: second derivatives of gamma samples in alpha raise a clear error.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ..core import Primitive, ShapedArray, get_aval, is_float
from ..errors import FxadTypeError, FxadValueError, RuleNotImplementedError
from ..interpreters.jvp import Zero
from .elementwise import elementwise
from .helpers import broadcast_batched
from .random_bits import check_keys, normal_np, split_np, uniform_np
from .special import polygamma
from . import ops


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


# --- dx/da of a gamma sample: the implicit reparameterization ----------------------------------

_H = 1e-20  # the complex step: f(a + ih) = f(a) + ih f'(a) + O(h^2), no cancellation
_EPS = np.finfo(np.float64).eps
_TINY = 1e-300


def _series(a, x):
    """S and dS/da (see the module docstring), for x < a + 1: terms x^n / (a)_(n+1)."""
    ac = a + 1j * _H
    t = 1 / ac
    s = t.copy()
    out_s, out_d = np.empty_like(a), np.empty_like(a)
    idx = np.arange(len(a))
    n = 0
    while len(idx):
        n += 1
        t = t * (x / (ac + n))
        s = s + t
        done = (np.abs(t.real) <= _EPS * np.abs(s.real)) & \
            (np.abs(t.imag) <= _EPS * np.abs(s.imag))
        if done.any() or n > 100000:
            done |= n > 100000
            out_s[idx[done]], out_d[idx[done]] = s.real[done], s.imag[done] / _H
            keep = ~done
            idx, t, s, ac, x = idx[keep], t[keep], s[keep], ac[keep], x[keep]
    return out_s, out_d


def _continued_fraction(a, x):
    """C and dC/da, for x >= a + 1, by the modified Lentz method (Numerical Recipes' gcf)."""
    ac = a + 1j * _H
    b = x + 1 - ac
    c = np.full(a.shape, 1 / _TINY, complex)
    d = 1 / b
    h = d.copy()
    out_c, out_d = np.empty_like(a), np.empty_like(a)
    idx = np.arange(len(a))
    i = 0
    while len(idx):
        i += 1
        an = -i * (i - ac)
        b = b + 2
        d = an * d + b
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1 / d
        step = d * c
        h = h * step
        done = (np.abs(step.real - 1) <= _EPS) & (np.abs(step.imag) <= _EPS * _H)
        if done.any() or i > 100000:
            done |= i > 100000
            out_c[idx[done]], out_d[idx[done]] = h.real[done], h.imag[done] / _H
            keep = ~done
            idx, b, c, d, h, ac, x = (idx[keep], b[keep], c[keep], d[keep], h[keep], ac[keep],
                                      x[keep])
    return out_c, out_d


def gamma_grad_np(a, x):
    """dx/da at fixed CDF value for gamma samples x with shape a (broadcast), in float64,
    returned in the operands' float dtype. x = 0 gives 0; invalid a or x give NaN."""
    dtype = np.result_type(a, x)
    a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    shape = a64.shape
    a64, x64 = a64.ravel(), x64.ravel()
    out = np.where(x64 == 0, 0.0, np.nan)
    ok = (x64 > 0) & (a64 > 0) & np.isfinite(x64) & np.isfinite(a64)
    use_series = ok & (x64 < a64 + 1)
    use_cf = ok & ~use_series
    for mask, method, sign in ((use_series, _series, -1.0), (use_cf, _continued_fraction, 1.0)):
        if mask.any():
            am, xm = a64[mask], x64[mask]
            f, df = method(am, xm)
            out[mask] = sign * xm * (f * (np.log(xm) - sc.digamma(am)) + df)
    return out.reshape(shape).astype(dtype if dtype.kind == "f" else np.float64, copy=False)


random_gamma_grad_p = elementwise("random_gamma_grad", gamma_grad_np)
def _gamma_grad_jvp(primals, tangents):
    (a, x), (ta, tx) = primals, tangents
    g = random_gamma_grad(a, x)
    if type(ta) is not Zero:
        raise RuleNotImplementedError(
            "the derivative of random_gamma_grad in alpha (a second derivative of a gamma "
            "sample in its shape parameter) is not implemented; first derivatives of gamma, "
            "beta, dirichlet and t samples work, and derivatives in other inputs to any order")
    if type(tx) is Zero:
        return g, Zero.like(g)
    # dg/dx = -(log x - digamma(a)) - g ((a - 1)/x - 1), from g = -(dF/da)/(dF/dx).
    dgdx = ops.neg(ops.add(ops.sub(ops.log(x), polygamma(a, 0)),
                           ops.mul(g, ops.sub(ops.div(ops.sub(a, 1.0), x), 1.0))))
    return g, ops.mul(tx, dgdx)
random_gamma_grad_p.def_jvp(_gamma_grad_jvp)
def random_gamma_grad(a, x):
    for v in (a, x):
        if get_aval(v).dtype.kind not in "fiu":
            raise FxadTypeError(f"random_gamma_grad takes real values, got {get_aval(v)}")
    return random_gamma_grad_p.bind(a, x)


__all__ = ["random_gamma", "random_gamma_grad"]

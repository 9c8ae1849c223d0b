"""The implicit derivative of gamma samples (Figurnov et al., "Implicit reparameterization
gradients", NeurIPS 2018), and its derivatives, to any order.

A sample x of Gamma(a) solves F(x; a) = u, F the regularized lower incomplete gamma function,
so at a fixed u

    g(a, x) = dx/da = -(dF/da) / (dF/dx),     dF/dx = x^(a-1) e^(-x) / Gamma(a).

dF/da has no closed form. With the series (x < a + 1) and the continued fraction (otherwise)
of the incomplete gamma function, and dF/dx cancelled analytically (nothing overflows):

  series            F = x^a e^-x S / Gamma(a),  S = sum_n x^n / (a (a+1) ... (a+n))
                    g = -x (S (log x - digamma(a)) + dS/da)
  continued frac.   1 - F = x^a e^-x C / Gamma(a),  C = 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/...))
                    g =  x (C (log x - digamma(a)) + dC/da)

S and C are computed as truncated Taylor series in a ("jets": the value and its scaled
derivatives, exact to rounding, no differencing), so `random_gamma_grad(a, x, order=k)`, the
k-th derivative of g in a at fixed x, is as accurate as g itself. Its derivative in a is
order k + 1, and in x it is closed form (differentiate dg/dx = digamma(a) - log x -
g ((a - 1)/x - 1) k times in a), so every derivative composes to any order.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ...core import get_aval
from ...errors import FxadTypeError
from ...interpreters.jvp import Zero
from ..helpers import elementwise
from ..special.basic import polygamma
from .. import ops

_EPS = np.finfo(np.float64).eps
_TINY = 1e-300
_MAX_TERMS = 10 ** 6  # series terms grow like sqrt(a): a = 1e8 needs ~1e5


# --- truncated Taylor series in a: lists [f, f', f''/2!, ...] of arrays ----------------------

def _mul(p, q):
    return [sum(p[i] * q[k - i] for i in range(k + 1)) for k in range(len(p))]


def _inv(p):
    r = [1 / p[0]]
    for k in range(1, len(p)):
        r.append(-sum(p[i] * r[k - i] for i in range(1, k + 1)) * r[0])
    return r


def _small(jet, tol):
    """Every coefficient of `jet` below tol times the matching one of the sum so far."""
    return np.all([np.abs(t) <= tol[k] for k, t in enumerate(jet)], axis=0)


def _series(a, x, m):
    """The jet of S in a (m coefficients), for x < a + 1."""
    t = [(-1.0) ** j / a ** (j + 1) for j in range(m)]  # 1 / (a + d)
    s = [c.copy() for c in t]
    out = [np.empty_like(a) for _ in range(m)]
    idx = np.arange(len(a))
    for n in range(1, _MAX_TERMS + 1):
        t = _mul(t, [x * (-1.0) ** j / (a + n) ** (j + 1) for j in range(m)])  # x / (a + n + d)
        s = [si + ti for si, ti in zip(s, t)]
        done = _small(t, [_EPS * np.abs(si) for si in s]) | (n == _MAX_TERMS)
        if done.any():
            for k in range(m):
                out[k][idx[done]] = s[k][done]
            keep = ~done
            idx, a, x = idx[keep], a[keep], x[keep]
            t, s = [v[keep] for v in t], [v[keep] for v in s]
            if not len(idx):
                break
    return out


def _continued_fraction(a, x, m):
    """The jet of C in a (m coefficients), for x >= a + 1: the modified Lentz method
    (Numerical Recipes' gcf) in jet arithmetic."""
    zero = np.zeros_like(a)
    b = [x + 1 - a, zero - 1] + [zero] * (m - 2)
    c = [np.full_like(a, 1 / _TINY)] + [zero] * (m - 1)
    d = _inv(b)
    h = list(d)
    out = [np.empty_like(a) for _ in range(m)]
    idx = np.arange(len(a))
    for i in range(1, _MAX_TERMS + 1):
        an = [-i * (i - a), zero + i] + [zero] * (m - 2)
        b = [b[0] + 2] + b[1:]
        d = [u + v for u, v in zip(_mul(an, d), b)]
        d = [np.where(np.abs(d[0]) < _TINY, _TINY, d[0])] + d[1:]
        c = [u + v for u, v in zip(b, _mul(an, _inv(c)))]
        c = [np.where(np.abs(c[0]) < _TINY, _TINY, c[0])] + c[1:]
        d = _inv(d)
        step = _mul(d, c)
        h = _mul(h, step)
        done = _small([step[0] - 1] + step[1:], [_EPS] * m) | (i == _MAX_TERMS)
        if done.any():
            for k in range(m):
                out[k][idx[done]] = h[k][done]
            keep = ~done
            idx, a, x, zero = idx[keep], a[keep], x[keep], zero[keep]
            b, c, d, h = [[v[keep] for v in j] for j in (b, c, d, h)]
            if not len(idx):
                break
    return out


def gamma_grad_np(a, x, order=0):
    """d^order/da^order of dx/da at fixed x (the CDF value fixed) for gamma samples x of shape
    a (broadcast), in float64, returned in the operands' float dtype. x = 0 gives 0; invalid
    a or x give NaN."""
    dtype = np.result_type(a, x)
    a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    shape = a64.shape
    a64, x64 = a64.ravel(), x64.ravel()
    out = np.where(x64 == 0, 0.0, np.nan)
    ok = (x64 > 0) & (a64 > 0) & np.isfinite(x64) & np.isfinite(a64)
    use_series = ok & (x64 < a64 + 1)
    m = order + 2  # g's order-th derivative needs S (or C) to order + 1
    for mask, method, sign in ((use_series, _series, -1.0), (ok & ~use_series,
                                                            _continued_fraction, 1.0)):
        if mask.any():
            am, xm = a64[mask], x64[mask]
            f = method(am, xm, m)
            # jet of log x - digamma(a): [log x - psi(a), -psi'(a), -psi''(a)/2!, ...]
            lg = [np.log(xm) - sc.digamma(am)] + [-sc.polygamma(j, am) / math.factorial(j)
                                                 for j in range(1, m)]
            df = [(k + 1) * f[k + 1] for k in range(m - 1)]  # the jet of f'
            g = [sign * xm * (u + v) for u, v in zip(_mul(f[:-1], lg[:-1]), df)]
            out[mask] = g[order] * math.factorial(order)
    return out.reshape(shape).astype(dtype if dtype.kind == "f" else np.float64, copy=False)


random_gamma_grad_p = elementwise("random_gamma_grad", gamma_grad_np)
def _gamma_grad_jvp(primals, tangents, order):
    (a, x), (ta, tx) = primals, tangents
    g = random_gamma_grad(a, x, order)
    out = None
    if type(ta) is not Zero:
        out = ops.mul(ta, random_gamma_grad(a, x, order + 1))
    if type(tx) is not Zero:
        # d/dx of the order-th a-derivative of dg/dx = digamma(a) - log x - g ((a-1)/x - 1)
        head = ops.sub(polygamma(a, 0), ops.log(x)) if order == 0 else polygamma(a, order)
        dgdx = ops.sub(head, ops.mul(g, ops.sub(ops.div(ops.sub(a, 1.0), x), 1.0)))
        if order:
            dgdx = ops.sub(dgdx, ops.div(ops.mul(float(order),
                                                 random_gamma_grad(a, x, order - 1)), x))
        c = ops.mul(tx, dgdx)
        out = c if out is None else ops.add(out, c)
    if out is None:
        return g, Zero.like(g)
    aval = get_aval(g)
    if get_aval(out).shape != aval.shape:
        out = ops.broadcast_to(out, aval.shape)
    return g, out
random_gamma_grad_p.def_jvp(_gamma_grad_jvp)
def random_gamma_grad(a, x, order=0):
    for v in (a, x):
        if get_aval(v).dtype.kind not in "fiu":
            raise FxadTypeError(f"random_gamma_grad takes real values, got {get_aval(v)}")
    return random_gamma_grad_p.bind(a, x, order=int(order))


__all__ = ["random_gamma_grad"]

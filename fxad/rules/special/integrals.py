"""More of scipy.special's functions, with closed-form derivatives (SciPy's ufuncs as impls).

Removable singularities in a derivative (sin x / x at 0, log(z)/(1 - z) at 1) are evaluated
by a short Maclaurin series near the point and the closed form away from it (`near`), with
the closed form fed a safe argument where the series is used, so neither branch can put a
NaN into a derivative of any order.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from .. import ops
from ..helpers import elementwise
from ..helpers import defderiv, defjvp_zero
from .basic import digamma, erf

_TWO_OVER_SQRT_PI = float(2 / np.sqrt(np.pi))


def near(x, point, radius, coeffs, exact):
    """f(x) = Σ coeffs[k] (x - point)^k where |x - point| < radius, else exact(x): the series
    is exact to rounding there and keeps every derivative finite at the point."""
    u = ops.sub(x, point)
    small = ops.lt(ops.abs(u), radius)
    acc = coeffs[-1]
    for c in reversed(coeffs[:-1]):  # Horner
        acc = ops.add(ops.mul(acc, u), c)
    safe = ops.select(small, ops.add(ops.mul(u, 0.0), point + 2 * radius), x)
    return ops.select(small, acc, exact(safe))


dawsn_p = elementwise("dawsn", sc.dawsn)  # Dawson's integral: D' = 1 - 2 x D
defderiv(dawsn_p, lambda ans, x: ops.sub(1.0, ops.mul(ops.mul(x, 2.0), ans)), with_output=True)
def dawsn(x):
    """Dawson's integral exp(-x**2) times the integral of exp(t**2) from 0 to x, as
    `scipy.special.dawsn`, elementwise with broadcasting; differentiable to any order in
    forward and reverse mode."""
    return dawsn_p.bind(x)


expi_p = elementwise("expi", sc.expi)  # Ei(x): e^x / x
defderiv(expi_p, lambda x: ops.div(ops.exp(x), x))
def expi(x):
    """The exponential integral Ei(x), as `scipy.special.expi`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode."""
    return expi_p.bind(x)


exp1_p = elementwise("exp1", sc.exp1)  # E1(x): -e^-x / x
defderiv(exp1_p, lambda x: ops.neg(ops.div(ops.exp(ops.neg(x)), x)))
def exp1(x):
    """The exponential integral E1(x), as `scipy.special.exp1`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode."""
    return exp1_p.bind(x)


def _expn_deriv(n, x):
    """E_n' = -E_(n-1); E_0 = e^-x / x has E_0' = -E_0 (1 + 1/x)."""
    lower = expn(ops.max(ops.sub(n, 1), 0), x)
    e0 = ops.neg(ops.mul(lower, ops.add(1.0, ops.div(1.0, x))))
    return ops.select(ops.eq(n, 0), e0, ops.neg(lower))


expn_p = elementwise("expn", sc.expn)  # E_n(x), n an integer operand
defderiv(expn_p, lambda needed, n, x: [None, _expn_deriv(n, x) if needed[1] else None])
def expn(n, x):
    """The generalized exponential integral E_n(x) for integer n >= 0, as `scipy.special.expn`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode in
    x."""
    return expn_p.bind(n, x)


# log(z)/(1 - z) = -log1p(u)/u, u = z - 1: its series at z = 1 is -Σ (-u)^k / (k + 1).
_SPENCE_SERIES = [-((-1.0) ** k) / (k + 1) for k in range(14)]
spence_p = elementwise("spence", sc.spence)  # ∫_1^z log t / (1 - t) dt
defderiv(spence_p, lambda z: near(z, 1.0, 0.02, _SPENCE_SERIES,
                                  lambda s: ops.div(ops.log(s), ops.sub(1.0, s))))
def spence(z):
    """Spence's function (the dilogarithm as SciPy defines it), as `scipy.special.spence`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode for
    z > 0."""
    return spence_p.bind(z)


_HALF_PI = float(np.pi / 2)
fresnel_s_p = elementwise("fresnel_s", lambda x: sc.fresnel(x)[0])  # S' = sin(π x²/2)
defderiv(fresnel_s_p, lambda x: ops.sin(ops.mul(ops.mul(x, x), _HALF_PI)))
def fresnel_s(x): return fresnel_s_p.bind(x)


fresnel_c_p = elementwise("fresnel_c", lambda x: sc.fresnel(x)[1])  # C' = cos(π x²/2)
defderiv(fresnel_c_p, lambda x: ops.cos(ops.mul(ops.mul(x, x), _HALF_PI)))
def fresnel_c(x): return fresnel_c_p.bind(x)


_SINC_SERIES = [0.0] * 20
for _k in range(10):
    _SINC_SERIES[2 * _k] = (-1.0) ** _k / float(np.prod(np.arange(1, 2 * _k + 2)))
si_p = elementwise("si", lambda x: sc.sici(x)[0])  # Si' = sin x / x
defderiv(si_p, lambda x: near(x, 0.0, 0.5, _SINC_SERIES, lambda s: ops.div(ops.sin(s), s)))
def si(x): return si_p.bind(x)


ci_p = elementwise("ci", lambda x: sc.sici(x)[1])  # Ci' = cos x / x
defderiv(ci_p, lambda x: ops.div(ops.cos(x), x))
def ci(x): return ci_p.bind(x)


wofz_p = elementwise("wofz", sc.wofz)  # Faddeeva w(z) = e^(-z²) erfc(-iz): w' = -2 z w + 2i/√π
defderiv(wofz_p, lambda ans, z: ops.add(ops.mul(ops.mul(z, -2.0), ans), 1j * _TWO_OVER_SQRT_PI),
         with_output=True)
def wofz(z):
    """The Faddeeva function exp(-z**2) erfc(-i z) of complex z, as `scipy.special.wofz`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode
    (holomorphic: complex derivatives)."""
    return wofz_p.bind(z)


_INV_2PI = float(1 / (2 * np.pi))
_INV_SQRT_2 = float(1 / np.sqrt(2))
_INV_2SQRT_2PI = float(1 / (2 * np.sqrt(2 * np.pi)))


def _owens_t_dh(h, a):  # -φ(h) erf(a h / √2) / 2
    return ops.neg(ops.mul(ops.mul(ops.exp(ops.mul(ops.mul(h, h), -0.5)), _INV_2SQRT_2PI),
                           erf(ops.mul(ops.mul(a, h), _INV_SQRT_2))))


def _owens_t_da(h, a):  # e^(-h²(1+a²)/2) / (2π (1 + a²))
    s = ops.add(1.0, ops.mul(a, a))
    return ops.div(ops.mul(ops.exp(ops.mul(ops.mul(ops.mul(h, h), s), -0.5)), _INV_2PI), s)


owens_t_p = elementwise("owens_t", sc.owens_t)
defderiv(owens_t_p, lambda needed, h, a: [_owens_t_dh(h, a) if needed[0] else None,
                                          _owens_t_da(h, a) if needed[1] else None])
def owens_t(h, a):
    """Owen's T function T(h, a), as `scipy.special.owens_t`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode in h and a."""
    return owens_t_p.bind(h, a)


loggamma_p = elementwise("loggamma", sc.loggamma)  # real x > 0: gammaln; derivative ψ
defderiv(loggamma_p, lambda x: digamma(x))
def loggamma(x):
    """The principal branch of log Gamma(x) (real for x > 0, NaN for real x < 0 as SciPy's), as
    `scipy.special.loggamma`, elementwise with broadcasting; differentiable to any order in
    forward and reverse mode."""
    return loggamma_p.bind(x)


gammasgn_p = elementwise("gammasgn", sc.gammasgn)  # the sign of Γ(x): piecewise constant
defjvp_zero(gammasgn_p)
def gammasgn(x):
    """The sign of Gamma(x), as `scipy.special.gammasgn`, elementwise with broadcasting; piecewise
    constant, so its derivative is 0."""
    return gammasgn_p.bind(x)


poch_p = elementwise("poch", sc.poch)  # Γ(z + m)/Γ(z)
defderiv(poch_p, lambda needed, ans, z, m: [
    ops.mul(ans, ops.sub(digamma(ops.add(z, m)), digamma(z))) if needed[0] else None,
    ops.mul(ans, digamma(ops.add(z, m))) if needed[1] else None], with_output=True)
def poch(z, m):
    """The Pochhammer symbol (rising factorial) Gamma(z + m) / Gamma(z), as `scipy.special.poch`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode in z
    and m."""
    return poch_p.bind(z, m)


def _binom_deriv(needed, ans, n, k):
    """binom = Γ(n+1)/(Γ(k+1)Γ(n-k+1)): ∂n = binom (ψ(n+1) - ψ(n-k+1)), ∂k = binom
    (ψ(n-k+1) - ψ(k+1)). (NaN where n - k + 1 is a pole of ψ, i.e. binom = 0 at k > n.)"""
    r = digamma(ops.add(ops.sub(n, k), 1.0))
    return [ops.mul(ans, ops.sub(digamma(ops.add(n, 1.0)), r)) if needed[0] else None,
            ops.mul(ans, ops.sub(r, digamma(ops.add(k, 1.0)))) if needed[1] else None]


binom_p = elementwise("binom", sc.binom)
defderiv(binom_p, _binom_deriv, with_output=True)
def binom(n, k):
    """The binomial coefficient n choose k for real n and k (through the gamma function), as
    `scipy.special.binom`, elementwise with broadcasting; differentiable to any order in
    forward and reverse mode in n and k."""
    return binom_p.bind(n, k)


rel_entr_p = elementwise("rel_entr", sc.rel_entr)  # x log(x/y): ∂x = 1 + log(x/y), ∂y = -x/y
defderiv(rel_entr_p, lambda needed, x, y: [
    ops.add(ops.sub(ops.log(x), ops.log(y)), 1.0) if needed[0] else None,
    ops.neg(ops.div(x, y)) if needed[1] else None])
def rel_entr(x, y):
    """x log(x / y), the relative-entropy summand (0 at x = 0), as `scipy.special.rel_entr`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode in x
    and y."""
    return rel_entr_p.bind(x, y)


kl_div_p = elementwise("kl_div", sc.kl_div)  # x log(x/y) - x + y: ∂x = log(x/y), ∂y = 1 - x/y
defderiv(kl_div_p, lambda needed, x, y: [
    ops.sub(ops.log(x), ops.log(y)) if needed[0] else None,
    ops.sub(1.0, ops.div(x, y)) if needed[1] else None])
def kl_div(x, y):
    """x log(x / y) - x + y, the Kullback-Leibler summand (0 at x = 0, inf where it diverges), as
    `scipy.special.kl_div`, elementwise with broadcasting; differentiable to any order in
    forward and reverse mode in x and y."""
    return kl_div_p.bind(x, y)


# x with log Φ(x) = y (SciPy's ndtri_exp, accurate far in the lower tail): dx/dy = Φ(x)/φ(x)
# = exp(y - log φ(x)), finite where Φ and φ both underflow.
_LOG_SQRT_2PI = float(0.5 * np.log(2 * np.pi))
ndtri_exp_p = elementwise("ndtri_exp", sc.ndtri_exp)
defderiv(ndtri_exp_p, lambda ans, y: ops.exp(ops.add(ops.add(y, ops.mul(ops.mul(ans, ans), 0.5)),
                                                     _LOG_SQRT_2PI)), with_output=True)
def ndtri_exp(y):
    """ndtri(exp(y)) for y <= 0 without underflow (the quantile of a log-probability), as
    `scipy.special.ndtri_exp`, elementwise with broadcasting; differentiable to any order in
    forward and reverse mode."""
    return ndtri_exp_p.bind(y)


__all__ = ["ndtri_exp", "dawsn", "expi", "exp1", "expn", "spence", "fresnel_s", "fresnel_c", "si",
           "ci", "wofz", "owens_t", "loggamma", "gammasgn", "poch", "binom", "rel_entr",
           "kl_div", "near"]

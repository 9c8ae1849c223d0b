"""Families with shape parameters whose CDFs are incomplete gamma or beta functions (gamma,
chi2, beta, gennorm; differentiable in a, b, df, β through fxad/rules/special/incomplete.py),
the truncated normal (log-space differences of normal tails) and the circular vonmises and
wrapcauchy."""
from __future__ import annotations

import numpy as np

from ... import lax
from ...rules.special.bessel import bessel_ie
from ...rules.special.basic import log_ndtr, logaddexp, ndtr
from ...rules.special.incomplete import (betainc, betaincinv, betaln, gammainc, gammaincc,
                                         gammainccinv, gammaincinv, gammaln, gennorm_cdf,
                                         gennorm_ppf)
from ...rules.special.integrals import ndtri_exp
from ._common import all_of, continuous, where, xlog1my0, xlogy0
from ._continuous import log1m, log_pair

_INF = np.inf
_LOG_2 = float(np.log(2.0))
_LOG_2PI = float(np.log(2 * np.pi))
_LOG_SQRT_2PI = float(0.5 * np.log(2 * np.pi))


def _gamma_logpdf(z, a):
    return lax.sub(lax.sub(xlogy0(lax.sub(a, 1.0), z), z), gammaln(a))


gamma = continuous("gamma", ("a",), {
    "logpdf": _gamma_logpdf,
    "cdf": lambda z, a: gammainc(a, z), "sf": lambda z, a: gammaincc(a, z),
    "logcdf": lambda z, a: log_pair(gammainc(a, z), gammaincc(a, z)),
    "logsf": lambda z, a: log_pair(gammaincc(a, z), gammainc(a, z)),
    "ppf": lambda q, a: gammaincinv(a, q), "isf": lambda q, a: gammainccinv(a, q)},
    support=lambda a: (0.0, _INF), valid=lambda a: lax.gt(a, 0), safe_z=lambda a: 1.0)


def _half(df):
    return lax.mul(df, 0.5)


chi2 = continuous("chi2", ("df",), {
    "logpdf": lambda z, df: lax.sub(_gamma_logpdf(lax.mul(z, 0.5), _half(df)), _LOG_2),
    "cdf": lambda z, df: gammainc(_half(df), lax.mul(z, 0.5)),
    "sf": lambda z, df: gammaincc(_half(df), lax.mul(z, 0.5)),
    "logcdf": lambda z, df: log_pair(gammainc(_half(df), lax.mul(z, 0.5)),
                                     gammaincc(_half(df), lax.mul(z, 0.5))),
    "logsf": lambda z, df: log_pair(gammaincc(_half(df), lax.mul(z, 0.5)),
                                    gammainc(_half(df), lax.mul(z, 0.5))),
    "ppf": lambda q, df: lax.mul(gammaincinv(_half(df), q), 2.0),
    "isf": lambda q, df: lax.mul(gammainccinv(_half(df), q), 2.0)},
    support=lambda df: (0.0, _INF), valid=lambda df: lax.gt(df, 0), safe_z=lambda df: 1.0)


def _beta_logpdf(z, a, b):
    return lax.sub(lax.add(xlogy0(lax.sub(a, 1.0), z), xlog1my0(lax.sub(b, 1.0), z)),
                   betaln(a, b))


def _beta_sf(z, a, b):  # I_(1-z)(b, a): the upper tail directly
    return betainc(b, a, lax.sub(1.0, z))


beta = continuous("beta", ("a", "b"), {
    "logpdf": _beta_logpdf,
    "cdf": lambda z, a, b: betainc(a, b, z), "sf": _beta_sf,
    "logcdf": lambda z, a, b: log_pair(betainc(a, b, z), _beta_sf(z, a, b)),
    "logsf": lambda z, a, b: log_pair(_beta_sf(z, a, b), betainc(a, b, z)),
    "ppf": lambda q, a, b: betaincinv(a, b, q),
    "isf": lambda q, a, b: lax.sub(1.0, betaincinv(b, a, q))},
    support=lambda a, b: (0.0, 1.0), valid=lambda a, b: lax.logical_and(lax.gt(a, 0), lax.gt(b, 0)),
    safe_z=lambda a, b: 0.5)


gennorm = continuous("gennorm", ("beta",), {
    "logpdf": lambda z, p: lax.sub(lax.sub(lax.sub(lax.log(p), _LOG_2),
                                           gammaln(lax.div(1.0, p))), lax.pow(lax.abs(z), p)),
    "cdf": gennorm_cdf, "sf": lambda z, p: gennorm_cdf(lax.neg(z), p),
    "logcdf": lambda z, p: log_pair(gennorm_cdf(z, p), gennorm_cdf(lax.neg(z), p)),
    "logsf": lambda z, p: log_pair(gennorm_cdf(lax.neg(z), p), gennorm_cdf(z, p)),
    "ppf": gennorm_ppf, "isf": lambda q, p: lax.neg(gennorm_ppf(q, p))},
    valid=lambda p: lax.gt(p, 0))


# --- the truncated normal --------------------------------------------------------------------

def _log_diff_ndtr(a, b):
    """log(Φ(b) - Φ(a)) for a < b, computed in the tail that holds the mass: both below 0,
    log Φ(b) + log1p(-e^(log Φ(a) - log Φ(b))); both above 0, the same mirrored; else
    log1p(-Φ(a) - Φ(-b)). Each branch sees safe arguments where it is not used."""
    low, high = lax.le(b, 0.0), lax.ge(a, 0.0)
    mid = lax.logical_not(lax.logical_or(low, high))
    al, bl = where(low, a, -2.0), where(low, b, -1.0)
    lb = log_ndtr(bl)
    r_low = lax.add(lb, log1m(lax.exp(lax.sub(log_ndtr(al), lb))))
    ah, bh = where(high, a, 1.0), where(high, b, 2.0)
    la = log_ndtr(lax.neg(ah))
    r_high = lax.add(la, log1m(lax.exp(lax.sub(log_ndtr(lax.neg(bh)), la))))
    am, bm = where(mid, a, -1.0), where(mid, b, 1.0)
    r_mid = lax.log1p(lax.neg(lax.add(ndtr(am), ndtr(lax.neg(bm)))))
    return where(low, r_low, where(high, r_high, r_mid))


def _tn_logcdf(z, a, b):
    return lax.sub(_log_diff_ndtr(a, z), _log_diff_ndtr(a, b))


def _tn_logsf(z, a, b):
    return lax.sub(_log_diff_ndtr(z, b), _log_diff_ndtr(a, b))


def _tn_safe_z(a, b):
    """A point strictly inside [a, b] (a finite end when the other is infinite)."""
    fa, fb = lax.isfinite(a), lax.isfinite(b)
    mid = lax.mul(lax.add(where(fa, a, 0.0), where(fb, b, 0.0)), 0.5)
    return where(all_of(fa, fb), mid, where(fa, lax.add(where(fa, a, 0.0), 1.0),
                                            where(fb, lax.sub(where(fb, b, 0.0), 1.0), 0.0)))


def _tn_ppf(q, a, b):
    """Inverted in the lower tail when the mass lies below 0 (log Φ(x) = log(Φ(a) + q(Φ(b) -
    Φ(a))), by ndtri_exp), mirrored otherwise: x = -ppf_(-b, -a)(1 - q)."""
    upper = lax.gt(lax.add(a, b), 0.0)  # the mass is mostly above 0: mirror
    a2 = where(upper, lax.neg(b), a)
    b2 = where(upper, lax.neg(a), b)
    q2 = where(upper, lax.sub(1.0, q), q)
    la = log_ndtr(a2)
    inner = lax.add(lax.log(q2), _log_diff_ndtr(a2, b2))
    x = ndtri_exp(logaddexp(la, inner))
    return where(upper, lax.neg(x), x)


truncnorm = continuous("truncnorm", ("a", "b"), {
    "logpdf": lambda z, a, b: lax.sub(lax.sub(lax.mul(lax.mul(z, z), -0.5), _LOG_SQRT_2PI),
                                      _log_diff_ndtr(a, b)),
    "logcdf": _tn_logcdf, "logsf": _tn_logsf,
    "cdf": lambda z, a, b: lax.exp(_tn_logcdf(z, a, b)),
    "sf": lambda z, a, b: lax.exp(_tn_logsf(z, a, b)),
    "ppf": _tn_ppf, "isf": lambda q, a, b: _tn_ppf(lax.sub(1.0, q), a, b)},
    support=lambda a, b: (a, b), valid=lambda a, b: lax.lt(a, b), safe_z=_tn_safe_z,
    safe_shapes=(-1.0, 1.0))


# --- circular distributions ------------------------------------------------------------------

vonmises = continuous("vonmises", ("kappa",), {  # log I0(κ) = log i0e(κ) + κ: no overflow
    "logpdf": lambda z, k: lax.sub(lax.sub(lax.mul(k, lax.sub(lax.cos(z), 1.0)), _LOG_2PI),
                                   lax.log(bessel_ie(k, 0)))},
    valid=lambda k: lax.gt(k, 0))


wrapcauchy = continuous("wrapcauchy", ("c",), {
    "logpdf": lambda z, c: lax.sub(lax.sub(lax.log1p(lax.neg(lax.mul(c, c))), _LOG_2PI),
                                   lax.log(lax.sub(lax.add(1.0, lax.mul(c, c)),
                                                   lax.mul(lax.mul(c, 2.0), lax.cos(z)))))},
    support=lambda c: (0.0, 2 * np.pi), valid=lambda c: lax.logical_and(lax.gt(c, 0),
                                                                         lax.lt(c, 1)),
    safe_z=lambda c: 1.0, safe_shapes=(0.5,))

__all__ = ["gamma", "chi2", "beta", "gennorm", "truncnorm", "vonmises", "wrapcauchy"]

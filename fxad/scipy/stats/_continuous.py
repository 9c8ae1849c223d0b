"""Location-scale families with closed forms: norm, t, cauchy, laplace, logistic, expon,
gumbel_r, gumbel_l, uniform, pareto, lognorm. Every tail is computed on its own side
(log_ndtr(-z) for the normal's logsf, atan2 for Cauchy's CDF, -softplus for the logistic's
log CDF, ...), so logcdf at -40 and logsf at +40 are finite and accurate."""
from __future__ import annotations

import numpy as np

from ... import lax
from ...rules.special.basic import log_ndtr, logit, ndtr, ndtri, softplus
from ...rules.special.incomplete import gammaln, stdtr, stdtrit
from ._common import continuous, where

_LOG_SQRT_2PI = float(0.5 * np.log(2 * np.pi))
_LOG_2 = float(np.log(2.0))
_LOG_PI = float(np.log(np.pi))
_INF = np.inf
_TINY = float(np.nextafter(0.0, 1.0))


def log_of(p):
    """log p with log 0 = -inf and a zero (not NaN) derivative there (an underflowed tail)."""
    pos = lax.gt(p, 0)
    return where(pos, lax.log(where(pos, p, 1.0)), -_INF)


def log1m(p):
    """log(1 - p), -inf at p = 1 with a zero derivative."""
    lt1 = lax.lt(p, 1)
    return where(lt1, lax.log1p(lax.neg(where(lt1, p, 0.0))), -_INF)


def log_pair(p, q):
    """log p given p and its complement q = 1 - p, each computed directly: log p where p is
    small, log1p(-q) where p is near 1 (where log p would round away q's digits)."""
    small = lax.lt(p, 0.5)
    return where(small, log_of(where(small, p, 0.25)), log1m(where(small, 0.25, q)))


def log1mexp(u):
    """log(1 - e^-u) for u >= 0: log(-expm1(-u)) below log 2, log1p(-e^-u) above (each
    accurate on its side), -inf with a zero derivative at u = 0."""
    small = lax.lt(u, _LOG_2)
    a = log_of(lax.neg(lax.expm1(lax.neg(where(small, u, 1.0)))))
    b = lax.log1p(lax.neg(lax.exp(lax.neg(where(small, 1.0, u)))))
    return where(small, a, b)


def _sq(z):
    return lax.mul(z, z)


def log1p_sq(z, c=1.0):
    """log(1 + z²/c) without overflow: 2 log|z| - log c + log1p(c/z²) for |z| > 1e100."""
    big = lax.gt(lax.abs(z), 1e100)
    zs = where(big, 1.0, z)
    zb = where(big, z, 1e100)
    small = lax.log1p(lax.div(_sq(zs), c))
    large = lax.add(lax.sub(lax.mul(lax.log(lax.abs(zb)), 2.0), lax.log(c)),
                    lax.log1p(lax.div(c, _sq(zb))))
    return where(big, large, small)


norm = continuous("norm", (), {
    "logpdf": lambda z: lax.sub(lax.mul(_sq(z), -0.5), _LOG_SQRT_2PI),
    "cdf": ndtr, "logcdf": log_ndtr,
    "sf": lambda z: ndtr(lax.neg(z)), "logsf": lambda z: log_ndtr(lax.neg(z)),
    "ppf": ndtri, "isf": lambda q: lax.neg(ndtri(q))})


def _t_logpdf(z, df):
    half = lax.mul(df, 0.5)
    return lax.sub(lax.sub(lax.sub(gammaln(lax.add(half, 0.5)), gammaln(half)),
                           lax.mul(lax.add(lax.log(df), _LOG_PI), 0.5)),
                   lax.mul(lax.add(half, 0.5), log1p_sq(z, df)))


t = continuous("t", ("df",), {
    "logpdf": _t_logpdf,
    "cdf": lambda z, df: stdtr(df, z), "sf": lambda z, df: stdtr(df, lax.neg(z)),
    "logcdf": lambda z, df: log_pair(stdtr(df, z), stdtr(df, lax.neg(z))),
    "logsf": lambda z, df: log_pair(stdtr(df, lax.neg(z)), stdtr(df, z)),
    "ppf": lambda q, df: stdtrit(df, q), "isf": lambda q, df: lax.neg(stdtrit(df, q))},
    valid=lambda df: lax.gt(df, 0))


def _cauchy_cdf(z):  # atan2(1, -z)/π: no cancellation in the lower tail
    return lax.div(lax.arctan2(1.0, lax.neg(z)), np.pi)


def _cauchy_ppf(q):  # -cot(π q) below 1/2, cot(π (1 - q)) above: accurate in both tails
    low = lax.lt(q, 0.5)
    ql, qh = where(low, q, 0.25), where(low, 0.75, q)
    return where(low, lax.neg(lax.div(1.0, lax.tan(lax.mul(ql, np.pi)))),
                 lax.div(1.0, lax.tan(lax.mul(lax.sub(1.0, qh), np.pi))))


cauchy = continuous("cauchy", (), {
    "logpdf": lambda z: lax.neg(lax.add(log1p_sq(z), _LOG_PI)),
    "cdf": _cauchy_cdf, "sf": lambda z: _cauchy_cdf(lax.neg(z)),
    "logcdf": lambda z: log_pair(_cauchy_cdf(z), _cauchy_cdf(lax.neg(z))),
    "logsf": lambda z: log_pair(_cauchy_cdf(lax.neg(z)), _cauchy_cdf(z)),
    "ppf": _cauchy_ppf, "isf": lambda q: lax.neg(_cauchy_ppf(q))})


def _split(z):
    """(z clipped to <= 0, z clipped to >= 0) by select, so each side's formula sees only its
    own half and z = 0 belongs to the upper side with its full derivative."""
    neg = lax.lt(z, 0)
    return where(neg, z, 0.0), where(neg, 0.0, z), neg


def _laplace_logcdf(z):
    zn, zp, neg = _split(z)
    return where(neg, lax.sub(zn, _LOG_2), lax.log1p(lax.mul(lax.exp(lax.neg(zp)), -0.5)))


def _laplace_ppf(q):
    low = lax.lt(q, 0.5)
    ql, qh = where(low, q, 0.25), where(low, 0.75, q)
    return where(low, lax.log(lax.mul(ql, 2.0)), lax.neg(lax.log(lax.mul(lax.sub(1.0, qh), 2.0))))


laplace = continuous("laplace", (), {
    "logpdf": lambda z: lax.sub(lax.neg(lax.abs(z)), _LOG_2),
    "cdf": lambda z: lax.exp(_laplace_logcdf(z)),
    "sf": lambda z: lax.exp(_laplace_logcdf(lax.neg(z))),
    "logcdf": _laplace_logcdf, "logsf": lambda z: _laplace_logcdf(lax.neg(z)),
    "ppf": _laplace_ppf, "isf": lambda q: lax.neg(_laplace_ppf(q))})


def _logistic_logpdf(z):  # -|z| - 2 softplus(-|z|), each side by its own smooth formula
    zn, zp, neg = _split(z)
    return where(neg, lax.sub(zn, lax.mul(softplus(zn), 2.0)),
                 lax.sub(lax.neg(zp), lax.mul(softplus(lax.neg(zp)), 2.0)))


logistic = continuous("logistic", (), {
    "logpdf": _logistic_logpdf,
    "cdf": lax.logistic, "sf": lambda z: lax.logistic(lax.neg(z)),
    "logcdf": lambda z: lax.neg(softplus(lax.neg(z))), "logsf": lambda z: lax.neg(softplus(z)),
    "ppf": logit, "isf": lambda q: lax.neg(logit(q))})


expon = continuous("expon", (), {
    "logpdf": lax.neg,
    "cdf": lambda z: lax.neg(lax.expm1(lax.neg(z))), "sf": lambda z: lax.exp(lax.neg(z)),
    "logcdf": log1mexp, "logsf": lax.neg,
    "ppf": lambda q: lax.neg(lax.log1p(lax.neg(q))), "isf": lambda q: lax.neg(lax.log(q))},
    support=lambda: (0.0, _INF), safe_z=lambda: 1.0)


def _gumbel_r_logcdf(z):
    return lax.neg(lax.exp(lax.neg(z)))


gumbel_r = continuous("gumbel_r", (), {
    "logpdf": lambda z: lax.neg(lax.add(z, lax.exp(lax.neg(z)))),
    "cdf": lambda z: lax.exp(_gumbel_r_logcdf(z)), "logcdf": _gumbel_r_logcdf,
    "sf": lambda z: lax.neg(lax.expm1(_gumbel_r_logcdf(z))),
    "logsf": lambda z: log1mexp(lax.exp(lax.neg(z))),
    "ppf": lambda q: lax.neg(lax.log(lax.neg(lax.log(q)))),
    "isf": lambda q: lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(q)))))})

gumbel_l = continuous("gumbel_l", (), {
    "logpdf": lambda z: lax.sub(z, lax.exp(z)),
    "sf": lambda z: lax.exp(_gumbel_r_logcdf(lax.neg(z))),
    "logsf": lambda z: _gumbel_r_logcdf(lax.neg(z)),
    "cdf": lambda z: lax.neg(lax.expm1(_gumbel_r_logcdf(lax.neg(z)))),
    "logcdf": lambda z: log1mexp(lax.exp(z)),
    "ppf": lambda q: lax.log(lax.neg(lax.log1p(lax.neg(q)))),
    "isf": lambda q: lax.log(lax.neg(lax.log(q)))})


def _zero_like(z):
    return lax.mul(z, 0.0)


uniform = continuous("uniform", (), {
    "logpdf": _zero_like, "pdf": lambda z: lax.add(_zero_like(z), 1.0),
    "cdf": lambda z: z, "sf": lambda z: lax.sub(1.0, z),
    "logcdf": log_of, "logsf": lambda z: log1m(z),
    "ppf": lambda q: q, "isf": lambda q: lax.sub(1.0, q)},
    support=lambda: (0.0, 1.0), safe_z=lambda: 0.5)


def _pareto_logsf(z, b):
    return lax.neg(lax.mul(b, lax.log(z)))


pareto = continuous("pareto", ("b",), {
    "logpdf": lambda z, b: lax.sub(lax.log(b), lax.mul(lax.add(b, 1.0), lax.log(z))),
    "sf": lambda z, b: lax.exp(_pareto_logsf(z, b)), "logsf": _pareto_logsf,
    "cdf": lambda z, b: lax.neg(lax.expm1(_pareto_logsf(z, b))),
    "logcdf": lambda z, b: log1mexp(lax.mul(b, lax.log(z))),
    "ppf": lambda q, b: lax.exp(lax.neg(lax.div(lax.log1p(lax.neg(q)), b))),
    "isf": lambda q, b: lax.exp(lax.neg(lax.div(lax.log(q), b)))},
    support=lambda b: (1.0, _INF), valid=lambda b: lax.gt(b, 0), safe_z=lambda b: 2.0)


def _lognorm_logpdf(z, s):
    lz = lax.log(z)
    return lax.neg(lax.add(lax.add(lax.add(lax.log(s), lz), _LOG_SQRT_2PI),
                           lax.mul(lax.div(_sq(lz), _sq(s)), 0.5)))


def _lognorm_u(z, s):
    return lax.div(lax.log(z), s)


lognorm = continuous("lognorm", ("s",), {
    "logpdf": _lognorm_logpdf,
    "cdf": lambda z, s: ndtr(_lognorm_u(z, s)), "sf": lambda z, s: ndtr(lax.neg(_lognorm_u(z, s))),
    "logcdf": lambda z, s: log_ndtr(_lognorm_u(z, s)),
    "logsf": lambda z, s: log_ndtr(lax.neg(_lognorm_u(z, s))),
    "ppf": lambda q, s: lax.exp(lax.mul(s, ndtri(q))),
    "isf": lambda q, s: lax.exp(lax.neg(lax.mul(s, ndtri(q))))},
    # x = 0 is outside (below) the support: the formulas need log x
    support=lambda s: (_TINY, _INF), valid=lambda s: lax.gt(s, 0), safe_z=lambda s: 1.0)

__all__ = ["norm", "t", "cauchy", "laplace", "logistic", "expon", "gumbel_r", "gumbel_l",
           "uniform", "pareto", "lognorm", "log_of", "log1m", "log1mexp", "log_pair"]

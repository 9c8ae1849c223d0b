"""Discrete distributions: poisson, binom, nbinom, geom, bernoulli, betabinom. The mass
functions are log-space composites; the CDFs are incomplete gamma/beta functions, so they are
differentiable in the continuous parameters (mu, p, and n as a real number); quantiles are
SciPy's (piecewise constant: derivative 0)."""
from __future__ import annotations

import numpy as np

from ... import lax
from ...rules.special.incomplete import betainc, betaln, gammainc, gammaincc, gammaln
from ...rules.special.piecewise_stats import discrete_ppf
from ._common import all_of, discrete, where, xlog1my0, xlogy0
from ._continuous import log1mexp, log_pair

_INF = np.inf


def _is_int(v):
    return lax.eq(v, lax.floor(v))


def _unit(p):
    return lax.logical_and(lax.ge(p, 0), lax.le(p, 1))


poisson = discrete("poisson", ("mu",), {
    "logpmf": lambda k, mu: lax.sub(lax.sub(xlogy0(k, mu), mu), gammaln(lax.add(k, 1.0))),
    "cdf": lambda k, mu: gammaincc(lax.add(k, 1.0), mu),
    "sf": lambda k, mu: gammainc(lax.add(k, 1.0), mu),
    "logcdf": lambda k, mu: log_pair(gammaincc(lax.add(k, 1.0), mu), gammainc(lax.add(k, 1.0), mu)),
    "logsf": lambda k, mu: log_pair(gammainc(lax.add(k, 1.0), mu), gammaincc(lax.add(k, 1.0), mu)),
    "ppf": lambda q, mu: discrete_ppf("poisson", q, mu)},
    support=lambda mu: (0.0, _INF), valid=lambda mu: lax.ge(mu, 0), safe_k=lambda mu: 0.0,
    safe_shapes=(1.0,))


def _binom_logpmf(k, n, p):
    comb = lax.sub(lax.sub(gammaln(lax.add(n, 1.0)), gammaln(lax.add(k, 1.0))),
                   gammaln(lax.add(lax.sub(n, k), 1.0)))
    return lax.add(comb, lax.add(xlogy0(k, p), xlog1my0(lax.sub(n, k), p)))


def _binom_cdf(k, n, p):  # I_(1-p)(n - k, k + 1), k < n (k = n is the support's top: 1)
    top = lax.ge(k, n)
    ks = where(top, lax.sub(n, 1.0), k)
    return where(top, 1.0, betainc(lax.sub(n, ks), lax.add(ks, 1.0), lax.sub(1.0, p)))


def _binom_sf(k, n, p):
    top = lax.ge(k, n)
    ks = where(top, lax.sub(n, 1.0), k)
    return where(top, 0.0, betainc(lax.add(ks, 1.0), lax.sub(n, ks), p))


binom = discrete("binom", ("n", "p"), {
    "logpmf": _binom_logpmf, "cdf": _binom_cdf, "sf": _binom_sf,
    "logcdf": lambda k, n, p: log_pair(_binom_cdf(k, n, p), _binom_sf(k, n, p)),
    "logsf": lambda k, n, p: log_pair(_binom_sf(k, n, p), _binom_cdf(k, n, p)),
    "ppf": lambda q, n, p: discrete_ppf("binom", q, n, p)},
    support=lambda n, p: (0.0, n),
    valid=lambda n, p: all_of(lax.ge(n, 0), _is_int(n), _unit(p)), safe_shapes=(1.0, 0.5))


def _nbinom_logpmf(k, n, p):
    comb = lax.sub(lax.sub(gammaln(lax.add(k, n)), gammaln(n)), gammaln(lax.add(k, 1.0)))
    return lax.add(comb, lax.add(lax.mul(n, lax.log(p)), xlog1my0(k, p)))


def _nbinom_cdf(k, n, p):
    return betainc(n, lax.add(k, 1.0), p)


def _nbinom_sf(k, n, p):
    return betainc(lax.add(k, 1.0), n, lax.sub(1.0, p))


nbinom = discrete("nbinom", ("n", "p"), {
    "logpmf": _nbinom_logpmf, "cdf": _nbinom_cdf, "sf": _nbinom_sf,
    "logcdf": lambda k, n, p: log_pair(_nbinom_cdf(k, n, p), _nbinom_sf(k, n, p)),
    "logsf": lambda k, n, p: log_pair(_nbinom_sf(k, n, p), _nbinom_cdf(k, n, p)),
    "ppf": lambda q, n, p: discrete_ppf("nbinom", q, n, p)},
    support=lambda n, p: (0.0, _INF),
    valid=lambda n, p: all_of(lax.gt(n, 0), lax.gt(p, 0), lax.le(p, 1)), safe_shapes=(1.0, 0.5))


def _geom_logsf(k, p):  # k log(1 - p)
    return lax.mul(k, lax.log1p(lax.neg(p)))


geom = discrete("geom", ("p",), {
    "logpmf": lambda k, p: lax.add(xlog1my0(lax.sub(k, 1.0), p), lax.log(p)),
    "sf": lambda k, p: lax.exp(_geom_logsf(k, p)), "logsf": _geom_logsf,
    "cdf": lambda k, p: lax.neg(lax.expm1(_geom_logsf(k, p))),
    "logcdf": lambda k, p: log1mexp(lax.neg(_geom_logsf(k, p))),
    "ppf": lambda q, p: discrete_ppf("geom", q, p)},
    support=lambda p: (1.0, _INF), valid=lambda p: lax.logical_and(lax.gt(p, 0), lax.le(p, 1)),
    safe_k=lambda p: 1.0)


bernoulli = discrete("bernoulli", ("p",), {
    "logpmf": lambda k, p: lax.add(xlogy0(k, p), xlog1my0(lax.sub(1.0, k), p)),
    "cdf": lambda k, p: lax.sub(1.0, lax.mul(p, lax.sub(1.0, k))),  # k in {0, 1}
    "sf": lambda k, p: lax.mul(p, lax.sub(1.0, k)),
    "logcdf": lambda k, p: lax.log(lax.sub(1.0, lax.mul(p, lax.sub(1.0, k)))),
    "logsf": lambda k, p: lax.log(lax.mul(p, lax.sub(1.0, k))),
    "ppf": lambda q, p: discrete_ppf("bernoulli", q, p)},
    support=lambda p: (0.0, 1.0), valid=_unit)


def _betabinom_logpmf(k, n, a, b):
    nk = lax.sub(n, k)
    return lax.sub(lax.sub(betaln(lax.add(k, a), lax.add(nk, b)), betaln(a, b)),
                   lax.add(lax.log1p(n), betaln(lax.add(nk, 1.0), lax.add(k, 1.0))))


betabinom = discrete("betabinom", ("n", "a", "b"), {"logpmf": _betabinom_logpmf},
                     support=lambda n, a, b: (0.0, n),
                     valid=lambda n, a, b: all_of(lax.ge(n, 0), _is_int(n), lax.gt(a, 0),
                                                  lax.gt(b, 0)),
                     safe_shapes=(1.0, 1.0, 1.0))

__all__ = ["poisson", "binom", "nbinom", "geom", "bernoulli", "betabinom"]

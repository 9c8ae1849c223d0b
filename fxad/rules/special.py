"""Special functions (SciPy's implementations), with rules that reuse shared work."""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from .elementwise import (div, elementwise, eq, exp, isfinite, log, logical_and, logical_not,
                          logistic, mul, neg, select, sub)
from .helpers import defjvp, defjvp_with_output

_TWO_OVER_SQRT_PI = float(2 / np.sqrt(np.pi))


erf_p = elementwise("erf", sc.erf)
defjvp(erf_p, lambda t, x: mul(t, mul(_TWO_OVER_SQRT_PI, exp(neg(mul(x, x))))))
def erf(x): return erf_p.bind(x)


erfc_p = elementwise("erfc", sc.erfc)
defjvp(erfc_p, lambda t, x: mul(t, mul(-_TWO_OVER_SQRT_PI, exp(neg(mul(x, x))))))
def erfc(x): return erfc_p.bind(x)


def _polygamma_impl(x, n):
    """SciPy computes polygamma in float64 only; cast back so float32 stays float32 (as
    gammaln, digamma and every other elementwise primitive do)."""
    out = sc.polygamma(n, x)
    dt = np.asarray(x).dtype
    return out.astype(dt, copy=False) if dt.kind == "f" and type(x) is not float else out


polygamma_p = elementwise("polygamma", _polygamma_impl)  # order n, static
defjvp(polygamma_p, lambda t, x, n: mul(t, polygamma(x, n + 1)))
def polygamma(x, n): return polygamma_p.bind(x, n=int(n))


gammaln_p = elementwise("gammaln", sc.gammaln)
defjvp(gammaln_p, lambda t, x: mul(t, polygamma(x, 0)))
def gammaln(x): return gammaln_p.bind(x)


def digamma(x):
    return polygamma(x, 0)


logit_p = elementwise("logit", sc.logit)
defjvp(logit_p, lambda t, x: div(t, mul(x, sub(1.0, x))))
def logit(x): return logit_p.bind(x)


xlogy_p = elementwise("xlogy", sc.xlogy)  # x*log(y), defined as 0 where x == 0
defjvp_with_output(
    xlogy_p,
    # d/dx = log(y) (0 where x == 0 and y == 0, matching the convention), d/dy = x / y
    lambda t, ans, x, y: mul(t, log(select(eq(x, 0), 1.0, y))),
    lambda t, ans, x, y: mul(t, div(x, y)))
def xlogy(x, y): return xlogy_p.bind(x, y)


logaddexp_p = elementwise("logaddexp", np.logaddexp)


def _logaddexp_weight(x, y):
    """d/dx log(e^x + e^y) = logistic(x - y): smooth at ties, so every order is right there
    (max + log1p(exp(-|x - y|)) has cancelling kinks that break the second derivative).
    Equal infinities give x - y = NaN; they get the tie weight 1/2 instead."""
    same_inf = logical_and(eq(x, y), logical_not(isfinite(x)))
    return logistic(select(same_inf, 0.0, sub(x, y)))


defjvp(logaddexp_p, lambda t, x, y: mul(t, _logaddexp_weight(x, y)),
       lambda t, x, y: mul(t, _logaddexp_weight(y, x)))
def logaddexp(x, y): return logaddexp_p.bind(x, y)


softplus_p = elementwise("softplus", lambda x: np.logaddexp(x, 0.0))  # log(1 + e^x), stable
defjvp(softplus_p, lambda t, x: mul(t, logistic(x)))  # logistic is smooth: right at every order
def softplus(x): return softplus_p.bind(x)


__all__ = ["softplus", "logaddexp", "erf", "erfc", "polygamma", "gammaln", "digamma", "logit", "xlogy"]

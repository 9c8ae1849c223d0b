"""Special functions (SciPy's implementations), with rules that reuse shared work."""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from .elementwise import (add, div, elementwise, eq, exp, isfinite, log, log1p, logical_and,
                          logical_not, logistic, mul, neg, select, sub)
from ..ir.numba_backend.lowering import fusible
from .helpers import defderiv, defjvp

_TWO_OVER_SQRT_PI = float(2 / np.sqrt(np.pi))


erf_p = elementwise("erf", sc.erf)
defderiv(erf_p, lambda x: mul(_TWO_OVER_SQRT_PI, exp(neg(mul(x, x)))))
def erf(x): return erf_p.bind(x)


erfc_p = elementwise("erfc", sc.erfc)
defderiv(erfc_p, lambda x: mul(-_TWO_OVER_SQRT_PI, exp(neg(mul(x, x)))))
def erfc(x): return erfc_p.bind(x)


def _polygamma_impl(x, n):
    """SciPy computes polygamma in float64 only; cast back so float32 stays float32 (as
    gammaln, digamma and every other elementwise primitive do)."""
    out = sc.polygamma(n, x)
    dt = np.asarray(x).dtype
    return out.astype(dt, copy=False) if dt.kind == "f" and type(x) is not float else out


polygamma_p = elementwise("polygamma", _polygamma_impl)  # order n, static
defderiv(polygamma_p, lambda x, n: polygamma(x, n + 1))
def polygamma(x, n): return polygamma_p.bind(x, n=int(n))


gammaln_p = elementwise("gammaln", sc.gammaln)
defderiv(gammaln_p, lambda x: polygamma(x, 0))
def gammaln(x): return gammaln_p.bind(x)


def digamma(x):
    return polygamma(x, 0)


logit_p = elementwise("logit", sc.logit)
defjvp(logit_p, lambda t, x: div(t, mul(x, sub(1.0, x))))
def logit(x): return logit_p.bind(x)


xlogy_p = elementwise("xlogy", sc.xlogy)  # x*log(y), defined as 0 where x == 0
defderiv(xlogy_p, lambda needed, x, y: [
    # d/dx = log(y) (0 where x == 0 and y == 0, matching the convention), d/dy = x / y
    log(select(eq(x, 0), 1.0, y)) if needed[0] else None, div(x, y) if needed[1] else None])
def xlogy(x, y): return xlogy_p.bind(x, y)


logaddexp_p = elementwise("logaddexp", np.logaddexp)


def _logaddexp_weight(x, y):
    """d/dx log(e^x + e^y) = logistic(x - y): smooth at ties, so every order is right there
    (max + log1p(exp(-|x - y|)) has cancelling kinks that break the second derivative).
    Equal infinities give x - y = NaN; they get the tie weight 1/2 instead."""
    same_inf = logical_and(eq(x, y), logical_not(isfinite(x)))
    return logistic(select(same_inf, 0.0, sub(x, y)))


defderiv(logaddexp_p, lambda needed, x, y: [_logaddexp_weight(x, y) if needed[0] else None,
                                              _logaddexp_weight(y, x) if needed[1] else None])
def logaddexp(x, y): return logaddexp_p.bind(x, y)


softplus_p = elementwise("softplus", lambda x: np.logaddexp(x, 0.0))  # log(1 + e^x), stable
softplus_p.def_lowering(fusible(lambda fz, args: fz.ufunc(np.logaddexp, args[0], 0.0)),
                        backend="numba")
defderiv(softplus_p, lambda x: logistic(x))  # logistic is smooth: right at every order
def softplus(x): return softplus_p.bind(x)


# --- the normal distribution and inverse error function: the densities are shared work --------

_INV_SQRT_2PI, _SQRT_2PI = float(1 / np.sqrt(2 * np.pi)), float(np.sqrt(2 * np.pi))
_SQRT_PI_OVER_2 = float(np.sqrt(np.pi) / 2)


def _normal_pdf(x):
    return mul(exp(mul(mul(x, x), -0.5)), _INV_SQRT_2PI)


ndtr_p = elementwise("ndtr", sc.ndtr)  # the standard normal CDF
defderiv(ndtr_p, lambda x: _normal_pdf(x))
def ndtr(x): return ndtr_p.bind(x)


# d log Φ(x) = φ(x) / Φ(x) dx, as exp(log φ - log Φ): finite far in the lower tail, where
# φ and Φ both underflow but their ratio grows like |x|.
log_ndtr_p = elementwise("log_ndtr", sc.log_ndtr)
defderiv(log_ndtr_p, lambda ans, x: mul(
    exp(sub(mul(mul(x, x), -0.5), ans)), _INV_SQRT_2PI), with_output=True)
def log_ndtr(x): return log_ndtr_p.bind(x)


ndtri_p = elementwise("ndtri", sc.ndtri)  # the inverse of ndtr: dx/dp = 1 / φ(x)
defderiv(ndtri_p, lambda ans, p: mul(exp(mul(mul(ans, ans), 0.5)),
                                                         _SQRT_2PI), with_output=True)
def ndtri(p): return ndtri_p.bind(p)


erfinv_p = elementwise("erfinv", sc.erfinv)  # dx/dy = sqrt(pi)/2 exp(x²)
defderiv(erfinv_p, lambda ans, y: mul(exp(mul(ans, ans)), _SQRT_PI_OVER_2), with_output=True)
def erfinv(y): return erfinv_p.bind(y)


gamma_p = elementwise("gamma", sc.gamma)  # Γ'(x) = Γ(x) ψ(x)
defderiv(gamma_p, lambda ans, x: mul(ans, polygamma(x, 0)), with_output=True)
def gamma(x): return gamma_p.bind(x)


entr_p = elementwise("entr", sc.entr)  # -x log x (0 at 0, -inf below)
defderiv(entr_p, lambda x: neg(add(log(x), 1.0)))
def entr(x): return entr_p.bind(x)


xlog1py_p = elementwise("xlog1py", sc.xlog1py)  # x*log1p(y), 0 where x == 0
defderiv(xlog1py_p, lambda needed, x, y: [log1p(select(eq(x, 0), 0.0, y)) if needed[0] else None,
                                            div(x, add(y, 1.0)) if needed[1] else None])
def xlog1py(x, y): return xlog1py_p.bind(x, y)


__all__ = ["softplus", "logaddexp", "erf", "erfc", "polygamma", "gammaln", "digamma", "logit",
           "xlogy", "ndtr", "log_ndtr", "ndtri", "erfinv", "gamma", "entr", "xlog1py"]

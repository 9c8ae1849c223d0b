"""Special functions (SciPy's implementations), with rules that reuse shared work."""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from ..elementwise.arithmetic import add, div, mul, neg, select, sub
from ..elementwise.piecewise import abs, eq, isfinite, logical_and, logical_not, lt
from ..elementwise.transcendental import cos, exp, log, log1p, logistic, sin
from ..helpers import elementwise
from ...ir.numba_backend.lowering import fusible
from ..helpers import defderiv, defjvp
from .. import taylor

_TWO_OVER_SQRT_PI = float(2 / np.sqrt(np.pi))
_LN2 = float(np.log(2.0))


erf_p = elementwise("erf", sc.erf)
defderiv(erf_p, lambda x: mul(_TWO_OVER_SQRT_PI, exp(neg(mul(x, x)))))
erf_p.def_jet(taylor.erf_jet(erf_p))
def erf(x):
    """The error function, as `scipy.special.erf`, elementwise with broadcasting; differentiable
    to any order in forward and reverse mode."""
    return erf_p.bind(x)


erfc_p = elementwise("erfc", sc.erfc)
defderiv(erfc_p, lambda x: mul(-_TWO_OVER_SQRT_PI, exp(neg(mul(x, x)))))
def erfc(x):
    """The complementary error function 1 - erf(x), accurate in the upper tail, as
    `scipy.special.erfc`, elementwise with broadcasting; differentiable to any order in forward
    and reverse mode."""
    return erfc_p.bind(x)


def _polygamma_impl(x, n):
    """SciPy computes polygamma in float64 only; cast back so float32 stays float32 (as
    gammaln, digamma and every other elementwise primitive do)."""
    out = sc.polygamma(n, x)
    dt = np.asarray(x).dtype
    return out.astype(dt, copy=False) if dt.kind == "f" and type(x) is not float else out


polygamma_p = elementwise("polygamma", _polygamma_impl)  # order n, static
defderiv(polygamma_p, lambda x, n: polygamma(x, n + 1))
def polygamma(x, n): return polygamma_p.bind(x, n=int(n))


digamma_p = elementwise("digamma", sc.digamma)  # SciPy's own (psi): its dtypes, its values
defderiv(digamma_p, lambda x: polygamma(x, 1))
def digamma(x):
    """The digamma function psi(x) = d/dx log Gamma(x) (alias `psi`), as `scipy.special.digamma`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode."""
    return digamma_p.bind(x)


gammaln_p = elementwise("gammaln", sc.gammaln)
defderiv(gammaln_p, lambda x: digamma(x))
def gammaln(x):
    """log |Gamma(x)|, as `scipy.special.gammaln`, elementwise with broadcasting; differentiable
    to any order in forward and reverse mode."""
    return gammaln_p.bind(x)


logit_p = elementwise("logit", sc.logit)
defjvp(logit_p, lambda t, x: div(t, mul(x, sub(1.0, x))))
def logit(x):
    """log(x / (1 - x)), the inverse of expit, as `scipy.special.logit`, elementwise with
    broadcasting; differentiable to any order in forward and reverse mode."""
    return logit_p.bind(x)


xlogy_p = elementwise("xlogy", sc.xlogy)  # x*log(y), defined as 0 where x == 0
defderiv(xlogy_p, lambda needed, x, y: [
    # d/dx = log(y), also at x == 0 (the value's convention does not change the slope in x;
    # -inf at y == 0, as JAX), d/dy = x / y
    log(y) if needed[0] else None, div(x, y) if needed[1] else None])
def xlogy(x, y):
    """x log y, 0 where x = 0 (even at y = 0), as `scipy.special.xlogy`, elementwise with
    broadcasting; differentiable to any order in forward and reverse mode in x and y."""
    return xlogy_p.bind(x, y)


logaddexp_p = elementwise("logaddexp", np.logaddexp)


def _logaddexp_weight(x, y, scale=None):
    """d/dx log(e^x + e^y) = logistic(x - y): smooth at ties, so every order is right there
    (max + log1p(exp(-|x - y|)) has cancelling kinks that break the second derivative).
    Equal infinities give x - y = NaN; they get the tie weight 1/2 instead. Base 2:
    logistic((x - y) ln 2)."""
    same_inf = logical_and(eq(x, y), logical_not(isfinite(x)))
    d = select(same_inf, 0.0, sub(x, y))
    return logistic(d if scale is None else mul(d, scale))


defderiv(logaddexp_p, lambda needed, x, y: [_logaddexp_weight(x, y) if needed[0] else None,
                                              _logaddexp_weight(y, x) if needed[1] else None])
def logaddexp(x, y):
    """log(exp(x) + exp(y)) without overflow, as NumPy's; differentiable to any order."""
    return logaddexp_p.bind(x, y)


logaddexp2_p = elementwise("logaddexp2", np.logaddexp2)  # log2(2^x + 2^y)
defderiv(logaddexp2_p, lambda needed, x, y: [
    _logaddexp_weight(x, y, _LN2) if needed[0] else None,
    _logaddexp_weight(y, x, _LN2) if needed[1] else None])
def logaddexp2(x, y):
    """log2(2 ** x + 2 ** y) without overflow, as NumPy's; differentiable to any order."""
    return logaddexp2_p.bind(x, y)


# sinc: NumPy's own values; the derivative (cos(πx) - sinc(x)) / x is a Maclaurin series in
# u = (πx)² where |πx| < 0.5 (exact to rounding there, and smooth at 0 at every order).
_SINC_COEFFS = [(-1.0) ** k / float(np.prod(np.arange(1, 2 * k + 2))) for k in range(10)]


def _sinc_slope(x):
    px = mul(x, float(np.pi))
    near = lt(abs(px), 0.5)
    u = mul(px, px)
    series = _SINC_COEFFS[-1] * (len(_SINC_COEFFS) - 1)  # d/du of the series, times 2π²x
    for k in range(len(_SINC_COEFFS) - 2, 0, -1):
        series = add(mul(series, u), _SINC_COEFFS[k] * k)
    far = select(near, 1.0, x)  # the division never sees 0
    return select(near, mul(series, mul(x, 2 * float(np.pi) ** 2)),
                  div(sub(cos(mul(far, float(np.pi))), sinc(far)), far))


sinc_p = elementwise("sinc", np.sinc)  # sin(πx) / (πx), 1 at 0
defderiv(sinc_p, lambda x: _sinc_slope(x))
def sinc(x):
    """sin(pi x) / (pi x), 1 at 0, elementwise, as NumPy's; differentiable to any order."""
    return sinc_p.bind(x)


softplus_p = elementwise("softplus", lambda x: np.logaddexp(x, 0.0))  # log(1 + e^x), stable
defderiv(softplus_p, lambda x: logistic(x))  # logistic is smooth: right at every order
softplus_p.def_lowering(fusible(lambda fz, args: fz.ufunc(np.logaddexp, args[0], 0.0)),
                        backend="numba")
def softplus(x): return softplus_p.bind(x)


# --- the normal distribution and inverse error function: the densities are shared work --------

_INV_SQRT_2PI, _SQRT_2PI = float(1 / np.sqrt(2 * np.pi)), float(np.sqrt(2 * np.pi))
_SQRT_PI_OVER_2 = float(np.sqrt(np.pi) / 2)


def _normal_pdf(x):
    return mul(exp(mul(mul(x, x), -0.5)), _INV_SQRT_2PI)


ndtr_p = elementwise("ndtr", sc.ndtr)  # the standard normal CDF
defderiv(ndtr_p, lambda x: _normal_pdf(x))
def ndtr(x):
    """The standard normal CDF, as `scipy.special.ndtr`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode."""
    return ndtr_p.bind(x)


erfcx_p = elementwise("erfcx", sc.erfcx)  # exp(x²) erfc(x), finite where erfc underflows


def _erfcx_slope(ans, x):
    """2x erfcx(x) - 2/√π, which cancels for large x (relative error ~ x² eps): beyond 15 the
    asymptotic series -1/(√π x²) Σ (-1)^n (2n+1)!! / (2x²)^n, 11 terms (exact to rounding)."""
    far = lt(15.0, x)
    xs = select(far, x, 15.0)
    v = div(1.0, mul(mul(xs, xs), 2.0))
    series, c = 0.0, 1.0
    terms = []
    for n in range(11):
        terms.append(c)
        c *= -(2 * n + 3)
    for c in reversed(terms):
        series = add(mul(series, v), c)
    asym = mul(mul(v, -float(2 / np.sqrt(np.pi))), series)  # a Python float: weak
    near = select(far, 15.0, x)  # finite where unused (2x·erfcx(x) is inf·0 at x = inf)
    return select(far, asym, sub(mul(mul(near, 2.0), ans), _TWO_OVER_SQRT_PI))


defderiv(erfcx_p, _erfcx_slope, with_output=True)
def erfcx(x):
    """The scaled complementary error function exp(x**2) erfc(x), without overflow, as
    `scipy.special.erfcx`, elementwise with broadcasting; differentiable to any order in
    forward and reverse mode."""
    return erfcx_p.bind(x)


def _mills(x):
    """φ(x) / Φ(x). Below 0 as √(2/π) / erfcx(-x/√2): exp(log φ - log Φ) loses every digit
    far in the lower tail, where both logs are ~ -x²/2. Above 0 as exp(log φ - log Φ), which
    underflows to 0 cleanly where erfcx(-x/√2) overflows (inf/inf in the next derivative).
    Each branch sees a safe input where it is not used, so no NaN leaks into derivatives."""
    neg = lt(x, 0.0)
    xn, xp = select(neg, x, 0.0), select(neg, 0.0, x)
    lower = div(float(np.sqrt(2 / np.pi)), erfcx(mul(xn, float(-1 / np.sqrt(2)))))
    upper = mul(exp(sub(mul(mul(xp, xp), -0.5), log_ndtr(xp))), _INV_SQRT_2PI)
    return select(neg, lower, upper)


log_ndtr_p = elementwise("log_ndtr", sc.log_ndtr)
defderiv(log_ndtr_p, lambda x: _mills(x))
def log_ndtr(x):
    """log of the standard normal CDF, accurate far into the lower tail, as
    `scipy.special.log_ndtr`, elementwise with broadcasting; differentiable to any order in
    forward and reverse mode."""
    return log_ndtr_p.bind(x)


ndtri_p = elementwise("ndtri", sc.ndtri)  # the inverse of ndtr: dx/dp = 1 / φ(x)
defderiv(ndtri_p, lambda ans, p: mul(exp(mul(mul(ans, ans), 0.5)),
                                                         _SQRT_2PI), with_output=True)
def ndtri(p):
    """The standard normal quantile (the inverse of ndtr) at p, as `scipy.special.ndtri`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode."""
    return ndtri_p.bind(p)


erfinv_p = elementwise("erfinv", sc.erfinv)  # dx/dy = sqrt(pi)/2 exp(x²)
defderiv(erfinv_p, lambda ans, y: mul(exp(mul(ans, ans)), _SQRT_PI_OVER_2), with_output=True)
def erfinv(y):
    """The inverse of erf on (-1, 1), as `scipy.special.erfinv`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode."""
    return erfinv_p.bind(y)


erfcinv_p = elementwise("erfcinv", sc.erfcinv)  # x with erfc(x) = y: -sqrt(pi)/2 exp(x²)
defderiv(erfcinv_p, lambda ans, y: mul(exp(mul(ans, ans)), -_SQRT_PI_OVER_2), with_output=True)
def erfcinv(y):
    """The inverse of erfc on (0, 2), as `scipy.special.erfcinv`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode."""
    return erfcinv_p.bind(y)


gamma_p = elementwise("gamma", sc.gamma)  # Γ'(x) = Γ(x) ψ(x)
defderiv(gamma_p, lambda ans, x: mul(ans, digamma(x)), with_output=True)
def gamma(x):
    """The gamma function, as `scipy.special.gamma`, elementwise with broadcasting; differentiable
    to any order in forward and reverse mode (its derivative is gamma(x) digamma(x))."""
    return gamma_p.bind(x)


def _rgamma_slope(ans, x):
    """(1/Γ)' = -ψ(x)/Γ(x), whose factors have poles at 0, -1, ... where 1/Γ is smooth.
    Below 1/2, by the reflection 1/Γ(x) = sin(πx) Γ(1-x)/π: Γ(1-x)(cos(πx) - sin(πx)
    ψ(1-x)/π), finite there ((-1)^n n! at x = -n) and smooth, so every order is right. Each
    branch sees a safe input where it is not used."""
    low = lt(x, 0.5)
    xl, xh = select(low, x, 0.0), select(low, 1.0, x)
    pxl = mul(xl, float(np.pi))
    refl = mul(gamma(sub(1.0, xl)), sub(cos(pxl), mul(sin(pxl),
                                                      mul(digamma(sub(1.0, xl)), 1 / np.pi))))
    return select(low, refl, neg(mul(digamma(xh), ans)))


rgamma_p = elementwise("rgamma", sc.rgamma)  # 1/Γ(x): entire, 0 at 0, -1, -2, ...
defderiv(rgamma_p, _rgamma_slope, with_output=True)
def rgamma(x):
    """1 / Gamma(x), 0 at the poles, as `scipy.special.rgamma`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode."""
    return rgamma_p.bind(x)


entr_p = elementwise("entr", sc.entr)  # -x log x (0 at 0, -inf below)
defderiv(entr_p, lambda x: neg(add(log(x), 1.0)))
def entr(x):
    """-x log x for x > 0, 0 at 0 and -inf for x < 0 (the entropy summand), as
    `scipy.special.entr`, elementwise with broadcasting; differentiable to any order in forward
    and reverse mode for x > 0."""
    return entr_p.bind(x)


xlog1py_p = elementwise("xlog1py", sc.xlog1py)  # x*log1p(y), 0 where x == 0
defderiv(xlog1py_p, lambda needed, x, y: [  # as xlogy: d/dx = log1p(y) at x == 0 too
    log1p(y) if needed[0] else None, div(x, add(y, 1.0)) if needed[1] else None])
def xlog1py(x, y):
    """x log1p(y), 0 where x = 0, as `scipy.special.xlog1py`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode in x and y."""
    return xlog1py_p.bind(x, y)


__all__ = ["softplus", "logaddexp", "logaddexp2", "sinc", "erf", "erfc", "erfcx", "polygamma",
           "gammaln", "digamma", "logit", "xlogy", "ndtr", "log_ndtr", "ndtri", "erfinv",
           "gamma", "entr", "xlog1py", "erfcinv", "rgamma"]

"""The beta function and the incomplete gamma and beta functions, differentiable in every
argument, shape parameters included, to any order.

Values are SciPy's ufuncs. Derivatives in the integration variable are the integrands
(composites of gammaln/betaln/xlogy, differentiable to every order). Derivatives in shape
parameters are primitives of their own, `gammainc_da(a, x, order)` = ∂ᵃ^order P(a, x) and
`betainc_d(a, b, x, na, nb)` = ∂a^na ∂b^nb I_x(a, b), computed by running the series and
continued fractions on Taylor jets (fxad/rules/special/_shape_derivatives.py). Their JVPs close the
family: in a shape parameter, the same primitive one order higher; in x, the integrand's
shape-parameter derivatives, found by differentiating the integrand composite with nested
forward mode (`shape_partial`). So every mixed derivative of every order is available.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from ...interpreters.jvp import Zero, jvp_flat
from . import _shape_derivatives as num
from .. import ops
from ..helpers import elementwise
from ..helpers import defderiv, dtype_of, shape_of
from .basic import digamma, gammaln, xlog1py, xlogy


def float_like(out, *args):
    """A numerics result in the inputs' float dtype (float32 stays float32; ints and Python
    numbers give float64), a NumPy scalar for scalar inputs, as SciPy's ufuncs return."""
    dts = [np.asarray(a).dtype for a in args]
    dt = np.result_type(*dts)
    if dt.kind != "f":
        dt = np.dtype(np.float64)
    out = np.asarray(out).astype(dt, copy=False)
    return out[()] if out.ndim == 0 else out


def shape_partial(fn, args, orders):
    """∂^orders fn(*args): fn differentiated orders[i] times in argument i, by nested forward
    mode (jvp_flat with unit tangents). fn is a composite of primitives, so the result is
    itself differentiable by any outer transformation."""
    def d(f, i):
        def g(*a):
            ones = np.ones(shape_of(a[i]), dtype_of(a[i]))
            _, (t,) = jvp_flat(lambda v: [f(*a[:i], v, *a[i + 1:])], [a[i]], [ones],
                               name="shape_partial")
            return np.zeros(t.aval.shape, t.aval.dtype) if type(t) is Zero else t
        return g
    f = fn
    for i, n in enumerate(orders):
        for _ in range(n):
            f = d(f, i)
    return f(*args)


# --- the beta function -------------------------------------------------------------------------

def _digamma_diff(a, b):
    """ψ(a) - ψ(a + b)."""
    return ops.sub(digamma(a), digamma(ops.add(a, b)))


betaln_p = elementwise("betaln", sc.betaln)  # log|B(a, b)|
defderiv(betaln_p, lambda needed, a, b: [
    _digamma_diff(a, b) if needed[0] else None, _digamma_diff(b, a) if needed[1] else None])
def betaln(a, b):
    """log |B(a, b)|, without overflow, as `scipy.special.betaln`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode in a and b."""
    return betaln_p.bind(a, b)


beta_p = elementwise("beta", sc.beta)  # B(a, b); ∂a B = B (ψ(a) - ψ(a+b))
defderiv(beta_p, lambda needed, ans, a, b: [
    ops.mul(ans, _digamma_diff(a, b)) if needed[0] else None,
    ops.mul(ans, _digamma_diff(b, a)) if needed[1] else None], with_output=True)
def beta(a, b):
    """The beta function Gamma(a) Gamma(b) / Gamma(a + b), as `scipy.special.beta`, elementwise
    with broadcasting; differentiable to any order in forward and reverse mode in a and b."""
    return beta_p.bind(a, b)


# --- the regularized incomplete gamma functions ---------------------------------------------

def gamma_density(a, x):
    """∂P(a, x)/∂x = x^(a-1) e^(-x) / Γ(a)."""
    return ops.exp(ops.sub(ops.sub(xlogy(ops.sub(a, 1.0), x), x), gammaln(a)))


gammainc_da_p = elementwise(  # ∂^order P(a, x) / ∂a^order, order >= 1
    "gammainc_da", lambda a, x, order: float_like(num.gammainc_a_derivative(a, x, order), a, x))
defderiv(gammainc_da_p, lambda needed, a, x, order: [
    gammainc_da(a, x, order + 1) if needed[0] else None,
    shape_partial(gamma_density, (a, x), (order, 0)) if needed[1] else None])
def gammainc_da(a, x, order=1): return gammainc_da_p.bind(a, x, order=int(order))


gammainc_p = elementwise("gammainc", sc.gammainc)  # P(a, x)
defderiv(gammainc_p, lambda needed, a, x: [gammainc_da(a, x) if needed[0] else None,
                                            gamma_density(a, x) if needed[1] else None])
def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x), as `scipy.special.gammainc`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode in x
    and in the shape parameter a."""
    return gammainc_p.bind(a, x)


gammaincc_p = elementwise("gammaincc", sc.gammaincc)  # Q(a, x) = 1 - P(a, x)
defderiv(gammaincc_p, lambda needed, a, x: [ops.neg(gammainc_da(a, x)) if needed[0] else None,
                                             ops.neg(gamma_density(a, x)) if needed[1] else None])
def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), accurate in the
    upper tail, as `scipy.special.gammaincc`, elementwise with broadcasting; differentiable to
    any order in forward and reverse mode in a and x."""
    return gammaincc_p.bind(a, x)


# The inverses x(a, y) (y = P(a, x) or Q(a, x)), differentiated implicitly through the output:
# ∂x/∂y = ±1/density, ∂x/∂a = -∂P/∂a / density (both again differentiable).
gammaincinv_p = elementwise("gammaincinv", sc.gammaincinv)
defderiv(gammaincinv_p, lambda needed, ans, a, y: [
    ops.neg(ops.div(gammainc_da(a, ans), gamma_density(a, ans))) if needed[0] else None,
    ops.div(1.0, gamma_density(a, ans)) if needed[1] else None], with_output=True)
def gammaincinv(a, y):
    """The inverse of gammainc in x: the x with P(a, x) = y, as `scipy.special.gammaincinv`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode in a
    and y."""
    return gammaincinv_p.bind(a, y)


gammainccinv_p = elementwise("gammainccinv", sc.gammainccinv)
defderiv(gammainccinv_p, lambda needed, ans, a, y: [
    ops.neg(ops.div(gammainc_da(a, ans), gamma_density(a, ans))) if needed[0] else None,
    ops.neg(ops.div(1.0, gamma_density(a, ans))) if needed[1] else None], with_output=True)
def gammainccinv(a, y):
    """The inverse of gammaincc in x: the x with Q(a, x) = y, as `scipy.special.gammainccinv`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode in a
    and y."""
    return gammainccinv_p.bind(a, y)


# --- the regularized incomplete beta function --------------------------------------------------

def beta_density(a, b, x):
    """∂I_x(a, b)/∂x = x^(a-1) (1-x)^(b-1) / B(a, b)."""
    return ops.exp(ops.sub(ops.add(xlogy(ops.sub(a, 1.0), x), xlog1py(ops.sub(b, 1.0),
                                                                        ops.neg(x))),
                           betaln(a, b)))


betainc_d_p = elementwise(  # ∂a^na ∂b^nb I_x(a, b), na + nb >= 1
    "betainc_d", lambda a, b, x, na, nb: float_like(num.betainc_derivative(a, b, x, na, nb),
                                                    a, b, x))
defderiv(betainc_d_p, lambda needed, a, b, x, na, nb: [
    betainc_d(a, b, x, na + 1, nb) if needed[0] else None,
    betainc_d(a, b, x, na, nb + 1) if needed[1] else None,
    shape_partial(beta_density, (a, b, x), (na, nb, 0)) if needed[2] else None])
def betainc_d(a, b, x, na, nb): return betainc_d_p.bind(a, b, x, na=int(na), nb=int(nb))


betainc_p = elementwise("betainc", sc.betainc)  # I_x(a, b)
defderiv(betainc_p, lambda needed, a, b, x: [
    betainc_d(a, b, x, 1, 0) if needed[0] else None,
    betainc_d(a, b, x, 0, 1) if needed[1] else None,
    beta_density(a, b, x) if needed[2] else None])
def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b), as `scipy.special.betainc`, elementwise
    with broadcasting; differentiable to any order in forward and reverse mode in x and in the
    shape parameters a and b (by Taylor jets of the continued fraction;
    notes/09_scipy_stats_special.md)."""
    return betainc_p.bind(a, b, x)


betaincinv_p = elementwise("betaincinv", sc.betaincinv)  # x with I_x(a, b) = y
defderiv(betaincinv_p, lambda needed, ans, a, b, y: [
    ops.neg(ops.div(betainc_d(a, b, ans, 1, 0), beta_density(a, b, ans))) if needed[0] else None,
    ops.neg(ops.div(betainc_d(a, b, ans, 0, 1), beta_density(a, b, ans))) if needed[1] else None,
    ops.div(1.0, beta_density(a, b, ans)) if needed[2] else None], with_output=True)
def betaincinv(a, b, y):
    """The inverse of betainc in x: the x with I_x(a, b) = y, as `scipy.special.betaincinv`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode in
    a, b and y (implicit differentiation)."""
    return betaincinv_p.bind(a, b, y)


# --- Student's t distribution function (the t CDF in its degrees of freedom) -----------------

def t_density(df, t):
    """The t density: Γ((df+1)/2) / (Γ(df/2) √(df π)) (1 + t²/df)^(-(df+1)/2)."""
    half = ops.mul(df, 0.5)
    logc = ops.sub(ops.sub(gammaln(ops.add(half, 0.5)), gammaln(half)),
                   ops.mul(ops.log(ops.mul(df, np.pi)), 0.5))
    return ops.exp(ops.sub(logc, ops.mul(ops.add(half, 0.5),
                                         ops.log1p(ops.div(ops.mul(t, t), df)))))


stdtr_ddf_p = elementwise(  # ∂^order F(df, t) / ∂df^order, order >= 1
    "stdtr_ddf", lambda df, t, order: float_like(num.stdtr_df_derivative(df, t, order), df, t))
defderiv(stdtr_ddf_p, lambda needed, df, t, order: [
    stdtr_ddf(df, t, order + 1) if needed[0] else None,
    shape_partial(t_density, (df, t), (order, 0)) if needed[1] else None])
def stdtr_ddf(df, t, order=1): return stdtr_ddf_p.bind(df, t, order=int(order))


stdtr_p = elementwise("stdtr", sc.stdtr)  # Student's t CDF with df degrees of freedom
defderiv(stdtr_p, lambda needed, df, t: [stdtr_ddf(df, t) if needed[0] else None,
                                         t_density(df, t) if needed[1] else None])
def stdtr(df, t):
    """The CDF of Student's t distribution with df degrees of freedom at t, as
    `scipy.special.stdtr`, elementwise with broadcasting; differentiable to any order in
    forward and reverse mode in df and t."""
    return stdtr_p.bind(df, t)


stdtrit_p = elementwise("stdtrit", sc.stdtrit)  # its inverse in t
defderiv(stdtrit_p, lambda needed, ans, df, p: [
    ops.neg(ops.div(stdtr_ddf(df, ans), t_density(df, ans))) if needed[0] else None,
    ops.div(1.0, t_density(df, ans)) if needed[1] else None], with_output=True)
def stdtrit(df, p):
    """The quantile of Student's t distribution with df degrees of freedom at the probability p,
    as `scipy.special.stdtrit`, elementwise with broadcasting; differentiable to any order in
    forward and reverse mode in df and p."""
    return stdtrit_p.bind(df, p)


# --- the generalized normal distribution function (CDF and quantile in its shape β) -------------

_LOG_2 = float(np.log(2.0))


def gennorm_density(z, p):
    """β / (2 Γ(1/β)) e^(-|z|^β)."""
    return ops.exp(ops.sub(ops.sub(ops.sub(ops.log(p), _LOG_2), gammaln(ops.div(1.0, p))),
                           ops.pow(ops.abs(z), p)))


def _gennorm_cdf_impl(z, p):  # SciPy's formula, on SciPy's gammaincc: 1/2 ± Q(1/β, |z|^β)/2
    with np.errstate(invalid="ignore", divide="ignore"):
        c = 0.5 * np.sign(z)
        return (0.5 + c) - c * sc.gammaincc(1.0 / p, np.abs(z) ** p)


def _gennorm_ppf_impl(q, p):  # the tail on its own side: |z|^β = Q⁻¹(1/β, 2 min(q, 1 - q))
    with np.errstate(invalid="ignore", divide="ignore"):
        tail = np.minimum(q, 1.0 - q) * 2.0
        return np.sign(q - 0.5) * sc.gammainccinv(1.0 / p, tail) ** (1.0 / p)


gennorm_cdf_dbeta_p = elementwise(  # ∂^order F(z; β) / ∂β^order, order >= 1
    "gennorm_cdf_dbeta", lambda z, p, order: float_like(
        num.gennorm_cdf_beta_derivative(z, p, order), z, p))
defderiv(gennorm_cdf_dbeta_p, lambda needed, z, p, order: [
    shape_partial(gennorm_density, (z, p), (0, order)) if needed[0] else None,
    gennorm_cdf_dbeta(z, p, order + 1) if needed[1] else None])
def gennorm_cdf_dbeta(z, p, order=1): return gennorm_cdf_dbeta_p.bind(z, p, order=int(order))


gennorm_cdf_p = elementwise("gennorm_cdf", _gennorm_cdf_impl)
defderiv(gennorm_cdf_p, lambda needed, z, p: [gennorm_density(z, p) if needed[0] else None,
                                              gennorm_cdf_dbeta(z, p) if needed[1] else None])
def gennorm_cdf(z, p): return gennorm_cdf_p.bind(z, p)


gennorm_ppf_p = elementwise("gennorm_ppf", _gennorm_ppf_impl)
defderiv(gennorm_ppf_p, lambda needed, ans, q, p: [
    ops.div(1.0, gennorm_density(ans, p)) if needed[0] else None,
    ops.neg(ops.div(gennorm_cdf_dbeta(ans, p), gennorm_density(ans, p))) if needed[1] else None],
    with_output=True)
def gennorm_ppf(q, p): return gennorm_ppf_p.bind(q, p)


__all__ = ["gennorm_cdf", "gennorm_cdf_dbeta", "gennorm_ppf", "gennorm_density", "beta", "betaln",
           "gammainc", "gammaincc", "gammainc_da", "gammaincinv", "gammainccinv", "betainc",
           "betainc_d", "betaincinv", "stdtr", "stdtr_ddf", "stdtrit", "gamma_density",
           "beta_density", "t_density", "shape_partial", "float_like"]

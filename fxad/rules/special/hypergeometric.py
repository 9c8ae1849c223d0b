"""Zeta, exprel and Box-Cox, hypergeometric functions and spherical harmonics.

- ζ(s, q): ∂q ζ = -s ζ(s+1, q); ∂s^n ζ is the primitive `zeta_ds` (Euler-Maclaurin on jets,
  fxad/rules/special/_shape_derivatives.py), whose own q-derivative is the Leibniz rule of the above.
- exprel(u) = (e^u - 1)/u and its derivatives ∫_0^1 t^n e^(ut) dt (`exprel_d`): Box-Cox's
  derivative in λ is L² exprel'(λ L), with no 0/0 at λ = 0.
- hyp1f1, hyp2f1: derivatives in x only (the contiguous relations); in a, b, c a clear error.
- sph_harm_y: ∂φ Y = i m Y, and ∂θ from the ladder operators,
  ∂θ Y_n^m = (c₊ e^(-iφ) Y_n^(m+1) - c₋ e^(iφ) Y_n^(m-1)) / 2, regular at the poles
  (unlike the m cot θ form).
"""
from __future__ import annotations

import scipy.special as sc

from ...errors import FxadValueError
from .. import ops
from . import _shape_derivatives as num
from ..helpers import elementwise
from ..helpers import defderiv
from .incomplete import float_like


def _no_derivative(name, arg):
    raise FxadValueError(
        f"{name}: the derivative with respect to {arg} is not implemented (only the one in "
        "the last argument x); wrap the parameter in fxad.lax.stop_gradient, or supply the "
        "derivative with fxad.custom_jvp")


# --- Hurwitz zeta ------------------------------------------------------------------------------

zeta_ds_p = elementwise(  # ∂^order ζ(s, q) / ∂s^order, order >= 1
    "zeta_ds", lambda s, q, order: float_like(num.zeta_s_derivative(s, q, order), s, q))


def _zeta_ds_dq(s, q, n):
    """∂q ∂s^n ζ(s, q) = ∂s^n (-s ζ(s+1, q)) = -(s ζ^(n)(s+1, q) + n ζ^(n-1)(s+1, q))."""
    s1 = ops.add(s, 1.0)
    lower = zeta(s1, q) if n == 1 else zeta_ds(s1, q, n - 1)
    return ops.neg(ops.add(ops.mul(s, zeta_ds(s1, q, n)), ops.mul(float(n), lower)))


defderiv(zeta_ds_p, lambda needed, s, q, order: [
    zeta_ds(s, q, order + 1) if needed[0] else None,
    _zeta_ds_dq(s, q, order) if needed[1] else None])
def zeta_ds(s, q, order=1): return zeta_ds_p.bind(s, q, order=int(order))


zeta_p = elementwise("zeta", sc.zeta)  # Hurwitz ζ(s, q) = Σ (n + q)^-s
defderiv(zeta_p, lambda needed, s, q: [
    zeta_ds(s, q, 1) if needed[0] else None,
    ops.neg(ops.mul(s, zeta(ops.add(s, 1.0), q))) if needed[1] else None])
def zeta(s, q): return zeta_p.bind(s, q)


riemann_zeta_p = elementwise("riemann_zeta", lambda s: sc.zeta(s))  # ζ(s), every real s
defderiv(riemann_zeta_p, lambda s: zeta_ds(s, 1.0, 1))  # (the derivative needs s > 1: NaN below)
def riemann_zeta(s): return riemann_zeta_p.bind(s)


# --- exprel and Box-Cox ------------------------------------------------------------------------

exprel_d_p = elementwise(  # d^n/du^n (e^u - 1)/u; n = 0 is SciPy's exprel (its dtypes too)
    "exprel_d", lambda u, n: sc.exprel(u) if n == 0 else
    float_like(num.exprel_derivative(u, n), u))
defderiv(exprel_d_p, lambda u, n: exprel_d(u, n + 1))
def exprel_d(u, n=0): return exprel_d_p.bind(u, n=int(n))


def _boxcox_deriv(log_fn):
    """boxcox(x, λ) = L exprel(λ L), L = log x (log1p x for boxcox1p): ∂x = e^((λ-1) L) L',
    ∂λ = L² exprel'(λ L)."""
    def deriv(needed, x, lmbda):
        L = log_fn(x)
        dx = None
        if needed[0]:
            base = x if log_fn is ops.log else ops.add(x, 1.0)
            dx = ops.div(ops.exp(ops.mul(lmbda, L)), base)
        dl = ops.mul(ops.mul(L, L), exprel_d(ops.mul(lmbda, L), 1)) if needed[1] else None
        return [dx, dl]
    return deriv


boxcox_p = elementwise("boxcox", sc.boxcox)
defderiv(boxcox_p, _boxcox_deriv(ops.log))
def boxcox(x, lmbda):
    """The Box-Cox transform (x**lmbda - 1) / lmbda (log x at lmbda = 0), as
    `scipy.special.boxcox`, elementwise with broadcasting; differentiable to any order in
    forward and reverse mode in x and lmbda."""
    return boxcox_p.bind(x, lmbda)


boxcox1p_p = elementwise("boxcox1p", sc.boxcox1p)
defderiv(boxcox1p_p, _boxcox_deriv(ops.log1p))
def boxcox1p(x, lmbda):
    """boxcox(1 + x, lmbda), accurate for small x, as `scipy.special.boxcox1p`, elementwise with
    broadcasting; differentiable to any order in forward and reverse mode in x and lmbda."""
    return boxcox1p_p.bind(x, lmbda)


# --- hypergeometric functions ------------------------------------------------------------------

hyp1f1_p = elementwise("hyp1f1", sc.hyp1f1)  # d/dx 1F1(a; b; x) = a/b 1F1(a+1; b+1; x)
defderiv(hyp1f1_p, lambda needed, a, b, x: [
    _no_derivative("hyp1f1", "a") if needed[0] else None,
    _no_derivative("hyp1f1", "b") if needed[1] else None,
    ops.mul(ops.div(a, b), hyp1f1(ops.add(a, 1.0), ops.add(b, 1.0), x)) if needed[2] else None])
def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x), as `scipy.special.hyp1f1`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode in x
    (not in a or b)."""
    return hyp1f1_p.bind(a, b, x)


hyp2f1_p = elementwise("hyp2f1", sc.hyp2f1)  # d/dx 2F1(a, b; c; x) = ab/c 2F1(a+1, b+1; c+1; x)
defderiv(hyp2f1_p, lambda needed, a, b, c, x: [
    _no_derivative("hyp2f1", "a") if needed[0] else None,
    _no_derivative("hyp2f1", "b") if needed[1] else None,
    _no_derivative("hyp2f1", "c") if needed[2] else None,
    ops.mul(ops.div(ops.mul(a, b), c), hyp2f1(ops.add(a, 1.0), ops.add(b, 1.0),
                                              ops.add(c, 1.0), x)) if needed[3] else None])
def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x), as `scipy.special.hyp2f1`, elementwise
    with broadcasting; differentiable to any order in forward and reverse mode in x (not in a,
    b or c)."""
    return hyp2f1_p.bind(a, b, c, x)


# --- spherical harmonics -----------------------------------------------------------------------

def _sph_harm_y_impl(n, m, theta, phi):
    """SciPy's sph_harm_y (SciPy >= 1.15), or the older sph_harm(m, n, azimuth, polar)."""
    f = getattr(sc, "sph_harm_y", None)
    if f is not None:
        return f(n, m, theta, phi)
    return sc.sph_harm(m, n, phi, theta)


def _sph_harm_y_dtheta(n, m, theta, phi):
    # (clamped at 0: past |m| = n the coefficient is 0, and Y there is 0 too)
    up = ops.sqrt(ops.max(ops.mul(ops.sub(n, m), ops.add(ops.add(n, m), 1)), 0))
    down = ops.sqrt(ops.max(ops.mul(ops.add(n, m), ops.add(ops.sub(n, m), 1)), 0))
    hi = ops.mul(ops.mul(up, ops.exp(ops.mul(phi, -1j))), sph_harm_y(n, ops.add(m, 1), theta, phi))
    lo = ops.mul(ops.mul(down, ops.exp(ops.mul(phi, 1j))), sph_harm_y(n, ops.sub(m, 1), theta, phi))
    return ops.mul(ops.sub(hi, lo), 0.5)


sph_harm_y_p = elementwise("sph_harm_y", _sph_harm_y_impl)  # n, m integer operands
defderiv(sph_harm_y_p, lambda needed, ans, n, m, theta, phi: [
    None, None, _sph_harm_y_dtheta(n, m, theta, phi) if needed[2] else None,
    ops.mul(ans, ops.mul(m, 1j)) if needed[3] else None], with_output=True)
def sph_harm_y(n, m, theta, phi): return sph_harm_y_p.bind(n, m, theta, phi)


__all__ = ["zeta", "zeta_ds", "riemann_zeta", "exprel_d", "boxcox", "boxcox1p", "hyp1f1",
           "hyp2f1", "sph_harm_y"]

"""Special functions under JAX's lax names (erf_inv, lgamma, ...), on the primitives of
fxad/rules/special/."""
from __future__ import annotations

from ..rules.random import gamma_grad as _gamma_grad
from ..rules.special import basic as _special, bessel as _bessel, hypergeometric as _hyper
from ..rules.special import incomplete as _incomplete


def erf(x):
    """The error function, elementwise, with NumPy broadcasting; differentiable to any order in
    forward and reverse mode."""
    return _special.erf(x)


def erfc(x):
    """1 - erf(x), accurate in the upper tail, elementwise, with NumPy broadcasting;
    differentiable to any order in forward and reverse mode."""
    return _special.erfc(x)


def erf_inv(x):
    """The inverse of erf on (-1, 1), elementwise, with NumPy broadcasting; differentiable to any
    order in forward and reverse mode."""
    return _special.erfinv(x)


def lgamma(x):
    """log |Gamma(x)|, elementwise, with NumPy broadcasting; differentiable to any order in
    forward and reverse mode (its derivative is digamma)."""
    return _special.gammaln(x)


def digamma(x):
    """The digamma function, the derivative of lgamma, elementwise, with NumPy broadcasting;
    differentiable to any order in forward and reverse mode."""
    return _special.digamma(x)


def polygamma(m, x):
    """JAX's argument order (the order m first); m must be a concrete integer."""
    return _special.polygamma(x, int(m))


def bessel_i0e(x):
    """exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0 (no
    overflow for large |x|), elementwise; differentiable to any order in forward and reverse
    mode."""
    return _bessel.bessel_ie(x, 0)


def bessel_i1e(x):
    """exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1,
    elementwise; differentiable to any order in forward and reverse mode."""
    return _bessel.bessel_ie(x, 1)


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x) (SciPy's `gammainc`),
    elementwise with NumPy broadcasting; differentiable to any order in a and x, in forward
    and reverse mode."""
    return _incomplete.gammainc(a, x)


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (SciPy's
    `gammaincc`), accurate where P is near 1; differentiable to any order in a and x."""
    return _incomplete.gammaincc(a, x)


def igamma_grad_a(a, x):
    """dP(a, x)/da, the derivative of `igamma` in its first argument, elementwise with NumPy
    broadcasting; itself differentiable to any order in a and x."""
    return _incomplete.gammainc_da(a, x, 1)


def random_gamma_grad(a, x):
    """d sample / d a of a Gamma(a, 1) sample x held at its quantile (the implicit
    reparameterization derivative: -(dP(a, x)/da) / (dP(a, x)/dx)), elementwise; what
    `fxad.random.gamma` differentiates with. Differentiable to any order."""
    return _gamma_grad.random_gamma_grad(a, x)


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b), elementwise with NumPy broadcasting;
    differentiable to any order in a, b and x, in forward and reverse mode."""
    return _incomplete.betainc(a, b, x)


def zeta(x, q):
    """The Hurwitz zeta function sum over n >= 0 of (n + q)^-x (Riemann's at q = 1),
    elementwise with NumPy broadcasting; differentiable to any order in x and q."""
    return _hyper.zeta(x, q)


__all__ = ["erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma", "bessel_i0e",
           "bessel_i1e", "igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "betainc",
           "zeta"]

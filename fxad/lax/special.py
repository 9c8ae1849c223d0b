"""Special functions under JAX's lax names (erf_inv, lgamma, ...), on the primitives of
fxad/rules/special/."""
from __future__ import annotations

from ..rules.special import basic as _special


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


__all__ = ["erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma"]

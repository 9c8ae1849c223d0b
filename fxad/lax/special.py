"""Special functions under JAX's lax names (erf_inv, lgamma, ...), on the primitives of
fxad/rules/special/."""
from __future__ import annotations

from ..rules.special import basic as _special


def erf(x):
    return _special.erf(x)


def erfc(x):
    return _special.erfc(x)


def erf_inv(x):
    return _special.erfinv(x)


def lgamma(x):
    return _special.gammaln(x)


def digamma(x):
    return _special.digamma(x)


def polygamma(m, x):
    """JAX's argument order (the order m first); m must be a concrete integer."""
    return _special.polygamma(x, int(m))


__all__ = ["erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma"]

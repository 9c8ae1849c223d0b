"""scipy.special's names and signatures, differentiable."""
import numpy as np

from ..errors import FxadValueError
from ..lax import logistic as expit  # noqa: F401
from ..nn import _logsumexp
from ..rules.special import (  # noqa: F401
    digamma, entr, erf, erfc, erfcx, erfinv, gamma, gammaln, log_ndtr, logit, ndtr, ndtri,
    polygamma as _polygamma, xlog1py, xlogy)


def polygamma(n, x):
    """The n-th derivative of digamma at x: SciPy's argument order (n first), n a concrete
    integer (it is a parameter of the primitive)."""
    if np.ndim(n) or int(n) != n:
        raise FxadValueError(f"polygamma: the order n must be one integer, got {n!r}")
    return _polygamma(x, int(n))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b · exp(a))) over `axis`, SciPy's signature. -inf for a slice of -inf (an
    empty sum), whose gradient is 0 (JAX's is NaN there; notes/07_differences.md)."""
    return _logsumexp(a, axis, b, keepdims, return_sign)

"""scipy.special's names and signatures, differentiable."""
import numpy as np

from ..errors import FxadValueError
from ..lax import logistic as expit  # noqa: F401
from ..rules.special.basic import (  # noqa: F401
    digamma, entr, erf, erfc, erfcx, erfinv, gamma, gammaln, log_ndtr, logit, ndtr, ndtri,
    polygamma as _polygamma, xlog1py, xlogy)


def polygamma(n, x):
    """The n-th derivative of digamma at x: SciPy's argument order (n first), n a concrete
    integer (it is a parameter of the primitive)."""
    if np.ndim(n) or int(n) != n:
        raise FxadValueError(f"polygamma: the order n must be one integer, got {n!r}")
    return _polygamma(x, int(n))


# issue 18: the rest of jax.scipy.special (fxad/scipy/_special_extra.py), and logsumexp with
# SciPy's b= and return_sign= (fxad/scipy/_logsumexp.py).
from ._special_extra import *  # noqa: F401,F403,E402
from ._logsumexp import log_softmax, logsumexp, softmax  # noqa: F401,E402

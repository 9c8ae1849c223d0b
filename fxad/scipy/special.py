"""scipy.special's names, differentiable."""
from ..lax import logistic as expit  # noqa: F401
from ..rules.special import (  # noqa: F401
    digamma, entr, erf, erfc, erfinv, gamma, gammaln, log_ndtr, logit, ndtr, ndtri, polygamma,
    xlog1py, xlogy)

# issue 18: the rest of jax.scipy.special (fxad/scipy/_special_extra.py), and logsumexp with
# SciPy's b= and return_sign= (fxad/scipy/_logsumexp.py).
from ._special_extra import *  # noqa: F401,F403,E402
from ._logsumexp import log_softmax, logsumexp, softmax  # noqa: F401,F811,E402

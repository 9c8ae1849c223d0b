"""scipy.special's names, differentiable."""
from ..lax import logistic as expit  # noqa: F401
from ..nn import logsumexp  # noqa: F401
from ..rules.special import (  # noqa: F401
    digamma, entr, erf, erfc, erfinv, gamma, gammaln, log_ndtr, logit, ndtr, ndtri, polygamma,
    xlog1py, xlogy)

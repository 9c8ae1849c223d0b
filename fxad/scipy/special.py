"""scipy.special's names, differentiable."""
from ..lax import logistic as expit  # noqa: F401
from ..nn import logsumexp  # noqa: F401
from ..rules.special import digamma, erf, erfc, gammaln, logit, polygamma, xlogy  # noqa: F401

"""scipy.stats.betabinom: the beta-binomial distribution, differentiable in the value and every
parameter, with SciPy's signatures: `betabinom.logpmf(k, ...)`, or frozen,
`betabinom(...).logpmf(k)`."""
from ._common import publish
from ._discrete import betabinom as _d

logpmf, pmf = _d.logpmf, _d.pmf

publish(__name__, _d)

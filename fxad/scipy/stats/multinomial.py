"""scipy.stats.multinomial: the multinomial distribution, differentiable in the value and every
parameter, with SciPy's signatures: `multinomial.logpmf(k, ...)`, or frozen,
`multinomial(...).logpmf(k)`."""
from ._common import publish
from ._multivariate import multinomial as _d

logpmf, pmf = _d.logpmf, _d.pmf

publish(__name__, _d)

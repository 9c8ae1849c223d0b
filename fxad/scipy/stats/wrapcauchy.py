"""scipy.stats.wrapcauchy: the wrapped Cauchy distribution, differentiable in the value and every
parameter, with SciPy's signatures: `wrapcauchy.logpdf(x, ...)`, or frozen,
`wrapcauchy(...).logpdf(x)`."""
from ._common import publish
from ._shapes import wrapcauchy as _d

logpdf, pdf = _d.logpdf, _d.pdf

publish(__name__, _d)

"""scipy.stats.multivariate_normal: the multivariate normal distribution, differentiable in the
value and every parameter, with SciPy's signatures: `multivariate_normal.logpdf(x, mean, cov)`,
`multivariate_normal.entropy(mean, cov)`, or frozen, `multivariate_normal(...).logpdf(x)`."""
from ._common import publish
from ._multivariate import multivariate_normal as _d

logpdf, pdf, entropy = _d.logpdf, _d.pdf, _d.entropy

publish(__name__, _d)

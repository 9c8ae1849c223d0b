"""scipy.stats.dirichlet: the Dirichlet distribution, differentiable in the value and every
parameter, with SciPy's signatures: `dirichlet.logpdf(x, ...)`, or frozen,
`dirichlet(...).logpdf(x)`."""
from ._common import publish
from ._multivariate import dirichlet as _d

logpdf, pdf = _d.logpdf, _d.pdf

publish(__name__, _d)

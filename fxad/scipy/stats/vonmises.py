"""scipy.stats.vonmises: the von Mises distribution, differentiable in the value and every
parameter, with SciPy's signatures: `vonmises.logpdf(x, ...)`, or frozen,
`vonmises(...).logpdf(x)`."""
from ._common import publish
from ._shapes import vonmises as _d

logpdf, pdf = _d.logpdf, _d.pdf

publish(__name__, _d)

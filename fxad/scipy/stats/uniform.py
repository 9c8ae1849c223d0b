"""scipy.stats.uniform: the uniform distribution on [loc, loc + scale], differentiable in the
value and every parameter, with SciPy's signatures: `uniform.logpdf(x, ...)`, or frozen,
`uniform(...).logpdf(x)`."""
from ._common import publish
from ._continuous import uniform as _d

(cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf) = (
    _d.cdf, _d.isf, _d.logcdf, _d.logpdf, _d.logsf, _d.pdf, _d.ppf, _d.sf)

publish(__name__, _d)

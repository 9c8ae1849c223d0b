"""scipy.stats.logistic: the logistic distribution, differentiable in the value and every
parameter, with SciPy's signatures: `logistic.logpdf(x, ...)`, or frozen,
`logistic(...).logpdf(x)`."""
from ._common import publish
from ._continuous import logistic as _d

(cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf) = (
    _d.cdf, _d.isf, _d.logcdf, _d.logpdf, _d.logsf, _d.pdf, _d.ppf, _d.sf)

publish(__name__, _d)

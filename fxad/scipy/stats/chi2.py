"""scipy.stats.chi2: the chi-squared distribution, differentiable in the value and every
parameter, with SciPy's signatures: `chi2.logpdf(x, ...)`, or frozen, `chi2(...).logpdf(x)`."""
from ._common import publish
from ._shapes import chi2 as _d

(cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf) = (
    _d.cdf, _d.isf, _d.logcdf, _d.logpdf, _d.logsf, _d.pdf, _d.ppf, _d.sf)

publish(__name__, _d)

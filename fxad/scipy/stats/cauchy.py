"""scipy.stats.cauchy: the Cauchy distribution, differentiable in the value and every parameter,
with SciPy's signatures: `cauchy.logpdf(x, ...)`, or frozen, `cauchy(...).logpdf(x)`."""
from ._common import publish
from ._continuous import cauchy as _d

(cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf) = (
    _d.cdf, _d.isf, _d.logcdf, _d.logpdf, _d.logsf, _d.pdf, _d.ppf, _d.sf)

publish(__name__, _d)

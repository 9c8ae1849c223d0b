"""scipy.stats.laplace: the Laplace distribution, differentiable in the value and every parameter,
with SciPy's signatures: `laplace.logpdf(x, ...)`, or frozen, `laplace(...).logpdf(x)`."""
from ._common import publish
from ._continuous import laplace as _d

(cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf) = (
    _d.cdf, _d.isf, _d.logcdf, _d.logpdf, _d.logsf, _d.pdf, _d.ppf, _d.sf)

publish(__name__, _d)

"""scipy.stats.pareto: the Pareto distribution, differentiable in the value and every parameter,
with SciPy's signatures: `pareto.logpdf(x, ...)`, or frozen, `pareto(...).logpdf(x)`."""
from ._common import publish
from ._continuous import pareto as _d

(cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf) = (
    _d.cdf, _d.isf, _d.logcdf, _d.logpdf, _d.logsf, _d.pdf, _d.ppf, _d.sf)

publish(__name__, _d)

"""scipy.stats.norm: the normal distribution, differentiable in the value and every parameter,
with SciPy's signatures: `norm.logpdf(x, loc, scale)`, or frozen, `norm(...).logpdf(x)`."""
from ._common import publish
from ._continuous import norm as _d

(cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf) = (
    _d.cdf, _d.isf, _d.logcdf, _d.logpdf, _d.logsf, _d.pdf, _d.ppf, _d.sf)

publish(__name__, _d)

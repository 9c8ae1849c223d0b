"""scipy.stats.gumbel_l: the left-skewed Gumbel distribution, differentiable in the value and
every parameter, with SciPy's signatures: `gumbel_l.logpdf(x, ...)`, or frozen,
`gumbel_l(...).logpdf(x)`."""
from ._common import publish
from ._continuous import gumbel_l as _d

(cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf) = (
    _d.cdf, _d.isf, _d.logcdf, _d.logpdf, _d.logsf, _d.pdf, _d.ppf, _d.sf)

publish(__name__, _d)

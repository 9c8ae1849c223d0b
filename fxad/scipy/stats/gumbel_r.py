"""scipy.stats.gumbel_r: the right-skewed Gumbel distribution, differentiable in the value and
every parameter, with SciPy's signatures: `gumbel_r.logpdf(x, ...)`, or frozen,
`gumbel_r(...).logpdf(x)`."""
from ._common import publish
from ._continuous import gumbel_r as _d

(cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf) = (
    _d.cdf, _d.isf, _d.logcdf, _d.logpdf, _d.logsf, _d.pdf, _d.ppf, _d.sf)

publish(__name__, _d)

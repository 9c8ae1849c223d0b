"""scipy.stats.geom: the geometric distribution, differentiable in the value and every parameter,
with SciPy's signatures: `geom.logpmf(k, ...)`, or frozen, `geom(...).logpmf(k)`."""
from ._common import publish
from ._discrete import geom as _d

(cdf, logcdf, logpmf, logsf, pmf, ppf, sf) = (
    _d.cdf, _d.logcdf, _d.logpmf, _d.logsf, _d.pmf, _d.ppf, _d.sf)

publish(__name__, _d)

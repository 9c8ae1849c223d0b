"""Rule table: fxad.numpy.statistics (order statistics, NaN-ignoring reductions, covariances):
values against NumPy, derivatives to second order in both modes, vmap against a loop."""
import numpy as np
import pytest

import fxad.numpy as fnp

from ..rules.common import M, MASK, NANS, V7, check_values_match_numpy, grid, Row, row_tests


_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")

# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("quantile", lambda m, x, **k: m.quantile(x, [0.1, 0.5, 0.93], **k), [(M,)],
     [{}, {"axis": 1}, {"axis": (0, 2)}, {"axis": 1, "keepdims": True}, {"method": "lower"},
      {"method": "higher"}, {"method": "nearest", "axis": 0}, {"method": "midpoint"}]),
    ("quantile-nan", lambda m, x: m.quantile(x, 0.3, axis=1), [(NANS,)], [{}]),
    # levels at whole positions q (n - 1): midpoint is the order statistic itself there
    ("quantile-whole-positions", lambda m, x, **k: [
        m.quantile(x, [0.0, 0.25, 0.3, 0.5, 1.0], axis=-1, **k),
        m.percentile(x, [0.0, 50.0, 62.5, 100.0], axis=-1, **k)],
     [(M[..., :5],), (M[0, :3, :3],)], [{"method": mt} for mt in _METHODS]),
    # lower / higher / nearest of integers and booleans are order statistics in their dtype
    ("quantile-integers", lambda m, x, **k: [
        m.quantile(y, [0.3, 0.5, 1.0], axis=1, **k) for y in (
            x, x.astype(np.int8), x * 2**58 + 1)],
     [(np.array([[1, 5, -3, 2], [4, 0, 2, 7], [9, 9, 8, 1]]),)],
     [{"method": mt} for mt in _METHODS]),
    ("quantile-booleans", lambda m, x, **k: m.quantile(x > 4, [0.3, 0.5, 1.0], axis=1, **k),
     [(np.array([[1, 5, -3, 2], [4, 0, 2, 7], [9, 9, 8, 1]]),)],
     [{"method": mt} for mt in ("lower", "higher", "nearest")]),
    ("median", lambda m, x, **k: m.median(x, **k), [(M,), (V7,), (M.astype(np.float32),)],
     [{}, {"axis": -1}, {"axis": 0, "keepdims": True}]),
    ("percentile", lambda m, x, **k: m.percentile(x, 37.5, **k), [(M,)], [{}, {"axis": 2}]),
    ("cov", lambda m, x, **k: m.cov(x, **k), [(M[0],)],
     [{}, {"rowvar": False}, {"bias": True}, {"ddof": 0}, {"aweights": np.arange(1, 6.0)},
      {"fweights": np.arange(1, 6)}, {"y": M[1]}]),
    ("cov-1d", lambda m, x: m.cov(x), [(V7,)], [{}]),
    ("corrcoef", lambda m, x, **k: m.corrcoef(x, **k), [(M[0],)], [{}, {"rowvar": False}]),
    ("nan-reductions", lambda m, x: [m.nanmax(x, 1), m.nanmin(x), m.nanprod(x, 0),
                                     m.nanvar(x, 1), m.nanstd(x, ddof=1), m.nanargmax(x, 1),
                                     m.nanargmin(x, 0), m.ptp(M, 0)], [(NANS,)], [{}]),
    ("nan-quantiles", lambda m, x, **k: [m.nanquantile(x, [0.2, 0.7], **k),
                                         m.nanmedian(x, **k), m.nanpercentile(x, 35.0, **k)],
     [(NANS,), (np.where(M > 0.5, np.nan, M),)], [{}, {"axis": 1}, {"axis": 0, "keepdims": True}]),
    ("nan-quantiles-all-nan", lambda m, x: m.nanmedian(x, axis=1),
     [(np.array([[np.nan, np.nan], [1.0, np.nan]]),)], [{}]),
    ("nancumsum", lambda m, x: [m.nancumsum(x, 1), m.nancumprod(x)], [(NANS,)], [{}]),
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


TABLE = [
    Row("median", lambda x: fnp.median(x, axis=1) ** 2, [(2, 5)], grid(-2, 2), unique=True),
    Row("quantile", lambda x: fnp.quantile(x, [0.2, 0.75], axis=0), [(5, 2)], grid(-2, 2), unique=True),
    Row("percentile-nearest", lambda x: fnp.percentile(x, 40, method="nearest") * x, [(4,)],
        grid(-2, 2), unique=True),
    Row("nanmax-nanmin", lambda x: fnp.nanmax(fnp.where(MASK, np.nan, x), axis=1)
     * fnp.nanmin(fnp.where(MASK, np.nan, x)), [(2, 3)], grid(-2, 2), unique=True),
    Row("nanvar-nanstd", lambda x: fnp.nanvar(fnp.where(MASK, np.nan, x), axis=1)
     + fnp.nanstd(fnp.where(MASK, np.nan, x), ddof=1), [(2, 3)], grid(-2, 2), unique=True),
    Row("nanprod", lambda x: fnp.nanprod(fnp.where(MASK, np.nan, x), axis=0), [(2, 3)], grid(-2, 2),
        unique=True),
    Row("ptp", lambda x: fnp.ptp(x, axis=0), [(3, 2)], grid(-2, 2), unique=True),
    Row("cov", lambda x: fnp.cov(x), [(2, 4)], grid(-2, 2), unique=True),
    Row("cov-weights", lambda x, w: fnp.cov(x, aweights=w * w + 0.5, rowvar=False), [(4, 2), (4,)],
        grid(-2, 2), unique=True),
    Row("corrcoef", lambda x: fnp.corrcoef(x), [(3, 4)], grid(-2, 2), unique=True),
    Row("nanquantile", lambda x: fnp.nanquantile(fnp.where(MASK, np.nan, x), [0.3, 0.8], axis=1)
     + fnp.nanmedian(fnp.where(MASK, np.nan, x)), [(2, 3)], grid(-2, 2), unique=True),
    Row("nancumsum", lambda x: fnp.nancumsum(fnp.where(MASK, np.nan, x), axis=1)
     * fnp.nancumprod(fnp.where(MASK, np.nan, x)).reshape(2, 3), [(2, 3)], grid(-2, 2), unique=True),
]
test_row = row_tests(TABLE)



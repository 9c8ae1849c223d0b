"""Rule table: fxad/rules/special/piecewise_stats.py (discrete quantiles, ranks, the mode's position):
values are SciPy's, derivatives zero (the grad check: finite differences of these
piecewise-constant functions are zero away from their jumps)."""
import numpy as np
import scipy.stats as st

import fxad
from fxad.rules.special import piecewise_stats as stats_misc

from ..common import Row, grid, row_tests

D = grid(0.0, 1.0, 0.125)
TABLE = [
    Row("discrete_ppf", lambda q, mu: stats_misc.discrete_ppf("poisson", q * 0.3 + 0.31,
                                                              mu + 3.0), [(3,), (3,)], D,
        unique=True),
    Row("rankdata", lambda a: stats_misc.rankdata(a, "average", None) * a.ravel(), [(2, 3)], D,
        unique=True),
    Row("rankdata_axis", lambda a: stats_misc.rankdata(a, "min", 1) * a, [(2, 3)], D,
        unique=True),
    Row("mode_index", lambda a: a[stats_misc.mode_index(a, 0)], [(4,)], D, unique=True),
]
test_row = row_tests(TABLE)


def test_values_and_batching():
    a = np.array([[3.0, 1, 2, 3], [2, 2, 5, 1]])
    np.testing.assert_array_equal(stats_misc.rankdata(a, "min", 1), st.rankdata(a, "min", axis=1))
    np.testing.assert_array_equal(fxad.vmap(lambda r: stats_misc.rankdata(r, "dense", None))(a),
                                  np.stack([st.rankdata(r, "dense") for r in a]))
    np.testing.assert_array_equal(fxad.vmap(lambda r: stats_misc.rankdata(r, "max", 0),
                                            in_axes=1, out_axes=1)(a),
                                  st.rankdata(a, "max", axis=0))
    idx = fxad.vmap(lambda r: stats_misc.mode_index(r, 0))(a)
    np.testing.assert_array_equal(np.take_along_axis(a, idx, 1)[:, 0],
                                  st.mode(a, axis=1).mode)
    q = np.array([0.0, 0.2, 0.7, 1.0])
    np.testing.assert_array_equal(stats_misc.discrete_ppf("binom", q, 10, 0.3),
                                  st.binom.ppf(q, 10, 0.3))
    np.testing.assert_array_equal(fxad.jit(lambda q: stats_misc.discrete_ppf("geom", q, 0.3))(q),
                                  st.geom.ppf(q, 0.3))

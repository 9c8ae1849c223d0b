"""Rule table: fxad.numpy.series, NumPy's sequence functions (diff, ediff1d, gradient,
trapezoid, polyval, vander, polyfit, interp, searchsorted, digitize, bincount, isclose):
values against NumPy, derivatives to second order in both modes, vmap against a loop."""
import numpy as np
import pytest

import fxad.numpy as fnp

from ..rules.common import M, V3, V7, XP, check_values_match_numpy, grid, Row, row_tests


# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("gradient", lambda m, x, **k: m.gradient(x, **k), [(M,), (V7,)],
     [{}, {"edge_order": 2}, {"axis": -1}]),
    ("gradient-spacing", lambda m, x: m.gradient(x, 0.3), [(V7,)], [{}]),
    # the result has the data's dtype whatever the spacing's (float32 stays float32)
    ("gradient-dtypes", lambda m, x, **k: [m.gradient(x, **k), m.gradient(x, 0.5, **k),
                                           m.gradient(x, np.float64(0.3), 2.0, **k)],
     [(M[0].astype(np.float32),), ((M[0] + 1j * M[0].T[::-1].T).astype(np.complex64),),
      ((M[0] * 10).astype(np.int32),)], [{}, {"edge_order": 2}]),
    ("diff", lambda m, x, **k: m.diff(x, **k), [(M,)],
     [{}, {"n": 2, "axis": 0}, {"prepend": 1.0, "axis": 1}, {"append": np.ones((3, 4, 1))}]),
    ("ediff1d", lambda m, x: m.ediff1d(x, to_begin=[1.0, 2.0], to_end=3.0), [(M[0],)], [{}]),
    ("trapezoid", lambda m, y, **k: m.trapezoid(y, **k), [(M,)],
     [{}, {"dx": 0.5, "axis": 1}, {"x": np.linspace(0, 1, 5) ** 2}]),
    ("interp", lambda m, x: m.interp(x, np.sort(V7), np.cos(V7)),
     [(np.linspace(-3, 3, 13),), (np.sort(V7),)], [{}]),
    ("interp-edges", lambda m, x: m.interp(x, XP, XP ** 2, left=-1.0, right=9.0),
     [(np.linspace(-3, 3, 13),)], [{}]),
    # NumPy interpolates in float64: integer fp must not wrap around (uint8: 10 - 250),
    # float16 / float32 fp must not round
    ("interp-dtypes", lambda m, x, fp: [m.interp(x, np.arange(4), fp),
                                        m.interp(x, np.arange(4).astype(np.uint8), fp)],
     [(np.linspace(-1, 4, 11), fp) for fp in (
         np.array([250, 10, 0, 255], np.uint8), np.array([120, 10, -128, 127], np.int8),
         np.array([0.1, 0.7, -0.3, 2.2], np.float16), np.array([0.1, 0.7, -0.3, 2.2], np.float32))],
     [{}]),
    ("polyval", lambda m, x: m.polyval(V3, x), [(V7,)], [{}]),
    ("vander", lambda m, x, **k: m.vander(x, **k), [(V7,), (V7.astype(np.float32),),
                                                   (np.array([np.inf, 2.0]),)],
     [{}, {"N": 3, "increasing": True}, {"N": 0}]),
    ("polyfit", lambda m, x, y: m.polyfit(x, y, 3), [(V7, np.cos(V7)),
                                                     (V7, np.stack([V7, V7 ** 2], 1))], [{}]),
    ("searchsorted", lambda m, x, **k: m.searchsorted(np.sort(V7), x, **k),
     [(V7,), (np.float64(0.3),)], [{}, {"side": "right"}]),
    ("isclose", lambda m, x, y: [
        m.isclose(x, y), m.allclose(x, x), m.array_equal(x, x),
        m.isclose(np.array([np.inf, np.nan, 1.0]), np.array([np.inf, np.nan, 1.0 + 1e-9]),
                  equal_nan=True), m.allclose(x[:0], y[:0])], [(V7[:3], V3)], [{}]),
    ("binning", lambda m, x: [m.digitize(x, [-1.0, 0.0, 0.5]), m.digitize(x, [-1.0, 0.0], right=True),
                              m.bincount(np.array([0, 2, 2, 5, 1, 0, 3]), weights=x),
                              m.bincount(np.array([1, 1]), minlength=4),
                              m.isin(x, [V7[2], V7[5]]), m.isin(x, V7[:2], invert=True)],
     [(V7,)], [{}]),
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


TABLE = [
    Row("diff", lambda x: fnp.diff(x, n=2, axis=0, prepend=0.5) ** 2, [(4, 2)], grid(-2, 2), unique=True),
    Row("gradient", lambda x: fnp.gradient(x, 0.3, edge_order=2) ** 2, [(5,)], grid(-2, 2), unique=True),
    Row("gradient-axes", lambda x: fnp.gradient(x)[1] * fnp.gradient(x)[0], [(3, 4)], grid(-2, 2),
        unique=True),
    Row("trapezoid", lambda y, x: fnp.trapezoid(y ** 2, fnp.cumsum(x * x + 0.1)), [(4,), (4,)],
        grid(-2, 2), unique=True),
    Row("polyval", lambda p, x: fnp.polyval(p, x), [(3,), (4,)], grid(-2, 2), unique=True),
    Row("vander-polyfit", lambda x, y: fnp.vander(x, 3)
     * fnp.polyfit(np.arange(4.0) + 0.1 * x, y, 2), [(4,), (4,)], grid(-2, 2), unique=True),
    Row("interp", lambda x, fp: fnp.interp(x, XP, fp), [(6,), (5,)], grid(-2, 2), unique=True),
    Row("interp-xp", lambda x, s: fnp.interp(x, XP + 0.1 * fnp.tanh(s), XP ** 3), [(6,), (5,)],
        grid(-2, 2), unique=True),
    Row("bincount-cbrt", lambda w: fnp.bincount(np.array([0, 2, 2, 1]), weights=w ** 2)
     * fnp.cbrt(w + 3.0)[:3], [(4,)], grid(-2, 2), unique=True),
]
test_row = row_tests(TABLE)


def test_histogram_is_numpys_bit_for_bit():
    """Edges equal NumPy's exactly (its linspace, the last edge the maximum itself) in its
    dtype, so every value, the maximum included, falls in NumPy's bin."""
    rng = np.random.default_rng(1)
    for trial in range(120):
        x = rng.standard_normal(int(rng.integers(1, 40))) * 10 ** rng.uniform(-3, 3)
        x = [x, x.astype(np.float32), np.round(x).astype(int), np.full(x.shape, 2.5)][trial % 4]
        for kw in [{}, {"bins": 7}, {"bins": 4, "range": (-1, 1)}, {"bins": 5, "range": (0, 0)},
                   {"bins": 3, "range": (float(x.min()), float(x.max()))}]:
            (wc, we), (gc, ge) = np.histogram(x, **kw), fnp.histogram(x, **kw)
            np.testing.assert_array_equal(gc, wc, err_msg=str((trial, kw)))
            np.testing.assert_array_equal(ge, we, err_msg=str((trial, kw)))
            assert ge.dtype == we.dtype, (trial, kw)

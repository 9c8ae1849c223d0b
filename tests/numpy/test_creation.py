"""Rule table: fxad.numpy.creation (logspace, geomspace, astype): values against NumPy,
derivatives to second order in both modes, vmap against a loop."""
import numpy as np
import pytest

import fxad.numpy as fnp

from ..rules.common import V7, check_values_match_numpy, check_vmap_matches_loop, grid, run_row

R = np.random.default_rng(11)

# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("spaces", lambda m, x, y: [m.logspace(x, y, 5), m.geomspace(x, y + 3, 4), m.astype(V7, np.float32)],
     [(np.float64(0.5), np.float64(2.0))], [{}]),
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


TABLE = [
    ("spaces", lambda a, b: fnp.logspace(a[0], b[0], 4) * fnp.geomspace(a[0] + 3.0, b[0] + 3.0, 4),
     [(1,), (1,)]),
]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_creation(name, fn, shapes):
    run_row(fn, shapes, grid(-2, 2), unique=True)


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_vmap_matches_loop(name, fn, shapes):
    check_vmap_matches_loop(fn, shapes, R)

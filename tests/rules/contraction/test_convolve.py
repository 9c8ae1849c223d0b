"""Rule table: the convolve primitive (fxad.rules.contraction.convolve) through numpy's convolve and
correlate: values against NumPy, derivatives to second order in both modes, vmap against a
loop."""
import numpy as np
import pytest

import fxad.numpy as fnp

from ..common import V3, V7, check_values_match_numpy, check_vmap_matches_loop, grid, run_row

R = np.random.default_rng(11)

# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("convolve", lambda m, x, y, **k: m.convolve(x, y, **k), [(V7, V3), (V3, V7)],
     [{}, {"mode": "same"}, {"mode": "valid"}]),
    ("correlate", lambda m, x, y, **k: m.correlate(x, y, **k),
     [(V7, V3), (V3, V7), (V7 + 1j * V7[::-1], V3 - 2j)], [{}, {"mode": "same"}, {"mode": "full"}]),
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


TABLE = [
    ("convolve", lambda a, v: fnp.convolve(a, v), [(5,), (3,)]),
    ("convolve-same", lambda a, v: fnp.convolve(v, a, mode="same"), [(5,), (3,)]),
    ("correlate", lambda a, v: fnp.correlate(a, v, mode="full"), [(4,), (3,)]),
]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_convolve(name, fn, shapes):
    run_row(fn, shapes, grid(-2, 2), unique=True)


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_vmap_matches_loop(name, fn, shapes):
    check_vmap_matches_loop(fn, shapes, R)

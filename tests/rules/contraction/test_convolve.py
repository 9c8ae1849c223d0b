"""Rule table: the convolve primitive (fxad.rules.contraction.convolve) through numpy's convolve and
correlate: values against NumPy, derivatives to second order in both modes, vmap against a
loop."""
import pytest

import fxad.numpy as fnp
from fxad import lax

from ..common import V3, V7, VEC, check_values_match_numpy, floats, grid, Row, row_tests


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
    Row("convolve", lambda a, v: fnp.convolve(a, v), [(5,), (3,)], grid(-2, 2), unique=True),
    Row("convolve-same", lambda a, v: fnp.convolve(v, a, mode="same"), [(5,), (3,)], grid(-2, 2),
        unique=True),
    Row("correlate", lambda a, v: fnp.correlate(a, v, mode="full"), [(4,), (3,)], grid(-2, 2), unique=True),
    # NumPy's calling forms: their values under vmap and jit
    Row("convolve", lambda a, v: lax.convolve(a, v), [VEC, (2,)], floats(-2, 2), grad=False),
    Row("convolve_long_kernel", lambda a, v: lax.convolve(a, v), [(2,), VEC], floats(-2, 2), grad=False),
]
test_row = row_tests(TABLE)



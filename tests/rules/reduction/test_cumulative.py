"""Rule table: cumulative primitives (fxad.rules.reduction.cumulative): cumsum, cumprod, and argsort with
the sort built on it."""
import numpy as np
import pytest

import fxad.numpy as fnp
from fxad.test_util import check_grads

from ..common import check_vmap_matches_loop, grid, run_row

R = np.random.default_rng(7)

TABLE = [
    ("cumsum", lambda x: fnp.cumsum(x, axis=1) ** 2, [(2, 3)]),
    ("cumsum-flat", lambda x: fnp.cumsum(x) ** 2, [(2, 3)]),
    ("cumprod", lambda x: fnp.cumprod(x, axis=1), [(2, 5)]),
    ("cumprod-flat", lambda x: fnp.cumprod(x), [(2, 3)]),
    ("sort", lambda x: fnp.sort(x, axis=1) * fnp.arange(3.0), [(2, 3)]),
    ("argsort", lambda x: x[fnp.argsort(x)] * fnp.arange(4.0), [(4,)]),
]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_cumulative(name, fn, shapes):
    run_row(fn, shapes, grid(-2, 2), unique=True)


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_vmap_matches_loop(name, fn, shapes):
    check_vmap_matches_loop(fn, shapes, R)


def test_cumprod_with_zero_second_order():
    check_grads(fnp.cumprod, (np.array([2.0, 0.0, 3.0, -1.0]),), order=2)

"""Rule table: fxad.numpy.products beyond dot_general's own rows (kron, cross): derivatives to
second order in both modes, vmap against a loop."""
import numpy as np
import pytest

import fxad.numpy as fnp

from ..rules.common import check_vmap_matches_loop, grid, run_row

R = np.random.default_rng(7)

TABLE = [
    ("kron", lambda x, y: fnp.kron(x, y), [(2, 2), (2, 3)]),
    ("cross", lambda x, y: fnp.cross(x, y), [(2, 3), (3,)]),
]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_products(name, fn, shapes):
    run_row(fn, shapes, grid(-2, 2), unique=True)


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_vmap_matches_loop(name, fn, shapes):
    check_vmap_matches_loop(fn, shapes, R)

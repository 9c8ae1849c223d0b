"""Rule table: indexing primitives (fxad.rules.structural.indexing): getitem (basic, advanced, boolean and
traced indices) and its transpose scatter_add; take and take_along_axis, which gather with it."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp

from ..common import check_vmap_matches_loop, grid, run_row

R = np.random.default_rng(7)
IDX = np.array([2, 0, 2])  # repeated on purpose: the transpose must accumulate
TAKE_IDX = np.array([2, 0, 3])

TABLE = [
    ("getitem-int", lambda x: x[1] ** 2, [(2, 3)]),
    ("getitem-slice", lambda x: x[:, 1:] ** 2, [(2, 3)]),
    ("getitem-negstep", lambda x: x[::-1, ::-2] ** 2, [(2, 3)]),
    ("getitem-none-ellipsis", lambda x: x[None, ..., 0] ** 2, [(2, 3)]),
    ("getitem-array", lambda x: x[IDX] ** 2, [(3,)]),
    ("getitem-array-2d", lambda x: x[:, IDX] ** 2, [(2, 3)]),
    ("getitem-mixed-adjacent", lambda x: x[1:, IDX, IDX[:2, None]] ** 2, [(2, 3, 3)]),
    ("getitem-non-adjacent", lambda x: x[IDX, :, IDX] ** 2, [(3, 2, 3)]),
    ("getitem-bool-mask", lambda x: x[np.array([True, False, True])] ** 2, [(3,)]),
    ("getitem-traced-int", lambda x: x[fnp.argmax(x)] * x, [(3,)]),
    ("take", lambda x: fnp.take(x, TAKE_IDX, axis=1) ** 2, [(2, 4)]),
    ("take_along_axis", lambda x: fnp.take_along_axis(x, np.array([[1], [0]]), 1) * x, [(2, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_indexing(name, fn, shapes):
    run_row(fn, shapes, grid(-2, 2), unique=True)


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_vmap_matches_loop(name, fn, shapes):
    check_vmap_matches_loop(fn, shapes, R)


def test_gather_transpose_is_scatter_add():
    """Repeated indices accumulate in the cotangent."""
    g = fxad.grad(lambda x: fnp.sum(x[IDX]))(np.zeros(3))
    np.testing.assert_array_equal(g, [1.0, 0.0, 2.0])

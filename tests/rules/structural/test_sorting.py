"""Rule table: sorting (fxad.rules.structural.sorting): argsort, lexsort and searchsorted
(integer-valued: no derivative of their own, the values they gather carry it) and top_k."""
import numpy as np

import fxad
import fxad.numpy as fnp
from fxad import lax

from ..common import MAT, VEC, floats, grid, Row, row_tests

TABLE = [
    Row("sort", lambda x: fnp.sort(x, axis=1) * fnp.arange(3.0), [(2, 3)], grid(-2, 2), unique=True),
    Row("argsort", lambda x: x[fnp.argsort(x)] * fnp.arange(4.0), [(4,)], grid(-2, 2), unique=True),
    Row("lexsort", lambda x, y: x[fnp.lexsort((fnp.round(y), x))] * fnp.arange(4.0), [(4,), (4,)],
        grid(-2, 2), unique=True, traced_first=True),
    Row("top_k", lambda x: lax.top_k(x, 2)[0] * np.array([1.0, 2.0]), [(2, 4)], grid(-2, 2),
        unique=True),
    Row("searchsorted_values", lambda a, v: a[fnp.clip(fnp.searchsorted(fnp.sort(a), v), 0, 4)],
        [(5,), (3,)], grid(-2, 2), unique=True, traced_first=True,
        assume=lambda a, v: bool(np.all(np.abs(a[:, None] - v[None, :]) > 1e-3))),
    # lax's forms: their values under vmap and jit
    Row("argsort_last", lambda x: lax.argsort(x, 1), [MAT], floats(-2, 2), grad=False),
    Row("searchsorted", lambda a, v: lax.searchsorted(fnp.sort(a), v), [VEC, MAT], floats(-2, 2), grad=False),
    Row("searchsorted_right", lambda a, v: lax.searchsorted(fnp.sort(a), v, "right"), [VEC, MAT],
        floats(-2, 2), grad=False),
]
TABLE += [  # the functions of JAX's surface built on them
    Row("sort-two-keys", lambda k, v: lax.sort((fnp.round(k), k, v), num_keys=2)[2] * v, [(5,), (5,)],
        grid(-2, 2, 0.01), unique=True),
    Row("sort_key_val", lambda k, v: lax.sort_key_val(k, v)[1] ** 2, [(2, 4), (2, 4)],
        grid(-2, 2, 0.01), unique=True),
    Row("top_k", lambda x: lax.top_k(x, 2)[0] ** 2, [(2, 5)], grid(-2, 2, 0.01), unique=True),
    Row("top_k-axis", lambda x: lax.top_k(x, 1, axis=0)[0] * 3.0, [(3, 2)], grid(-2, 2, 0.01), unique=True),
]
test_row = row_tests(TABLE)


def test_top_k_ties_and_nan_follow_np_sort():
    x = np.array([[1.0, 3.0, 3.0, np.nan, 2.0]])
    v, i = lax.top_k(x, 3)
    np.testing.assert_array_equal(i, [[3, 1, 2]])
    g = fxad.grad(lambda x: fnp.sum(lax.top_k(x, 2)[0] * np.array([1.0, 10.0])))(
        np.array([0.5, 2.0, 1.0]))
    np.testing.assert_array_equal(g, [0.0, 1.0, 10.0])

"""Rule table: cumulative primitives (fxad.rules.reduction.cumulative): cumsum, cumprod, and argsort with
the sort built on it."""
import numpy as np

import fxad.numpy as fnp
from fxad import lax
from fxad.test_util import check_grads

from ..common import MAT, T3D, floats, grid, Row, row_tests


TABLE = [
    Row("cumsum", lambda x: fnp.cumsum(x, axis=1) ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("cumsum-flat", lambda x: fnp.cumsum(x) ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("cumprod", lambda x: fnp.cumprod(x, axis=1), [(2, 5)], grid(-2, 2), unique=True),
    Row("cumprod-flat", lambda x: fnp.cumprod(x), [(2, 3)], grid(-2, 2), unique=True),
    # NumPy's calling forms: their values under vmap and jit
    Row("cumsum_1", lambda x: lax.cumsum(x, 1), [T3D], floats(-2, 2), grad=False),
    Row("cumprod_0", lambda x: lax.cumprod(x, 0), [MAT], floats(-2, 2), grad=False),
]
TABLE += [  # the functions of JAX's surface built on them
    Row("cummax", lambda x: lax.cummax(x, axis=1) * x, [(2, 4)], grid(-2, 2, 0.01), unique=True),
    Row("cummin-reverse", lambda x: lax.cummin(x, reverse=True) ** 2, [(5,)], grid(-2, 2, 0.01), unique=True),
    Row("cumlogsumexp", lambda x: lax.cumlogsumexp(x, axis=0), [(4, 2)], grid(-2, 2, 0.01), unique=True),
    Row("cumlogsumexp-reverse", lambda x: lax.cumlogsumexp(x, 1, reverse=True) * x, [(2, 3)],
        grid(-2, 2, 0.01), unique=True),
]
test_row = row_tests(TABLE)


def test_cumprod_with_zero_second_order():
    check_grads(fnp.cumprod, (np.array([2.0, 0.0, 3.0, -1.0]),), order=2)

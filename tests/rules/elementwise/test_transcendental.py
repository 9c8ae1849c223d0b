"""Rule table: powers, exponentials, logarithms, trigonometric and hyperbolic functions
(fxad.rules.elementwise.transcendental)."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.test_util import check_grads

from ..common import (Row, away_from_zero, binary_rows, floats, no_ties, row_tests,
                      unary_rows)

UNARY = [  # (name, function, domain)
    ("exp", fnp.exp, floats(-2, 2)),
    ("log", fnp.log, floats(0.5, 3)),
    ("log1p", fnp.log1p, floats(-0.5, 2)),
    ("expm1", fnp.expm1, floats(-2, 2)),
    ("sqrt", fnp.sqrt, floats(0.5, 3)),
    ("cbrt", fnp.cbrt, away_from_zero(0.5, 3)),
    ("rsqrt", lax.rsqrt, floats(0.5, 3)),
    ("sin", fnp.sin, floats(-3, 3)),
    ("cos", fnp.cos, floats(-3, 3)),
    ("tan", fnp.tan, floats(-1.2, 1.2)),
    ("tanh", fnp.tanh, floats(-2, 2)),
    ("arcsin", fnp.arcsin, floats(-0.8, 0.8)),
    ("arccos", fnp.arccos, floats(-0.8, 0.8)),
    ("arctan", fnp.arctan, floats(-3, 3)),
    ("sinh", fnp.sinh, floats(-2, 2)),
    ("cosh", fnp.cosh, floats(-2, 2)),
    ("arcsinh", fnp.arcsinh, floats(-3, 3)),
    ("arccosh", fnp.arccosh, floats(1.2, 3)),
    ("arctanh", fnp.arctanh, floats(-0.8, 0.8)),
    ("logistic", lax.logistic, floats(-4, 4)),
    ("square", fnp.square, floats(-2, 2)),
    ("reciprocal", fnp.reciprocal, away_from_zero(0.5, 2)),
    ("integer_pow_3", lambda x: x ** 3, floats(-2, 2)),
    ("integer_pow_-2", lambda x: x ** -2, away_from_zero(0.5, 2)),
    ("integer_pow_0", lambda x: x ** 0 * x, floats(-2, 2)),
]

BINARY = [
    ("pow", lambda x, y: fnp.power(x, y), floats(0.5, 2)),
    ("arctan2", fnp.arctan2, away_from_zero(0.3, 2)),
]

TABLE = unary_rows(UNARY) + binary_rows(BINARY, assume=no_ties) + [
    # value rows over larger operands and lax's spellings
    Row("integer_pow_4", lambda x: lax.integer_pow(x, 4), [(4, 5)], floats(-2, 2)),
    Row("pow_lax", lax.pow, [(4, 5), (5,)], [floats(0.5, 3), floats(-2, 2)]),
    Row("exp_scalar", fnp.exp, [()], floats(-2, 2), grad=False),
    Row("sin_batch_of_vectors", fnp.sin, [(5,)], floats(-2, 2), grad=False),
]
test_row = row_tests(TABLE)


@pytest.mark.parametrize("x", [1e-3, 1e-2, 0.1])
def test_sqrt_near_zero(x):
    check_grads(fnp.sqrt, (np.array([x, 2 * x]),), order=2, eps=x * 1e-5, rtol=1e-5)


def test_pow_exponent_derivative_at_zero_base():
    """d/dy 0**y = 0 for y > 0: no NaN from log(0)."""
    g = fxad.grad(lambda y: fnp.power(0.0, y))(2.5)
    assert g == 0.0 and np.isfinite(g)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes_are_kept(dtype):
    x = np.linspace(0.5, 1.5, 3).astype(dtype)
    for name, fn, _ in UNARY:
        g = fxad.grad(lambda v: fnp.sum(fn(v)))(x)
        assert g.dtype == dtype, name

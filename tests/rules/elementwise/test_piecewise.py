"""Rule table: piecewise functions and predicates (fxad.rules.elementwise.piecewise): abs,
max, min, floor division and remainders, and the piecewise-constant functions (derivative 0)."""
import numpy as np

import fxad
import fxad.numpy as fnp
from fxad import lax

from ..common import (Row, away_from_zero, binary_rows, bools, floats, no_ties, row_tests,
                      ties, unary_rows)

UNARY = [  # (name, function, domain)
    ("abs", fnp.abs, away_from_zero(0.2, 2)),
    ("sign", fnp.sign, away_from_zero(0.2, 2)),
    ("floor", fnp.floor, floats(0.1, 0.4)),
    ("ceil", fnp.ceil, floats(0.1, 0.4)),
    ("round", fnp.round, floats(0.1, 0.4)),
    ("trunc", fnp.trunc, floats(0.1, 0.4)),
]

BINARY = [
    ("max", fnp.maximum, floats(-2, 2)),
    ("min", fnp.minimum, floats(-2, 2)),
    # x/y stays inside (1, 2) on this domain: away from the jumps of floor and %
    ("floor_divide", lambda x, y: fnp.floor_divide(x + 5.0, y + 3.0) * x, floats(0.1, 0.9)),
    ("rem", lambda x, y: fnp.remainder(x + 5.0, y + 3.0), floats(0.1, 0.9)),
    ("fmod", lambda x, y: fnp.fmod(x + 5.0, y + 3.0), floats(0.1, 0.9)),
    ("comparisons", lambda x, y: (x < y) * x + (x <= y) * y + (x >= y) * x * y
     + (x == y) * x + (x != y) * y + (x > y) * x, floats(-2, 2)),
    ("logical", lambda x, y: fnp.logical_and(x > 0, y > 0) * x
     + fnp.logical_or(x > 0, fnp.logical_not(y > 0)) * y
     + fnp.isfinite(x) * y + fnp.isnan(y) * x + fnp.signbit(x) * y, away_from_zero(0.2, 2)),
]

M, V = (4, 5), (5,)
TABLE = unary_rows(UNARY) + binary_rows(BINARY, assume=no_ties) + [
    # values on ties (derivatives jump there): extrema, comparisons, signs, rounding
    Row("max_ties", fnp.maximum, [M, M], ties(), grad=False),
    Row("min_ties", fnp.minimum, [M, V], ties(), grad=False),
    Row("abs_ties", fnp.abs, [M], ties(), grad=False),
    Row("sign_ties", fnp.sign, [M], ties(), grad=False),
    Row("equal", fnp.equal, [M, M], ties(), grad=False),
    Row("not_equal", fnp.not_equal, [M, V], ties(), grad=False),
    Row("less", fnp.less, [M, M], ties(), grad=False),
    Row("less_equal", fnp.less_equal, [M, M], ties(), grad=False),
    Row("greater", fnp.greater, [V, M], ties(), grad=False),
    Row("greater_equal", fnp.greater_equal, [M, M], ties(), grad=False),
    Row("logical_and", fnp.logical_and, [M, M], bools(), grad=False),
    Row("logical_or", fnp.logical_or, [M, V], bools(), grad=False),
    Row("logical_not", fnp.logical_not, [M], bools(), grad=False),
    Row("isfinite", fnp.isfinite, [M], grad=False),
    Row("isnan", fnp.isnan, [M], grad=False),
    Row("signbit", fnp.signbit, [M], grad=False),
    Row("floor_values", fnp.floor, [M], floats(-2, 2), grad=False),
    Row("round_decimals", lambda x: fnp.round(x, 1), [M], floats(-2, 2), grad=False),
    Row("lax_round", lax.round, [M], floats(-2, 2), grad=False),  # JAX's: ties away from zero
    Row("lax_round_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), [M],
        floats(-2, 2), grad=False),
    Row("stop_gradient", lax.stop_gradient, [M], grad=False),
]
test_row = row_tests(TABLE)


def test_max_splits_ties_evenly():
    gx, gy = fxad.grad(lambda x, y: fnp.maximum(x, y), argnums=(0, 1))(1.0, 1.0)
    assert gx == 0.5 and gy == 0.5


def test_stop_gradient_is_zero_at_every_order():
    """Finite differences cannot see stop_gradient, so it is checked exactly here."""
    x = np.array([0.5, -1.5, 2.0])
    assert np.array_equal(fxad.grad(lambda v: fnp.sum(lax.stop_gradient(v) * v))(x), x)
    h = fxad.hessian(lambda v: fnp.sum(lax.stop_gradient(v) * v ** 2))(x)
    np.testing.assert_allclose(h, np.diag(2 * x))
    assert fxad.jvp(lax.stop_gradient, (x,), (np.ones(3),))[1].tolist() == [0, 0, 0]


def test_integer_floor_divide_and_remainder_stay_integer():
    a, b = np.arange(-4, 5), 3
    assert fnp.floor_divide(a, b).dtype == a.dtype
    np.testing.assert_array_equal(fnp.floor_divide(a, b), a // b)
    np.testing.assert_array_equal(fnp.remainder(a, b), a % b)
    np.testing.assert_array_equal(fnp.remainder(-a * 0.7, 2.5), (-a * 0.7) % 2.5)

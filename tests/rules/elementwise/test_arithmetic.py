"""Rule table: elementwise primitives (fxad.rules.elementwise.arithmetic)."""
import numpy as np
import pytest

import fxad.numpy as fnp
from fxad import lax
from fxad.rules.elementwise.arithmetic import add_any

from ..common import SHAPES_BINARY, SHAPES_UNARY, away_from_zero, floats, run_row

# (name, function, value strategy)
UNARY = [
    ("neg", fnp.negative, floats(-2, 2)),
    ("exp", fnp.exp, floats(-2, 2)),
    ("log", fnp.log, floats(0.5, 3)),
    ("log1p", fnp.log1p, floats(-0.5, 2)),
    ("expm1", fnp.expm1, floats(-2, 2)),
    ("sqrt", fnp.sqrt, floats(0.5, 3)),
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
    ("abs", fnp.abs, away_from_zero(0.2, 2)),
    ("sign", fnp.sign, away_from_zero(0.2, 2)),
    ("floor", fnp.floor, floats(0.1, 0.4)),
    ("ceil", fnp.ceil, floats(0.1, 0.4)),
    ("round", fnp.round, floats(0.1, 0.4)),
    ("logistic", lax.logistic, floats(-4, 4)),
    ("square", fnp.square, floats(-2, 2)),
    ("reciprocal", fnp.reciprocal, away_from_zero(0.5, 2)),
    ("integer_pow_3", lambda x: x ** 3, floats(-2, 2)),
    ("integer_pow_-2", lambda x: x ** -2, away_from_zero(0.5, 2)),
    ("integer_pow_0", lambda x: x ** 0 * x, floats(-2, 2)),
    ("convert_element_type", lambda x: lax.convert_element_type(x, np.float32)
     .astype(np.float64) * 0 + x, floats(-2, 2)),
]

BINARY = [
    ("add", fnp.add, floats(-2, 2)),
    ("sub", fnp.subtract, floats(-2, 2)),
    ("mul", fnp.multiply, floats(-2, 2)),
    ("div", fnp.divide, away_from_zero(0.5, 2)),
    ("pow", lambda x, y: fnp.power(x, y), floats(0.5, 2)),
    ("arctan2", fnp.arctan2, away_from_zero(0.3, 2)),
    ("max", fnp.maximum, floats(-2, 2)),
    ("min", fnp.minimum, floats(-2, 2)),
    # x/y stays inside (1, 2) on this domain: away from the jumps of floor and %
    ("floor_divide", lambda x, y: fnp.floor_divide(x + 5.0, y + 3.0) * x, floats(0.1, 0.9)),
    ("rem", lambda x, y: fnp.remainder(x + 5.0, y + 3.0), floats(0.1, 0.9)),
    ("select", lambda x, y: fnp.where(x > y, x * y, fnp.sin(y)), floats(-2, 2)),
    ("comparisons", lambda x, y: (x < y) * x + (x <= y) * y + (x >= y) * x * y
     + (x == y) * x + (x != y) * y + (x > y) * x, floats(-2, 2)),
    # complex intermediates between real inputs and outputs: complex, conj, real, imag
    ("complex", lambda x, y: lax.real(lax.complex(x, y) ** 2) * x
     + lax.imag(lax.conj(lax.complex(x, y)) * lax.complex(y, x) ** 2), floats(-2, 2)),
    ("logical", lambda x, y: fnp.logical_and(x > 0, y > 0) * x
     + fnp.logical_or(x > 0, fnp.logical_not(y > 0)) * y
     + fnp.isfinite(x) * y + fnp.isnan(y) * x, away_from_zero(0.2, 2)),
]


def _no_ties(x, y):
    return bool(np.all(np.abs(np.subtract(x, y)) > 1e-3))


# Operands of one shape (no broadcasting): the cotangent sum of the backward pass.
SAME_SHAPE = [("add_any", lambda x, y: add_any(x, y) * x, floats(-2, 2))]

TABLE = [(n, f, [s]) for n, f, _ in UNARY for s in SHAPES_UNARY] + \
        [(n, f, list(s)) for n, f, _ in BINARY for s in SHAPES_BINARY] + \
        [(n, f, [s, s]) for n, f, _ in SAME_SHAPE for s in SHAPES_UNARY]


@pytest.mark.parametrize("shape", SHAPES_UNARY, ids=str)
@pytest.mark.parametrize("name,fn,elements", SAME_SHAPE, ids=[u[0] for u in SAME_SHAPE])
def test_same_shape(name, fn, elements, shape):
    run_row(fn, [shape, shape], elements)


@pytest.mark.parametrize("shape", SHAPES_UNARY, ids=str)
@pytest.mark.parametrize("name,fn,elements", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, fn, elements, shape):
    run_row(fn, [shape], elements)


@pytest.mark.parametrize("shapes", SHAPES_BINARY, ids=str)
@pytest.mark.parametrize("name,fn,elements", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, fn, elements, shapes):
    run_row(fn, list(shapes), elements, assume=_no_ties)


@pytest.mark.parametrize("x", [1e-3, 1e-2, 0.1])
def test_sqrt_near_zero(x):
    from fxad.test_util import check_grads
    check_grads(fnp.sqrt, (np.array([x, 2 * x]),), order=2, eps=x * 1e-5, rtol=1e-5)


def test_pow_exponent_derivative_at_zero_base():
    """d/dy 0**y = 0 for y > 0: no NaN from log(0)."""
    import fxad
    g = fxad.grad(lambda y: fnp.power(0.0, y))(2.5)
    assert g == 0.0 and np.isfinite(g)


def test_integer_floor_divide_and_remainder_stay_integer():
    a, b = np.arange(-4, 5), 3
    assert fnp.floor_divide(a, b).dtype == a.dtype
    np.testing.assert_array_equal(fnp.floor_divide(a, b), a // b)
    np.testing.assert_array_equal(fnp.remainder(a, b), a % b)
    np.testing.assert_array_equal(fnp.remainder(-a * 0.7, 2.5), (-a * 0.7) % 2.5)


def test_max_splits_ties_evenly():
    import fxad
    gx, gy = fxad.grad(lambda x, y: fnp.maximum(x, y), argnums=(0, 1))(1.0, 1.0)
    assert gx == 0.5 and gy == 0.5


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes_are_kept(dtype):
    import fxad
    x = np.linspace(0.5, 1.5, 3).astype(dtype)
    for name, fn, _ in UNARY:
        g = fxad.grad(lambda v: fnp.sum(fn(v)))(x)
        assert g.dtype == dtype, name


def test_stop_gradient_is_zero_at_every_order():
    """Finite differences cannot see stop_gradient, so it is checked exactly here."""
    import fxad
    x = np.array([0.5, -1.5, 2.0])
    assert np.array_equal(fxad.grad(lambda v: fnp.sum(lax.stop_gradient(v) * v))(x), x)
    h = fxad.hessian(lambda v: fnp.sum(lax.stop_gradient(v) * v ** 2))(x)
    np.testing.assert_allclose(h, np.diag(2 * x))
    assert fxad.jvp(lax.stop_gradient, (x,), (np.ones(3),))[1].tolist() == [0, 0, 0]


_OPERANDS = [np.float64(1.5), np.float32(-2.5), np.float16(0.5), np.int64(3), np.int32(-7),
             np.uint8(200), np.bool_(True), np.complex128(1 - 2j), np.array(2.5),
             np.array([1.0, 0.0], np.float32), np.array([3, 0]), True, 4, -0.0, 2j]


@pytest.mark.parametrize("name, ufunc", [("add", np.add), ("sub", np.subtract),
                                          ("mul", np.multiply), ("div", np.true_divide)])
def test_arithmetic_impls_agree_with_the_ufunc_for_every_operand_type(name, ufunc):
    """add/sub/mul/div take NumPy's scalar-math path for NumPy scalars (fxad.rules.elementwise.arithmetic
    `arithmetic`); type and value must be exactly the ufunc's, for every pair of types."""
    from fxad.rules.elementwise import arithmetic as elementwise
    impl = getattr(elementwise, name + "_p").impl
    for x in _OPERANDS:
        for y in _OPERANDS:
            if name == "sub" and np.asarray(x).dtype == bool and np.asarray(y).dtype == bool:
                continue  # NumPy refuses bool - bool either way
            with np.errstate(all="ignore"):
                ours, ref = impl(x, y), ufunc(x, y)
            assert type(ours) is type(ref), (x, y)
            assert np.asarray(ours).dtype == np.asarray(ref).dtype, (x, y)
            np.testing.assert_array_equal(ours, ref, err_msg=f"{x!r} {name} {y!r}")

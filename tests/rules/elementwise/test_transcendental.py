"""Rule table: powers, exponentials, logarithms, trigonometric and hyperbolic functions
(fxad.rules.elementwise.transcendental)."""
import warnings

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


@pytest.mark.parametrize("power", [fnp.power, fnp.float_power])
def test_power_base_derivative_at_zero_exponent(power):
    """x**0 is 1 for every x (0**0 included): d/dx and d2/dx2 are 0 at x == 0 too, in every
    mode, not 0 * inf = nan; away from x == 0 the mixed derivative d2/dxdy = 1/x at y == 0
    stays right (checked against finite differences, to third order)."""
    f = lambda x: power(x, 0.0)  # noqa: E731
    for g in (fxad.grad(f), fxad.grad(fxad.grad(f)), fxad.jit(fxad.grad(fxad.grad(f))),
              lambda x: fxad.jvp(fxad.grad(f), (x,), (1.0,))[1]):
        assert g(0.0) == 0.0
    x, y = np.array([0.5, 1.5, 2.0]), np.array([0.0, 0.0, 2.3])
    check_grads(lambda x, y: power(x, y), (x, y), order=3)
    mixed = fxad.grad(fxad.grad(lambda x, y: power(x, y)), argnums=1)(1.5, 0.0)
    np.testing.assert_allclose(mixed, 1 / 1.5, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes_are_kept(dtype):
    x = np.linspace(0.5, 1.5, 3).astype(dtype)
    for name, fn, _ in UNARY:
        g = fxad.grad(lambda v: fnp.sum(fn(v)))(x)
        assert g.dtype == dtype, name


# --- complex inputs ------------------------------------------------------------------------
# Points off every branch cut (log/sqrt: the negative reals; arcsin/arccos/arctanh: the reals
# beyond ±1; arcsinh/arctan: the imaginary axis beyond ±i; arccosh: the reals below 1).
Z = np.array([0.3 + 0.4j, -1.2 + 0.5j, 2.0 - 0.7j, 0.4 - 2.0j])
COMPLEX_UNARY = ["sqrt", "exp", "log", "log1p", "expm1", "log2", "log10", "exp2", "sin", "cos",
                 "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh",
                 "arccosh", "arctanh", "square", "reciprocal", "sinc"]


@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_complex_inputs_in_every_mode(name):
    """Each holomorphic function of complex input: NumPy's values eagerly, under jit (both
    backends) and vmap; derivatives to second order in both modes (central differences and
    the transpose identity); the JVP is the complex derivative times the tangent; the
    gradient of the real function |f|², also under vmap."""
    f, npf = getattr(fnp, name), getattr(np, name)
    want = npf(Z)
    np.testing.assert_allclose(f(Z), want, rtol=1e-14)
    np.testing.assert_allclose(fxad.jit(f)(Z), want, rtol=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fxad.errors.CompilationWarning)
        np.testing.assert_allclose(fxad.jit(f, backend="numba")(Z), want, rtol=1e-13)
    np.testing.assert_allclose(fxad.vmap(f)(Z), want, rtol=1e-14)
    check_grads(f, (Z,), order=2, modes=("fwd", "rev"))
    h = 1e-6  # the complex derivative, by a central difference along the real axis
    deriv = (npf(Z + h) - npf(Z - h)) / (2 * h)
    np.testing.assert_allclose(fxad.jvp(f, (Z,), (np.ones_like(Z),))[1], deriv, rtol=1e-7)
    g = fxad.grad(lambda z: fnp.sum(fnp.abs(f(z)) ** 2))(Z)
    # JAX's convention for a real function of z = x + iy: ∂/∂x - i ∂/∂y = 2 conj(f) f'
    np.testing.assert_allclose(g, 2 * np.conj(want) * deriv, rtol=1e-7)
    np.testing.assert_allclose(fxad.vmap(fxad.grad(lambda z: fnp.abs(f(z)) ** 2))(Z), g,
                               rtol=1e-13)

"""Rule table: linear maps with given transposes (fxad.rules.control.custom_linear): `linear_call`
(fxad.custom_derivatives.linear_call) and `custom_linear_solve` (fxad.lax). Each row's
derivatives are checked to second order in both modes, so the JVP in the residuals, the
transpose and the JVP of the transpose are all exercised."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.custom_derivatives import linear_call

from ..common import Row, floats, row_tests


def scaled(r, x):
    """diag(sin r + 2) x, with its transpose given (the same diagonal)."""
    return linear_call(lambda r, x: (fnp.sin(r) + 2.0) * x,
                       lambda r, ct: (fnp.sin(r) + 2.0) * ct, r, x)


def _spd(a):
    """A symmetric positive definite 3x3 matrix from 3 numbers (the row's argument)."""
    m = fnp.stack([fnp.stack([a[0], 0.3 * a[1], 0.1]), fnp.stack([0.0, a[1], 0.2 * a[2]]),
                   fnp.stack([0.1 * a[0], 0.0, a[2]])])
    return m @ m.T + 3.0 * np.eye(3)


def _dense(matvec, b):
    return fnp.linalg.solve(fxad.jacfwd(matvec)(b), b)


def solve_sym(a, b):
    m = _spd(a)
    return lax.custom_linear_solve(lambda x: m @ x, b, _dense, symmetric=True)


def solve_general(a, b):
    m = _spd(a) + fnp.outer(np.array([0.0, 0.5, 0.0]), a)  # not symmetric
    return lax.custom_linear_solve(lambda x: m @ x, b, _dense, transpose_solve=_dense)


TABLE = [
    Row("linear_call", lambda r: scaled(r, fnp.cos(r)) * r, [(3,)], floats(-2, 2)),
    Row("linear_call (two operands)", lambda r, x: scaled(r, x), [(3,), (3,)], floats(-2, 2)),
    Row("custom_linear_solve symmetric", solve_sym, [(3,), (3,)], floats(0.5, 2)),
    Row("custom_linear_solve", solve_general, [(3,), (3,)], floats(0.5, 2)),
]
test_row = row_tests(TABLE)


def test_values():
    a, b = np.array([1.0, 1.5, 0.7]), np.array([1.0, -2.0, 0.5])
    m = np.asarray(_spd(a))
    np.testing.assert_allclose(solve_sym(a, b), np.linalg.solve(m, b), rtol=1e-13)
    np.testing.assert_allclose(scaled(a, b), (np.sin(a) + 2) * b)


def test_transpose_is_the_one_given():
    """Reverse mode uses the given transpose (here deliberately 2x the true one)."""
    r, x = np.array([0.3, 1.0]), np.array([1.0, 2.0])
    f = lambda x: linear_call(lambda r, x: r * x, lambda r, ct: 2.0 * r * ct, r, x)  # noqa
    np.testing.assert_allclose(fxad.vjp(f, x)[1](np.ones(2))[0], 2.0 * r)
    np.testing.assert_allclose(fxad.jvp(f, (x,), (np.ones(2),))[1], r)


def test_reverse_mode_without_transpose_solve_names_the_fix():
    m = np.array([[2.0, 1.0], [0.0, 3.0]])
    f = lambda b: fnp.sum(lax.custom_linear_solve(lambda x: m @ x, b, _dense))  # noqa
    np.testing.assert_allclose(fxad.jvp(f, (np.ones(2),), (np.ones(2),))[1],
                               np.linalg.solve(m, np.ones(2)).sum())
    with pytest.raises(TypeError, match="transpose_solve"):
        fxad.grad(f)(np.ones(2))


def test_jit_and_has_aux():
    m = np.array([[2.0, 1.0], [1.0, 3.0]])

    def f(b):
        x, n = lax.custom_linear_solve(lambda x: m @ x, b,
                                       lambda mv, b: (_dense(mv, b), np.int64(7)),
                                       symmetric=True, has_aux=True)
        return fnp.sum(x ** 2), n
    b = np.array([1.0, 2.0])
    g = fxad.jit(fxad.grad(lambda b: f(b)[0]))(b)
    x = np.linalg.solve(m, b)
    np.testing.assert_allclose(g, np.linalg.solve(m, 2 * x))
    assert int(f(b)[1]) == 7


def test_cotangents_keep_the_operands_dtype():
    """(found by the fuzzer) a transpose computing in float64 for a float32 operand."""
    x = np.ones(3, np.float32)
    f = lambda x: fnp.sum(linear_call(lambda r, x: fnp.cos(r) * x,  # noqa: E731
                                      lambda r, ct: fnp.cos(r) * ct, np.float64(0.5), x))
    g = fxad.grad(f)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.cos(0.5), rtol=1e-6)

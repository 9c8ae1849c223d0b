"""fxad.lax's special functions under JAX's names (bessel_i0e/i1e, igamma, igammac,
igamma_grad_a, random_gamma_grad, betainc, zeta): values against SciPy and mpmath,
derivatives by check_grads to order 2 in both modes, vmap against a loop, jit against eager."""
import mpmath
import numpy as np
import pytest
import scipy.special as sc

import fxad
from fxad import lax
from fxad.test_util import check_grads

A = np.array([0.7, 1.5, 3.0, 8.0])
X = np.array([0.4, 2.0, 2.5, 9.5])
B = np.array([1.3, 0.6, 4.0, 2.2])
P = np.array([0.2, 0.45, 0.7, 0.9])
S = np.array([1.5, 2.0, 3.3, 6.0])
Q = np.array([0.5, 1.0, 2.5, 4.0])

# (name, function, arguments, SciPy's value)
ROWS = [
    ("bessel_i0e", lax.bessel_i0e, (X - 3,), sc.i0e(X - 3)),
    ("bessel_i1e", lax.bessel_i1e, (X - 3,), sc.i1e(X - 3)),
    ("igamma", lax.igamma, (A, X), sc.gammainc(A, X)),
    ("igammac", lax.igammac, (A, X), sc.gammaincc(A, X)),
    ("betainc", lax.betainc, (A, B, P), sc.betainc(A, B, P)),
    ("zeta", lax.zeta, (S, Q), sc.zeta(S, Q)),
]


@pytest.mark.parametrize("name,f,args,want", ROWS, ids=[r[0] for r in ROWS])
def test_values_derivatives_vmap_jit(name, f, args, want):
    np.testing.assert_allclose(f(*args), want, rtol=1e-13)
    np.testing.assert_allclose(fxad.jit(f)(*args), f(*args), rtol=1e-15)
    np.testing.assert_allclose(fxad.vmap(f)(*args), [f(*a) for a in zip(*args)], rtol=1e-15)
    for i in range(len(args[0])):
        check_grads(f, tuple(a[i] for a in args), order=2, modes=("fwd", "rev"))


def test_igamma_grad_a_against_mpmath():
    def dp_da(a, x):
        return mpmath.diff(lambda t: mpmath.gammainc(t, 0, x, regularized=True), a)
    want = [float(dp_da(a, x)) for a, x in zip(A, X)]
    np.testing.assert_allclose(lax.igamma_grad_a(A, X), want, rtol=1e-9)
    np.testing.assert_allclose(fxad.vmap(lax.igamma_grad_a)(A, X), want, rtol=1e-9)
    check_grads(lax.igamma_grad_a, (1.5, 2.0), order=2, modes=("fwd", "rev"))


def test_random_gamma_grad_is_the_implicit_derivative_of_a_gamma_sample():
    """d x / d a at a fixed quantile: -(dP/da) / (dP/dx), from mpmath."""
    want = []
    for a, x in zip(A, X):
        dpa = mpmath.diff(lambda t: mpmath.gammainc(t, 0, x, regularized=True), a)
        dpx = x ** (a - 1) * mpmath.exp(-x) / mpmath.gamma(a)
        want.append(float(-dpa / dpx))
    np.testing.assert_allclose(lax.random_gamma_grad(A, X), want, rtol=1e-8)
    np.testing.assert_allclose(fxad.jit(lax.random_gamma_grad)(A, X), want, rtol=1e-8)
    check_grads(lax.random_gamma_grad, (1.5, 2.0), order=2, modes=("fwd", "rev"))

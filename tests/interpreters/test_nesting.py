"""Nested transformations: derivatives to third order through every nesting of grad and jvp,
vmap and grad either way round, and each level's perturbations kept apart (no perturbation
confusion between an inner and an outer JVP trace).

Every expected value is computed by hand (analytic derivatives evaluated with plain NumPy)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fxad
import fxad.numpy as fnp

RTOL = 1e-10
ATOL = 1e-12


def close(a, b, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, np.float64),
                               rtol=rtol, atol=atol)


def _sech2(x):
    return 1.0 - np.tanh(x) ** 2


# --- higher order -----------------------------------------------------------------------------

# (name, f in fxad, f', f'', f''') with the derivatives written out by hand
FUNCS = [
    ("sin", lambda x: fnp.sin(x),
     np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x)),
    ("x**4", lambda x: x ** 4,
     lambda x: 4 * x ** 3, lambda x: 12 * x ** 2, lambda x: 24 * x),
    ("exp(2x)*x", lambda x: fnp.exp(2 * x) * x,
     lambda x: np.exp(2 * x) * (2 * x + 1), lambda x: np.exp(2 * x) * (4 * x + 4),
     lambda x: np.exp(2 * x) * (8 * x + 12)),
    ("tanh", lambda x: fnp.tanh(x),
     _sech2, lambda x: -2 * np.tanh(x) * _sech2(x),
     lambda x: (6 * np.tanh(x) ** 2 - 2) * _sech2(x)),
]
FUNC_IDS = [f[0] for f in FUNCS]
POINTS = [-1.3, -0.4, 0.0, 0.25, 0.7, 1.9]


@pytest.mark.parametrize("name,f,d1,d2,d3", FUNCS, ids=FUNC_IDS)
@pytest.mark.parametrize("x", POINTS)
def test_grad_orders_1_to_3(name, f, d1, d2, d3, x):
    close(fxad.grad(f)(x), d1(x))
    close(fxad.grad(fxad.grad(f))(x), d2(x))
    close(fxad.grad(fxad.grad(fxad.grad(f)))(x), d3(x))


@pytest.mark.parametrize("name,f,d1,d2,d3", FUNCS, ids=FUNC_IDS)
@settings(max_examples=25, deadline=None)
@given(x=st.floats(-2.5, 2.5, allow_nan=False))
def test_third_derivative_hypothesis(name, f, d1, d2, d3, x):
    close(fxad.grad(fxad.grad(fxad.grad(f)))(x), d3(x), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name,f,d1,d2,d3", FUNCS, ids=FUNC_IDS)
@pytest.mark.parametrize("x", POINTS)
def test_jvp_of_grad(name, f, d1, d2, d3, x):
    v = 0.75
    y, t = fxad.jvp(fxad.grad(f), (x,), (v,))
    close(y, d1(x))
    close(t, d2(x) * v)


@pytest.mark.parametrize("name,f,d1,d2,d3", FUNCS, ids=FUNC_IDS)
@pytest.mark.parametrize("x", POINTS)
def test_grad_of_function_calling_jvp(name, f, d1, d2, d3, x):
    def fprime(x):
        return fxad.jvp(f, (x,), (1.0,))[1]
    close(fprime(x), d1(x))
    close(fxad.grad(fprime)(x), d2(x))
    close(fxad.grad(fxad.grad(fprime))(x), d3(x))


def test_grad_of_jvp_with_traced_tangent():
    # g(x) = sum(J_h(x) x) with h = sin(x) * x  =>  g = sum(x sin x + x^2 cos x)
    def g(x):
        return fnp.sum(fxad.jvp(lambda z: fnp.sin(z) * z, (x,), (x,))[1])
    x = np.array([-0.9, 0.1, 0.6, 2.0])
    close(g(x), np.sum(x * np.sin(x) + x ** 2 * np.cos(x)))
    close(fxad.grad(g)(x), np.sin(x) + 3 * x * np.cos(x) - x ** 2 * np.sin(x))


def test_vmap_of_grad_and_grad_of_vmap():
    xs = np.array([[0.1, 0.2, 0.3], [-1.0, 0.5, 2.0]])
    f = lambda x: fnp.sum(fnp.tanh(x) ** 2)  # noqa: E731
    expected = 2 * np.tanh(xs) * _sech2(xs)
    close(fxad.vmap(fxad.grad(f))(xs), expected)
    close(fxad.grad(lambda xs: fnp.sum(fxad.vmap(f)(xs)))(xs), expected)


def test_nested_derivatives_do_not_confuse_perturbations():
    # d/dx [x * d/dy (x * y)] = d/dx [x * x] = 2x ; d/dx [x * d/dy (x + y)] = 1
    for x in (2.0, -0.5):
        close(fxad.grad(lambda x: x * fxad.grad(lambda y: x * y)(3.0))(x), 2 * x)
        close(fxad.grad(lambda x: x * fxad.grad(lambda y: x + y)(3.0))(x), 1.0)
        close(fxad.jvp(lambda x: x * fxad.jvp(lambda y: x * y, (3.0,), (1.0,))[1],
                       (x,), (1.0,))[1], 2 * x)
        close(fxad.grad(lambda x: fxad.jvp(lambda y: fnp.sin(x * y), (1.0,), (1.0,))[1])(x),
              np.cos(x) - x * np.sin(x))


def test_forward_over_forward_and_reverse_over_forward_over_reverse():
    for x in (-0.8, 0.4):
        d2 = fxad.jvp(lambda x: fxad.jvp(fnp.sin, (x,), (1.0,))[1], (x,), (1.0,))[1]
        close(d2, -np.sin(x))
        d3 = fxad.grad(lambda x: fxad.jvp(fxad.grad(fnp.sin), (x,), (1.0,))[1])(x)
        close(d3, -np.cos(x))

"""lax.custom_root and lax.custom_linear_solve: derivatives by the implicit function theorem
(never through the solver's iterations), in every mode and to second order; errors."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.errors import FxadTypeError
from fxad.test_util import check_grads


def scalar_solve(g, y):
    return y / g(1.0)


def bisection(f, x0):
    """A solver fxad could not differentiate usefully: bisection on [0, 100] in a
    while_loop (its iterations have zero derivative)."""
    def body(c):
        lo, hi = c
        mid = (lo + hi) / 2
        big = f(mid) > 0
        return fnp.where(big, lo, mid), fnp.where(big, mid, hi)
    lo, hi = lax.while_loop(lambda c: c[1] - c[0] > 1e-13 * (1 + fnp.abs(c[0])), body,
                            (0.0 * x0, 0.0 * x0 + 100.0))
    return (lo + hi) / 2


def sqrt_cubed(x):
    """x^(3/2) as the root of y^2 - x^3 (JAX's documentation example)."""
    return lax.custom_root(lambda y: y ** 2 - x ** 3, 1.0, bisection, scalar_solve)


def test_custom_root_values_and_derivatives():
    x = 2.0
    np.testing.assert_allclose(sqrt_cubed(x), x ** 1.5, rtol=1e-12)
    np.testing.assert_allclose(fxad.grad(sqrt_cubed)(x), 1.5 * x ** 0.5, rtol=1e-11)
    np.testing.assert_allclose(fxad.grad(fxad.grad(sqrt_cubed))(x), 0.75 * x ** -0.5,
                               rtol=1e-10)
    np.testing.assert_allclose(fxad.hessian(sqrt_cubed)(x), 0.75 * x ** -0.5, rtol=1e-10)
    np.testing.assert_allclose(fxad.jvp(sqrt_cubed, (x,), (1.0,))[1], 1.5 * x ** 0.5,
                               rtol=1e-11)
    check_grads(sqrt_cubed, (x,), order=2, eps=1e-4)


def test_custom_root_vmap_and_jit():
    xs = np.array([0.5, 2.0, 3.0])
    np.testing.assert_allclose(fxad.vmap(sqrt_cubed)(xs), xs ** 1.5, rtol=1e-12)
    np.testing.assert_allclose(fxad.vmap(fxad.grad(sqrt_cubed))(xs), 1.5 * xs ** 0.5,
                               rtol=1e-11)
    np.testing.assert_allclose(fxad.jit(fxad.grad(sqrt_cubed))(2.0), 1.5 * 2 ** 0.5,
                               rtol=1e-11)
    np.testing.assert_allclose(fxad.jit(fxad.hessian(sqrt_cubed))(2.0), 0.75 * 2 ** -0.5,
                               rtol=1e-10)


def newton(f, x0):
    """A vector Newton solver (fixed number of steps in a fori_loop)."""
    def step(i, x):
        return x - fnp.linalg.solve(fxad.jacfwd(f)(x), f(x))
    return lax.fori_loop(0, 30, step, x0)


def dense_tangent_solve(g, y):
    return fnp.linalg.solve(fxad.jacfwd(g)(y), y)


def test_custom_root_vector_with_aux_and_pytree_closure():
    """x* solves tanh(x) + A x = b(θ); θ is a dict closed over by f."""
    A = np.array([[3.0, 0.5], [0.2, 2.0]])

    def solve(theta):
        f = lambda x: fnp.tanh(x) + A @ x - theta["b"] * theta["s"]  # noqa: E731
        return lax.custom_root(f, np.zeros(2), lambda f, x0: (newton(f, x0), np.int64(30)),
                               dense_tangent_solve, has_aux=True)
    theta = {"b": np.array([1.0, -0.5]), "s": np.float64(1.3)}
    x, n = solve(theta)
    assert int(n) == 30
    np.testing.assert_allclose(np.tanh(x) + A @ x, theta["b"] * 1.3, atol=1e-13)
    # implicit derivative: (diag(sech²x) + A) dx = d(b s)
    J = np.diag(1 - np.tanh(x) ** 2) + A
    g = fxad.jacrev(lambda t: solve(t)[0])(theta)
    np.testing.assert_allclose(g["b"], np.linalg.solve(J, 1.3 * np.eye(2)), rtol=1e-12)
    np.testing.assert_allclose(g["s"], np.linalg.solve(J, theta["b"]), rtol=1e-12)
    check_grads(lambda b, s: solve({"b": b, "s": s})[0], (theta["b"], theta["s"]), order=2)


def test_custom_root_initial_guess_gets_no_derivative():
    g = fxad.grad(lambda x0: lax.custom_root(lambda y: y ** 2 - 4.0, x0, bisection,
                                             scalar_solve))(1.0)
    assert g == 0.0


def test_custom_root_bad_structures():
    with pytest.raises(FxadTypeError, match="f returns"):
        lax.custom_root(lambda y: fnp.stack([y, y]), 1.0, bisection, scalar_solve)
    with pytest.raises(FxadTypeError, match="solve returns"):
        lax.custom_root(lambda y: y - 1.0, 1.0, lambda f, x: fnp.stack([x, x]), scalar_solve)
    with pytest.raises(FxadTypeError, match="pair"):
        lax.custom_root(lambda y: y - 1.0, 1.0, bisection, scalar_solve, has_aux=True)


def cg_solve(matvec, b, iters=20):
    """Conjugate gradients in a fori_loop: differentiating its iterations would be wrong
    and slow; custom_linear_solve differentiates the linear system instead."""
    def step(i, c):
        x, r, p, rs = c
        ap = matvec(p)
        alpha = rs / fnp.maximum(fnp.vdot(p, ap), 1e-300)
        x, r = x + alpha * p, r - alpha * ap
        rs2 = fnp.vdot(r, r)
        return x, r, r + (rs2 / fnp.maximum(rs, 1e-300)) * p, rs2
    x, *_ = lax.fori_loop(0, iters, step, (0.0 * b, b, b, fnp.vdot(b, b)))
    return x


def test_custom_linear_solve_with_an_iterative_solver():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((4, 4))
    base = q @ q.T + 4 * np.eye(4)

    def f(d, b):
        m = base + fnp.diag(d)
        return lax.custom_linear_solve(lambda x: m @ x, b, cg_solve, symmetric=True)
    d, b = np.array([0.5, 1.0, 1.5, 2.0]), rng.standard_normal(4)
    np.testing.assert_allclose(f(d, b), np.linalg.solve(base + np.diag(d), b), rtol=1e-10)
    check_grads(f, (d, b), order=2)
    np.testing.assert_allclose(fxad.jit(fxad.grad(lambda d: fnp.sum(f(d, b) ** 2)))(d),
                               fxad.grad(lambda d: fnp.sum(f(d, b) ** 2))(d), rtol=1e-12)
    bs = rng.standard_normal((3, 4))
    np.testing.assert_allclose(fxad.vmap(f, in_axes=(None, 0))(d, bs),
                               np.stack([f(d, x) for x in bs]), rtol=1e-12)
    ds = rng.uniform(0.5, 2, (3, 4))
    np.testing.assert_allclose(fxad.vmap(fxad.grad(lambda d: fnp.sum(f(d, b))))(ds),
                               np.stack([fxad.grad(lambda d: fnp.sum(f(d, b)))(x) for x in ds]),
                               rtol=1e-12)


def test_custom_linear_solve_pytree_b():
    m1, m2 = np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([[3.0]])

    def f(s, b):
        mv = lambda x: {"a": s * (m1 @ x["a"]), "c": m2 @ x["c"]}  # noqa: E731
        solve = lambda mv, b: {"a": b["a"] / s @ np.linalg.inv(m1).T,  # noqa: E731
                               "c": b["c"] / 3.0}
        return lax.custom_linear_solve(mv, b, solve, symmetric=True)
    b = {"a": np.array([1.0, 2.0]), "c": np.array([3.0])}
    x = f(2.0, b)
    np.testing.assert_allclose(x["a"], np.linalg.solve(2 * m1, b["a"]), rtol=1e-13)
    np.testing.assert_allclose(x["c"], [1.0])
    check_grads(lambda s, ba: f(s, {"a": ba, "c": b["c"]})["a"], (2.0, b["a"]), order=2)


def test_custom_linear_solve_bad_structures():
    m = np.eye(2)
    with pytest.raises(FxadTypeError, match="matvec returns"):
        lax.custom_linear_solve(lambda x: x[:1], np.ones(2), lambda mv, b: b)
    with pytest.raises(FxadTypeError, match="solve returns"):
        lax.custom_linear_solve(lambda x: m @ x, np.ones(2), lambda mv, b: b[:1])

"""fxad.scipy.sparse.linalg's cg, bicgstab and gmres: solutions against numpy.linalg.solve (matrices,
functions, preconditioners, initial guesses, pytrees, complex Hermitian systems), the
stopping rule, derivatives (the linear system's: against those of fxad's dense solve, in both
modes, and the transpose identity), vmap against a loop, jit against eager, the errors."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.errors import FxadValueError
from fxad.scipy.sparse.linalg import bicgstab, cg, gmres
from fxad.test_util import check_grads

rng = np.random.default_rng(0)
N = 12
Q = rng.standard_normal((N, N))
SPD = Q @ Q.T + N * np.eye(N)
GEN = rng.standard_normal((N, N)) + N * np.eye(N)
B = rng.standard_normal(N)
SOLVERS = [("cg", cg, SPD), ("bicgstab", bicgstab, GEN), ("gmres", gmres, GEN),
           ("gmres_restart_4", lambda *a, **k: gmres(*a, restart=4, **k), GEN)]


@pytest.mark.parametrize("name, solve, A", SOLVERS, ids=[s[0] for s in SOLVERS])
def test_solutions(name, solve, A):
    want = np.linalg.solve(A, B)
    for kw in ({}, {"x0": np.ones(N)}, {"M": np.diag(1 / np.diag(A))},
               {"M": lambda r: r / np.diag(A)}):
        x, info = solve(A, B, tol=1e-12, **kw)
        assert info is None
        np.testing.assert_allclose(x, want, rtol=1e-10, atol=1e-12)
    x, _ = solve(lambda v: A @ v, B, tol=1e-12)
    np.testing.assert_allclose(x, want, rtol=1e-10, atol=1e-12)
    # the stopping rule: |b - A x| <= max(tol |b|, atol), not much smaller at tol=1e-3
    x, _ = solve(A, B, tol=1e-3)
    assert np.linalg.norm(B - A @ np.asarray(x)) <= 1e-3 * np.linalg.norm(B)
    x, _ = solve(A, B, tol=0.0, atol=1e-9)
    assert np.linalg.norm(B - A @ np.asarray(x)) <= 1e-9
    if name not in ("gmres",):  # (one gmres cycle spans the whole space here)
        x, _ = solve(A, B, maxiter=1)  # one step only: not yet the solution
        assert np.linalg.norm(B - A @ np.asarray(x)) > 1e-6


def test_pytrees_and_complex_hermitian():
    tree = {"u": B[:5], "v": B[5:]}
    for solve in (cg, bicgstab, gmres):
        x, _ = solve(lambda t: {"u": 3 * t["u"], "v": 2 * t["v"]}, tree, tol=1e-12)
        np.testing.assert_allclose(x["u"], B[:5] / 3, rtol=1e-12)
        np.testing.assert_allclose(x["v"], B[5:] / 2, rtol=1e-12)
    S = np.triu(Q, 1)
    H = SPD + 1j * (S - S.T)
    b = B + 1j * B[::-1]
    for solve in (cg, bicgstab, gmres):
        np.testing.assert_allclose(solve(H, b, tol=1e-12)[0], np.linalg.solve(H, b),
                                   rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, solve, A", SOLVERS, ids=[s[0] for s in SOLVERS])
def test_derivatives_are_the_linear_systems(name, solve, A):
    def f(A, b):
        return fnp.sum(fnp.sin(solve(A, b, tol=1e-13)[0]))

    def dense(A, b):
        return fnp.sum(fnp.sin(fnp.linalg.solve(A, b)))

    for got, want in zip(fxad.grad(f, (0, 1))(A, B), fxad.grad(dense, (0, 1))(A, B)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    t = rng.standard_normal(N)
    np.testing.assert_allclose(fxad.jvp(lambda b: solve(A, b, tol=1e-13)[0], (B,), (t,))[1],
                               np.linalg.solve(A, t), rtol=1e-9, atol=1e-12)
    check_grads(lambda b: solve(A, b, tol=1e-13)[0], (B,), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("name, solve, A", SOLVERS, ids=[s[0] for s in SOLVERS])
def test_vmap_and_jit(name, solve, A):
    bs = rng.standard_normal((3, N))
    f = lambda b: solve(A, b, tol=1e-12)[0]
    np.testing.assert_allclose(fxad.vmap(f)(bs), np.stack([f(b) for b in bs]), rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(fxad.jit(f)(B), f(B), rtol=1e-12, atol=1e-14)


def test_errors():
    with pytest.raises(FxadValueError, match="A must be a 2-d array or a function"):
        cg(np.ones(3), np.ones(3))
    with pytest.raises(FxadValueError, match="M must be a 2-d array or a function"):
        bicgstab(np.eye(3), np.ones(3), M=np.ones(3))
    with pytest.raises(FxadValueError, match="'batched' or 'incremental'"):
        gmres(np.eye(3), np.ones(3), solve_method="qr")

"""solve_ivp / odeint hand the implicit methods a sparse exact Jacobian when the pattern is
sparse (detected, or the user's jac_sparsity): the same solutions and derivatives as the
dense Jacobian path."""
import numpy as np
import pytest
import scipy.sparse as sp

import fxad
import fxad.numpy as fnp
from fxad.scipy import _sparse_jacobian as _jacobian
from fxad.scipy.integrate import _odecore, odeint, solve_ivp

N = 40  # states (2 species x 20 points): above the sparse threshold


def bruss(t, y, a=1.0):
    n = y.shape[0] // 2
    u, v = y[:n], y[n:]
    c = 0.02 * (n + 1) ** 2
    up = fnp.concatenate([fnp.ones(1), u, fnp.ones(1)])
    vp = fnp.concatenate([3 * fnp.ones(1), v, 3 * fnp.ones(1)])
    du = a + u * u * v - 4.0 * u + c * (up[:-2] - 2 * u + up[2:])
    dv = 3.0 * u - u * u * v + c * (vp[:-2] - 2 * v + vp[2:])
    return fnp.concatenate([du, dv])


def y0():
    x = np.arange(1, N // 2 + 1) / (N // 2 + 1)
    return np.concatenate([1 + np.sin(2 * np.pi * x), np.full(N // 2, 3.0)])


def pattern():
    n = N // 2
    T = sp.diags([1, 1, 1], [-1, 0, 1], shape=(n, n), dtype=bool)
    eye = sp.eye(n, dtype=bool)
    return sp.bmat([[T, eye], [eye, T]]).tocsr()


@pytest.fixture
def dense_path(monkeypatch):
    def use_dense():
        monkeypatch.setattr(_odecore, "sparse_plan", lambda rhs, user: None)
    return use_dense


def test_plan_is_sparse_and_exact():
    rhs, consts = fxad.scipy.integrate._ode._stage_rhs(
        lambda y, t: bruss(t, y), N, [], fxad.tree_util.tree_flatten(())[1], True, "t")
    plan = _jacobian.sparse_plan(rhs, None)
    assert plan is not None and (plan[0] != pattern()).nnz == 0
    jac = _jacobian.sparse_jac(plan, fxad.extend.jaxpr_as_fun(plan[1]), consts, dense=False)
    want = np.asarray(fxad.jacfwd(lambda y: bruss(0.0, y))(y0()))
    got = jac(0.0, y0())
    assert sp.issparse(got)
    np.testing.assert_allclose(got.toarray(), want, rtol=1e-14, atol=1e-12)


@pytest.mark.parametrize("method", ["BDF", "Radau", "LSODA"])
def test_solution_and_gradient_equal_dense_path(method, dense_path):
    ts = np.linspace(0, 1, 3)

    def loss(a):
        sol = solve_ivp(bruss, (0.0, 1.0), y0(), method=method, t_eval=ts, rtol=1e-8,
                        atol=1e-10, args=(a,))
        return fnp.sum(sol.y[:, -1] ** 2), sol.y
    (val, y), g = fxad.value_and_grad(loss, has_aux=True)(1.0)
    dense_path()
    (val_d, y_d), g_d = fxad.value_and_grad(loss, has_aux=True)(1.0)
    np.testing.assert_allclose(y, y_d, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g, g_d, rtol=1e-5)


def test_user_jac_sparsity_is_honoured(dense_path):
    ts = np.linspace(0, 1, 3)
    got = solve_ivp(bruss, (0.0, 1.0), y0(), method="BDF", t_eval=ts, rtol=1e-8,
                    jac_sparsity=pattern())
    dense_path()
    want = solve_ivp(bruss, (0.0, 1.0), y0(), method="BDF", t_eval=ts, rtol=1e-8)
    np.testing.assert_allclose(got.y, want.y, rtol=1e-6, atol=1e-9)
    with pytest.raises(fxad.errors.FxadValueError, match="jac_sparsity must have shape"):
        solve_ivp(bruss, (0.0, 1.0), y0(), method="BDF", jac_sparsity=np.ones((3, 3)))


def test_odeint_sparse_equals_dense(dense_path):
    ts = np.linspace(0, 0.5, 4)
    f = lambda y, t: bruss(t, y)  # noqa: E731
    got = odeint(f, y0(), ts, rtol=1e-8, atol=1e-10)
    dense_path()
    np.testing.assert_allclose(got, odeint(f, y0(), ts, rtol=1e-8, atol=1e-10), rtol=1e-6,
                               atol=1e-9)


def test_dense_when_coloring_does_not_pay():
    def dense_rhs(y, t):
        return -y * fnp.sum(y)
    rhs, _ = fxad.scipy.integrate._ode._stage_rhs(
        dense_rhs, N, [], fxad.tree_util.tree_flatten(())[1], True, "t")
    assert _jacobian.sparse_plan(rhs, None) is None


def heat(t, y, k):
    return k * fnp.concatenate([y[1:2] - 2 * y[:1], y[2:] - 2 * y[1:-1] + y[:-2],
                                y[-2:-1] - 2 * y[-1:]]) - y ** 3


@pytest.mark.parametrize("front", ["LSODA", "odeint", "LSODA events"])
def test_banded_jacobian_for_lsoda_and_odeint(front, dense_path, monkeypatch):
    bands = []
    real = _jacobian._band

    def spy(p):
        bands.append(real(p))
        return bands[-1]
    monkeypatch.setattr(_jacobian, "_band", spy)
    y0 = np.sin(np.linspace(0, np.pi, 64)) + 1.0
    ts = np.linspace(0, 0.05, 3)

    def run(k):
        if front == "odeint":
            return odeint(lambda y, t, k: heat(t, y, k), y0, ts, args=(k,), rtol=1e-9,
                          atol=1e-11)[-1]
        kw = {"events": lambda t, y, k: y[0] - 100.0} if front == "LSODA events" else {}
        return solve_ivp(heat, (0.0, 0.05), y0, method="LSODA", t_eval=ts, args=(k,),
                         rtol=1e-9, atol=1e-11, **kw).y[:, -1]
    got = run(1000.0)
    assert bands and bands[0] == (1, 1)
    # forward mode: the adjoint of this stiff, damped system is unstable backwards
    tangent = lambda: fxad.jvp(lambda k: fnp.sum(run(k)), (1000.0,), (1.0,))[1]  # noqa: E731
    g = None if front == "LSODA events" else tangent()
    dense_path()
    np.testing.assert_allclose(got, run(1000.0), rtol=1e-7, atol=1e-9)
    if g is not None:
        np.testing.assert_allclose(g, tangent(), rtol=1e-5)

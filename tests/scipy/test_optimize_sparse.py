"""least_squares gets a sparse exact Jacobian when the residuals' pattern is sparse (detected
or the user's jac_sparsity): the same solution and derivatives as the dense path."""
import numpy as np
import pytest
import scipy.sparse as sp

import fxad
import fxad.numpy as fnp
from fxad.scipy.optimize import _objective, least_squares

N = 40


def resid(x, a):
    return fnp.concatenate([x[1:] - a * x[:-1] ** 2, x[:1] - 0.5, 0.1 * fnp.sin(x)])


def pattern():
    P = np.zeros((2 * N, N), bool)
    P[np.arange(N - 1), np.arange(1, N)] = True
    P[np.arange(N - 1), np.arange(N - 1)] = True
    P[N - 1, 0] = True
    P[N + np.arange(N), np.arange(N)] = True
    return sp.csr_array(P)


@pytest.fixture
def dense_path(monkeypatch):
    return lambda: monkeypatch.setattr(_objective, "sparse_plan", lambda *a: None)


def test_sparse_jacobian_same_solution(dense_path):
    x0 = np.full(N, 0.3)
    got = least_squares(resid, x0, args=(0.9,))
    assert sp.issparse(got.jac)
    np.testing.assert_allclose(got.jac.toarray(),
                               np.asarray(fxad.jacfwd(lambda x: resid(x, 0.9))(got.x)),
                               rtol=1e-14, atol=1e-14)
    user = least_squares(resid, x0, args=(0.9,), jac_sparsity=pattern())
    dense_path()
    want = least_squares(resid, x0, args=(0.9,))
    assert not sp.issparse(want.jac)
    np.testing.assert_allclose(got.x, want.x, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(user.x, want.x, rtol=1e-6, atol=1e-8)


def test_gradient_of_solution_equals_dense_path(dense_path):
    def loss(a):
        return fnp.sum(least_squares(resid, np.full(N, 0.3), args=(a,)).x ** 2)
    g = fxad.grad(loss)(0.9)
    dense_path()
    np.testing.assert_allclose(g, fxad.grad(loss)(0.9), rtol=1e-6)


def test_lm_and_bad_pattern():
    x0 = np.full(N, 0.3)
    res = least_squares(lambda x: resid(x, 0.9)[:N], x0, method="lm")
    assert not sp.issparse(res.jac)
    with pytest.raises(fxad.errors.FxadValueError, match="jac_sparsity must have shape"):
        least_squares(resid, x0, args=(0.9,), jac_sparsity=np.ones((3, 3)))


def chain(x, a):
    return fnp.sum(a * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@pytest.mark.parametrize("method", ["trust-constr", "Newton-CG"])
def test_minimize_sparse_hessian(method, monkeypatch):
    from fxad.scipy import _sparse_jacobian
    from fxad.scipy.optimize import minimize
    seen = []
    real = _objective.sparse_hessian_plan

    def spy(objective):
        plan = real(objective)
        seen.append(plan is not None)
        return plan
    monkeypatch.setattr(_objective, "sparse_hessian_plan", spy)
    x0 = np.zeros(N)
    got = minimize(chain, x0, args=(10.0,), method=method)
    assert seen and all(seen)
    diff = method == "Newton-CG"  # (the same code path for trust-constr; kept short)
    if diff:
        g = fxad.grad(lambda a: fnp.sum(minimize(chain, x0, args=(a,), method=method).x))(10.0)
    # the sparse Hessian program is exact
    plan = _sparse_jacobian.sparse_hessian_plan(
        _objective.Staged(chain, fxad.extend.ShapedArray((N,), np.float64), (10.0,),
                          "t").jaxpr)
    H = _sparse_jacobian.sparse_jac_of_x(plan, fxad.extend.jaxpr_as_fun(plan[1]), [10.0])(
        np.linspace(0, 1, N))
    np.testing.assert_allclose(H.toarray(), fxad.hessian(lambda x: chain(x, 10.0))(
        np.linspace(0, 1, N)), rtol=1e-13, atol=1e-12)
    monkeypatch.setattr(_objective, "sparse_hessian_plan", lambda *a: None)
    want = minimize(chain, x0, args=(10.0,), method=method)
    np.testing.assert_allclose(got.x, want.x, rtol=1e-5, atol=1e-6)
    if diff:
        g_want = fxad.grad(lambda a: fnp.sum(minimize(chain, x0, args=(a,), method=method).x))(
            10.0)
        np.testing.assert_allclose(g, g_want, rtol=1e-4, atol=1e-8)

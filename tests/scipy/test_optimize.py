"""fxad.scipy.optimize: SciPy's solvers fed fxad's derivatives, and solutions differentiated
by the implicit function theorem in what is passed through `args` — checked against closed
forms (ridge regression, linear systems) to second order, against finite differences, under
grad / jvp / hessian / vmap / jit; failed solves; errors."""
import numpy as np
import pytest
import scipy.optimize as so

import fxad
import fxad.numpy as fnp
from fxad.errors import FxadValueError
from fxad.scipy import optimize as fo
from fxad.test_util import check_grads

rng = np.random.default_rng(1)
X = rng.standard_normal((12, 3))
Y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(12)


def ridge_loss(w, lam, y):
    return 0.5 * fnp.sum((X @ w - y) ** 2) + 0.5 * lam * fnp.sum(w ** 2)


def ridge_exact(lam, y):
    return np.linalg.solve(X.T @ X + lam * np.eye(3), X.T @ y)


METHODS = [("BFGS", dict(options=dict(gtol=1e-10))), ("L-BFGS-B", dict(tol=1e-14)),
           ("Newton-CG", dict(tol=1e-12)), ("trust-exact", dict(tol=1e-12)),
           ("trust-krylov", dict(tol=1e-12)), ("CG", dict()),
           ("trust-constr", dict(tol=1e-12)), ("SLSQP", dict(tol=1e-14))]


@pytest.mark.parametrize("method,kw", METHODS, ids=[m for m, _ in METHODS])
def test_minimize_solution_and_its_derivatives_are_exact(method, kw):
    def sol(lam, y):
        return fo.minimize(ridge_loss, np.zeros(3), args=(lam, y), method=method, **kw).x
    lam = 0.7
    np.testing.assert_allclose(sol(lam, Y), ridge_exact(lam, Y), rtol=1e-6)
    # dx*/dλ = -(XᵀX + λ)⁻¹ x*;  dx*/dy = (XᵀX + λ)⁻¹ Xᵀ  (evaluated at x*)
    A = X.T @ X + lam * np.eye(3)
    x = np.asarray(sol(lam, Y))
    np.testing.assert_allclose(fxad.jacfwd(sol)(lam, Y), -np.linalg.solve(A, x), rtol=1e-9)
    np.testing.assert_allclose(fxad.jacrev(sol, argnums=1)(lam, Y), np.linalg.solve(A, X.T),
                               rtol=1e-9, atol=1e-12)


def test_minimize_second_order_against_the_closed_form():
    sol = lambda lam: fo.minimize(ridge_loss, np.zeros(3), args=(lam, Y),  # noqa: E731
                                  method="trust-exact", tol=1e-12).x
    L = lambda lam: fnp.sum(sol(lam) ** 2)  # noqa: E731
    exact = lambda lam: np.sum(ridge_exact(lam, Y) ** 2)  # noqa: E731
    h = 1e-4
    want = (exact(0.7 + h) - 2 * exact(0.7) + exact(0.7 - h)) / h ** 2
    for hess in (fxad.hessian(L), fxad.grad(fxad.grad(L)), fxad.jacrev(fxad.jacfwd(L))):
        np.testing.assert_allclose(hess(0.7), want, rtol=1e-5)


def nonlinear(x, a, b):
    return fnp.sum((x - a) ** 4) + b * fnp.sum(x ** 2) + fnp.sum(fnp.cos(x))


A0 = np.array([1.0, -0.5, 2.0])


def test_minimize_nonlinear_in_every_mode():
    sol = lambda a, b: fo.minimize(nonlinear, np.zeros(3), args=(a, b),  # noqa: E731
                                   method="trust-exact", tol=1e-9).x
    check_grads(sol, (A0, 0.3), order=1, eps=1e-5, atol=1e-6, rtol=1e-5)
    L = lambda a: fnp.sum(sol(a, 0.3) ** 2)  # noqa: E731
    H = fxad.hessian(L)(A0)
    np.testing.assert_allclose(H, fxad.jacrev(fxad.grad(L))(A0), rtol=1e-10, atol=1e-12)
    g = fxad.grad(L)
    fd = np.stack([(g(A0 + 1e-5 * e) - g(A0 - 1e-5 * e)) / 2e-5 for e in np.eye(3)])
    np.testing.assert_allclose(H, fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fxad.jit(g)(A0), g(A0), rtol=1e-10)
    bs = np.array([0.3, 0.5, 1.0])
    np.testing.assert_allclose(fxad.vmap(lambda b: sol(A0, b))(bs),
                               np.stack([sol(A0, b) for b in bs]), rtol=1e-12)
    np.testing.assert_allclose(fxad.vmap(fxad.grad(lambda b: fnp.sum(sol(A0, b))))(bs),
                               [fxad.grad(lambda b: fnp.sum(sol(A0, b)))(b) for b in bs],
                               rtol=1e-10)


def test_minimize_feeds_scipy_fxads_derivatives():
    """The default jac=None gives SciPy the exact gradient (and hessp / hess where used):
    the same iterates as SciPy given them by hand."""
    f = lambda x: nonlinear(x, A0, 0.3)  # noqa: E731
    g, h = fxad.grad(f), fxad.hessian(f)
    for method in ("BFGS", "Newton-CG", "trust-exact", "trust-ncg"):
        got = fo.minimize(nonlinear, np.zeros(3), args=(A0, 0.3), method=method)
        want = so.minimize(f, np.zeros(3), jac=g, method=method,
                           hess=None if method == "BFGS" else h)
        assert (got.nit, got.nfev) == (want.nit, want.nfev)
        np.testing.assert_allclose(got.x, want.x, rtol=1e-12)
        assert type(got) is so.OptimizeResult and got.success
    nm = fo.minimize(nonlinear, np.zeros(3), args=(A0, 0.3), method="Nelder-Mead")
    assert "njev" not in nm and nm.success  # gradient-free: no gradient given


def test_minimize_honours_scipys_jac_and_hess_options():
    f_and_g = lambda x, a: (fnp.sum((x - a) ** 2), 2 * (x - a))  # noqa: E731
    a = np.array([1.0, 2.0])
    for kw in (dict(jac=True), dict(jac="2-point")):
        fun = f_and_g if kw["jac"] is True else (lambda x, a: f_and_g(x, a)[0])
        r = fo.minimize(fun, np.zeros(2), args=(a,), method="BFGS", **kw)
        np.testing.assert_allclose(r.x, a, atol=1e-5)
        g = fxad.jacfwd(lambda a: fo.minimize(fun, np.zeros(2), args=(a,), method="BFGS",
                                              **kw).x)(a)
        np.testing.assert_allclose(g, np.eye(2), atol=1e-10)
    calls = []
    hessp = lambda x, p, a: (calls.append(1), 2 * p)[1]  # noqa: E731
    r = fo.minimize(lambda x, a: fnp.sum((x - a) ** 2), np.zeros(2), args=(a,),
                    method="Newton-CG", hessp=hessp)
    assert calls and np.allclose(r.x, a)


def test_minimize_with_bounds():
    lo, hi = np.array([-np.inf, -1.0, 0.0]), np.array([0.5, 1.0, np.inf])

    def sol(a, upper0):
        return fo.minimize(nonlinear, np.zeros(3), args=(a, 0.3), method="L-BFGS-B",
                           bounds=[(None, upper0), (-1.0, 1.0), (0.0, None)], tol=1e-14).x
    x = np.asarray(sol(A0, 0.5))
    assert x[0] == 0.5 and lo[1] < x[1] < hi[1]  # x0 at its bound, x1 free
    J = fxad.jacfwd(sol)(A0, 0.5)
    np.testing.assert_allclose(J[0], 0.0)  # an active bound: no dependence on a
    fd = np.stack([(sol(A0 + 1e-6 * e, 0.5) - sol(A0 - 1e-6 * e, 0.5)) / 2e-6
                   for e in np.eye(3)]).T
    np.testing.assert_allclose(J, fd, atol=1e-6)
    np.testing.assert_allclose(fxad.jacrev(sol)(A0, 0.5), J, atol=1e-12)
    # the active bound itself, when traced, moves the solution one for one
    np.testing.assert_allclose(fxad.grad(lambda u: sol(A0, u)[0])(0.5), 1.0)


def test_failed_solves_are_never_differentiated_silently():
    few = dict(method="BFGS", options=dict(maxiter=2))
    r = fo.minimize(nonlinear, np.zeros(3), args=(fnp.asarray(A0), 0.3), **few)
    assert not r.success  # the value comes back as SciPy returns it
    f = lambda a: fnp.sum(fo.minimize(nonlinear, np.zeros(3), args=(a, 0.3), **few).x)  # noqa
    with pytest.raises(FxadValueError, match="did not converge"):
        fxad.grad(f)(A0)
    assert np.all(np.isnan(fxad.jit(fxad.grad(f))(A0)))  # flag known only at run time: NaN

    # under vmap, only the examples whose solve failed get NaN (c = 0 starts at the optimum)
    g = fxad.vmap(fxad.grad(lambda c: fnp.sum(fo.minimize(
        lambda x, c: fnp.sum((x - c) ** 2), np.zeros(1), args=(c,), method="BFGS",
        options=dict(maxiter=1)).x)))(np.array([0.0, 1.0]))
    assert g[0] == 1.0 and np.isnan(g[1])


def _precision_loss_objective(x, a):
    return fnp.sum((x - a) ** 2 * fnp.arange(1.0, 4.0)) + fnp.sum(x ** 4)


def test_a_solution_scipy_flags_is_differentiated_when_its_residual_is_tiny():
    """BFGS with tol=1e-12 stops with status 2 ("precision loss") where the gradient is
    already ~1e-12: the derivative is decided from the residual (a Newton step ~1e-12), not
    from the flag, in every mode, and matches central differences of the solution."""
    a = np.array([0.5, -1.0, 2.0])

    def res(a):
        return fo.minimize(_precision_loss_objective, np.zeros(3), args=(a,), method="BFGS",
                           tol=1e-12)
    r = res(fnp.asarray(a) + 0.0)
    assert int(r.status) == 2 and not bool(r.success)
    sol = lambda a: res(a).x  # noqa: E731
    J = fxad.jacrev(sol)(a)
    fd = np.stack([(np.asarray(sol(a + 1e-5 * e)) - np.asarray(sol(a - 1e-5 * e))) / 2e-5
                   for e in np.eye(3)]).T
    np.testing.assert_allclose(J, fd, atol=1e-7)
    np.testing.assert_allclose(fxad.jacfwd(sol)(a), J, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fxad.jit(fxad.jacfwd(sol))(a), J, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fxad.vmap(fxad.jacrev(sol))(np.stack([a, a])), [J, J],
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("solver", ["root-hybr", "root-lm", "root_scalar-newton"])
def test_root_finders_decide_from_the_residual_too(solver):
    """The same for the root finders: SciPy's evaluation or iteration limit hit after the
    root was found (|f| ~ 1e-17) is a failure flag, not a reason to refuse the derivative;
    the same limit hit early (|f| ~ 1e-3) still is."""
    def f(x, b):
        return fnp.stack([x[0] - b + 0.01 * x[1] ** 2, 2 * x[1] + 1])
    if solver == "root_scalar-newton":
        def sol(b, it=1):
            return fo.root_scalar(lambda x, b: 2 * x - b, args=(b,), x0=0.0, method="newton",
                                  maxiter=it).root
        assert not fo.root_scalar(lambda x, b: 2 * x - b, args=(fnp.asarray(1.5),), x0=0.0,
                                  method="newton", maxiter=1).converged
        want, early = 0.5, None
    else:
        method = solver.split("-")[1]
        late, soon = (dict(maxfev=6), dict(maxfev=2)) if method == "hybr" else \
            (dict(maxiter=3), dict(maxiter=2))

        def sol(b, opts=late):
            return fo.root(f, np.zeros(2), args=(b,), method=method, options=opts).x[0]
        assert not fo.root(f, np.zeros(2), args=(fnp.asarray(1.5),), method=method,
                           options=late).success
        want = 1.0
        early = lambda b: sol(b, soon)  # noqa: E731
    np.testing.assert_allclose(fxad.grad(sol)(1.5), want, rtol=1e-10)
    np.testing.assert_allclose(fxad.jit(fxad.grad(sol))(1.5), want, rtol=1e-10)
    if early is not None:
        with pytest.raises(FxadValueError, match="did not converge.*Newton step"):
            fxad.grad(early)(1.5)
        assert np.isnan(fxad.jit(fxad.grad(early))(1.5))


def test_a_loose_tolerance_warns():
    """SciPy's success with a loose tolerance: the derivative is taken (SciPy's criterion
    was met), with an InexactSolutionWarning naming the relative Newton step."""
    from fxad.errors import InexactSolutionWarning
    a = np.array([0.5, -1.0, 2.0])
    f = lambda a: fnp.sum(fo.minimize(_precision_loss_objective, np.zeros(3), args=(a,),  # noqa
                                      method="BFGS", options=dict(gtol=0.5)).x)
    with pytest.warns(InexactSolutionWarning, match="Newton step is .* relative to its size"):
        g = fxad.grad(f)(a)
    assert np.all(np.isfinite(g))
    tight = lambda a: fnp.sum(fo.minimize(_precision_loss_objective, np.zeros(3),  # noqa
                                          args=(a,), method="BFGS").x)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", InexactSolutionWarning)
        fxad.grad(tight)(a)  # default tolerances: no warning


def test_minimize_errors_and_fallback():
    with pytest.raises(FxadValueError, match="constraints"):
        fxad.grad(lambda a: fnp.sum(fo.minimize(
            nonlinear, np.zeros(3), args=(a, 0.3), method="SLSQP",
            constraints=[{"type": "eq", "fun": lambda x: x[0]}]).x))(A0)
    with pytest.raises(FxadValueError, match="one dimension"):
        fo.minimize(lambda x: fnp.sum(x ** 2), np.zeros((2, 2)))
    with pytest.raises(TypeError, match="scalar"):
        fxad.grad(lambda a: fo.minimize(lambda x, a: x - a, np.zeros(2), args=(a,)).x[0])(
            np.ones(2))

    def branchy(x):  # fxad cannot stage it; eagerly it is still differentiated
        return float(np.sum((x - 1) ** 2)) if x[0] > -10 else 0.0
    r = fo.minimize(lambda x: fnp.sum((x - 1) ** 2) if x[0] > -10 else 0.0, np.zeros(2))
    np.testing.assert_allclose(r.x, [1.0, 1.0], atol=1e-6)
    assert branchy(r.x) < 1e-10


# --- roots ---------------------------------------------------------------------------------

M = np.array([[3.0, 1.0], [0.5, 2.0]])


def cubic_system(x, b):
    return M @ x + 0.1 * x ** 3 - b


@pytest.mark.parametrize("method", ["hybr", "lm", "broyden1", "krylov"])
def test_root(method):
    b = np.array([1.0, -0.5])
    sol = lambda b: fo.root(cubic_system, np.zeros(2), args=(b,), method=method,  # noqa
                            tol=1e-13).x
    x = np.asarray(sol(b))
    np.testing.assert_allclose(cubic_system(x, b), 0.0, atol=1e-10)
    want = so.root(lambda x: M @ x + 0.1 * x ** 3 - b, np.zeros(2), method=method,
                   tol=1e-13).x
    np.testing.assert_allclose(x, want, rtol=1e-9, atol=1e-12)
    J = M + np.diag(0.3 * x ** 2)  # dx*/db = J⁻¹
    np.testing.assert_allclose(fxad.jacfwd(sol)(b), np.linalg.inv(J), rtol=1e-8)
    np.testing.assert_allclose(fxad.jacrev(sol)(b), np.linalg.inv(J), rtol=1e-8)


def test_root_second_order_vmap_jit():
    sol = lambda b: fo.root(cubic_system, np.zeros(2), args=(b,), tol=1e-12).x  # noqa: E731
    b = np.array([1.0, -0.5])
    check_grads(sol, (b,), order=2, eps=1e-4, atol=1e-6, rtol=1e-5)
    bs = np.array([[1.0, -0.5], [0.2, 0.3]])
    np.testing.assert_allclose(fxad.vmap(sol)(bs), np.stack([sol(x) for x in bs]),
                               rtol=1e-12)
    np.testing.assert_allclose(fxad.jit(fxad.jacrev(sol))(b), fxad.jacrev(sol)(b),
                               rtol=1e-10)


@pytest.mark.parametrize("kw", [dict(bracket=(0, 3)), dict(method="newton", x0=1.0),
                                dict(method="halley", x0=1.0),
                                dict(method="secant", x0=1.0, x1=2.0),
                                dict(method="toms748", bracket=(0, 3))],
                         ids=["bracket", "newton", "halley", "secant", "toms748"])
def test_root_scalar(kw):
    f = lambda x, c: x ** 3 - c  # noqa: E731
    r = fo.root_scalar(f, args=(2.0,), xtol=1e-14, **kw)
    assert r.converged and isinstance(r, so.RootResults)
    np.testing.assert_allclose(r.root, 2 ** (1 / 3), rtol=1e-12)
    d = lambda c: (1 / 3) * c ** (-2 / 3)  # noqa: E731
    root = lambda c: fo.root_scalar(f, args=(c,), xtol=1e-14, **kw).root  # noqa: E731
    np.testing.assert_allclose(fxad.grad(root)(2.0), d(2.0), rtol=1e-10)
    np.testing.assert_allclose(fxad.hessian(root)(2.0), -(2 / 9) * 2.0 ** (-5 / 3),
                               rtol=1e-8)
    np.testing.assert_allclose(fxad.vmap(root)(np.array([1.0, 8.0])), [1.0, 2.0],
                               rtol=1e-12)


@pytest.mark.parametrize("solver", ["brentq", "brenth", "ridder", "bisect"])
def test_bracketing_solvers(solver):
    fn = getattr(fo, solver)
    f = lambda x, c: fnp.exp(x) - c  # noqa: E731
    np.testing.assert_allclose(fn(f, 0.0, 3.0, args=(5.0,)), np.log(5.0), rtol=1e-11)
    x, r = fn(f, 0.0, 3.0, args=(5.0,), full_output=True)
    assert r.converged and r.iterations > 0
    root = lambda c: fn(f, 0.0, 3.0, args=(c,))  # noqa: E731
    np.testing.assert_allclose(fxad.grad(root)(5.0), 1 / 5.0, rtol=1e-9)
    np.testing.assert_allclose(fxad.jit(fxad.grad(root))(5.0), 1 / 5.0, rtol=1e-9)
    with pytest.raises(RuntimeError):  # SciPy's own error, from inside the callback too
        fxad.grad(lambda c: fn(f, 0.0, 3.0, args=(c,), maxiter=2))(5.0)


def test_fixed_point():
    g = lambda x, c: c * fnp.cos(x)  # noqa: E731
    x = fo.fixed_point(g, 0.5, args=(0.9,))
    np.testing.assert_allclose(x, so.fixed_point(lambda x: 0.9 * np.cos(x), 0.5), rtol=1e-12)
    # x = c cos x  =>  dx/dc = cos x / (1 + c sin x)
    d = fxad.grad(lambda c: fo.fixed_point(g, 0.5, args=(c,), xtol=1e-14))(0.9)
    np.testing.assert_allclose(d, np.cos(x) / (1 + 0.9 * np.sin(x)), rtol=1e-10)
    check_grads(lambda c: fo.fixed_point(g, np.array([0.5, 0.3]), args=(c,), xtol=1e-14),
                (np.array([0.9, 0.7]),), order=2, eps=1e-4, atol=1e-6, rtol=1e-5)


# --- least squares -----------------------------------------------------------------------

def residuals(w, y):
    return X @ w - y


def test_least_squares_linear_model_is_the_normal_equations():
    sol = lambda y: fo.least_squares(residuals, np.zeros(3), args=(y,), xtol=1e-15,  # noqa
                                     ftol=1e-15, gtol=1e-15).x
    np.testing.assert_allclose(sol(Y), np.linalg.lstsq(X, Y, rcond=None)[0], rtol=1e-10)
    pinv = np.linalg.pinv(X)
    np.testing.assert_allclose(fxad.jacrev(sol)(Y), pinv, atol=1e-11)
    np.testing.assert_allclose(fxad.jacfwd(sol)(Y), pinv, atol=1e-11)
    r = fo.least_squares(residuals, np.zeros(3), args=(fnp.asarray(Y),))
    want = so.least_squares(lambda w: X @ w - Y, np.zeros(3), jac=lambda w: X)
    assert set(want.keys()) <= set(r.keys()) | {"nit"}
    np.testing.assert_allclose(r.cost, want.cost, rtol=1e-10)
    np.testing.assert_allclose(r.grad, want.grad, atol=1e-8)


@pytest.mark.parametrize("loss", ["linear", "soft_l1", "huber", "cauchy", "arctan"])
def test_least_squares_robust_losses(loss):
    t = np.linspace(0, 3, 20)
    y = 2.0 * np.exp(-1.3 * t) + 0.05 * rng.standard_normal(20)
    res = lambda p, t, y: p[0] * fnp.exp(-p[1] * t) - y  # noqa: E731
    kw = dict(loss=loss, f_scale=0.1, xtol=1e-15, ftol=1e-15, gtol=1e-15)
    got = fo.least_squares(res, [1.0, 1.0], args=(t, y), **kw)
    want = so.least_squares(lambda p: p[0] * np.exp(-p[1] * t) - y, [1.0, 1.0], **kw)
    np.testing.assert_allclose(got.x, want.x, rtol=1e-8)
    sol = lambda y: fo.least_squares(res, [1.0, 1.0], args=(t, y), **kw).x  # noqa: E731
    J = fxad.jacfwd(sol)(y)
    np.testing.assert_allclose(fxad.jacrev(sol)(y), J, rtol=1e-10, atol=1e-12)
    h = 1e-3  # (the solver stops within ~1e-10 of x*: a smaller step would amplify that)
    fd = np.stack([(sol(y + h * e) - sol(y - h * e)) / (2 * h) for e in np.eye(20)[:4]]).T
    np.testing.assert_allclose(J[:, :4], fd, rtol=1e-4, atol=1e-5)


def test_least_squares_bounds_kwargs_and_errors():
    res = lambda w, y, scale=1.0: scale * (X @ w - y)  # noqa: E731
    sol = lambda y: fo.least_squares(res, np.zeros(3), args=(y,), kwargs={"scale": 2.0},  # noqa
                                     bounds=([-np.inf, -1.0, 0.0], [np.inf, 1.0, 0.2])).x
    x = np.asarray(sol(Y))
    np.testing.assert_allclose(x[1:], [-1.0, 0.0], atol=1e-10)  # both at bounds
    J = fxad.jacrev(sol)(Y)
    np.testing.assert_allclose(J[1:], 0.0)
    np.testing.assert_allclose(J[0], X[:, 0] / (X[:, 0] @ X[:, 0]), rtol=1e-8)
    with pytest.raises(FxadValueError, match="built-in losses"):
        fxad.grad(lambda y: fo.least_squares(residuals, np.zeros(3), args=(y,),
                                             loss=lambda z: np.stack([z, z, z])).x[0])(Y)

"""fxad.scipy.integrate: values against SciPy; derivatives (adjoint in reverse mode, forward
sensitivities in forward mode) against analytic solutions and finite differences of SciPy's
own solutions at tight tolerances, to second order; vmap, jit; errors."""
import numpy as np
import pytest
import scipy.integrate as si

import fxad
import fxad.numpy as fnp
from fxad.errors import FxadTypeError, FxadValueError
from fxad.scipy import integrate as fi
from fxad.test_util import check_jvp, check_vjp

TIGHT = dict(rtol=1e-11, atol=1e-12)
rng = np.random.default_rng(0)


def decay(y, t, k):
    return -k * y


def lotka_volterra(y, t, a, b, c, d):
    return fnp.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])


def lv_numpy(y, t, a, b, c, d):
    return [a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]]


LV_P = (1.1, 0.4, 0.4, 0.1)


# --- values ----------------------------------------------------------------------------

def test_odeint_matches_scipy():
    t = np.linspace(0, 10, 21)
    y0 = np.array([10.0, 5.0])
    got = fi.odeint(lotka_volterra, y0, t, args=LV_P, **TIGHT)
    want = si.odeint(lv_numpy, y0, t, args=LV_P, **TIGHT)
    assert got.shape == (21, 2)
    np.testing.assert_allclose(got, want, rtol=1e-8)
    # a scalar state is a state of one, as in SciPy; tfirst; a single non-tuple arg
    got = fi.odeint(lambda t, y, k: -k * y, 2.0, t, args=0.5, tfirst=True, **TIGHT)
    np.testing.assert_allclose(got, 2.0 * np.exp(-0.5 * t)[:, None], rtol=1e-9)


@pytest.mark.parametrize("method", ["RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA"])
def test_solve_ivp_methods_match_scipy(method):
    t = np.linspace(0, 5, 11)
    y0 = np.array([10.0, 5.0])
    f = lambda t, y, *p: lotka_volterra(y, t, *p)  # noqa: E731
    got = fi.solve_ivp(f, (0, 5), y0, method=method, t_eval=t, args=LV_P, rtol=1e-9,
                       atol=1e-10)
    want = si.solve_ivp(lambda t, y, *p: lv_numpy(y, t, *p), (0, 5), y0, method=method,
                        t_eval=t, args=LV_P, rtol=1e-9, atol=1e-10)
    assert got.y.shape == (2, 11) and got.success and got.status == 0
    np.testing.assert_allclose(got.t, t)
    np.testing.assert_allclose(got.y, want.y, rtol=1e-6)
    assert got.nfev > 0


def test_solve_ivp_time_conventions():
    f = lambda t, y: -0.5 * y  # noqa: E731
    sol = fi.solve_ivp(f, (0.0, 2.0), [1.0], **TIGHT)  # no t_eval: the two ends
    np.testing.assert_allclose(sol.t, [0.0, 2.0])
    np.testing.assert_allclose(sol.y, [[1.0, np.exp(-1.0)]], rtol=1e-9)
    sol = fi.solve_ivp(f, (0.0, 2.0), [1.0], t_eval=[0.5, 1.0], **TIGHT)  # starts later
    np.testing.assert_allclose(sol.y, [np.exp([-0.25, -0.5])], rtol=1e-9)
    sol = fi.solve_ivp(f, (2.0, 0.0), [1.0], t_eval=[2.0, 1.0, 0.0], **TIGHT)  # backwards
    np.testing.assert_allclose(sol.y, [np.exp([0.0, 0.5, 1.0])], rtol=1e-9)
    g = fxad.grad(lambda t1: fi.solve_ivp(f, (0.0, t1), [1.0], **TIGHT).y[0, -1])(2.0)
    np.testing.assert_allclose(g, -0.5 * np.exp(-1.0), rtol=1e-8)


# --- derivatives -------------------------------------------------------------------------

def exact_decay(y0, t, k):
    return y0[None, :] * np.exp(-k * (t - t[0]))[:, None]


def test_decay_derivatives_are_analytic_in_every_argument():
    y0, t, k = np.array([1.0, 2.0]), np.array([0.0, 0.5, 1.5, 2.0]), 0.7
    F = lambda y0, t, k: fi.odeint(decay, y0, t, args=(k,), **TIGHT)  # noqa: E731
    np.testing.assert_allclose(F(y0, t, k), exact_decay(y0, t, k), rtol=1e-9)
    e = np.exp(-k * (t - t[0]))
    # d/dk, d/dy0, d/dt_i (i > 0), d/dt0 of Y
    dk = fxad.jacfwd(F, argnums=2)(y0, t, k)
    np.testing.assert_allclose(dk, -(t - t[0])[:, None] * exact_decay(y0, t, k), atol=1e-9)
    ct = rng.standard_normal((4, 2))
    g_y0, g_t, g_k = fxad.vjp(F, y0, t, k)[1](ct)
    np.testing.assert_allclose(g_y0, (ct * e[:, None]).sum(0), rtol=1e-8)
    Y = exact_decay(y0, t, k)
    want_t = (ct * (-k * Y)).sum(1)
    want_t[0] = (ct[1:] * (k * Y[1:])).sum()
    np.testing.assert_allclose(g_t, want_t, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(g_k, (ct * -(t - t[0])[:, None] * Y).sum(), rtol=1e-8)
    # second order: d²Y/dk² = (t - t0)² Y, by forward over reverse and reverse over reverse
    L = lambda k: fnp.sum(F(y0, t, k)[-1])  # noqa: E731
    want = ((t[-1] - t[0]) ** 2 * Y[-1]).sum()
    np.testing.assert_allclose(fxad.hessian(L)(k), want, rtol=1e-7)
    np.testing.assert_allclose(fxad.grad(fxad.grad(L))(k), want, rtol=1e-7)
    np.testing.assert_allclose(fxad.jvp(fxad.grad(L), (k,), (1.0,))[1], want, rtol=1e-7)


def oscillator(y, t, w):
    return fnp.stack([y[1], -w ** 2 * y[0]])


def test_harmonic_oscillator_frequency_derivatives():
    t = np.linspace(0, 3, 7)
    w, y0 = 1.7, np.array([1.0, 0.5])
    F = lambda w: fi.odeint(oscillator, y0, t, args=(w,), **TIGHT)[:, 0]  # noqa: E731
    x = lambda w: y0[0] * np.cos(w * t) + y0[1] / w * np.sin(w * t)  # noqa: E731
    dx = lambda w: (-y0[0] * t * np.sin(w * t) - y0[1] / w ** 2 * np.sin(w * t)  # noqa
                    + y0[1] / w * t * np.cos(w * t))
    np.testing.assert_allclose(F(w), x(w), atol=1e-9)
    np.testing.assert_allclose(fxad.jacfwd(F)(w), dx(w), atol=1e-8)
    np.testing.assert_allclose(fxad.jacrev(F)(w), dx(w), atol=1e-8)
    h = 1e-4
    np.testing.assert_allclose(fxad.jacfwd(fxad.jacrev(F))(w), (dx(w + h) - dx(w - h)) / 2 / h,
                               atol=1e-6)


def scipy_lv(y0, t, *p):
    return si.odeint(lv_numpy, y0, t, args=p, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("which", ["odeint", "RK45", "BDF"])
def test_lotka_volterra_sensitivities_vs_finite_differences(which):
    """jvp (forward sensitivities) and vjp (adjoint) against central differences of SciPy's
    own solution, in y0, every time and every parameter."""
    t = np.linspace(0, 4, 6)
    y0 = np.array([1.0, 0.5])
    p = np.array(LV_P)

    def F(y0, t, p):
        if which == "odeint":
            return fi.odeint(lotka_volterra, y0, t, args=tuple(p), **TIGHT)
        return fi.solve_ivp(lambda t, y, *q: lotka_volterra(y, t, *q), (t[0], t[-1]), y0,
                            method=which, t_eval=t, args=tuple(p), **TIGHT).y.T
    args = (y0, t, p)
    v = tuple(rng.standard_normal(np.shape(a)) for a in args)
    eps = 1e-5
    fd = (scipy_lv(y0 + eps * v[0], t + eps * v[1], *(p + eps * v[2])) -
          scipy_lv(y0 - eps * v[0], t - eps * v[1], *(p - eps * v[2]))) / (2 * eps)
    tol = 1e-6 if which != "BDF" else 1e-4  # BDF's error control is looser at equal rtol
    np.testing.assert_allclose(fxad.jvp(F, args, v)[1], fd, atol=tol * np.abs(fd).max())
    ct = rng.standard_normal((6, 2))
    got = sum(np.vdot(g, d) for g, d in zip(fxad.vjp(F, *args)[1](ct), v))
    np.testing.assert_allclose(got, np.vdot(ct, fd), rtol=tol)


def test_lotka_volterra_hessian_forward_over_reverse():
    t = np.linspace(0, 3, 4)
    y0 = np.array([1.0, 0.5])
    L = lambda p: fnp.sum(fi.odeint(lotka_volterra, y0, t, args=tuple(p), **TIGHT) ** 2)  # noqa
    p = np.array(LV_P)
    H = fxad.hessian(L)(p)
    np.testing.assert_allclose(H, H.T, rtol=1e-6)
    h = 1e-4
    g = fxad.grad(L)
    fd = np.stack([(g(p + h * e) - g(p - h * e)) / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(H, fd, rtol=1e-5, atol=1e-5 * np.abs(fd).max())
    np.testing.assert_allclose(fxad.jacrev(g)(p), H, rtol=1e-6, atol=1e-6 * np.abs(H).max())


def robertson(k, method):
    """Robertson's stiff chemistry, its rates scaled by k (closed over, not in args)."""
    def F(k, y0):
        rates = k * np.array([0.04, 3e7, 1e4])
        f = lambda t, y: fnp.stack([  # noqa: E731
            -rates[0] * y[0] + rates[2] * y[1] * y[2],
            rates[0] * y[0] - rates[2] * y[1] * y[2] - rates[1] * y[1] ** 2,
            rates[1] * y[1] ** 2])
        return fi.solve_ivp(f, (0.0, 10.0), y0, method=method, t_eval=[1.0, 10.0],
                            rtol=1e-10, atol=1e-13).y
    return F


@pytest.mark.parametrize("method", ["Radau", "BDF", "LSODA"])
def test_stiff_system_forward_mode_and_a_closed_over_parameter(method):
    F = robertson(1.0, method)
    args = (1.0, np.array([1.0, 0.0, 0.0]))
    v = (1.0, np.array([0.1, 0.0, -0.1]))

    def scipy_robertson(k, y0):
        r = k * np.array([0.04, 3e7, 1e4])
        f = lambda t, y: [-r[0] * y[0] + r[2] * y[1] * y[2],  # noqa: E731
                          r[0] * y[0] - r[2] * y[1] * y[2] - r[1] * y[1] ** 2, r[1] * y[1] ** 2]
        return si.solve_ivp(f, (0, 10), y0, method="Radau", t_eval=[1.0, 10.0], rtol=1e-13,
                            atol=1e-16).y
    h = 1e-4  # SciPy's tightest solution, central differences (error ~h² = 1e-8)
    fd = (scipy_robertson(1 + h, args[1] + h * v[1]) -
          scipy_robertson(1 - h, args[1] - h * v[1])) / (2 * h)
    np.testing.assert_allclose(fxad.jvp(F, args, v)[1], fd, rtol=1e-5, atol=1e-9)
    if method == "LSODA":  # (the quickest to give up)
        # reverse mode integrates y backwards, unstable for this system: a clear error that
        # names forward mode, never a hang or a wrong number
        with pytest.raises(FxadValueError, match="use forward mode"):
            fxad.grad(lambda k: F(k, args[1])[1, 1])(1.0)


def test_closed_over_parameter_in_reverse_mode():
    def F(k, y0):
        return fi.solve_ivp(lambda t, y: -k * fnp.sin(y), (0.0, 2.0), y0, t_eval=[1.0, 2.0],
                            **TIGHT).y
    args = (0.8, np.array([1.0, 2.0]))
    v = (1.0, np.array([0.3, -0.2]))
    check_vjp(F, args, v, rng.standard_normal((2, 2)), eps=1e-5, atol=1e-7, rtol=1e-6)
    check_jvp(F, args, v, eps=1e-5, atol=1e-7, rtol=1e-6)


def test_vmap_and_jit():
    t = np.linspace(0, 2, 5)
    F = lambda k, y0: fi.odeint(decay, y0, t, args=(k,), **TIGHT)  # noqa: E731
    ks, y0 = np.array([0.3, 0.7, 1.1]), np.array([1.0, 2.0])
    np.testing.assert_allclose(fxad.vmap(F, in_axes=(0, None))(ks, y0),
                               np.stack([F(k, y0) for k in ks]), rtol=1e-13)
    np.testing.assert_allclose(fxad.jit(F)(0.7, y0), F(0.7, y0), rtol=1e-13)
    L = lambda k: fnp.sum(F(k, y0) ** 2)  # noqa: E731
    np.testing.assert_allclose(fxad.jit(fxad.grad(L))(0.7), fxad.grad(L)(0.7), rtol=1e-12)
    np.testing.assert_allclose(fxad.vmap(fxad.grad(L))(ks), [fxad.grad(L)(k) for k in ks],
                               rtol=1e-12)
    np.testing.assert_allclose(fxad.jit(fxad.hessian(L))(0.7), fxad.hessian(L)(0.7),
                               rtol=1e-10)


def test_a_function_fxad_cannot_stage_still_runs_eagerly():
    def f(y, t):  # Python control flow on the time
        return -y if t < 1.0 else -2.0 * y
    got = fi.odeint(f, [1.0], [0.0, 2.0], hmax=0.01, **TIGHT)
    want = si.odeint(f, [1.0], [0.0, 2.0], hmax=0.01, **TIGHT)
    np.testing.assert_allclose(got, want)
    with pytest.raises(TypeError, match="could not stage"):
        fxad.grad(lambda k: fi.odeint(lambda y, t: -k * y if t < 1 else -y, [1.0],
                                      [0.0, 2.0])[-1, 0])(1.0)


def test_ode_errors():
    f = lambda y, t: -y  # noqa: E731
    with pytest.raises(FxadValueError, match="full_output"):
        fi.odeint(f, [1.0], [0.0, 1.0], full_output=1)
    with pytest.raises(FxadValueError, match="one-dimensional"):
        fi.odeint(f, np.ones((2, 2)), [0.0, 1.0])
    with pytest.raises(FxadTypeError, match="complex"):
        fi.odeint(f, [1j], [0.0, 1.0])
    with pytest.raises(FxadValueError, match="sorted"):
        fi.odeint(f, [1.0], [0.0, 1.0, 0.5])
    with pytest.raises(FxadValueError, match="returned 2 values for a state of 1"):
        fi.odeint(lambda y, t: fnp.concatenate([y, y]), [1.0], [0.0, 1.0])
    with pytest.raises(FxadTypeError, match="complex parameter"):  # never dropped silently
        fxad.grad(lambda k: fi.odeint(lambda y, t, k: -fnp.real(k) * y, [1.0], [0.0, 1.0],
                                      args=(k,))[-1, 0])(1.0 + 0j)
    with pytest.raises(FxadTypeError, match="complex parameter"):
        fxad.grad(lambda k: fi.quad(lambda x, k: fnp.real(k) * x, 0.0, 1.0, args=(k,))[0])(
            1.0 + 0j)
    g = lambda t, y: -y  # noqa: E731
    with pytest.raises(FxadValueError, match="dense_output under a transformation"):
        fxad.grad(lambda y0: fi.solve_ivp(g, (0, 1), [y0], dense_output=True).y[0, -1])(1.0)
    with pytest.raises(FxadValueError, match="method must be one of"):
        fi.solve_ivp(g, (0, 1), [1.0], method="Euler")
    with pytest.raises(FxadValueError, match="within"):
        fi.solve_ivp(g, (0, 1), [1.0], t_eval=[0.5, 2.0])
    with pytest.raises(FxadValueError, match="failed"):  # blow-up in finite time
        fi.solve_ivp(lambda t, y: y ** 2, (0, 2), [1.0], t_eval=[0.0, 2.0])


# --- quad --------------------------------------------------------------------------------

def gauss_cos(x, a, b):
    return fnp.exp(-a * x ** 2) * fnp.cos(b * x)


def test_quad_values_match_scipy():
    got, err = fi.quad(gauss_cos, 0.0, 2.0, args=(0.7, 1.3))
    want, werr = si.quad(lambda x: np.exp(-0.7 * x * x) * np.cos(1.3 * x), 0.0, 2.0)
    assert got == want and err == werr
    got, _ = fi.quad(lambda x: fnp.exp(-x), 0.0, np.inf)
    np.testing.assert_allclose(got, 1.0, rtol=1e-12)
    got, _ = fi.quad(lambda x: fnp.abs(x - 0.3), 0.0, 1.0, points=[0.3])
    np.testing.assert_allclose(got, 0.29, rtol=1e-12)


def test_quad_derivatives_in_limits_and_parameters():
    Q = lambda lo, hi, a, b: fi.quad(gauss_cos, lo, hi, args=(a, b), epsabs=1e-13,  # noqa
                                     epsrel=1e-13)[0]
    args = (0.1, 2.0, 0.7, 1.3)
    g = fxad.grad(Q, argnums=(0, 1, 2, 3))(*args)
    f = lambda x: np.exp(-0.7 * x * x) * np.cos(1.3 * x)  # noqa: E731
    np.testing.assert_allclose(g[0], -f(0.1), rtol=1e-12)  # the fundamental theorem
    np.testing.assert_allclose(g[1], f(2.0), rtol=1e-12)
    np.testing.assert_allclose(g[2], si.quad(lambda x: -x * x * f(x), 0.1, 2.0,
                                             epsabs=1e-13)[0], rtol=1e-10)
    np.testing.assert_allclose(g[3], si.quad(lambda x: -x * np.exp(-0.7 * x * x) *
                                             np.sin(1.3 * x), 0.1, 2.0, epsabs=1e-13)[0],
                               rtol=1e-10)
    fxad.test_util.check_grads(Q, args, order=2)
    # infinite limit: d/da of ∫_0^∞ exp(-a x) = -1/a²
    I = lambda a: fi.quad(lambda x, a: fnp.exp(-a * x), 0.0, np.inf, args=(a,))[0]  # noqa
    np.testing.assert_allclose(fxad.grad(I)(2.0), -0.25, rtol=1e-9)
    np.testing.assert_allclose(fxad.hessian(I)(2.0), 2 / 8, rtol=1e-8)


def test_quad_vector_parameter_closure_vmap_jit():
    Q = lambda w: fi.quad(lambda x, w: fnp.sin(w[0] * x) + w[1] * x ** 2, 0.0, 1.0,  # noqa
                          args=(w,), epsabs=1e-13, epsrel=1e-13)[0]
    w = np.array([0.5, 2.0])
    fxad.test_util.check_grads(Q, (w,), order=2)
    ws = np.array([[0.5, 2.0], [1.0, 1.0], [2.0, -1.0]])
    np.testing.assert_allclose(fxad.vmap(Q)(ws), [Q(x) for x in ws], rtol=1e-14)
    np.testing.assert_allclose(fxad.jit(fxad.grad(Q))(w), fxad.grad(Q)(w), rtol=1e-13)
    C = lambda a: fi.quad(lambda x: fnp.sin(a * x), 0.0, 1.0)[0]  # noqa: E731  (closure)
    a = 0.3  # d/da ∫_0^1 sin(a x) dx = ∫ x cos(a x) dx
    np.testing.assert_allclose(fxad.grad(C)(a), np.sin(a) / a + (np.cos(a) - 1) / a ** 2,
                               rtol=1e-10)


def test_quad_errors_and_fallback():
    f = lambda x: x  # noqa: E731
    with pytest.raises(FxadValueError, match="weight"):
        fi.quad(f, 0, 1, weight="cos", wvar=1.0)
    with pytest.raises(FxadValueError, match="complex"):
        fi.quad(f, 0, 1, complex_func=True)
    with pytest.raises(FxadValueError, match="full_output"):
        fi.quad(f, 0, 1, full_output=1)
    with pytest.raises(FxadValueError, match="scalar"):
        fi.quad(lambda x: fnp.stack([x, x]), 0, 1)
    got = fi.quad(lambda x: x if x > 0.5 else 0.0, 0, 1)  # not stageable: SciPy directly
    np.testing.assert_allclose(got[0], 0.375, rtol=1e-12)


# --- composite rules ---------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9])
def test_composite_rules_match_scipy(n):
    y = rng.standard_normal((3, n))
    x = np.sort(rng.uniform(0, 3, n))
    for kw in (dict(), dict(x=x), dict(dx=0.3), dict(x=np.sort(rng.uniform(0, 3, (3, n))))):
        np.testing.assert_allclose(fi.simpson(y, **kw), si.simpson(y, **kw), rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(fi.trapezoid(y, **kw), si.trapezoid(y, **kw), rtol=1e-12,
                                   atol=1e-12)
        for initial in (None, 0):
            got = fi.cumulative_trapezoid(y, initial=initial, **kw)
            want = si.cumulative_trapezoid(y, initial=initial, **kw)
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    yt = np.ascontiguousarray(y.T)
    np.testing.assert_allclose(fi.simpson(yt, x=x, axis=0), si.simpson(yt, x=x, axis=0),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fi.cumulative_trapezoid(yt, x=x, axis=0, initial=0),
                               si.cumulative_trapezoid(yt, x=x, axis=0, initial=0),
                               rtol=1e-12, atol=1e-12)


def test_composite_rules_derivatives():
    y, x = rng.standard_normal(6), np.sort(rng.uniform(0, 3, 6))
    for rule in (lambda y, x: fi.simpson(y, x=x), lambda y, x: fi.trapezoid(y, x=x),
                 lambda y, x: fi.cumulative_trapezoid(y, x=x, initial=0)):
        fxad.test_util.check_grads(rule, (y, x), order=2)
    ys = rng.standard_normal((4, 5))
    np.testing.assert_allclose(fxad.vmap(lambda y: fi.simpson(y, x=x[:5]))(ys),
                               si.simpson(ys, x=x[:5]), rtol=1e-12)
    np.testing.assert_allclose(fxad.jit(lambda y: fi.simpson(y, dx=0.5))(ys),
                               si.simpson(ys, dx=0.5), rtol=1e-12)


def test_composite_rule_errors():
    with pytest.raises(FxadValueError, match="length of x"):
        fi.simpson(np.ones(4), x=np.ones(3))
    with pytest.raises(FxadValueError, match="initial"):
        fi.cumulative_trapezoid(np.ones(4), initial=1.0)
    with pytest.raises(FxadValueError, match="at least one point"):
        fi.cumulative_trapezoid(np.ones((2, 0)))
    with pytest.raises(FxadValueError, match="out of range"):
        fi.simpson(np.ones(4), axis=2)

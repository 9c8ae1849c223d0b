"""Derivatives of samples with respect to their parameters at a fixed key.

Transform samplers (uniform, normal, truncated normal, laplace, ..., multivariate normal) are
smooth functions of their parameters at a fixed key: checked against central finite
differences and the transpose identity to second order in both modes.

Gamma (and beta, dirichlet, t, chisquare, f through it) use the implicit
reparameterization: dx/da is the derivative of the quantile at a fixed CDF value, not the
derivative of the rejection sampler's transform at a fixed key, so finite differences of
the sampler do not apply. Instead: dx/da against mpmath and against finite differences of
SciPy's inverse CDF, and unbiasedness (the mean of d sample/d parameter over many draws is
d mean/d parameter, known in closed form)."""
import mpmath as mp
import numpy as np
import pytest
import scipy.special as sc

import fxad
import fxad.numpy as fnp
from fxad import random as fr
from fxad.rules import ops
from fxad.test_util import check_grads

K = fr.PRNGKey(7)
S = (4,)


def _spd(a):
    return fnp.matmul(a, fnp.swapaxes(a, -1, -2)) + fnp.eye(3)


REPARAM = [
    ("uniform", lambda lo, hi: fr.uniform(K, S, minval=lo, maxval=hi),
     [np.array([-1.0, 0.0, 2.0, -3.0]), np.array([2.0, 0.5, 2.5, 1.0])]),
    ("uniform_f32_shift", lambda lo: fr.uniform(K, S, minval=lo) * 1.0, [np.array(-0.25)]),
    ("normal_loc_scale", lambda mu, s: mu + s * fr.normal(K, S), [np.array(0.3), np.array(1.7)]),
    ("truncated_normal", lambda lo, hi: fr.truncated_normal(K, lo, hi, S),
     [np.array([-1.0, -2.0, 0.5, -0.3]), np.array([2.0, 0.0, 1.5, 3.0])]),
    ("exponential", lambda s: s * fr.exponential(K, S), [np.array(2.0)]),
    ("laplace", lambda m, s: m + s * fr.laplace(K, S), [np.array(1.0), np.array(0.5)]),
    ("logistic", lambda m, s: m + s * fr.logistic(K, S), [np.array(1.0), np.array(0.5)]),
    ("gumbel", lambda m, s: m + s * fr.gumbel(K, S), [np.array(1.0), np.array(0.5)]),
    ("cauchy", lambda m, s: m + s * fr.cauchy(K, S), [np.array(1.0), np.array(0.5)]),
    ("pareto", lambda b: fr.pareto(K, b, S), [np.array([1.5, 2.0, 3.0, 5.0])]),
    ("lognormal", lambda s: fr.lognormal(K, s, S), [np.array(0.4)]),
    ("rayleigh", lambda s: fr.rayleigh(K, s, S), [np.array(1.3)]),
    ("weibull_min", lambda s, c: fr.weibull_min(K, s, c, S), [np.array(2.0), np.array(1.5)]),
    ("wald", lambda m: fr.wald(K, m, S), [np.array([0.5, 1.0, 2.0, 3.0])]),
    ("triangular", lambda l, m, r: fr.triangular(K, l, m, r, S),
     [np.array(-1.0), np.array(0.3), np.array(2.0)]),
    ("double_sided_maxwell", lambda m, s: fr.double_sided_maxwell(K, m, s, S),
     [np.array(0.5), np.array(2.0)]),
    ("multivariate_normal", lambda mu, a: fr.multivariate_normal(K, mu, _spd(a), (2,)),
     [np.array([1.0, -1.0, 0.5]), np.array([[1.0, 0.2, 0.0], [0.3, 0.8, -0.1],
                                              [0.0, 0.4, 1.2]])]),
]


@pytest.mark.parametrize("name, f, args", REPARAM, ids=[r[0] for r in REPARAM])
def test_reparameterized_samples_match_finite_differences(name, f, args):
    check_grads(f, tuple(args), order=2, modes=("fwd", "rev"))


def test_reparameterized_gradients_under_jit_and_vmap():
    f = lambda mu, k: fnp.sum((mu + fr.normal(k, S)) ** 2)
    keys = fr.split(K, 3)
    g = fxad.jit(fxad.grad(f))(0.5, keys[0])
    np.testing.assert_allclose(g, 2 * np.sum(0.5 + fr.normal(keys[0], S)), rtol=1e-14)
    gs = fxad.vmap(fxad.grad(f), in_axes=(None, 0))(0.5, keys)
    np.testing.assert_allclose(gs, [fxad.grad(f)(0.5, k) for k in keys], rtol=1e-14)


def test_integer_samples_have_zero_derivatives():
    for f in (lambda p: fr.bernoulli(K, p, S) * 1.0, lambda lam: fr.poisson(K, lam, S) * 1.0,
              lambda p: fr.binomial(K, 10.0, p, S), lambda p: fr.geometric(K, p, S) * 1.0,
              lambda z: fr.categorical(K, z * fnp.ones(3)) * 1.0):
        assert fxad.grad(lambda x: fnp.sum(f(x)))(0.4) == 0.0


# --- the implicit gradient of gamma samples ------------------------------------------------

def _reference_dx_da(a, x):
    """-(dP/da) / (dP/dx) with 40-digit mpmath (P the regularized lower incomplete gamma)."""
    with mp.workdps(40):
        a, x = mp.mpf(a), mp.mpf(x)
        dp_da = mp.diff(lambda s: mp.gammainc(s, 0, x, regularized=True), a)
        density = mp.exp((a - 1) * mp.log(x) - x - mp.loggamma(a))
        return float(-dp_da / density)


GRID = [(a, q) for a in (1e-3, 0.05, 0.5, 1.0, 2.7, 30.0, 800.0)
        for q in (1e-9, 0.02, 0.4, 0.6, 0.97, 1 - 1e-7)]


def test_gamma_grad_matches_mpmath():
    a = np.array([g[0] for g in GRID])
    x = sc.gammaincinv(a, np.array([g[1] for g in GRID]))
    keep = x > 0  # quantiles below the smallest float are 0
    got = ops.random_gamma_grad(a[keep], x[keep])
    want = np.array([_reference_dx_da(ai, xi) for ai, xi in zip(a[keep], x[keep])])
    np.testing.assert_allclose(got, want, rtol=1e-11)


def test_gamma_grad_edges():
    g = ops.random_gamma_grad(np.array([2.0, 0.0, -1.0, np.nan, 1e6]),
                              np.array([0.0, 1.0, 1.0, 1.0, 1e6 + 700.0]))
    assert g[0] == 0 and np.all(np.isnan(g[1:4]))
    np.testing.assert_allclose(g[4], 1 + 0.7 / 2 / 1e3, rtol=1e-3)  # x ~ a + sqrt(a) z
    assert ops.random_gamma_grad(np.float32(2.0), np.float32(1.0)).dtype == np.float32


@pytest.mark.parametrize("a0", [0.01, 0.3, 1.0, 5.0, 120.0])
def test_gamma_sample_gradient_is_the_quantile_derivative(a0):
    """At each sample x, dx/da equals d/da F^-1(F(x; a); a), F^-1 = scipy's gammaincinv."""
    a = np.full(200, a0)
    x = fr.gamma(K, a)
    g = fxad.grad(lambda a: fnp.sum(fr.gamma(K, a)))(a)
    u, h = sc.gammainc(a0, x), 1e-6 * a0
    fd = (sc.gammaincinv(a0 + h, u) - sc.gammaincinv(a0 - h, u)) / (2 * h)
    ok = (x > 1e-250) & (u > 1e-12) & (u < 1 - 1e-12)  # where the inverse CDF is well conditioned
    assert ok.sum() > 100
    np.testing.assert_allclose(g[ok], fd[ok], rtol=1e-5)
    lg = fxad.grad(lambda a: fnp.sum(fr.loggamma(K, a)))(a)
    np.testing.assert_allclose(lg[ok], (g / x)[ok], rtol=1e-9)


N = 20_000


def _mean_within(samples, want, sigmas=5.0):
    se = samples.std() / np.sqrt(len(samples))
    assert abs(samples.mean() - want) < sigmas * se, (samples.mean(), want, se)


def test_implicit_gradients_are_unbiased():
    """E[d sample / d param] = d E[sample] / d param, for closed-form means."""
    k = fr.PRNGKey(99)
    for a in (0.2, 2.0, 40.0):  # E[gamma(a)] = a
        _mean_within(fxad.grad(lambda v: fnp.sum(fr.gamma(k, v)))(np.full(N, a)), 1.0)
    a, b = 0.7, 2.0  # E[beta] = a / (a + b)
    ga = fxad.grad(lambda v: fnp.sum(fr.beta(k, v, b)))(np.full(N, a))
    gb = fxad.grad(lambda v: fnp.sum(fr.beta(k, a, v)))(np.full(N, b))
    _mean_within(ga, b / (a + b) ** 2)
    _mean_within(gb, -a / (a + b) ** 2)
    alpha = np.array([0.5, 1.0, 3.0])  # E[x_i] = alpha_i / alpha_0
    jac = fxad.vmap(fxad.jacfwd(lambda al, kk: fr.dirichlet(kk, al)), in_axes=(None, 0))(
        alpha, fr.split(k, N))
    a0 = alpha.sum()
    want = (np.eye(3) * a0 - alpha[:, None]) / a0 ** 2
    for i in range(3):
        for j in range(3):
            _mean_within(jac[:, i, j], want[i, j])
    df = 8.0  # E[t^2] = df / (df - 2), E[chi2] = df, E[F] = d2 / (d2 - 2)
    _mean_within(fxad.grad(lambda v: fnp.sum(fr.t(k, v) ** 2))(np.full(N, df)), -2 / 36)
    _mean_within(fxad.grad(lambda v: fnp.sum(fr.chisquare(k, v)))(np.full(N, 3.0)), 1.0)
    _mean_within(fxad.grad(lambda v: fnp.sum(fr.f(k, 3.0, v)))(np.full(N, 9.0)), -2 / 49)


def test_gamma_gradient_in_every_mode():
    a = np.array([0.5, 2.0, 7.0])
    g = fxad.grad(lambda a: fnp.sum(fr.gamma(K, a)))(a)
    _, t = fxad.jvp(lambda a: fr.gamma(K, a), (a,), (np.ones(3),))
    np.testing.assert_array_equal(t, g)
    np.testing.assert_array_equal(fxad.jit(fxad.grad(lambda a: fnp.sum(fr.gamma(K, a))))(a), g)
    np.testing.assert_array_equal(fxad.jacrev(lambda a: fr.gamma(K, a))(a), np.diag(g))


def test_gamma_grad_derivative_in_alpha_matches_mpmath():
    """d/da of dx/da at fixed x (random_gamma_grad of order 1), against 40-digit mpmath."""
    a = np.array([0.05, 0.5, 2.7, 30.0, 0.05, 2.7])
    x = sc.gammaincinv(a, np.array([0.02, 0.4, 0.97, 0.6, 0.9, 0.01]))
    with mp.workdps(40):
        want = [float(mp.diff(lambda s: mp.mpf(_reference_dx_da_mp(s, mp.mpf(xi))), mp.mpf(ai)))
                for ai, xi in zip(a, x)]
    np.testing.assert_allclose(ops.random_gamma_grad(a, x, 1), want, rtol=1e-11)


def _reference_dx_da_mp(a, x):
    dp_da = mp.diff(lambda s: mp.gammainc(s, 0, x, regularized=True), a)
    return -dp_da / mp.exp((a - 1) * mp.log(x) - x - mp.loggamma(a))


@pytest.mark.parametrize("a0", [0.3, 4.0, 60.0])
def test_gamma_second_derivative_is_the_quantiles(a0):
    """d2x/da2 at each sample (hessian of the sample) equals the second difference of SciPy's
    inverse CDF at the sample's CDF value."""
    a = np.full(50, a0)
    x = fr.gamma(K, a)
    h2 = fxad.jacfwd(fxad.grad(lambda a: fnp.sum(fr.gamma(K, a))))(a)
    assert np.array_equal(h2, np.diag(np.diag(h2)))
    u, h = sc.gammainc(a0, x), 1e-4 * a0
    fd = (sc.gammaincinv(a0 + h, u) - 2 * x + sc.gammaincinv(a0 - h, u)) / h ** 2
    ok = (u > 1e-8) & (u < 1 - 1e-8)
    np.testing.assert_allclose(np.diag(h2)[ok], fd[ok], rtol=1e-4, atol=1e-6)
    assert np.array_equal(fxad.hessian(lambda a: fnp.sum(fr.gamma(K, a)))(a), h2)


def test_gamma_grad_has_derivatives_of_every_order():
    """random_gamma_grad in both arguments, to second order in both modes, and the third
    derivative of a sample in alpha: the quantile's, by differences of SciPy's inverse CDF at
    the sample's CDF value (differences of the sampler at a fixed key would follow its
    rejection transform instead)."""
    check_grads(lambda a, x: ops.random_gamma_grad(a, x), (np.array([0.7, 2.5, 9.0]),
                                                           np.array([0.3, 2.0, 12.0])),
                order=2, modes=("fwd", "rev"))
    f = lambda a: fr.gamma(K, a)
    third = fxad.grad(fxad.grad(fxad.grad(f)))(2.5)
    u, h = sc.gammainc(2.5, f(2.5)), 2e-3
    q = [sc.gammaincinv(2.5 + j * h, u) for j in (-2, -1, 1, 2)]
    fd = (q[3] - 2 * q[2] + 2 * q[1] - q[0]) / (2 * h ** 3)
    np.testing.assert_allclose(third, fd, rtol=1e-4)

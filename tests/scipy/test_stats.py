"""fxad.scipy.stats: every jax.scipy.stats name; values against SciPy (inside and outside the
support, invalid parameters, NaN/inf); tails against mpmath; derivatives in the value and
every parameter to second order in both modes; no NaN derivative outside the support;
broadcasting; vmap and jit."""
import mpmath as mp
import numpy as np
import pytest
import scipy.stats as st

import fxad
import fxad.numpy as fnp
from fxad.scipy import stats as fs
from fxad.test_util import check_grads

JAX_STATS = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
             "gamma", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
             "logistic", "mode", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto",
             "poisson", "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]


def test_every_jax_scipy_stats_name_is_there():
    assert len(JAX_STATS) == 30 and all(hasattr(fs, n) for n in JAX_STATS)


CONTINUOUS = [  # name, two shape-parameter sets (an ordinary one and an extreme one)
    ("norm", (), ()), ("t", (3.5,), (0.6,)), ("cauchy", (), ()), ("laplace", (), ()),
    ("logistic", (), ()), ("expon", (), ()), ("gumbel_r", (), ()), ("gumbel_l", (), ()),
    ("uniform", (), ()), ("pareto", (2.5,), (0.3,)), ("lognorm", (0.7,), (3.0,)),
    ("gamma", (2.5,), (0.2,)), ("chi2", (3.0,), (1.0,)), ("beta", (2.0, 0.7), (0.3, 8.0)),
    ("gennorm", (1.5,), (0.6,)), ("truncnorm", (-1.0, 2.0), (5.0, 7.0)),
    ("vonmises", (2.0,), (0.01,)), ("wrapcauchy", (0.4,), (0.95,))]
METHODS = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]
X = np.array([-1e300, -40.0, -3.0, -0.5, 0.0, 0.3, 0.7, 1.0, 2.5, 40.0, 1e300, np.nan, np.inf,
              -np.inf])
Q = np.array([0.0, 1e-300, 1e-10, 0.3, 0.5, 0.99, 1 - 1e-12, 1.0, 1.2, -0.1, np.nan])


@pytest.mark.parametrize("which", [1, 2])
@pytest.mark.parametrize("name,sh1,sh2", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_values_are_scipys(name, sh1, sh2, which):
    ours, theirs = getattr(fs, name), getattr(st, name)
    shapes = sh1 if which == 1 else sh2
    for m in METHODS:
        if not hasattr(ours, m):
            continue
        args = Q if m in ("ppf", "isf") else X
        with np.errstate(all="ignore"):
            got = getattr(ours, m)(args, *shapes, loc=0.3, scale=1.7)
            want = getattr(theirs, m)(args, *shapes, loc=0.3, scale=1.7)
        # where SciPy rounds a tail to 0 or 1 (log = 0), fxad may keep the digits; where it
        # overflows a log density at ±1e300 to -inf, fxad may keep a finite value
        close = np.isclose(got, want, rtol=1e-9, atol=0, equal_nan=True) | \
            (np.isclose(got, want, rtol=0, atol=1e-15) & (np.abs(want) < 1e-15)) | \
            ((want == -np.inf) & (got < -1e2) & (np.abs(args) == 1e300)) | \
            (np.isnan(want) & np.isinf(args) & (got == {"logpdf": -np.inf, "pdf": 0.0}.get(m)))
        # (SciPy's formulas give inf - inf = NaN at some x = ±inf; fxad gives the limit)
        assert close.all(), (m, args[~close], got[~close], want[~close])


def test_invalid_parameters_are_nan():
    with np.errstate(all="ignore"):
        assert np.isnan(fs.norm.logpdf(0.3, scale=0.0))
        assert np.isnan(fs.gamma.cdf(1.0, -2.0))
        assert np.isnan(fs.beta.logpdf(0.5, 1.0, 0.0))
        assert np.isnan(fs.t.ppf(0.3, -1.0))
        assert np.isnan(fs.truncnorm.logpdf(0.0, 2.0, 1.0))
        assert np.isnan(fs.poisson.logpmf(1, -0.5))


TAILS = [  # (method, x, reference in mpmath)
    ("norm", "logcdf", -40.0, (), lambda x: mp.log(mp.ncdf(x))),
    ("norm", "logsf", 40.0, (), lambda x: mp.log(mp.ncdf(-x))),
    ("t", "logcdf", -40.0, (4.0,),
     lambda x: mp.log(mp.betainc(2, 0.5, 0, 4 / (4 + x * x), regularized=True) / 2)),
    ("cauchy", "logcdf", -1e10, (), lambda x: mp.log(mp.atan2(1, -x) / mp.pi)),
    ("logistic", "logsf", 40.0, (), lambda x: -mp.log1p(mp.exp(x))),
    ("laplace", "logcdf", -40.0, (), lambda x: x - mp.log(2)),
    ("gumbel_r", "logsf", 40.0, (), lambda x: mp.log(-mp.expm1(-mp.exp(-x)))),
    ("gumbel_l", "logcdf", -40.0, (), lambda x: mp.log(-mp.expm1(-mp.exp(x)))),
    ("expon", "logcdf", 1e-10, (), lambda x: mp.log(-mp.expm1(-x))),
    ("expon", "logcdf", 40.0, (), lambda x: mp.log(-mp.expm1(-x))),
    ("gamma", "logsf", 40.0, (2.5,), lambda x: mp.log(mp.gammainc(2.5, x, mp.inf, regularized=True))),
    ("gamma", "logcdf", 40.0, (2.5,), lambda x: mp.log(mp.gammainc(2.5, 0, x, regularized=True))),
    ("chi2", "logsf", 40.0, (3.0,),
     lambda x: mp.log(mp.gammainc(1.5, x / 2, mp.inf, regularized=True))),
    ("beta", "logsf", 0.999, (2.0, 3.0),
     lambda x: mp.log(mp.betainc(3.0, 2.0, 0, 1 - x, regularized=True))),
    ("lognorm", "logsf", 40.0, (0.5,), lambda x: mp.log(mp.ncdf(-mp.log(x) / 0.5))),
    ("gennorm", "logcdf", -40.0, (1.5,),
     lambda x: mp.log(mp.gammainc(1 / 1.5, abs(x) ** 1.5, mp.inf, regularized=True) / 2)),
    ("pareto", "logcdf", 1.0 + 1e-12, (2.0,), lambda x: mp.log(1 - x ** -2)),
    ("truncnorm", "logsf", 6.5, (5.0, 8.0),
     lambda x: mp.log((mp.ncdf(-x) - mp.ncdf(-8)) / (mp.ncdf(-5) - mp.ncdf(-8)))),
    ("truncnorm", "logcdf", -7.5, (-8.0, -5.0),
     lambda x: mp.log((mp.ncdf(x) - mp.ncdf(-8)) / (mp.ncdf(-5) - mp.ncdf(-8)))),
]


@pytest.mark.parametrize("name,method,x,shapes,ref", TAILS,
                         ids=[f"{t[0]}.{t[1]}({t[2]})" for t in TAILS])
def test_tails_are_finite_and_accurate(name, method, x, shapes, ref):
    mp.mp.dps = 50
    got = getattr(getattr(fs, name), method)(x, *shapes)
    want = float(ref(mp.mpf(x)))
    assert np.isfinite(got) and abs(got - want) <= 1e-12 * abs(want), (got, want)
    g = fxad.grad(lambda v: getattr(getattr(fs, name), method)(v, *shapes))(x)
    assert np.isfinite(g)


def _interior(name, shapes):
    """Points well inside the support (away from its ends and from cusps)."""
    lo, hi = {"expon": (0.2, 3.0), "gamma": (0.3, 4.0), "chi2": (0.3, 4.0), "lognorm": (0.3, 4.0),
              "pareto": (1.2, 4.0), "beta": (0.1, 0.9), "uniform": (0.1, 0.9),
              "wrapcauchy": (0.2, 6.0), "truncnorm": (shapes[0] + 0.1, shapes[-1] - 0.1)
              if shapes else (0, 0)}.get(name, (-3.0, 3.0))
    pts = np.linspace(lo, hi, 4)
    return pts + (0.013 if name in ("gennorm", "laplace") else 0.0)  # not on the cusp at 0


@pytest.mark.parametrize("name,sh1,sh2", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_derivatives_in_the_value_and_every_parameter(name, sh1, sh2):
    """Second order, both modes, in x, loc, scale and each shape parameter at once."""
    dist = getattr(fs, name)
    z = _interior(name, sh1)
    loc, scale = 0.3, 1.7
    x = loc + scale * z
    shapes = tuple(np.full(4, s) for s in sh1)
    for m in ["logpdf", "cdf", "logcdf", "logsf", "ppf"]:
        if not hasattr(dist, m):
            continue
        args = x if m != "ppf" else np.array([0.1, 0.35, 0.6, 0.85]) + 0.013
        check_grads(lambda x, loc, scale, *s: getattr(dist, m)(x, *s, loc=loc, scale=scale),
                    (args, np.full(4, loc), np.full(4, scale)) + shapes, order=2)


@pytest.mark.parametrize("name,sh1,sh2", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_no_nan_derivatives_outside_the_support(name, sh1, sh2):
    """Every method's gradient in x, loc, scale and the shape parameters is 0 (the value is a
    constant there), never NaN, at points outside the support and at x = ±inf."""
    dist = getattr(fs, name)
    lo, hi = getattr(st, name).support(*sh1)
    x = np.array([-1e300, -40.0, -0.5, 40.0, 1e300, np.inf, -np.inf])
    x = x[(x < lo) | (x > hi) | np.isinf(x)]
    for m in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
        if not hasattr(dist, m):
            continue
        with np.errstate(all="ignore"):
            g = fxad.grad(lambda x, loc, scale, s: fnp.sum(getattr(dist, m)(
                x, *s, loc=loc, scale=scale)), argnums=(0, 1, 2, 3))(x, 0.0, 1.0, sh1)
        for leaf in fxad.tree_util.tree_leaves(g):
            np.testing.assert_array_equal(leaf, 0.0, err_msg=f"{m}: {g}")


def test_broadcasting_in_every_parameter():
    x = np.linspace(0.2, 3.0, 3).reshape(3, 1, 1)
    a = np.array([0.7, 2.0]).reshape(1, 2, 1)
    loc = np.array([0.0, 0.1, -0.1, 0.05])
    scale = np.array([[1.3]])
    for m in ("logpdf", "cdf", "logsf"):
        got = getattr(fs.gamma, m)(x, a, loc=loc, scale=scale)
        want = getattr(st.gamma, m)(x, a, loc=loc, scale=scale)
        assert got.shape == (3, 2, 4)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    grads = fxad.grad(lambda x, a, loc, scale: fnp.sum(fs.gamma.logcdf(x, a, loc=loc,
                                                                       scale=scale)),
                      argnums=(0, 1, 2, 3))(x, a, loc, scale)
    assert [g.shape for g in grads] == [(3, 1, 1), (1, 2, 1), (4,), (1, 1)]


def test_shape_derivatives_of_cdfs_match_mpmath():
    mp.mp.dps = 40
    cases = [(lambda a: fs.gamma.cdf(2.0, a), lambda a: mp.gammainc(a, 0, 2, regularized=True), 1.7),
             (lambda d: fs.t.cdf(-2.0, d), lambda d: mp.betainc(d / 2, 0.5, 0, d / (d + 4),
                                                                 regularized=True) / 2, 3.0),
             (lambda b: fs.beta.sf(0.3, 2.0, b), lambda b: mp.betainc(b, 2.0, 0, 0.7,
                                                                      regularized=True), 0.8),
             (lambda b: fs.gennorm.cdf(-1.5, b), lambda b: mp.gammainc(
                 1 / b, mp.mpf(1.5) ** b, mp.inf, regularized=True) / 2, 1.3),
             (lambda mu: fs.poisson.cdf(3, mu), lambda mu: mp.gammainc(4, mu, mp.inf,
                                                                        regularized=True), 2.5)]
    for f, ref, p in cases:
        want = float(mp.diff(ref, p))
        assert abs(fxad.grad(f)(p) - want) <= 1e-10 * abs(want)


def test_vmap_and_jit():
    x = np.array([0.2, 1.0, 3.0])
    a = np.array([0.5, 2.0, 7.0])
    f = fxad.grad(lambda x, a: fs.gamma.logcdf(x, a) + fs.t.logpdf(x, a) + fs.beta.logsf(
        x / 4, a, 2.0), argnums=(0, 1))
    vm = fxad.vmap(f)(x, a)
    for k in range(2):
        np.testing.assert_allclose(vm[k], [f(x[i], a[i])[k] for i in range(3)], rtol=1e-13)
    for got, want in zip(fxad.jit(f)(x[0], a[0]), f(x[0], a[0])):
        np.testing.assert_allclose(got, want, rtol=1e-13)


# --- discrete ----------------------------------------------------------------------------------

DISCRETE = [("poisson", (3.2,)), ("binom", (10, 0.3)), ("nbinom", (4.5, 0.35)), ("geom", (0.3,)),
            ("bernoulli", (0.3,)), ("betabinom", (10, 2.0, 3.5))]
K = np.array([-1.0, 0.0, 1.0, 2.5, 3.0, 7.0, 10.0, 11.0, 40.0, np.nan, np.inf])


@pytest.mark.parametrize("name,shapes", DISCRETE, ids=[d[0] for d in DISCRETE])
def test_discrete_values_are_scipys(name, shapes):
    ours, theirs = getattr(fs, name), getattr(st, name)
    for m in ["logpmf", "pmf", "cdf", "logcdf", "sf", "logsf", "ppf"]:
        if not hasattr(ours, m):
            continue
        args = np.array([0.0, 1e-10, 0.3, 0.5, 0.99, 1.0, 1.5]) if m == "ppf" else K
        with np.errstate(all="ignore"):
            got, want = getattr(ours, m)(args, *shapes), getattr(theirs, m)(args, *shapes)
        close = np.isclose(got, want, rtol=1e-10, atol=0, equal_nan=True) | \
            (np.isclose(got, want, rtol=0, atol=1e-15) & (np.abs(want) < 1e-15))
        assert close.all(), (m, args[~close], got[~close], want[~close])
    np.testing.assert_allclose(ours.logpmf(K[1:4], *shapes, loc=1.0),
                               theirs.logpmf(K[1:4], *shapes, loc=1.0), rtol=1e-12)


@pytest.mark.parametrize("name,shapes", DISCRETE, ids=[d[0] for d in DISCRETE])
def test_discrete_derivatives_in_continuous_parameters(name, shapes):
    dist = getattr(fs, name)
    k = np.array([1.0, 2.0, 3.0])
    cont = {"poisson": [0], "binom": [1], "nbinom": [0, 1], "geom": [0], "bernoulli": [0],
            "betabinom": [1, 2]}[name]

    def f(*free):
        sh = list(shapes)
        for i, v in zip(cont, free):
            sh[i] = v
        kk = np.array([0.0, 1.0, 0.0]) if name == "bernoulli" else k  # (logsf(1) = -inf)
        return [getattr(dist, m)(kk, *sh) for m in ("logpmf", "cdf", "logsf")
                if hasattr(dist, m) and not (name == "bernoulli" and m == "logsf")]
    check_grads(f, tuple(np.full(3, float(shapes[i])) for i in cont), order=2)


# --- multivariate ------------------------------------------------------------------------------

def test_multivariate_normal():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 3))
    cov, mean = A @ A.T + np.eye(3), rng.standard_normal(3)
    for x in [rng.standard_normal(3), rng.standard_normal((5, 3)), rng.standard_normal((2, 4, 3))]:
        for c in (cov, np.diag(cov), 2.0):
            np.testing.assert_allclose(fs.multivariate_normal.logpdf(x, mean, c),
                                       st.multivariate_normal.logpdf(x, mean, c), rtol=1e-12)
        np.testing.assert_allclose(fs.multivariate_normal.pdf(x, mean, cov, allow_singular=True),
                                   st.multivariate_normal.pdf(x, mean, cov, allow_singular=True),
                                   rtol=1e-10)
    np.testing.assert_allclose(fs.multivariate_normal.logpdf(np.array([0.1, 0.2, 3.0]), 0.5, 2.0),
                               st.multivariate_normal.logpdf(np.array([0.1, 0.2, 3.0]), 0.5, 2.0))
    sing, pts = np.ones((2, 2)), np.array([[0.3, 0.3], [0.3, 0.5]])
    np.testing.assert_allclose(fs.multivariate_normal.logpdf(pts, None, sing, allow_singular=True),
                               st.multivariate_normal.logpdf(pts, None, sing, allow_singular=True))
    check_grads(lambda x, m, a: fs.multivariate_normal.logpdf(x, m, a @ a.T + np.eye(3)),
                (rng.standard_normal((4, 3)), mean, A), order=2)
    check_grads(lambda x, v: fs.multivariate_normal.logpdf(x, None, v * v + 0.5),
                (rng.standard_normal((4, 3)), mean), order=2)


def test_multivariate_normal_entropy():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3, 3))
    cov = A @ A.T + np.eye(3)
    for mean, c in [(None, cov), (np.zeros(3), np.diag(cov)), (None, 2.0),
                    (None, np.diag([1.0, 2.0, 0.0]))]:  # SciPy allows a singular one here
        np.testing.assert_allclose(fs.multivariate_normal.entropy(mean, c),
                                   st.multivariate_normal.entropy(mean, c), rtol=1e-13)
    check_grads(lambda a: fs.multivariate_normal.entropy(None, a @ a.T + np.eye(3)), (A,),
                order=2)
    check_grads(lambda v: fs.multivariate_normal.entropy(np.zeros(3), v * v + 0.5), (A[0],),
                order=2)


def test_dirichlet_and_multinomial():
    rng = np.random.default_rng(1)
    alpha = np.array([1.5, 0.7, 3.0])
    x = rng.dirichlet(alpha, size=4).T
    np.testing.assert_allclose(fs.dirichlet.logpdf(x, alpha), st.dirichlet.logpdf(x, alpha),
                               rtol=1e-12)
    np.testing.assert_allclose(fs.dirichlet.pdf(x[:2], alpha), st.dirichlet.pdf(x[:2], alpha),
                               rtol=1e-12)
    assert fs.dirichlet.logpdf(np.array([0.5, 0.6, -0.1]), alpha) == -np.inf
    check_grads(lambda x2, a: fs.dirichlet.logpdf(x2, a), (x[:2], alpha), order=2)
    p = np.array([0.2, 0.5, 0.3])
    xm = np.array([[1.0, 2, 3], [0, 0, 6], [1, 1, 1], [1.5, 1.5, 3]])
    np.testing.assert_allclose(fs.multinomial.logpmf(xm, 6, p), st.multinomial.logpmf(xm, 6, p),
                               rtol=1e-12)
    check_grads(lambda p: fs.multinomial.logpmf(xm[:2], 6, p), (p,), order=2)


def test_gaussian_kde():
    rng = np.random.default_rng(2)
    data, w, pts = rng.standard_normal((2, 30)), rng.uniform(0.5, 1, 30), rng.standard_normal((2, 5))
    for bw in (None, "silverman", 0.4, lambda k: 0.3):
        k, s = fs.gaussian_kde(data, bw, w), st.gaussian_kde(data, bw, w)
        np.testing.assert_allclose(k(pts), s(pts), rtol=1e-12)
        np.testing.assert_allclose(k.logpdf(pts), s.logpdf(pts), rtol=1e-12)
        np.testing.assert_allclose(k.integrate_gaussian(np.zeros(2), np.eye(2)),
                                   s.integrate_gaussian(np.zeros(2), np.eye(2)), rtol=1e-12)
        np.testing.assert_allclose(k.integrate_kde(fs.gaussian_kde(pts)),
                                   s.integrate_kde(st.gaussian_kde(pts)), rtol=1e-12)
    k1, s1 = fs.gaussian_kde(data[0]), st.gaussian_kde(data[0])
    np.testing.assert_allclose(k1.integrate_box_1d(-0.5, 1.0), s1.integrate_box_1d(-0.5, 1.0))
    assert np.isfinite(k1.logpdf(1e3))  # far from the data: logsumexp, not log(0)
    np.testing.assert_allclose(k1.logpdf(60.0), s1.logpdf(60.0), rtol=1e-12)
    assert k1.resample(7, seed=0).shape == (1, 7)
    check_grads(lambda d, p: fs.gaussian_kde(d).logpdf(p), (data[:, :8], pts), order=2)
    check_grads(lambda w: fs.gaussian_kde(data, weights=w).logpdf(pts), (w,), order=2)
    kde = fs.gaussian_kde(data)
    np.testing.assert_allclose(fxad.jit(lambda k, p: k.logpdf(p))(kde, pts), kde.logpdf(pts),
                               rtol=1e-13)
    sets = np.stack([data, 2 * data])
    np.testing.assert_allclose(fxad.vmap(lambda d: fs.gaussian_kde(d).logpdf(pts))(sets),
                               np.stack([fs.gaussian_kde(d).logpdf(pts) for d in sets]),
                               rtol=1e-13)


def test_mode_rankdata_sem():
    a = np.array([[3.0, 1, 2, 3], [2, 2, 5, 1]])
    for axis in (0, 1, None):
        np.testing.assert_array_equal(fs.rankdata(a, axis=axis), st.rankdata(a, axis=axis))
        m, c = fs.mode(a, axis=axis)
        want = st.mode(a, axis=axis)
        np.testing.assert_array_equal(m, want.mode)
        np.testing.assert_array_equal(c, want.count)
        np.testing.assert_allclose(fs.sem(a, axis=axis), st.sem(a, axis=axis), rtol=1e-14)
    np.testing.assert_array_equal(fxad.grad(lambda a: fnp.sum(fs.mode(a, axis=1).mode))(a),
                                  [[1, 0, 0, 0], [1, 0, 0, 0]])  # the first occurrence
    check_grads(lambda a: fs.sem(a, axis=1, ddof=0), (a,), order=2)
    np.testing.assert_array_equal(fxad.vmap(fs.rankdata)(a), np.stack([st.rankdata(r)
                                                                       for r in a]))


def test_derivatives_at_the_ends_of_the_support():
    """Where the log density is finite at an end of its support, its derivative there is the
    one-sided one (xlogy's 0/0 taken as 0): gamma(a=1) at 0 is expon, beta(2, 1) at 1 is 1,
    poisson at mu = 0, binom at p = 0."""
    assert fxad.grad(lambda x: fs.gamma.logpdf(x, 1.0, scale=2.0))(0.0) == -0.5
    assert fxad.grad(lambda x: fs.expon.logpdf(x, scale=2.0))(0.0) == -0.5
    assert fxad.grad(lambda x: fs.beta.logpdf(x, 2.0, 1.0))(1.0) == 1.0
    assert fxad.grad(lambda x: fs.beta.logpdf(x, 1.0, 1.0))(0.0) == 0.0
    assert fxad.grad(lambda mu: fs.poisson.logpmf(0, mu))(0.0) == -1.0
    assert fxad.grad(lambda p: fs.binom.logpmf(0, 5, p))(0.0) == -5.0
    assert fxad.grad(lambda p: fs.bernoulli.logpmf(1, p))(1.0) == 1.0


@pytest.mark.parametrize("method", ["cdf", "logcdf", "sf", "logsf"])
def test_float32_stays_float32_eagerly_and_under_jit(method):
    # The value outside the support was a select of two Python floats (a float64 array), so
    # under jit (where the support mask is traced) float32 became float64; eagerly the select
    # was skipped. Found by the fuzzer.
    x = np.array([-1.9, 0.4, np.inf], np.float32)
    fn = getattr(fs.norm, method)
    g = lambda x: fn(x, loc=fnp.tanh(x), scale=2.0)  # noqa: E731
    assert g(x).dtype == np.float32
    assert fxad.jit(g)(x).dtype == np.float32
    np.testing.assert_allclose(fxad.jit(g)(x), g(x), rtol=1e-6)


@pytest.mark.parametrize("g", [
    lambda x: fs.gamma.logpdf(fnp.abs(x), 2.5, scale=fnp.exp(x)),
    lambda x: fs.beta.cdf(x * 0.1 + 0.5, fnp.exp(x), 2.0),
    lambda x: fs.poisson.logpmf(fnp.floor(fnp.abs(x) * 3), fnp.exp(x)),
    lambda x: fs.t.ppf(x * 0.1 + 0.5, 3.0, loc=x)])
def test_float32_with_python_float_and_traced_parameters(g):
    x = np.array([-1.9, 0.4, 1.2], np.float32)
    assert g(x).dtype == np.float32
    assert fxad.jit(g)(x).dtype == np.float32
    np.testing.assert_allclose(fxad.jit(g)(x), g(x), rtol=2e-5)

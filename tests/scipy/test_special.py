"""fxad.scipy.special: every jax.scipy.special name, values against SciPy, derivatives against
mpmath (shape parameters included, in the tails), second order, vmap, jit, extreme inputs,
plain scipy.special dispatch, and logsumexp's full signature."""
import mpmath as mp
import numpy as np
import pytest
import scipy.special as sc

import fxad
import fxad.numpy as fnp
from fxad.scipy import special as fs
from fxad.test_util import check_grads

# jax.scipy.special's public names (jax 0.10.2), so the count needs no jax at test time.
JAX_SPECIAL = [
    "bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "dawsn",
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit", "expn",
    "factorial", "fresnel", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn", "hyp1f1",
    "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax", "loggamma", "logit",
    "logsumexp", "multigammaln", "ndtr", "ndtri", "owens_t", "poch", "polygamma", "rel_entr",
    "sici", "softmax", "spence", "sph_harm_y", "wofz", "xlog1py", "xlogy", "zeta"]


def test_every_jax_scipy_special_name_is_there():
    missing = [n for n in JAX_SPECIAL if not callable(getattr(fs, n, None))]
    assert not missing and len(JAX_SPECIAL) == 53


X = np.array([0.05, 0.4, 1.3, 2.9, 7.5])
VALUES = [  # (fxad function, SciPy function, argument builder)
    ("beta", lambda a, b: (a, b + 0.1)), ("betaln", lambda a, b: (a, b)),
    ("betainc", lambda a, b: (a, b, a / (a + b))), ("gammainc", lambda a, b: (a, b)),
    ("gammaincc", lambda a, b: (a, b)), ("gammaincinv", lambda a, b: (a, b / 8)),
    ("gammainccinv", lambda a, b: (a, b / 8)), ("betaincinv", lambda a, b: (a, b, b / 8)),
    ("stdtr", lambda a, b: (a, b - 2)), ("stdtrit", lambda a, b: (a, b / 8)),
    ("i0", lambda a, b: (b - 3,)), ("i0e", lambda a, b: (b - 3,)), ("i1", lambda a, b: (b - 3,)),
    ("i1e", lambda a, b: (b - 3,)), ("iv", lambda a, b: (2.5, b)), ("ive", lambda a, b: (1.5, b)),
    ("jv", lambda a, b: (3, b)), ("zeta", lambda a, b: (a + 1.1, b)), ("kl_div", lambda a, b: (a, b)),
    ("rel_entr", lambda a, b: (a, b)), ("loggamma", lambda a, b: (a,)), ("erfcx", lambda a, b: (b - 3,)),
    ("expi", lambda a, b: (b - 3,)), ("exp1", lambda a, b: (b,)), ("expn", lambda a, b: (2, b)),
    ("spence", lambda a, b: (b,)), ("dawsn", lambda a, b: (b - 3,)), ("wofz", lambda a, b: (b - 3,)),
    ("owens_t", lambda a, b: (a - 1, b)), ("hyp1f1", lambda a, b: (a, b + 1, a - 1)),
    ("hyp2f1", lambda a, b: (a, b, b + 1, a / 9)), ("poch", lambda a, b: (a, b)),
    ("gammasgn", lambda a, b: (a - 3,)), ("boxcox", lambda a, b: (b, a - 1)),
    ("boxcox1p", lambda a, b: (b, a - 1)), ("exprel", lambda a, b: (b - 3,)),
    ("binom", lambda a, b: (a + 3, b)), ("psi", lambda a, b: (a,)),
    ("y0", lambda a, b: (b,)), ("y1", lambda a, b: (b,)), ("yn", lambda a, b: (2, b)),
    ("yv", lambda a, b: (-1.5, b)), ("jn", lambda a, b: (3, b)), ("k0", lambda a, b: (b,)),
    ("k0e", lambda a, b: (b,)), ("k1", lambda a, b: (b,)), ("k1e", lambda a, b: (b,)),
    ("kn", lambda a, b: (3, b)), ("kv", lambda a, b: (0.7, b)), ("kve", lambda a, b: (2.5, b)),
    ("rgamma", lambda a, b: (b - 3,)), ("erfcinv", lambda a, b: (b / 8,)),
    ("ndtri_exp", lambda a, b: (-b,)),
]


@pytest.mark.parametrize("name,args", VALUES, ids=[v[0] for v in VALUES])
def test_values_are_scipys(name, args):
    a = np.array([0.3, 1.1, 2.5, 4.0, 9.0])
    np.testing.assert_array_equal(getattr(fs, name)(*args(a, X)), getattr(sc, name)(*args(a, X)))


def test_jn_is_jv():
    np.testing.assert_array_equal(fs.jn(3, X), sc.jn(3, X))
    check_grads(lambda x: fs.jn(2, x), (X,), order=2)


def test_composite_values():
    x = np.array([[0.2, 1.5, -3.0], [4.0, 0.0, -1.0]])
    for axis in (None, 0, 1, (0, 1)):
        np.testing.assert_allclose(fs.softmax(x, axis=axis), sc.softmax(x, axis=axis), rtol=1e-13)
        np.testing.assert_allclose(fs.log_softmax(x, axis=axis), sc.log_softmax(x, axis=axis),
                                   rtol=1e-13)
    np.testing.assert_allclose(fs.multigammaln(np.array([3.1, 7.0]), 3),
                               sc.multigammaln(np.array([3.1, 7.0]), 3), rtol=1e-14)
    n, k = np.array([5.0, 7.5, 3.0, -1.0, 2.0]), np.array([2.0, 3.0, 5.0, 1.0, 0.0])
    np.testing.assert_allclose(fs.comb(n, k), sc.comb(n, k), rtol=1e-14)
    ok = n >= 0  # (SciPy's value for a negative n with repetition changed between versions)
    np.testing.assert_allclose(fs.comb(n[ok], k[ok], repetition=True),
                               sc.comb(n[ok], k[ok], repetition=True), rtol=1e-14)
    np.testing.assert_allclose(fs.factorial(np.array([-1.0, 0.0, 3.0, 4.5])),
                               sc.factorial(np.array([-1.0, 0.0, 3.0, 4.5])), rtol=1e-14)
    assert fs.comb(10, 3, exact=True) == 120 and fs.factorial(5, exact=True) == 120
    np.testing.assert_array_equal(fs.bernoulli(6), sc.bernoulli(6))
    s, c = fs.fresnel(X)
    np.testing.assert_array_equal(np.stack([s, c]), np.stack(sc.fresnel(X)))
    np.testing.assert_array_equal(np.stack(fs.sici(X)), np.stack(sc.sici(X)))
    np.testing.assert_array_equal(fs.zeta(X + 1.5), sc.zeta(X + 1.5))  # Riemann
    np.testing.assert_allclose(fs.bessel_jn(X, v=3), np.stack([sc.jv(k, X) for k in range(4)]),
                               rtol=1e-14)
    np.testing.assert_allclose(fs.sph_harm_y(3, -2, 0.7, X), sc.sph_harm_y(3, -2, 0.7, X),
                               rtol=1e-14)


# --- derivatives against mpmath ----------------------------------------------------------------

mp.mp.dps = 40


def _mp_diff(f, point, orders):
    return float(mp.diff(f, point, orders))


def P(a, x):
    return mp.gammainc(a, 0, x, regularized=True)


def Q(a, x):
    return mp.gammainc(a, x, mp.inf, regularized=True)


def I_(a, b, x):
    return mp.betainc(a, b, 0, x, regularized=True)


def _mp_betainc_diff(a, b, x, orders):
    """A derivative of I_x(a, b), computed on the smaller side: above the mean, as minus the
    derivative of the complement I_(1-x)(b, a), so tiny upper-tail derivatives keep their
    digits (1 - I would round them away at any working precision)."""
    if x < a / (a + b):
        return _mp_diff(I_, (a, b, x), orders)
    return -_mp_diff(lambda p, q, y: I_(q, p, 1 - y), (a, b, x), orders)


def _d(f, argnums, *args):
    """The derivative of f in argument argnums (an int or a tuple: higher order)."""
    g = f
    for i in ((argnums,) if isinstance(argnums, int) else argnums):
        g = fxad.grad(g, argnums=i)
    return g(*args)


GAMMA_POINTS = [(0.5, 0.1), (0.5, 3.0), (2.0, 2.5), (10.0, 1.0), (10.0, 30.0), (100.0, 90.0),
                (100.0, 130.0), (0.01, 1e-5), (3.0, 1e-8), (5.0, 60.0), (1e3, 1.05e3)]


@pytest.mark.parametrize("a,x", GAMMA_POINTS, ids=str)
def test_gammainc_derivatives_match_mpmath(a, x):
    """∂a, ∂a², ∂a∂x, ∂x of P (and of Q = 1 - P, whose small values in the upper tail are
    computed directly): 1e-10 relative (1e-9 for the mixed and second ones at a = 1000)."""
    tol = 1e-10 if a < 500 else 1e-9
    for orders, argnums in [((1, 0), 0), ((2, 0), (0, 0)), ((1, 1), (0, 1)), ((0, 1), 1)]:
        want = _mp_diff(P, (a, x), orders)
        got = _d(fs.gammainc, argnums, a, x)
        assert abs(got - want) <= tol * abs(want), (orders, got, want)
        got_q = _d(fs.gammaincc, argnums, a, x)
        assert abs(got_q + want) <= tol * abs(want), (orders, got_q, -want)
    if x > a + 1:  # the upper tail of Q itself, relative to Q's (tiny) derivative
        want = _mp_diff(Q, (a, x), (1, 0))
        assert abs(_d(fs.gammaincc, 0, a, x) - want) <= 1e-10 * abs(want)


BETA_POINTS = [(0.5, 0.5, 0.3), (2.0, 3.0, 0.1), (2.0, 3.0, 0.9), (0.1, 5.0, 0.999),
               (10.0, 20.0, 0.3), (100.0, 50.0, 0.7), (3.0, 0.2, 1e-6), (5.0, 5.0, 1 - 1e-9),
               (0.01, 0.01, 0.5), (50.0, 0.5, 0.999)]


@pytest.mark.parametrize("a,b,x", BETA_POINTS, ids=str)
def test_betainc_derivatives_match_mpmath(a, b, x):
    for orders, argnums in [((1, 0, 0), 0), ((0, 1, 0), 1), ((0, 0, 1), 2), ((2, 0, 0), (0, 0)),
                            ((1, 1, 0), (0, 1)), ((0, 2, 0), (1, 1)), ((1, 0, 1), (0, 2))]:
        want = _mp_betainc_diff(a, b, x, orders)
        got = _d(fs.betainc, argnums, a, b, x)
        if want == 0:  # ∂a∂b I at a = b, x = 1/2 (symmetry): zero to rounding
            assert abs(got) < 1e-12
        else:
            assert abs(got - want) <= 1e-10 * abs(want), (orders, got, want)


def test_student_t_cdf_derivatives_match_mpmath():
    def F(df, t):
        w = t * t / (df + t * t)
        return 0.5 + mp.sign(t) * 0.5 * mp.betainc(0.5, df / 2, 0, w, regularized=True)
    for df, t in [(1.0, -40.0), (3.0, 0.5), (10.0, -2.0), (0.5, 3.0), (30.0, -1e-3)]:
        for orders, argnums in [((1, 0), 0), ((2, 0), (0, 0)), ((1, 1), (0, 1))]:
            want = _mp_diff(F, (df, t), orders)
            got = _d(fs.stdtr, argnums, df, t)
            assert abs(got - want) <= 1e-10 * abs(want), (df, t, orders, got, want)


def test_inverse_functions_are_differentiated_implicitly():
    """x = P⁻¹(a, y): ∂x/∂a = -∂P/∂a / density, by mpmath's root of P(a, x) = y."""
    for a, y in [(0.7, 0.2), (3.0, 0.99), (20.0, 1e-5)]:
        def root(aa):
            return mp.findroot(lambda x: P(aa, x) - y, sc.gammaincinv(a, y))
        want = float(mp.diff(root, a))
        assert abs(_d(fs.gammaincinv, 0, a, y) - want) <= 1e-10 * abs(want)
    check_grads(fs.betaincinv, (np.array([0.7, 3.0]), np.array([2.0, 0.4]),
                                np.array([0.3, 0.9])), order=2)


ELEMENTARY = [  # name, fxad function of x, mpmath function, points
    # (erfcx' = 2x erfcx - 2/√π cancels ~x²-fold for large x; past 15 it is an asymptotic
    # series, so the tail points are exact too)
    ("erfcx", fs.erfcx, lambda x: mp.exp(x * x) * mp.erfc(x), [-3.0, 0.5, 10.0, 30.0, 1e4]),
    ("dawsn", fs.dawsn, lambda x: mp.sqrt(mp.pi) / 2 * mp.exp(-x * x) * mp.erfi(x),
     [-2.0, 0.1, 8.0]),
    ("expi", fs.expi, mp.ei, [-5.0, 0.3, 20.0]),
    ("exp1", fs.exp1, mp.e1, [0.01, 1.0, 40.0]),
    ("expn3", lambda x: fs.expn(3, x), lambda x: mp.expint(3, x), [0.2, 4.0]),
    ("spence", fs.spence, lambda z: mp.polylog(2, 1 - z), [0.1, 0.999, 1.0, 1.01, 5.0]),
    ("i0", fs.i0, lambda x: mp.besseli(0, x), [-3.0, 0.0, 50.0]),
    ("i1", fs.i1, lambda x: mp.besseli(1, x), [-3.0, 0.0, 50.0]),
    ("i0e", fs.i0e, lambda x: mp.besseli(0, x) * mp.exp(-abs(x)), [-3.0, 0.5, 300.0]),
    ("i1e", fs.i1e, lambda x: mp.besseli(1, x) * mp.exp(-abs(x)), [-3.0, 0.5, 300.0]),
    ("loggamma", fs.loggamma, mp.loggamma, [0.01, 2.5, 1e5]),
    ("zeta_s", lambda s: fs.zeta(s, 2.5), lambda s: mp.zeta(s, 2.5), [1.01, 3.0, 40.0]),
    ("zeta_q", lambda q: fs.zeta(3.5, q), lambda q: mp.zeta(3.5, q), [0.01, 2.0, 100.0]),
    ("riemann", fs.zeta, mp.zeta, [1.5, 6.0]),
    ("si", lambda x: fs.sici(x)[0], lambda x: mp.si(x), [-2.0, 0.0, 0.3, 9.0]),
    ("fresnel_c", lambda x: fs.fresnel(x)[1], mp.fresnelc, [-1.2, 0.4, 2.9]),
    ("boxcox_lmbda", lambda l: fs.boxcox(3.0, l), lambda l: (mp.mpf(3) ** l - 1) / l
     if l != 0 else mp.log(3), [-0.5, 1e-9, 2.0]),
    ("y0", fs.y0, lambda x: mp.bessely(0, x), [0.05, 1.0, 30.0]),
    ("y1", fs.y1, lambda x: mp.bessely(1, x), [0.05, 1.0, 30.0]),
    ("yn3", lambda x: fs.yn(3, x), lambda x: mp.bessely(3, x), [0.5, 4.0]),
    ("yv-0.5", lambda x: fs.yv(-0.5, x), lambda x: mp.bessely(-0.5, x), [0.3, 5.0]),
    ("k0", fs.k0, lambda x: mp.besselk(0, x), [0.05, 1.0, 30.0]),
    ("k1e", fs.k1e, lambda x: mp.besselk(1, x) * mp.exp(x), [0.05, 1.0, 300.0]),
    ("kn2", lambda x: fs.kn(2, x), lambda x: mp.besselk(2, x), [0.5, 4.0]),
    ("kve1.5", lambda x: fs.kve(1.5, x), lambda x: mp.besselk(1.5, x) * mp.exp(x), [0.3, 50.0]),
    # 1/Γ is entire: its derivatives are finite at 0, -1, -2, ... where ψ and Γ have poles
    ("rgamma", fs.rgamma, mp.rgamma, [-3.0, -2.5, -1.0, 0.0, 0.2, 0.5, 1.0, 3.5, 20.0]),
    ("erfcinv", fs.erfcinv, lambda y: mp.erfinv(1 - y), [1e-12, 0.3, 1.0, 1.7]),
    ("owens_t_h", lambda h: fs.owens_t(h, 0.7),
     lambda h: mp.quad(lambda t: mp.exp(-h * h * (1 + t * t) / 2) / (1 + t * t), [0, 0.7])
     / (2 * mp.pi), [-1.0, 0.3, 4.0]),
]


@pytest.mark.parametrize("name,f,ref,points", ELEMENTARY, ids=[e[0] for e in ELEMENTARY])
def test_first_and_second_derivatives_match_mpmath(name, f, ref, points):
    for x in points:
        for n in (1, 2):
            want = float(mp.diff(ref, mp.mpf(x), n))
            g = f
            for _ in range(n):
                g = fxad.grad(g)
            got = g(x)
            assert abs(got - want) <= 1e-10 * abs(want) + 1e-14 * (n == 2 and abs(want) < 1e-6), \
                (x, n, got, want)


def test_shape_parameter_derivatives_to_third_order():
    """∂a³ P uses gammainc_da(a, x, 3); ∂a ∂b ∂x I uses betainc_d's x-rule."""
    want = _mp_diff(P, (2.5, 1.7), (3, 0))
    got = _d(fs.gammainc, (0, 0, 0), 2.5, 1.7)
    assert abs(got - want) <= 1e-10 * abs(want)
    want = _mp_betainc_diff(1.5, 2.5, 0.4, (1, 1, 1))
    got = _d(fs.betainc, (0, 1, 2), 1.5, 2.5, 0.4)
    assert abs(got - want) <= 1e-10 * abs(want)


def test_second_order_in_both_modes_through_the_public_names():
    a, b = np.array([0.6, 2.0, 7.0]), np.array([1.5, 0.4, 3.0])
    x = np.array([0.2, 0.5, 0.95])
    check_grads(lambda a, b, x: fs.betainc(a, b, x) * fs.gammainc(a, 3 * x), (a, b, x), order=2)
    check_grads(lambda x: fs.i1e(x) + fs.spence(x + 0.5) + fs.erfcx(x), (x,), order=2)
    check_grads(lambda s, q: fs.zeta(s + 1.2, q), (a, b), order=2)
    check_grads(lambda x, l: fs.boxcox1p(x, l - 1.0), (x, a / 3), order=2)
    check_grads(lambda x: fs.multigammaln(x + 2.0, 3), (a,), order=2)


def test_vmap_and_jit_of_gradients():
    a, x = np.array([0.6, 2.0, 7.0]), np.array([0.2, 1.5, 9.0])
    g = fxad.grad(lambda a, x: fnp.sum(fs.gammaincc(a, x) * fs.betaln(a, x)), argnums=(0, 1))
    vm = fxad.vmap(g)(a, x)
    loop = [g(a[i], x[i]) for i in range(3)]
    for k in range(2):
        np.testing.assert_allclose(vm[k], [l[k] for l in loop], rtol=1e-13)
    for got, want in zip(fxad.jit(g)(a, x), g(a, x)):
        np.testing.assert_allclose(got, want, rtol=1e-13)


EXTREMES = np.array([-1e300, -40.0, -1e-300, 0.0, 1e-300, 1e300, np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("name", ["erfcx", "dawsn", "expi", "exp1", "spence", "i0e", "i1e",
                                  "loggamma", "gammasgn", "exprel", "psi"])
def test_extreme_inputs_match_scipy(name):
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(getattr(fs, name)(EXTREMES), getattr(sc, name)(EXTREMES))


def test_extreme_shape_parameters():
    """P and I at the ends of their domains: values as SciPy, shape derivatives 0 where the
    value is pinned (x = 0, x = inf, x = 1), NaN outside the domain (never a number)."""
    with np.errstate(all="ignore"):
        x = np.array([0.0, 1e-300, 1e300, np.inf])
        np.testing.assert_array_equal(fs.gammainc(2.0, x), sc.gammainc(2.0, x))
        ga = fxad.vmap(fxad.grad(fs.gammainc))(np.full(4, 2.0), x)
        np.testing.assert_array_equal(ga, [0.0, 0.0, 0.0, 0.0])
        bad = fxad.vmap(fxad.grad(fs.gammainc))(np.array([-1.0, 0.0, np.nan]), np.ones(3))
        assert np.all(np.isnan(bad))
        gb = fxad.vmap(fxad.grad(fs.betainc, argnums=(0, 1)))(
            np.full(3, 2.0), np.full(3, 3.0), np.array([0.0, 1.0, 1e-300]))
        np.testing.assert_array_equal(gb[0][:2], 0.0)
        assert np.isfinite(gb[0][2]) and gb[0][2] <= 0


def test_plain_scipy_special_calls_dispatch():
    """Plain scipy.special ufuncs on traced values reach fxad's versions (digamma's ufunc is
    called psi); SciPy's Python functions (logsumexp, polygamma, zeta, ...) cannot be
    intercepted and need fxad.scipy.special."""
    np.testing.assert_allclose(fxad.grad(lambda a: sc.gammainc(a, 2.0))(1.5),
                               fxad.grad(lambda a: fs.gammainc(a, 2.0))(1.5), rtol=1e-15)
    np.testing.assert_allclose(fxad.grad(lambda x: sc.i1e(x) + sc.digamma(x) + sc.fresnel(x)[0])(
        0.8), fxad.grad(lambda x: fs.i1e(x) + fs.digamma(x) + fs.fresnel(x)[0])(0.8), rtol=1e-15)
    np.testing.assert_allclose(fxad.grad(lambda b: sc.betainc(0.5, b, 0.3))(2.0),
                               _mp_diff(lambda b: I_(0.5, b, 0.3), (2.0,), (1,)), rtol=1e-10)
    with pytest.raises(fxad.errors.FxadError):
        fxad.grad(lambda x: sc.logsumexp(x * np.ones(2)))(0.5)


@pytest.mark.parametrize("name,args", [
    ("y0", ()), ("y1", ()), ("yn", (2,)), ("yv", (1.5,)), ("k0", ()), ("k1e", ()), ("kn", (2,)),
    ("kv", (0.5,)), ("kve", (1.5,)), ("jn", (2,)), ("rgamma", ()), ("erfcinv", ()),
    ("ndtri_exp", ()), ("log1p", ()), ("expm1", ()), ("exp2", ()), ("exp10", ()),
    ("cbrt", ()),
])
def test_plain_scipy_special_ufuncs_dispatch(name, args):
    """scipy.special's ufuncs on traced values (the order a concrete number): the same
    values and derivatives as fxad.scipy.special, under grad, jit and vmap."""
    x = np.array([0.3, 0.7, 1.6]) if name != "ndtri_exp" else -np.array([0.3, 0.7, 1.6])
    if name == "erfcinv":
        x = x / 2
    f_sc = lambda x: getattr(sc, name)(*args, x)  # noqa: E731
    f_fs = lambda x: getattr(fs, name)(*args, x)  # noqa: E731
    np.testing.assert_allclose(f_fs(x), f_sc(x), rtol=1e-14)
    g = fxad.grad(lambda x: fnp.sum(f_sc(x)))
    np.testing.assert_allclose(g(x), fxad.grad(lambda x: fnp.sum(f_fs(x)))(x), rtol=1e-15)
    np.testing.assert_allclose(fxad.jit(g)(x), g(x), rtol=1e-14)
    np.testing.assert_allclose(fxad.vmap(g)(x[:, None]), np.stack([g(x[i:i + 1])
                                                                  for i in range(3)]), rtol=1e-14)
    check_grads(f_sc, (x,), order=2, modes=("fwd", "rev"))


def test_orders_must_be_concrete():
    for f in (fs.yv, fs.iv, fs.ive, fs.jv, fs.kv, fs.kve):
        with pytest.raises(TypeError, match="order v must be a concrete scalar"):
            fxad.grad(lambda v: f(v, 1.5))(0.5)
    with pytest.raises(TypeError, match="order v must be a concrete scalar"):
        fxad.grad(lambda v: sc.kn(v, 1.5))(2.0)


# --- logsumexp with b= and return_sign= --------------------------------------------------------

def test_logsumexp_matches_scipy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((3, 4))
    for axis in (None, 0, 1, (0, 1)):
        for keepdims in (False, True):
            np.testing.assert_allclose(fs.logsumexp(a, axis=axis, keepdims=keepdims),
                                       sc.logsumexp(a, axis=axis, keepdims=keepdims), rtol=1e-14)
            got = fs.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
            want = sc.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
            np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
            np.testing.assert_array_equal(got[1], want[1])
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(fs.logsumexp(a, axis=1, b=b),  # NaN where the sum is < 0
                                   sc.logsumexp(a, axis=1, b=b), rtol=1e-14)


def test_logsumexp_edge_cases():
    ninf = np.array([-np.inf, -np.inf])
    assert fs.logsumexp(ninf) == -np.inf
    np.testing.assert_array_equal(fxad.grad(fs.logsumexp)(ninf), [0.0, 0.0])  # not NaN
    assert fs.logsumexp(np.array([1.0, np.inf]), b=np.array([1.0, 0.0])) == 1.0  # e^inf * 0 dropped
    np.testing.assert_array_equal(fxad.grad(lambda a: fs.logsumexp(a, b=np.array([1.0, 0.0])))(
        np.array([1.0, np.inf])), [1.0, 0.0])
    val, sign = fs.logsumexp(np.array([1.0, 1.0]), b=np.array([1.0, -1.0]), return_sign=True)
    assert (val, sign) == (-np.inf, 0.0)
    big = np.array([1e300, 1e300])
    np.testing.assert_allclose(fs.logsumexp(big), 1e300)
    np.testing.assert_allclose(fxad.grad(fs.logsumexp)(big), [0.5, 0.5])
    check_grads(lambda a, b: fs.logsumexp(a, b=b, return_sign=True)[0],
                (np.array([0.3, -1.0, 2.0]), np.array([1.0, -0.5, 0.25])), order=2)
    check_grads(lambda a: fs.log_softmax(a, axis=0), (np.array([[0.3, 1.0], [-2.0, 0.5]]),),
                order=2)

"""fxad.nn: activations and normalization layers.

Seed 000 (forward over reverse through norm layers): the Hessian of a function through
layer_norm / batch_norm, computed as `hessian` (jacfwd of jacrev), must equal reverse over
reverse, the Hessian of the same layer written plainly in fxad.numpy (no custom rule), and a
finite-difference Hessian (central differences of fxad.grad). The custom_vjp inside the layers
saves mean and rstd; forward over reverse is only right if those saved statistics keep their
dependence on the input.

Activations: values against NumPy/SciPy, derivatives by check_grads, and finite values and
derivatives equal to the limits at ±1e3 and ±1e300.
"""
import numpy as np
import pytest
import scipy.special as sps

import fxad
import fxad.numpy as fnp
from fxad import nn
from fxad.test_util import check_grads

HESS_RTOL = 1e-7


def close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, np.float64),
                               rtol=rtol, atol=atol)


def close_rel(got, want, rtol=HESS_RTOL):
    """Max-norm relative agreement: max|got - want| <= rtol * max|want| (and no NaN)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.all(np.isfinite(got)), got
    scale = np.max(np.abs(want))
    err = np.max(np.abs(got - want))
    assert scale > 0
    assert err <= rtol * scale, f"max error {err:.3g} > {rtol:g} * {scale:.3g}"


# --- references -------------------------------------------------------------------------------

def np_norm(x, gamma=None, beta=None, axis=-1, eps=1e-5):
    mean = np.mean(x, axis=axis, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=axis, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


def plain_norm(x, gamma=None, beta=None, axis=-1, eps=1e-5):
    """The same layer in plain fxad.numpy: no custom rule, autodiff sees every op."""
    mean = fnp.mean(x, axis=axis, keepdims=True)
    xc = x - mean
    var = fnp.mean(xc * xc, axis=axis, keepdims=True)
    y = xc / fnp.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


def fd_hessian(f, x, h=1e-5):
    """Central differences of fxad.grad, symmetrized."""
    x = np.asarray(x, np.float64)
    g = fxad.grad(f)
    n = x.size
    H = np.empty((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = h
        e = e.reshape(x.shape)
        H[:, i] = (np.ravel(g(x + e)) - np.ravel(g(x - e))) / (2 * h)
    return ((H + H.T) / 2).reshape(x.shape + x.shape)


RNG = np.random.default_rng(1234)
X34 = RNG.standard_normal((3, 4))
W34 = RNG.standard_normal((3, 4))
X53 = RNG.standard_normal((5, 3))
W53 = RNG.standard_normal((5, 3))
X234 = RNG.standard_normal((2, 3, 4))
W234 = RNG.standard_normal((2, 3, 4))


def _objective(norm, w, **kw):
    return lambda x: fnp.sum(fnp.sin(norm(x, **kw)) * w)


def _check_hessians(custom, plain, x):
    H = fxad.hessian(custom)(x)
    assert H.shape == x.shape + x.shape
    close_rel(H, fxad.jacrev(fxad.jacrev(custom))(x))
    close_rel(H, fxad.hessian(plain)(x))
    close_rel(H, fxad.jacrev(fxad.jacrev(plain))(x))
    close_rel(H, fd_hessian(plain, x))
    close_rel(H, fd_hessian(custom, x))
    n = x.size
    Hm = np.asarray(H).reshape(n, n)
    close_rel(Hm, Hm.T, rtol=1e-12)
    return H


# --- seed 000: forward over reverse through norm layers -----------------------------------------

def test_layer_norm_hessian_forward_over_reverse():
    _check_hessians(_objective(nn.layer_norm, W34), _objective(plain_norm, W34), X34)


def test_batch_norm_hessian_forward_over_reverse():
    _check_hessians(_objective(nn.batch_norm, W53, axis=0),
                    _objective(plain_norm, W53, axis=0), X53)


def test_layer_norm_tuple_axis_hessian():
    _check_hessians(_objective(nn.layer_norm, W234, axis=(1, 2)),
                    _objective(plain_norm, W234, axis=(1, 2)), X234)
    _check_hessians(_objective(nn.layer_norm, W234, axis=(-1, 0)),
                    _objective(plain_norm, W234, axis=(-1, 0)), X234)


def test_batch_norm_tuple_axis_hessian():
    _check_hessians(_objective(nn.batch_norm, W234, axis=(0, 1)),
                    _objective(plain_norm, W234, axis=(0, 1)), X234)


def test_hvp_and_jvp_of_grad_through_layer_norm():
    f = _objective(nn.layer_norm, W34)
    fp = _objective(plain_norm, W34)
    v = RNG.standard_normal(X34.shape)
    want = np.tensordot(fxad.hessian(fp)(X34), v, axes=2)
    close_rel(fxad.hvp(f, (X34,), (v,))[0], want)
    close_rel(fxad.jvp(fxad.grad(f), (X34,), (v,))[1], want)


GAMMA4 = RNG.standard_normal(4) + 1.0
BETA4 = RNG.standard_normal(4)


def _packed(norm, x_shape, w, axis):
    """F(z) with z = [x.ravel(), gamma, beta]: one Hessian covers every cross term."""
    nx, k = int(np.prod(x_shape)), x_shape[-1]

    def F(z):
        x = fnp.reshape(z[:nx], x_shape)
        gamma, beta = z[nx:nx + k], z[nx + k:]
        return fnp.sum(fnp.sin(norm(x, gamma, beta, axis=axis)) * w)
    return F


@pytest.mark.parametrize("which", ["layer_norm", "batch_norm"])
def test_norm_with_gamma_beta_hessian(which):
    norm = getattr(nn, which)
    axis = -1 if which == "layer_norm" else 0
    x = X34 if which == "layer_norm" else RNG.standard_normal((5, 4))
    w = RNG.standard_normal(x.shape)
    z = np.concatenate([x.ravel(), GAMMA4, BETA4])
    F, Fp = _packed(norm, x.shape, w, axis), _packed(plain_norm, x.shape, w, axis)
    H = _check_hessians(F, Fp, z)
    # hessian with argnums over the three arguments agrees with the packed blocks
    f3 = lambda x, g, b: fnp.sum(fnp.sin(norm(x, g, b, axis=axis)) * w)  # noqa: E731
    Hb = fxad.hessian(f3, argnums=(0, 1, 2))(x, GAMMA4, BETA4)
    nx = x.size
    sl = [slice(0, nx), slice(nx, nx + 4), slice(nx + 4, nx + 8)]
    shapes = [x.shape, (4,), (4,)]
    for i in range(3):
        for j in range(3):
            close_rel(np.asarray(Hb[i][j]).reshape(int(np.prod(shapes[i])),
                                                   int(np.prod(shapes[j]))),
                      H[sl[i], sl[j]])


@pytest.mark.parametrize("which", ["layer_norm", "batch_norm"])
def test_norm_gradients_wrt_gamma_beta(which):
    norm = getattr(nn, which)
    axis = -1 if which == "layer_norm" else 0
    x = RNG.standard_normal((5, 4))
    w = RNG.standard_normal(x.shape)
    f = lambda x, g, b: fnp.sum(fnp.sin(norm(x, g, b, axis=axis)) * w)  # noqa: E731
    xhat = np_norm(x, axis=axis)
    u = np.cos(xhat * GAMMA4 + BETA4) * w  # d f / d y
    gx, gg, gb = fxad.grad(f, argnums=(0, 1, 2))(x, GAMMA4, BETA4)
    close(gg, np.sum(u * xhat, axis=0))
    close(gb, np.sum(u, axis=0))
    fp = lambda x, g, b: fnp.sum(fnp.sin(plain_norm(x, g, b, axis=axis)) * w)  # noqa: E731
    close(gx, fxad.grad(fp)(x, GAMMA4, BETA4), rtol=1e-9)
    check_grads(lambda x, g, b: norm(x, g, b, axis=axis), (x, GAMMA4, BETA4), order=2)


def test_float32_stays_float32():
    x = X34.astype(np.float32)
    w = W34.astype(np.float32)
    for norm, kw in [(nn.layer_norm, {}), (nn.batch_norm, {"axis": 0})]:
        y = norm(x, **kw)
        assert np.asarray(y).dtype == np.float32
        close(y, np_norm(X34, axis=kw.get("axis", -1)), rtol=1e-4, atol=1e-5)
        f = lambda x: fnp.sum(fnp.sin(norm(x, **kw)) * w)  # noqa: E731
        g = fxad.grad(f)(x)
        assert np.asarray(g).dtype == np.float32
        H = fxad.hessian(f)(x)
        assert np.asarray(H).dtype == np.float32
        H64 = fxad.hessian(_objective(plain_norm, W34, **kw))(X34)
        close_rel(H, H64, rtol=1e-3)
    g32, b32 = GAMMA4.astype(np.float32), BETA4.astype(np.float32)
    y = nn.layer_norm(x, g32, b32)
    assert np.asarray(y).dtype == np.float32
    grads = fxad.grad(lambda x, g, b: fnp.sum(nn.layer_norm(x, g, b) * w),
                      argnums=(0, 1, 2))(x, g32, b32)
    assert all(np.asarray(t).dtype == np.float32 for t in grads)


def test_hessian_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.func import jacrev as tjacrev
    wt = torch.tensor(W34, dtype=torch.float64)

    def tf(x):
        return (torch.sin(torch.nn.functional.layer_norm(x, (4,), eps=1e-5)) * wt).sum()
    Ht = tjacrev(tjacrev(tf))(torch.tensor(X34, dtype=torch.float64)).numpy()
    close_rel(fxad.hessian(_objective(nn.layer_norm, W34))(X34), Ht)

    wb = torch.tensor(W53, dtype=torch.float64)

    def tb(x):
        y = torch.nn.functional.batch_norm(x, None, None, training=True, eps=1e-5)
        return (torch.sin(y) * wb).sum()
    Hb = tjacrev(tjacrev(tb))(torch.tensor(X53, dtype=torch.float64)).numpy()
    close_rel(fxad.hessian(_objective(nn.batch_norm, W53, axis=0))(X53), Hb)


def test_norm_values_match_numpy():
    close(nn.layer_norm(X34), np_norm(X34))
    close(nn.layer_norm(X34, GAMMA4, BETA4), np_norm(X34, GAMMA4, BETA4))
    close(nn.layer_norm(X234, axis=(1, 2)), np_norm(X234, axis=(1, 2)))
    close(nn.layer_norm(X34, eps=0.5), np_norm(X34, eps=0.5))
    close(nn.batch_norm(X53), np_norm(X53, axis=0))
    g3, b3 = GAMMA4[:3], BETA4[:3]
    close(nn.batch_norm(X53, g3, b3), np_norm(X53, g3, b3, axis=0))
    close(nn.batch_norm(X234, axis=(0, 1)), np_norm(X234, axis=(0, 1)))
    # normalized: zero mean and (almost) unit variance over the axis
    y = np.asarray(nn.layer_norm(X34))
    close(y.mean(axis=-1), np.zeros(3), atol=1e-12)
    close(y.var(axis=-1), X34.var(axis=-1) / (X34.var(axis=-1) + 1e-5))


def test_norm_under_vmap_and_jit():
    f = _objective(nn.layer_norm, W34[0])
    fp = _objective(plain_norm, W34[0])
    close(fxad.vmap(fxad.grad(f))(X34), fxad.vmap(fxad.grad(fp))(X34), rtol=1e-9)
    close(fxad.jit(fxad.hessian(f))(X34[0]), fxad.hessian(fp)(X34[0]), rtol=1e-8, atol=1e-10)
    close(fxad.vmap(fxad.hessian(f))(X34), fxad.vmap(fxad.hessian(fp))(X34),
          rtol=1e-8, atol=1e-10)


# --- activations ------------------------------------------------------------------------------

XA = np.array([-3.1, -0.7, -0.05, 0.3, 1.9, 4.2])


def np_gelu_tanh(x):  # 0.5 x (1 + tanh u) = x expit(2u), which does not cancel for x < 0
    return x * sps.expit(2 * np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))


def np_gelu_erf(x):  # x Φ(x): 0.5 x (1 + erf(x/√2)) cancels for x < 0
    return x * sps.ndtr(x)


ACTS = [
    ("sigmoid", nn.sigmoid, sps.expit),
    ("softplus", nn.softplus, lambda x: np.logaddexp(0.0, x)),
    ("relu", nn.relu, lambda x: np.maximum(x, 0.0)),
    ("gelu_tanh", nn.gelu, np_gelu_tanh),
    ("gelu_tanh_kw", lambda x: nn.gelu(x, approximate=True), np_gelu_tanh),
    ("gelu_erf", lambda x: nn.gelu(x, approximate=False), np_gelu_erf),
    ("silu", nn.silu, lambda x: x * sps.expit(x)),
]


@pytest.mark.parametrize("name,f,ref", ACTS, ids=[a[0] for a in ACTS])
def test_activation_values(name, f, ref):
    close(f(XA), ref(XA))
    xs = np.linspace(-30, 30, 121)
    close(f(xs), ref(xs), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("name,f,ref", ACTS, ids=[a[0] for a in ACTS])
def test_activation_check_grads(name, f, ref):
    check_grads(f, (XA,), order=2)


# analytic first derivatives
def _sig(x):
    return sps.expit(x)


DERIVS = {
    "sigmoid": lambda x: _sig(x) * (1 - _sig(x)),
    "softplus": _sig,
    "relu": lambda x: (x > 0).astype(float),
    "silu": lambda x: _sig(x) + x * _sig(x) * (1 - _sig(x)),
    "gelu_erf": lambda x: 0.5 * (1 + sps.erf(x / np.sqrt(2)))
    + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi),
}


@pytest.mark.parametrize("name", sorted(DERIVS))
def test_activation_derivatives_analytic(name):
    f = dict((a[0], a[1]) for a in ACTS)[name]
    close(fxad.grad(lambda x: fnp.sum(f(x)))(XA), DERIVS[name](XA))
    close(fxad.vmap(fxad.grad(f))(XA), DERIVS[name](XA))


def test_gelu_tanh_derivative_analytic():
    c = np.sqrt(2 / np.pi)
    u = c * (XA + 0.044715 * XA ** 3)
    du = c * (1 + 3 * 0.044715 * XA ** 2)
    want = 0.5 * (1 + np.tanh(u)) + 0.5 * XA * (1 - np.tanh(u) ** 2) * du
    close(fxad.grad(lambda x: fnp.sum(nn.gelu(x)))(XA), want)


BIG = np.array([1e300, -1e300, 1e3, -1e3])
# (name, f, value limits, derivative limits) for BIG
LIMITS = [
    ("softplus", nn.softplus, [1e300, 0.0, 1e3, 0.0], [1.0, 0.0, 1.0, 0.0]),
    ("sigmoid", nn.sigmoid, [1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]),
    ("silu", nn.silu, [1e300, 0.0, 1e3, 0.0], [1.0, 0.0, 1.0, 0.0]),
    ("gelu_tanh", nn.gelu, [1e300, 0.0, 1e3, 0.0], [1.0, 0.0, 1.0, 0.0]),
    ("gelu_erf", lambda x: nn.gelu(x, approximate=False), [1e300, 0.0, 1e3, 0.0],
     [1.0, 0.0, 1.0, 0.0]),
    ("relu", nn.relu, [1e300, 0.0, 1e3, 0.0], [1.0, 0.0, 1.0, 0.0]),
]


@pytest.mark.parametrize("name,f,vals,ders", LIMITS, ids=[a[0] for a in LIMITS])
def test_activation_limits_finite(name, f, vals, ders):
    with np.errstate(all="ignore"):
        v = np.asarray(f(BIG))
        g = np.asarray(fxad.grad(lambda x: fnp.sum(f(x)))(BIG))
        gf = np.asarray(fxad.jvp(f, (BIG,), (np.ones(4),))[1])
        gv = np.asarray(fxad.vmap(fxad.grad(f))(BIG))
    for arr in (v, g, gf, gv):
        assert np.all(np.isfinite(arr)), arr
    np.testing.assert_allclose(v, vals, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(g, ders, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(gf, ders, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(gv, ders, rtol=1e-12, atol=1e-300)
    # one at a time too (no help from neighbouring entries)
    for x0, d in zip(BIG, ders):
        with np.errstate(all="ignore"):
            g0 = fxad.grad(f)(x0)
        assert np.isfinite(g0) and g0 == d, (x0, g0)


@pytest.mark.parametrize("name,f,vals,ders", LIMITS, ids=[a[0] for a in LIMITS])
def test_activation_second_derivative_finite_at_limits(name, f, vals, ders):
    with np.errstate(all="ignore"):
        h = np.asarray(fxad.grad(lambda x: fnp.sum(fxad.grad(lambda x: fnp.sum(f(x)))(x)))(BIG))
        H = np.asarray(fxad.hessian(lambda x: fnp.sum(f(x)))(BIG))
    assert np.all(np.isfinite(h)) and np.all(np.isfinite(H)), (h, H)
    np.testing.assert_allclose(h, np.zeros(4), atol=1e-300)
    np.testing.assert_allclose(H, np.zeros((4, 4)), atol=1e-300)


def test_relu_and_softplus_at_zero():
    assert fxad.grad(nn.relu)(0.0) == 0.0
    assert fxad.jvp(nn.relu, (0.0,), (1.0,))[1] == 0.0
    assert fxad.grad(nn.softplus)(0.0) == 0.5
    assert fxad.jvp(nn.softplus, (0.0,), (1.0,))[1] == 0.5
    close(fxad.grad(fxad.grad(nn.softplus))(0.0), 0.25)
    close(nn.softplus(0.0), np.log(2.0))


VEC_BIG = np.array([1e300, 0.0, -1e300, 2.0])
WV = np.array([0.3, -1.0, 2.0, 0.5])


def test_logsumexp_softmax_with_huge_entries():
    with np.errstate(all="ignore"):
        lse = nn.logsumexp(VEC_BIG)
        sm = np.asarray(nn.softmax(VEC_BIG))
        lsm = np.asarray(nn.log_softmax(VEC_BIG))
        g_lse = np.asarray(fxad.grad(nn.logsumexp)(VEC_BIG))
        g_sm = np.asarray(fxad.grad(lambda x: fnp.sum(WV * nn.softmax(x)))(VEC_BIG))
        g_lsm = np.asarray(fxad.grad(lambda x: fnp.sum(WV * nn.log_softmax(x)))(VEC_BIG))
        j_sm = np.asarray(fxad.jacfwd(nn.softmax)(VEC_BIG))
    for a in (lse, sm, lsm, g_lse, g_sm, g_lsm, j_sm):
        assert np.all(np.isfinite(a)), a
    assert lse == 1e300
    np.testing.assert_array_equal(sm, [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(lsm, [0.0, -1e300, -2e300, -1e300], rtol=1e-15)
    np.testing.assert_array_equal(g_lse, [1.0, 0.0, 0.0, 0.0])
    s = np.array([1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(g_sm, s * (WV - s @ WV), atol=1e-300)
    np.testing.assert_allclose(g_lsm, WV - s * WV.sum(), rtol=1e-15)
    np.testing.assert_allclose(j_sm, np.diag(s) - np.outer(s, s), atol=1e-300)
    # all entries huge and equal: the max shift makes it exact
    same = np.array([1e300, 1e300])
    close(nn.logsumexp(same), 1e300)
    close(nn.softmax(same), [0.5, 0.5])
    close(fxad.grad(nn.logsumexp)(same), [0.5, 0.5])
    neg = np.array([-1e300, -1e300])
    close(nn.logsumexp(neg), -1e300)
    close(fxad.grad(nn.logsumexp)(neg), [0.5, 0.5])


XS = RNG.standard_normal((3, 5)) * 3


def test_softmax_family_values():
    close(nn.softmax(XS), sps.softmax(XS, axis=-1))
    close(nn.softmax(XS, axis=0), sps.softmax(XS, axis=0))
    close(nn.log_softmax(XS), sps.log_softmax(XS, axis=-1))
    close(nn.log_softmax(XS, axis=0), sps.log_softmax(XS, axis=0))
    close(nn.logsumexp(XS), sps.logsumexp(XS))
    close(nn.logsumexp(XS, axis=1), sps.logsumexp(XS, axis=1))
    close(nn.logsumexp(XS, axis=0, keepdims=True), sps.logsumexp(XS, axis=0, keepdims=True))
    assert np.shape(nn.logsumexp(XS, axis=0, keepdims=True)) == (1, 5)


def test_softmax_family_derivatives():
    s = sps.softmax(XS, axis=-1)
    close(fxad.grad(nn.logsumexp)(XS), sps.softmax(XS.ravel()).reshape(XS.shape))
    close(fxad.grad(lambda x: fnp.sum(nn.logsumexp(x, axis=1)))(XS), s)
    w = RNG.standard_normal(XS.shape)
    gs = np.sum(s * w, axis=-1, keepdims=True)
    close(fxad.grad(lambda x: fnp.sum(w * nn.softmax(x)))(XS), s * (w - gs))
    close(fxad.grad(lambda x: fnp.sum(w * nn.log_softmax(x)))(XS),
          w - s * np.sum(w, axis=-1, keepdims=True))
    # Hessian of logsumexp of a vector: diag(s) - s s^T
    v = XS[0]
    sv = sps.softmax(v)
    close(fxad.hessian(nn.logsumexp)(v), np.diag(sv) - np.outer(sv, sv))
    for f in (nn.softmax, nn.log_softmax, lambda x: nn.logsumexp(x, axis=-1),
              lambda x: nn.softmax(x, axis=0)):
        check_grads(f, (XS,), order=2)


TRANSCENDENTAL = {"logistic", "exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "tan",
                  "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "erf",
                  "erfc", "erf_inv", "lgamma", "digamma", "pow", "sqrt", "rsqrt", "cbrt",
                  "atan2", "exp2", "log2", "log10"}


def _all_eqns(jaxpr):
    """Every equation, including those of jaxprs nested in params (jit calls and the like)."""
    for eqn in jaxpr.eqns:
        yield eqn
        for p in eqn.params.values():
            inner = getattr(p, "jaxpr", p)
            if hasattr(inner, "eqns"):
                yield from _all_eqns(inner)


def test_sigmoid_grad_has_one_transcendental():
    x = np.array([0.3, -1.2, 2.0])
    closed = fxad.make_jaxpr(fxad.grad(lambda x: fnp.sum(nn.sigmoid(x))))(x)
    names = [e.primitive.name for e in _all_eqns(closed.jaxpr)]
    trans = [n for n in names if n in TRANSCENDENTAL]
    assert trans == ["logistic"], (trans, str(closed))
    text = str(closed)
    assert sum(text.count(f" {n} ") + text.count(f" {n}[") for n in TRANSCENDENTAL) == 1, text
    # and the jaxpr computes the right thing
    s = sps.expit(x)
    close(fxad.grad(lambda x: fnp.sum(nn.sigmoid(x)))(x), s * (1 - s))

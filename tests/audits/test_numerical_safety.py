"""Numerical safety at extreme inputs: softplus, sigmoid, logsumexp, log_softmax, softmax,
gelu, silu and linalg.norm give finite values, first and second derivatives at ±1e300 (and
±1e3, 0, tiny values), equal to the analytic ones, in forward and reverse mode.

Analytic references are written with SciPy's stable expit and explicit limits, never by
differentiating the same formula. Every computation runs with NumPy's `invalid` and `divide`
floating-point errors raised: no NaN or division by zero anywhere, not even in a branch
that a `where` later discards (so `fxad.debug_nans` stays quiet on them too).
"""
import numpy as np
import pytest
import scipy.special as sps

import fxad
import fxad.numpy as fnp
import fxad.scipy.special as fss
from fxad import nn

# (+40 is in test_logistic_derivative_for_large_x_is_accurate_in_absolute_terms below)
EXTREMES = np.array([1e300, -1e300, 1e3, -1e3, -40.0, 0.0, 1.5, -0.7, 1e-300, -1e-300])


@pytest.fixture(autouse=True)
def _no_nan_anywhere():
    with np.errstate(invalid="raise", divide="raise", over="ignore", under="ignore"):
        yield


def close(got, want, rtol=1e-12):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.all(np.isfinite(got)), got
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300)


def derivatives(f, x):
    """(f', f'') of a scalar function at x, each by reverse and by forward mode:
    grad, grad∘grad (reverse over reverse), jvp, jvp∘jvp, jvp∘grad (forward over reverse)."""
    d1 = [fxad.grad(f)(x), fxad.jvp(f, (x,), (1.0,))[1]]
    d2 = [fxad.grad(fxad.grad(f))(x),
          fxad.jvp(lambda y: fxad.jvp(f, (y,), (1.0,))[1], (x,), (1.0,))[1],
          fxad.jvp(fxad.grad(f), (x,), (1.0,))[1]]
    return d1, d2


def sig(x):
    return sps.expit(x)


def one_minus_sig(x):
    return sps.expit(-x)  # 1 - σ(x) without cancellation


def _phi(x):  # the standard normal density, 0 (not NaN) far out
    return np.exp(-0.5 * np.minimum(x * x, 1e4)) / np.sqrt(2 * np.pi)


def _gelu_tanh_d(x):
    """(gelu', gelu'') for the tanh approximation; beyond |x| = 20 tanh is ±1 in float64,
    so the derivatives are the limits (1, 0) or (0, 0)."""
    if abs(x) > 20:
        return (1.0 if x > 0 else 0.0), 0.0
    c, a = np.sqrt(2 / np.pi), 0.044715
    u = c * (x + a * x ** 3)
    du, ddu = c * (1 + 3 * a * x ** 2), c * 6 * a * x
    t = np.tanh(u)
    s2 = 1 - t * t
    d1 = 0.5 * (1 + t) + 0.5 * x * s2 * du
    d2 = s2 * du + 0.5 * x * (-2 * t * s2 * du ** 2 + s2 * ddu)
    return d1, d2


def _gelu_erf_d(x):
    if abs(x) > 40:
        return (1.0 if x > 0 else 0.0), 0.0
    phi = _phi(x)
    return 0.5 * (1 + sps.erf(x / np.sqrt(2))) + x * phi, phi * (2 - x * x)


def _silu_d(x):
    s, sm = sig(x), one_minus_sig(x)
    if abs(x) > 800:  # σ(1-σ) underflows to 0 before x·σ(1-σ) would matter
        return (1.0 if x > 0 else 0.0), 0.0
    return s + x * s * sm, s * sm * (2 + x * (sm - s))


# (name, f, value(x), (f'(x), f''(x)))
SCALAR = [
    ("softplus", nn.softplus, lambda x: np.logaddexp(0.0, x),
     lambda x: (sig(x), sig(x) * one_minus_sig(x))),
    ("sigmoid", nn.sigmoid, sig,
     lambda x: (sig(x) * one_minus_sig(x),
                sig(x) * one_minus_sig(x) * (one_minus_sig(x) - sig(x)))),
    ("silu", nn.silu, lambda x: x * sig(x), _silu_d),
    ("gelu_tanh", nn.gelu,
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (np.clip(x, -20, 20) + 0.044715
                                                            * np.clip(x, -20, 20) ** 3))),
     _gelu_tanh_d),
    ("gelu_erf", lambda x: nn.gelu(x, approximate=False),
     lambda x: 0.5 * x * (1 + sps.erf(x / np.sqrt(2))), _gelu_erf_d),
]


@pytest.mark.parametrize("x", EXTREMES, ids=[f"{x:g}" for x in EXTREMES])
@pytest.mark.parametrize("name,f,value,ders", SCALAR, ids=[s[0] for s in SCALAR])
def test_scalar_activation_value_and_two_derivatives(name, f, value, ders, x):
    close(f(x), value(x))
    d1_want, d2_want = ders(x)
    d1, d2 = derivatives(f, x)
    for got in d1:
        close(got, d1_want, rtol=1e-11)
    for got in d2:
        close(got, d2_want, rtol=1e-9)


@pytest.mark.parametrize("name,f,value,ders", SCALAR, ids=[s[0] for s in SCALAR])
def test_scalar_activation_batched_derivatives(name, f, value, ders):
    """The same on a whole vector at once (vmap, and elementwise grad of a sum)."""
    want1 = np.array([ders(x)[0] for x in EXTREMES])
    want2 = np.array([ders(x)[1] for x in EXTREMES])
    close(fxad.grad(lambda x: fnp.sum(f(x)))(EXTREMES), want1, rtol=1e-11)
    close(fxad.vmap(fxad.grad(f))(EXTREMES), want1, rtol=1e-11)
    close(fxad.vmap(fxad.grad(fxad.grad(f)))(EXTREMES), want2, rtol=1e-9)
    close(np.diag(fxad.hessian(lambda x: fnp.sum(f(x)))(EXTREMES)), want2, rtol=1e-9)


def test_logistic_derivative_for_large_x_is_accurate_in_absolute_terms():
    """logistic's JVP is t·σ·(1-σ) from the rounded output σ (one transcendental, shared with
    the primal, as JAX and PyTorch do). For large positive x, 1-σ cancels: the derivative is
    right to within one rounding of σ (absolute error <= 2^-53), not to relative precision;
    for x > 37 it is exactly 0 where e^-x would still be representable (a documented choice:
    a second transcendental per sigmoid would be needed to do better)."""
    for x in (20.0, 40.0, 700.0):
        d = sig(x) * one_minus_sig(x)
        for got in (fxad.grad(nn.sigmoid)(x), fxad.grad(fxad.grad(nn.softplus))(x)):
            assert np.isfinite(got) and abs(got - d) <= 2.0 ** -53, (x, got, d)


def test_logistic_derivative_keeps_relative_precision_for_large_negative_x():
    """The mirror image is fine today (σ is small and accurate there); kept as a guard."""
    for x in (-20.0, -40.0, -700.0):
        d = sig(x) * one_minus_sig(x)
        close(fxad.grad(nn.sigmoid)(x), d)
        close(fxad.grad(fxad.grad(nn.softplus))(x), d)


def test_scalar_limits_are_exact():
    """Far out the derivatives are exactly their limits, not merely close."""
    for name, f, _, _ in SCALAR:
        for x, d1 in [(1e300, 1.0), (-1e300, 0.0)]:
            if name == "sigmoid":
                d1 = 0.0
            assert fxad.grad(f)(x) == d1, (name, x)
            assert fxad.grad(fxad.grad(f))(x) == 0.0, (name, x)
    assert nn.softplus(1e300) == 1e300 and nn.softplus(-1e300) == 0.0
    assert fxad.grad(nn.softplus)(0.0) == 0.5 and fxad.grad(nn.sigmoid)(0.0) == 0.25


# --- logsumexp, log_softmax, softmax ---------------------------------------------------------

VECTORS = {
    "huge-mixed": np.array([1e300, 0.0, -1e300, 2.0]),
    "huge-equal": np.array([1e300, 1e300]),
    "minus-huge-equal": np.array([-1e300, -1e300, -1e300]),
    "huge-and-minus-huge": np.array([1e300, -1e300]),
    "minus-huge-and-small": np.array([-1e300, 1.0]),
    "zeros": np.zeros(3),
    "big": np.array([1e3, 999.0, -1e3]),
    "ordinary": np.array([0.3, -1.2, 2.0]),
    "with-minus-inf": np.array([0.5, -np.inf, 1.0]),  # a masked entry
}


def softmax_ref(x):
    m = np.max(x)
    e = np.exp(x - m)
    return e / e.sum()


def lse_ref(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


LSE_FUNCS = [("nn.logsumexp", nn.logsumexp), ("scipy.special.logsumexp", fss.logsumexp)]


@pytest.mark.parametrize("case", list(VECTORS))
@pytest.mark.parametrize("name,lse", LSE_FUNCS, ids=[n for n, _ in LSE_FUNCS])
def test_logsumexp(name, lse, case):
    """∇ lse = softmax, ∇² lse = diag(p) - p pᵀ."""
    x = VECTORS[case]
    p = softmax_ref(x)
    close(lse(x), lse_ref(x))
    close(fxad.grad(lse)(x), p)
    close(fxad.jacfwd(lse)(x), p)
    h = np.diag(p) - np.outer(p, p)
    close(fxad.hessian(lse)(x), h, rtol=1e-11)
    close(fxad.jacrev(fxad.grad(lse))(x), h, rtol=1e-11)


def test_logsumexp_axis_keepdims_with_extreme_rows():
    x = np.stack([VECTORS["huge-mixed"], np.zeros(4), np.array([-1e300, -1e300, 5.0, 5.0])])
    for axis, keepdims in [(1, False), (1, True), (-1, False)]:
        out = nn.logsumexp(x, axis=axis, keepdims=keepdims)
        want = np.array([lse_ref(r) for r in x])
        close(out, want[:, None] if keepdims else want)
        w = np.array([0.5, -1.0, 2.0])
        g = fxad.grad(lambda x: fnp.sum(fnp.ravel(nn.logsumexp(x, axis, keepdims)) * w))(x)
        close(g, w[:, None] * np.stack([softmax_ref(r) for r in x]))
    g0 = fxad.grad(lambda x: fnp.sum(nn.logsumexp(x, axis=0)))(x)
    close(g0, np.stack([softmax_ref(c) for c in x.T]).T)


W = {n: np.linspace(-1.0, 2.0, len(v)) for n, v in VECTORS.items()}


@pytest.mark.parametrize("case", list(VECTORS))
def test_log_softmax(case):
    """J = I - 1 pᵀ; the Hessian of w · log_softmax(x) is -(Σw)(diag(p) - p pᵀ)."""
    x, w = VECTORS[case], W[case]
    p = softmax_ref(x)
    n = len(x)
    want = sps.log_softmax(x)  # (x - m) - log Σ e^(x - m): x - lse(x) loses log n at 1e300
    got = nn.log_softmax(x)
    assert np.array_equal(np.isneginf(got), np.isneginf(want))
    fin = np.isfinite(want)
    close(got[fin], want[fin])
    J = np.eye(n) - np.outer(np.ones(n), p)
    close(fxad.jacrev(nn.log_softmax)(x), J)
    close(fxad.jacfwd(nn.log_softmax)(x), J)
    H = -w.sum() * (np.diag(p) - np.outer(p, p))
    close(fxad.hessian(lambda x: fnp.sum(w * nn.log_softmax(x)))(x), H, rtol=1e-11)


@pytest.mark.parametrize("case", list(VECTORS))
def test_softmax(case):
    """J_ij = p_i (δ_ij - p_j);
    ∂²p_i/∂x_j∂x_k = p_i [(δ_ij - p_j)(δ_ik - p_k) - p_j (δ_jk - p_k)]."""
    x = VECTORS[case]
    p = softmax_ref(x)
    n = len(x)
    I = np.eye(n)
    close(nn.softmax(x), p)
    J = p[:, None] * (I - p[None, :])
    close(fxad.jacrev(nn.softmax)(x), J)
    close(fxad.jacfwd(nn.softmax)(x), J)
    A = I[:, :, None] - p[None, :, None]          # (δ_ij - p_j) indexed [i, j, -]
    B = I[:, None, :] - p[None, None, :]          # (δ_ik - p_k) indexed [i, -, k]
    C = p[None, :, None] * (I[None, :, :] - p[None, None, :])  # p_j (δ_jk - p_k)
    T = p[:, None, None] * (A * B - C)
    close(fxad.jacfwd(fxad.jacrev(nn.softmax))(x), T, rtol=1e-11)
    close(fxad.jacrev(fxad.jacrev(nn.softmax))(x), T, rtol=1e-11)


# --- linalg.norm -----------------------------------------------------------------------------

def norm_ref(x):
    """The 2-norm computed with scaling (as BLAS nrm2 does): no overflow or underflow."""
    x = np.ravel(np.asarray(x, np.float64))
    m = np.max(np.abs(x))
    return 0.0 if m == 0 else m * np.sqrt(np.sum((x / m) ** 2))


NORM_VECTORS = {
    "huge": np.array([1e300, -1e300]),            # NumPy's own norm overflows to inf here
    "huge-and-one": np.array([1e300, 1.0, 0.0]),
    "huge-mixed": np.array([1e300, 0.0, -1e300, 2.0]),
    "tiny": np.array([1e-200, -1e-200, 3e-200]),  # squares underflow to 0 unscaled
    "subnormal": np.array([3e-310, 4e-310]),
    "ordinary": np.array([3.0, -4.0, 12.0]),
    "one-hot": np.array([0.0, -2.5, 0.0]),
}


def _norm_hessian_ref(x):
    n = norm_ref(x)
    u = x / n
    return (np.eye(len(x)) - np.outer(u, u)) / n


@pytest.mark.parametrize("case", list(NORM_VECTORS))
def test_vector_norm_value_gradient_hessian(case):
    """‖x‖, ∇ = x/‖x‖, ∇² = (I - u uᵀ)/‖x‖ with u = x/‖x‖."""
    x = NORM_VECTORS[case]
    norm = fnp.linalg.norm
    n = norm_ref(x)
    close(norm(x), n)
    close(norm(x, 2), n)
    close(fxad.grad(norm)(x), x / n)
    t = np.where(x >= 0, 1.0, -1.0)  # J t = Σ|x|/‖x‖: no cancellation in the reference
    close(fxad.jvp(norm, (x,), (t,))[1], np.sum(np.abs(x)) / n)
    if case != "subnormal":  # 1/‖x‖ overflows there: the Hessian itself is not finite
        close(fxad.hessian(norm)(x), _norm_hessian_ref(x), rtol=1e-11)
        close(fxad.jacrev(fxad.grad(norm))(x), _norm_hessian_ref(x), rtol=1e-11)


@pytest.mark.parametrize("case", ["huge", "huge-mixed", "tiny", "ordinary"])
def test_frobenius_norm_value_gradient_hessian(case):
    x = NORM_VECTORS[case]
    M = np.concatenate([x, x[::-1]]).reshape(2, -1)
    n = norm_ref(M)
    for f in (lambda m: fnp.linalg.norm(m, "fro"), lambda m: fnp.linalg.norm(m),
              lambda m: fnp.linalg.norm(m, axis=(0, 1))):
        close(f(M), n)
        close(fxad.grad(f)(M), M / n)
        H = fxad.hessian(f)(M).reshape(M.size, M.size)
        close(H, _norm_hessian_ref(M.ravel()), rtol=1e-11)


def test_norm_rows_scale_independently():
    """With axis=, each row is scaled by its own max: a huge row and a tiny row together."""
    X = np.stack([NORM_VECTORS["huge-and-one"], NORM_VECTORS["tiny"], np.zeros(3)])
    got = fnp.linalg.norm(X, axis=1)
    want = np.array([norm_ref(r) for r in X])
    close(got, want)
    w = np.array([1.0, -2.0, 0.5])
    g = fxad.grad(lambda X: fnp.sum(w * fnp.linalg.norm(X, axis=1)))(X)
    close(g, np.stack([w[0] * X[0] / want[0], w[1] * X[1] / want[1], np.zeros(3)]))
    close(fxad.vmap(fxad.grad(fnp.linalg.norm))(X[:2]), X[:2] / want[:2, None])


@pytest.mark.parametrize("f", [lambda x: fnp.linalg.norm(x), lambda x: fnp.linalg.norm(x, 2),
                               lambda x: fnp.linalg.norm(x.reshape(2, 2), "fro"),
                               lambda x: fnp.linalg.norm(x, 3)],
                         ids=["default", "ord2", "fro", "ord3"])
def test_norm_at_zero_follows_the_zero_subgradient_convention(f):
    """‖x‖ has no derivative at 0. fxad's convention: the gradient there is 0 (the
    minimum-norm subgradient; JAX gives NaN), and the second derivative is finite (0)."""
    z = np.zeros(4)
    assert f(z) == 0.0
    g = fxad.grad(f)(z)
    np.testing.assert_array_equal(g, np.zeros(4))
    np.testing.assert_array_equal(fxad.jvp(f, (z,), (np.ones(4),))[1], 0.0)
    np.testing.assert_array_equal(fxad.hessian(f)(z), np.zeros((4, 4)))


def test_p_norm_at_extremes():
    """ord=3: ‖x‖₃ = (Σ|x|³)^(1/3), ∂/∂x_i = sign(x_i)|x_i|²/‖x‖₃²."""
    for x in (np.array([1e300, -1e300]), np.array([1e-200, 2e-200]), np.array([1.0, -2.0])):
        m = np.max(np.abs(x))
        n = m * np.sum(np.abs(x / m) ** 3) ** (1 / 3)
        close(fnp.linalg.norm(x, 3), n)
        close(fxad.grad(lambda v: fnp.linalg.norm(v, 3))(x), np.sign(x) * (np.abs(x / n)) ** 2)


def test_complex_vector_norm():
    """‖z‖² = Σ|z|² (it used to square z itself: a complex 'norm'); the gradient of this
    real function of complex z follows JAX's convention, conj(z)/‖z‖."""
    z = np.array([3 + 4j, 1j, -2.0 + 0j])
    n = np.sqrt(25 + 1 + 4)
    close(fnp.linalg.norm(z), n)
    close(fnp.linalg.norm(np.array([1e300 + 1e300j])), np.sqrt(2) * 1e300)
    g = fxad.grad(fnp.linalg.norm)(z)
    np.testing.assert_allclose(g, np.conj(z) / n, rtol=1e-12)

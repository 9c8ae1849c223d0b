"""Rule table: special functions (fxad.rules.special.basic, fxad.scipy.special)."""
import numpy as np
import scipy.special as sc

import fxad
import fxad.nn  # noqa: F401
import fxad.numpy  # noqa: F401
from fxad.scipy import special as fsp

from ..common import binary_rows, floats, row_tests, unary_rows

UNARY = [
    ("erf", fsp.erf, floats(-2, 2)),
    ("erfc", fsp.erfc, floats(-2, 2)),
    ("gammaln", fsp.gammaln, floats(0.5, 4)),
    ("digamma", fsp.digamma, floats(0.5, 4)),
    ("polygamma1", lambda x: fsp.polygamma(1, x), floats(0.5, 4)),
    ("logit", fsp.logit, floats(0.1, 0.9)),
    ("expit", fsp.expit, floats(-3, 3)),
    ("logsumexp", lambda x: fsp.logsumexp(x), floats(-3, 3)),
    ("softplus", fxad.nn.softplus, floats(-3, 3)),
    ("ndtr", fsp.ndtr, floats(-3, 3)),
    ("log_ndtr", fsp.log_ndtr, floats(-6, 3)),
    ("ndtri", fsp.ndtri, floats(0.05, 0.95)),
    ("erfinv", fsp.erfinv, floats(-0.9, 0.9)),
    ("gamma", fsp.gamma, floats(0.5, 3.5)),
    ("entr", fsp.entr, floats(0.2, 3)),
    ("erfcx", fsp.erfcx, floats(-1, 3)),
    ("erfcx-tail", lambda x: fsp.erfcx(x + 20.0) * 100.0, floats(-6, 6)),  # asymptotic branch
    ("erfcinv", fsp.erfcinv, floats(0.1, 1.9)),
    ("rgamma", fsp.rgamma, floats(-3.5, 4)),  # across the zeros at 0, -1, -2, -3
]
BINARY = [("xlogy", fsp.xlogy, floats(0.3, 2)),
          ("xlog1py", fsp.xlog1py, floats(0.3, 2)),
          ("logaddexp", fxad.numpy.logaddexp, floats(-2, 2))]  # ties included: smooth there

TABLE = unary_rows(UNARY) + binary_rows(BINARY)
test_row = row_tests(TABLE)


def test_values_match_scipy():
    x = np.linspace(0.2, 0.8, 4)
    for ours, theirs in [(fsp.erf, sc.erf), (fsp.erfc, sc.erfc), (fsp.gammaln, sc.gammaln),
                         (fsp.digamma, sc.digamma), (fsp.logit, sc.logit),
                         (fsp.expit, sc.expit), (fsp.ndtr, sc.ndtr), (fsp.log_ndtr, sc.log_ndtr),
                         (fsp.ndtri, sc.ndtri), (fsp.erfinv, sc.erfinv), (fsp.gamma, sc.gamma),
                         (fsp.entr, sc.entr), (fsp.erfcx, sc.erfcx)]:
        np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-14)
    np.testing.assert_allclose(fsp.xlog1py(x, x), sc.xlog1py(x, x), rtol=1e-14)
    np.testing.assert_allclose(fsp.logsumexp(x), sc.logsumexp(x), rtol=1e-14)


def test_normal_tails_have_finite_derivatives():
    """log_ndtr far in the lower tail: φ and Φ underflow, their ratio does not (≈ -x)."""
    g = fxad.grad(lambda x: fsp.log_ndtr(x))(-40.0)
    assert np.isfinite(g) and abs(g - 40.0) / 40.0 < 1e-2
    # the inverse pair: d ndtri(ndtr(x)) / dx = 1, also via plain scipy.special (dispatch)
    np.testing.assert_allclose(fxad.grad(lambda x: sc.ndtri(sc.ndtr(x)))(1.3), 1.0, rtol=1e-10)
    np.testing.assert_allclose(fxad.grad(lambda y: sc.erfinv(fsp.erf(y)))(0.4), 1.0, rtol=1e-10)


def test_log_ndtr_derivatives_in_both_tails():
    """φ/Φ and its derivative -φ/Φ (x + φ/Φ), against mpmath: exact far in the lower tail
    (exp(log φ - log Φ) lost every digit there: inf at -1e10) and finite (0), not inf/inf =
    NaN, far in the upper one (found by the fuzzer at x = 40)."""
    import mpmath
    mpmath.mp.dps = 50
    xs = np.array([-1e10, -1e4, -40.0, -0.5, 0.0, 3.0, 37.0, 40.0, 1e3])
    d1 = fxad.vmap(fxad.grad(fsp.log_ndtr))(xs)
    d2 = fxad.vmap(fxad.grad(fxad.grad(fsp.log_ndtr)))(xs)
    d2f = fxad.vmap(lambda x: fxad.jvp(fxad.grad(fsp.log_ndtr), (x,), (1.0,))[1])(xs)
    m = [mpmath.npdf(mpmath.mpf(x)) / mpmath.ncdf(mpmath.mpf(x)) for x in xs]
    np.testing.assert_allclose(d1, [float(v) for v in m], rtol=1e-14, atol=0)
    want2 = [float(-v * (mpmath.mpf(x) + v)) for v, x in zip(m, xs)]
    np.testing.assert_allclose(d2, want2, rtol=1e-13, atol=0)
    np.testing.assert_allclose(d2f, want2, rtol=1e-13, atol=0)


def test_xlogy_at_zero():
    g = fxad.grad(lambda y: fsp.xlogy(0.0, y))(0.5)
    assert g == 0.0
    assert fsp.xlogy(0.0, 0.0) == 0.0


def test_softplus_and_logaddexp_second_derivative_at_ties():
    """logistic weights are smooth: softplus''(0) = logaddexp_xx(a, a) = 1/4."""
    np.testing.assert_allclose(fxad.grad(fxad.grad(fxad.nn.softplus))(0.0), 0.25)
    h = fxad.hessian(lambda v: fxad.numpy.logaddexp(v[0], v[1]))(np.array([0.7, 0.7]))
    np.testing.assert_allclose(h, [[0.25, -0.25], [-0.25, 0.25]], rtol=1e-14)

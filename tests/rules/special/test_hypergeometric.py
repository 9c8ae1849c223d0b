"""Rule table: fxad/rules/special/hypergeometric.py (Hurwitz/Riemann zeta and zeta_ds, exprel_d,
Box-Cox, hyp1f1/hyp2f1 in x, sph_harm_y in θ and φ)."""
import numpy as np
import pytest
import scipy.special as sc

import fxad
from fxad.errors import FxadValueError
from fxad.rules.special import hypergeometric as sh

from ..common import binary_rows, floats, row_tests, unary_rows

UNARY = [
    ("riemann_zeta", lambda s: sh.riemann_zeta(s + 1.5), floats(0.0, 3)),
    ("exprel", lambda u: sh.exprel_d(u, 0), floats(-5, 5)),
    ("exprel_d1", lambda u: sh.exprel_d(u, 1), floats(-5, 5)),
    ("hyp1f1", lambda x: sh.hyp1f1(0.7, 1.9, x), floats(-2, 2)),
    ("hyp2f1", lambda x: sh.hyp2f1(0.7, 1.3, 2.9, x), floats(-0.8, 0.8)),
]
BINARY = [
    ("zeta", lambda s, q: sh.zeta(s + 1.5, q + 0.3), floats(0.0, 2)),
    ("zeta_ds", lambda s, q: sh.zeta_ds(s + 1.5, q + 0.3, 1), floats(0.0, 2)),
    ("boxcox", lambda x, l: sh.boxcox(x + 0.2, l - 1.0), floats(0.0, 2)),
    ("boxcox1p", lambda x, l: sh.boxcox1p(x - 0.5, l - 1.0), floats(0.0, 2)),
    ("sph_harm_y", lambda t, p: sh.sph_harm_y(np.array(3), np.array(-2), t + 0.1, p),
     floats(0.0, 3)),
]
TABLE = unary_rows(UNARY) + binary_rows(BINARY)
test_row = row_tests(TABLE)


def test_boxcox_at_lambda_zero_is_smooth():
    """boxcox(x, 0) = log x: ∂λ = (log x)²/2, ∂λ² = (log x)³/3, no 0/0."""
    L = np.log(3.0)
    d = fxad.grad(lambda l: sh.boxcox(3.0, l))
    np.testing.assert_allclose([d(0.0), fxad.grad(d)(0.0)], [L ** 2 / 2, L ** 3 / 3], rtol=1e-14)
    np.testing.assert_array_equal(sh.boxcox(np.array([2.0, 3.0]), 0.0), sc.boxcox([2.0, 3.0], 0.0))


def test_hypergeometric_parameters_refuse_clearly():
    with pytest.raises(FxadValueError, match="derivative with respect to a"):
        fxad.grad(lambda a: sh.hyp1f1(a, 1.0, 0.5))(0.3)
    with pytest.raises(FxadValueError, match="with respect to c"):
        fxad.grad(lambda c: sh.hyp2f1(0.2, 1.0, c, 0.5))(2.3)


def test_sph_harm_y_at_the_poles_is_finite():
    """The ladder form of ∂θ has no cot θ: finite at θ = 0 (|m| = 1 is the one order whose
    θ-derivative is nonzero there)."""
    for m in (-1, 0, 1, 2):
        g = fxad.jacfwd(lambda t: sh.sph_harm_y(np.array(2), np.array(m), t, 0.3))(0.0)
        assert np.isfinite(g)
        h = 1e-6  # one-sided: θ >= 0 is the domain
        fd = (4 * sc.sph_harm_y(2, m, h, 0.3) - sc.sph_harm_y(2, m, 2 * h, 0.3)
              - 3 * sc.sph_harm_y(2, m, 0.0, 0.3)) / (2 * h)
        np.testing.assert_allclose(g, fd, atol=1e-8)

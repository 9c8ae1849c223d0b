"""Rule table: fxad/rules/special/integrals.py (dawsn, expi, exp1, expn, spence, Fresnel,
sine/cosine integrals, wofz, owens_t, loggamma, gammasgn, poch, binom, rel_entr, kl_div,
ndtri_exp), each row on a domain where the function is smooth, plus the removable
singularities the `near` series handle, checked at the point itself."""
import numpy as np
import scipy.special as sc

import fxad
from fxad.rules.special import integrals as sm
from fxad.test_util import check_grads

from ..common import binary_rows, floats, row_tests, unary_rows

UNARY = [
    ("dawsn", sm.dawsn, floats(-3, 3)),
    ("expi", sm.expi, floats(0.2, 4)),
    ("exp1", sm.exp1, floats(0.2, 4)),
    ("expn3", lambda x: sm.expn(3, x), floats(0.2, 4)),
    ("expn0", lambda x: sm.expn(0, x), floats(0.5, 4)),
    ("spence", sm.spence, floats(0.1, 3)),
    ("spence_near_1", sm.spence, floats(0.99, 1.01)),
    ("fresnel_s", sm.fresnel_s, floats(-2, 2)),
    ("fresnel_c", sm.fresnel_c, floats(-2, 2)),
    ("si", sm.si, floats(-4, 4)),
    ("si_near_0", sm.si, floats(-0.6, 0.6)),
    ("ci", sm.ci, floats(0.3, 4)),
    ("wofz", sm.wofz, floats(-2, 2)),
    ("loggamma", sm.loggamma, floats(0.3, 5)),
    ("gammasgn", sm.gammasgn, floats(0.3, 5)),
    ("ndtri_exp", sm.ndtri_exp, floats(-30, -0.1)),
]
BINARY = [
    ("owens_t", sm.owens_t, floats(-2, 2)),
    ("poch", sm.poch, floats(0.3, 3)),
    ("binom", lambda n, k: sm.binom(n + 3.0, k), floats(0.2, 2)),
    ("rel_entr", sm.rel_entr, floats(0.2, 3)),
    ("kl_div", sm.kl_div, floats(0.2, 3)),
]
TABLE = unary_rows(UNARY) + binary_rows(BINARY)
test_row = row_tests(TABLE)


def test_removable_singularities_have_exact_derivatives_at_the_point():
    """Si'(0) = 1, Si''(0) = 0, Si'''(0) = -1/3; spence'(1) = -1, spence''(1) = 1/2,
    spence'''(1) = -2/3: the series branch at the point itself."""
    d = fxad.grad
    assert d(sm.si)(0.0) == 1.0 and d(d(sm.si))(0.0) == 0.0
    np.testing.assert_allclose(d(d(d(sm.si)))(0.0), -1 / 3, rtol=1e-14)
    np.testing.assert_allclose([d(sm.spence)(1.0), d(d(sm.spence))(1.0),
                                d(d(d(sm.spence)))(1.0)], [-1.0, 0.5, -2 / 3], rtol=1e-14)
    for x in [0.3, 0.9, 1.1]:  # the series and the closed form agree where they meet
        np.testing.assert_allclose(d(sm.spence)(x), np.log(x) / (1 - x), rtol=1e-14)


def test_values_are_scipys():
    x = np.linspace(0.3, 2.5, 7)
    for ours, theirs in [(sm.dawsn, sc.dawsn), (sm.expi, sc.expi),
                         (sm.exp1, sc.exp1), (sm.spence, sc.spence), (sm.loggamma, sc.loggamma),
                         (sm.wofz, sc.wofz), (sm.gammasgn, sc.gammasgn),
                         (sm.fresnel_s, lambda v: sc.fresnel(v)[0]),
                         (sm.si, lambda v: sc.sici(v)[0]), (sm.ci, lambda v: sc.sici(v)[1])]:
        np.testing.assert_array_equal(ours(x), theirs(x))


def test_kl_div_and_rel_entr_at_zero():
    """x = 0 is in the domain: value 0, the y-derivative 1 (kl_div) and 0 (rel_entr); the
    x-derivative is -inf (x log x's slope), never NaN."""
    gx, gy = fxad.grad(sm.kl_div, argnums=(0, 1))(0.0, 2.0)
    assert (gx, gy) == (-np.inf, 1.0)
    gx, gy = fxad.grad(sm.rel_entr, argnums=(0, 1))(0.0, 2.0)
    assert (gx, gy) == (-np.inf, 0.0)
    check_grads(lambda y: sm.kl_div(0.0, y), (np.array([0.5, 2.0]),), order=2)

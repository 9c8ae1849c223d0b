"""Rule table: fxad/rules/special/incomplete.py (beta, incomplete gamma and beta functions,
their inverses, Student's t and generalized-normal CDFs, and the shape-parameter derivative
primitives). Each row maps values in a box to the function's domain; its grad check is the
derivatives to second order in both modes, so a row on a derivative primitive (gammainc_da,
betainc_d, ...) checks the third and fourth derivatives of the function it differentiates."""
import numpy as np

from fxad.rules.special import incomplete as si

from ..common import SHAPES_BINARY, floats, Row, row_tests


def pos(x, lo=0.3):  # (0, 1) box values to a positive shape parameter in [lo, lo + 3]
    return lo + 3.0 * x


def unit(x):  # to (0.05, 0.95)
    return 0.05 + 0.9 * x


ROWS2 = [  # two operands, each drawn from [0, 1]
    ("betaln", lambda a, b: si.betaln(pos(a), pos(b))),
    ("beta", lambda a, b: si.beta(pos(a, 0.6), pos(b, 0.6))),  # (FD is poor near the pole)
    ("gammainc", lambda a, x: si.gammainc(pos(a), pos(x, 0.05))),
    ("gammaincc", lambda a, x: si.gammaincc(pos(a), pos(x, 0.05))),
    ("gammainc_tail", lambda a, x: si.gammainc(pos(a), 20.0 + 10.0 * x)),  # fraction branch
    # (x >= 0.3: near 0 the density x^(a-1) is so steep that finite differences of these
    # third and fourth derivatives lose their accuracy; mpmath checks them there instead)
    ("gammainc_da", lambda a, x: si.gammainc_da(pos(a), pos(x), 1)),
    ("gammainc_da2", lambda a, x: si.gammainc_da(pos(a), pos(x), 2)),
    ("gammaincinv", lambda a, y: si.gammaincinv(pos(a), unit(y))),
    ("gammainccinv", lambda a, y: si.gammainccinv(pos(a), unit(y))),
    ("stdtr", lambda d, t: si.stdtr(pos(d, 0.5), 6.0 * t - 3.0)),
    ("stdtr_ddf", lambda d, t: si.stdtr_ddf(pos(d, 0.5), 6.0 * t - 3.0, 1)),
    ("stdtrit", lambda d, p: si.stdtrit(pos(d, 0.5), unit(p))),
    ("gennorm_cdf", lambda z, p: si.gennorm_cdf(6.0 * z - 2.9, pos(p, 0.7))),
    ("gennorm_cdf_dbeta", lambda z, p: si.gennorm_cdf_dbeta(6.0 * z - 2.9, pos(p, 0.7), 1)),
    # (q = 1/2, where the density has a cusp for beta < 2, is not hit: there the finite
    # differences, not the rule, lose accuracy)
    ("gennorm_ppf", lambda q, p: si.gennorm_ppf(0.07 + 0.85 * q, pos(p, 0.7))),
]
ROWS3 = [  # three operands
    ("betainc", lambda a, b, x: si.betainc(pos(a), pos(b), unit(x))),
    ("betainc_da", lambda a, b, x: si.betainc_d(pos(a), pos(b), unit(x), 1, 0)),
    ("betainc_db", lambda a, b, x: si.betainc_d(pos(a), pos(b), unit(x), 0, 1)),
    ("betaincinv", lambda a, b, y: si.betaincinv(pos(a), pos(b), unit(y))),
]
SHAPES3 = [((), (), ()), ((3,), (3,), (3,)), ((2, 3), (3,), ())]

# The derivative primitives (each a third or fourth derivative under run_row) are slower:
# two shapes each, one of them broadcasting.
SLOW = {"gammainc_da", "gammainc_da2", "stdtr_ddf", "gennorm_cdf_dbeta", "betainc_da",
        "betainc_db"}


def _shapes(name, shapes):
    return shapes[1::3] if name in SLOW else shapes


# The generalized normal's density has a cusp at x = 0 for beta < 2 (|x|^(beta-1) for its
# slope): finite differences of the cdf's higher derivatives lose their accuracy there, so
# those rows keep x = 6z - 2.9 off it.
OFF_CUSP = {"gennorm_cdf", "gennorm_cdf_dbeta"}


def _off_cusp(z, p):
    return bool(np.all(np.abs(6.0 * np.asarray(z) - 2.9) > 0.1))


TABLE = [Row(n, f, list(s), floats(0.0, 1.0), assume=_off_cusp if n in OFF_CUSP else None)
         for n, f in ROWS2 for s in _shapes(n, SHAPES_BINARY)] + \
        [Row(n, f, list(s), floats(0.0, 1.0)) for n, f in ROWS3 for s in _shapes(n, SHAPES3)]
test_row = row_tests(TABLE)

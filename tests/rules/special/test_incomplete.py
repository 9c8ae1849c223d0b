"""Rule table: fxad/rules/special/incomplete.py (beta, incomplete gamma and beta functions,
their inverses, Student's t and generalized-normal CDFs, and the shape-parameter derivative
primitives). Each row maps values in a box to the function's domain; `run_row` checks the
derivatives to second order in both modes, so a row on a derivative primitive (gammainc_da,
betainc_d, ...) checks the third and fourth derivatives of the function it differentiates."""
import numpy as np
import pytest

import fxad
from fxad.rules.special import incomplete as si

from ..common import SHAPES_BINARY, floats, run_row


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


TABLE = [(n, f, list(s)) for n, f in ROWS2 for s in _shapes(n, SHAPES_BINARY)] + \
        [(n, f, list(s)) for n, f in ROWS3 for s in _shapes(n, SHAPES3)]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[f"{t[0]}-{t[2]}" for t in TABLE])
def test_row(name, fn, shapes):
    run_row(fn, shapes, floats(0.0, 1.0))


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[f"{t[0]}-{t[2]}" for t in TABLE])
def test_vmap_matches_loop(name, fn, shapes):
    rng = np.random.default_rng(5)
    args = [rng.uniform(0.05, 0.95, (3,) + s) for s in shapes]
    got = fxad.vmap(fn)(*args)
    want = np.stack([np.asarray(fn(*[a[i] for a in args])) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name,fn,shapes", TABLE[::len(SHAPES_BINARY)],
                         ids=[t[0] for t in TABLE[::len(SHAPES_BINARY)]])
def test_jit_matches_eager(name, fn, shapes):
    args = [np.full(s, 0.4) for s in shapes]
    np.testing.assert_allclose(fxad.jit(fn)(*args), fn(*args), rtol=1e-14)
    g = fxad.grad(lambda *a: fxad.numpy.sum(fn(*a)))
    np.testing.assert_allclose(fxad.jit(g)(*args), g(*args), rtol=1e-13)

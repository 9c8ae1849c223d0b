"""Rule table: special functions (fxad.rules.special, fxad.scipy.special)."""
import numpy as np
import pytest
import scipy.special as sc

import fxad
from fxad.scipy import special as fsp

from .common import SHAPES_BINARY, SHAPES_UNARY, floats, run_row

UNARY = [
    ("erf", fsp.erf, floats(-2, 2)),
    ("erfc", fsp.erfc, floats(-2, 2)),
    ("gammaln", fsp.gammaln, floats(0.5, 4)),
    ("digamma", fsp.digamma, floats(0.5, 4)),
    ("polygamma1", lambda x: fsp.polygamma(x, 1), floats(0.5, 4)),
    ("logit", fsp.logit, floats(0.1, 0.9)),
    ("expit", fsp.expit, floats(-3, 3)),
    ("logsumexp", lambda x: fsp.logsumexp(x), floats(-3, 3)),
]
BINARY = [("xlogy", fsp.xlogy, floats(0.3, 2))]

TABLE = [(n, f, [s]) for n, f, _ in UNARY for s in SHAPES_UNARY] + \
        [(n, f, list(s)) for n, f, _ in BINARY for s in SHAPES_BINARY]


@pytest.mark.parametrize("shape", SHAPES_UNARY, ids=str)
@pytest.mark.parametrize("name,fn,elements", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, fn, elements, shape):
    run_row(fn, [shape], elements)


@pytest.mark.parametrize("shapes", SHAPES_BINARY, ids=str)
@pytest.mark.parametrize("name,fn,elements", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, fn, elements, shapes):
    run_row(fn, list(shapes), elements)


def test_values_match_scipy():
    x = np.linspace(0.2, 0.8, 4)
    for ours, theirs in [(fsp.erf, sc.erf), (fsp.erfc, sc.erfc), (fsp.gammaln, sc.gammaln),
                         (fsp.digamma, sc.digamma), (fsp.logit, sc.logit),
                         (fsp.expit, sc.expit)]:
        np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-14)
    np.testing.assert_allclose(fsp.logsumexp(x), sc.logsumexp(x), rtol=1e-14)


def test_xlogy_at_zero():
    g = fxad.grad(lambda y: fsp.xlogy(0.0, y))(0.5)
    assert g == 0.0
    assert fsp.xlogy(0.0, 0.0) == 0.0

"""Rule table: fxad/rules/special/bessel.py (I_v, its scaled form, J_v; of the second kind Y_v, K_v
and K_v e^x, SciPy's integer-order functions too), checked to second order in both modes,
through x = 0 for the first kind (the order recurrences have no removable singularity)."""
import numpy as np
import pytest
import scipy.special as sc

import fxad
import fxad.numpy as fnp
from fxad.rules.special import bessel

from ..common import floats, grid, Row, row_tests, unary_rows

UNARY = [
    ("i0", lambda x: bessel.bessel_i(x, 0), floats(-3, 3)),
    ("i1", lambda x: bessel.bessel_i(x, 1), floats(-3, 3)),
    ("iv2.5", lambda x: bessel.bessel_i(x, 2.5), floats(0.2, 3)),
    ("i0e", lambda x: bessel.bessel_ie(x, 0), floats(0.1, 20)),
    ("i1e", lambda x: bessel.bessel_ie(x, 1), floats(-20, -0.1)),
    ("j0", lambda x: bessel.bessel_j(x, 0), floats(-5, 5)),
    ("jv3", lambda x: bessel.bessel_j(x, 3), floats(-5, 5)),
    ("y0", lambda x: bessel.bessel_y(x, 0), floats(0.3, 8)),
    ("yn2", lambda x: bessel.bessel_y(x, 2, integer=True), floats(0.5, 8)),
    ("yv-1.5", lambda x: bessel.bessel_y(x, -1.5), floats(0.5, 8)),
    ("k1", lambda x: bessel.bessel_k(x, 1), floats(0.3, 8)),
    ("kn3", lambda x: bessel.bessel_k(x, 3, integer=True), floats(0.5, 8)),
    ("kv2.5", lambda x: bessel.bessel_k(x, 2.5), floats(0.5, 8)),
    ("k0e", lambda x: bessel.bessel_ke(x, 0), floats(0.3, 30)),
    ("kve-0.7", lambda x: bessel.bessel_ke(x, -0.7), floats(0.3, 30)),
]
TABLE = unary_rows(UNARY)
TABLE += [  # the functions of JAX's surface built on them
    Row("i0", lambda x: fnp.i0(x) * x, [(3,)], grid(-2, 2, 0.01), unique=True),
    Row("bessel_i-i0", lambda x: fnp.i0(fnp.sin(x)) + x, [(2, 2)], grid(-2, 2, 0.01), unique=True),
]
test_row = row_tests(TABLE)


def test_values_and_derivatives_at_zero():
    x = np.linspace(-2, 3, 6)
    for v, f in [(0, sc.i0), (1, sc.i1)]:
        np.testing.assert_array_equal(bessel.bessel_i(x, v), f(x))
    np.testing.assert_array_equal(bessel.bessel_ie(x, 1), sc.i1e(x))
    np.testing.assert_array_equal(bessel.bessel_j(x, 2), sc.jv(2, x))
    d = fxad.grad
    # I1'(0) = 1/2, I1''(0) = 0, I1'''(0) = 3/8 (I1 = x/2 + x³/16 + ...)
    i1 = lambda x: bessel.bessel_i(x, 1)  # noqa: E731
    np.testing.assert_allclose([d(i1)(0.0), d(d(i1))(0.0), d(d(d(i1)))(0.0)], [0.5, 0.0, 0.375],
                               atol=1e-15)


@pytest.mark.parametrize("fn", [lambda x: bessel.bessel_ie(x, 1.5),
                                lambda x: bessel.bessel_y(x, 3, integer=True),
                                lambda x: bessel.bessel_k(x, 0.5),
                                lambda x: bessel.bessel_ke(x, 1)])
def test_vmap_and_jit(fn):
    x = np.linspace(0.1, 2, 4)
    f = fxad.grad(lambda x: fxad.numpy.sum(fn(x)))
    np.testing.assert_allclose(fxad.vmap(f)(x[:, None]), np.stack([f(r) for r in x[:, None]]),
                               rtol=1e-14)
    np.testing.assert_allclose(fxad.jit(f)(x), f(x), rtol=1e-14)


def test_second_kind_values_are_scipys():
    """Each order is SciPy's function for it: y0/y1/k0/k1/k0e/k1e for 0 and 1, yn/kn for an
    integer order (SciPy's truncation of a non-integer one too), yv/kv/kve otherwise; K of a
    negative order is K of |v|, Y of a negative order is SciPy's."""
    x = np.array([0.0, 1e-300, 0.2, 1.0, 3.5, 40.0, np.inf, -1.0])
    with np.errstate(all="ignore"):
        for v, want in [(0, sc.y0(x)), (1, sc.y1(x)), (2.5, sc.yv(2.5, x)),
                        (-1.5, sc.yv(-1.5, x))]:
            np.testing.assert_array_equal(bessel.bessel_y(x, v), want)
        np.testing.assert_array_equal(bessel.bessel_y(x, 3, True), sc.yn(3, x))
        np.testing.assert_array_equal(bessel.bessel_y(x, -2, True), sc.yn(-2, x))
        for v, want in [(0, sc.k0(x)), (1, sc.k1(x)), (2.5, sc.kv(2.5, x)),
                        (-2.5, sc.kv(-2.5, x))]:
            np.testing.assert_array_equal(bessel.bessel_k(x, v), want)
        np.testing.assert_array_equal(bessel.bessel_k(x, 4, True), sc.kn(4, x))
        np.testing.assert_array_equal(bessel.bessel_ke(x, 0), sc.k0e(x))
        np.testing.assert_array_equal(bessel.bessel_ke(x, 1), sc.k1e(x))
        np.testing.assert_array_equal(bessel.bessel_ke(x, 0.3), sc.kve(0.3, x))

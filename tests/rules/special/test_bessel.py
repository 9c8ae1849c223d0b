"""Rule table: fxad/rules/special/bessel.py (I_v, its scaled form, J_v), checked to second order in
both modes, through x = 0 (the order recurrences have no removable singularity)."""
import numpy as np
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


def test_vmap_and_jit():
    x = np.linspace(0.1, 2, 4)
    f = fxad.grad(lambda x: fxad.numpy.sum(bessel.bessel_ie(x, 1.5)))
    np.testing.assert_allclose(fxad.vmap(f)(x[:, None]), np.stack([f(r) for r in x[:, None]]),
                               rtol=1e-14)
    np.testing.assert_allclose(fxad.jit(f)(x), f(x), rtol=1e-14)

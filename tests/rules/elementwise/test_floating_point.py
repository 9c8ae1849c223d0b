"""Rule table: floating-point functions (fxad.rules.elementwise.floating_point): copysign,
heaviside, ldexp, modf, frexp's exponent, spacing (each NumPy's own ufunc as its impl), and
reduce_precision (its derivative, the tangent rounded alike, checked where rounding to 50
mantissa bits moves values by far less than the finite-difference step)."""
import numpy as np

import fxad.numpy as fnp

from fxad import lax

from ..common import Row, floats, grid, ints, row_tests

TABLE = [
    Row("copysign-heaviside", lambda x, y: fnp.copysign(x + 0.005, y + 0.005)
        * fnp.heaviside(x + 0.005, y), [(2, 3), (3,)], grid(-2, 2), unique=True),
    Row("ldexp", lambda x: fnp.ldexp(x, 2) + fnp.ldexp(x, np.array([-1, 0, 3])), [(3,)],
        grid(-2, 2), unique=True),
    Row("modf", lambda x: fnp.modf(x + 0.005)[0] * x + fnp.modf(x + 0.005)[1], [(2, 3)],
        grid(-2, 2), unique=True),
    # (1.1, 1.9) holds no power of 2: exponent and spacing are constant there
    Row("frexp-spacing", lambda x: fnp.frexp(x)[0] * fnp.frexp(x)[1]
        + x * fnp.spacing(x) * 2.0 ** 52, [(2, 3)], floats(1.1, 1.9)),
    Row("frexp_negative", lambda x: fnp.frexp(-x)[0], [(3,)], floats(1.1, 1.9)),
    Row("reduce_precision", lambda x: lax.reduce_precision(x, 11, 50), [(2, 3)],
        floats(-2, 2)),
    Row("ldexp_traced_exponent", lambda x, e: fnp.ldexp(x, e), [(2, 3), (3,)],
        [grid(-2, 2), ints(-3, 4)], grad=False),
]
test_row = row_tests(TABLE)

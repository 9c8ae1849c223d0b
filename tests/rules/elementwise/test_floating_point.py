"""Rule table: floating-point functions (fxad.rules.elementwise.floating_point): copysign,
heaviside, ldexp, modf, each NumPy's own ufunc as its impl."""
import numpy as np

import fxad.numpy as fnp

from ..common import Row, grid, ints, row_tests

TABLE = [
    Row("copysign-heaviside", lambda x, y: fnp.copysign(x + 0.005, y + 0.005)
        * fnp.heaviside(x + 0.005, y), [(2, 3), (3,)], grid(-2, 2), unique=True),
    Row("ldexp", lambda x: fnp.ldexp(x, 2) + fnp.ldexp(x, np.array([-1, 0, 3])), [(3,)],
        grid(-2, 2), unique=True),
    Row("modf", lambda x: fnp.modf(x + 0.005)[0] * x + fnp.modf(x + 0.005)[1], [(2, 3)],
        grid(-2, 2), unique=True),
    Row("ldexp_traced_exponent", lambda x, e: fnp.ldexp(x, e), [(2, 3), (3,)],
        [grid(-2, 2), ints(-3, 4)], grad=False),
]
test_row = row_tests(TABLE)

"""Rule table: the call primitive `jit` (fxad.rules.control.call): a row whose staged program
binds it, checked like any other row (derivatives to second order, vmap, jit of jit)."""
import fxad
import fxad.numpy as fnp

from ..common import Row, floats, row_tests

_jitted = fxad.jit(lambda x: fnp.sin(x) * x)

TABLE = [Row("jit", lambda x: _jitted(x) + 1.0, [s], floats(-2, 2)) for s in [(), (3,)]]
test_row = row_tests(TABLE)

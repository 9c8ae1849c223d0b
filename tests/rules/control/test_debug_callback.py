"""Rule table: `debug_callback` (fxad.rules.control.debug_callback), the effect behind
fxad.debug.callback and fxad.debug.print: a program with one keeps its value and derivatives
(the effect has no outputs) under every transformation. tests/api/test_debug_print.py checks
what it prints and when."""
import fxad
import fxad.numpy as fnp

from ..common import floats, grid, Row, row_tests


def _observed(x):
    fxad.debug.callback(lambda v: None, x)
    return fnp.sin(x) * x


TABLE = [Row("debug_callback", _observed, [s], floats(-2, 2)) for s in [(), (3,)]]
TABLE += [  # the functions of JAX's surface built on them
    Row("debug_callback", lambda x: (fxad.debug.callback(lambda v: None, x), x * x)[1], [(2,)],
        grid(-2, 2, 0.01), unique=True),
]
test_row = row_tests(TABLE)

"""Rule table: `while_loop` (fxad.rules.control.while_loop): a loop whose trip count depends
on the carry. Forward mode differentiates it; reverse mode needs a bounded loop (fori_loop
or scan), which tests/test_control_flow.py checks along with every composition."""
import fxad.numpy as fnp
from fxad import lax

from ..common import Row, floats, row_tests


def _halve_until_small(x):
    """Halves x (and its square's sum) until the sum is below 0.5: the trip count depends on
    the data, the result smoothly on x within a trip count."""
    def body(c):
        v, k = c
        return v * 0.5 + fnp.sin(v) * 0.01, k + 1
    return lax.while_loop(lambda c: fnp.sum(c[0] ** 2) > 0.5, body, (x, 0))[0]


TABLE = [
    Row("while_loop", _halve_until_small, [(3,)], floats(0.5, 2), check={"modes": ("fwd",)}),
    Row("fori_loop", lambda x: lax.fori_loop(0, 3, lambda i, v: fnp.sin(v) * 1.5, x), [(3,)],
        floats(-2, 2)),
]
test_row = row_tests(TABLE)

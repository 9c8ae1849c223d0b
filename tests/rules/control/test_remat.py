"""Rule table: checkpoint (fxad.checkpoint's call through the remat machinery) and the
`checkpoint_name` primitive (fxad.rules.control.remat), the identity a policy reads names from.
tests/api/test_checkpoint.py checks what the backward pass recomputes."""
import fxad
import fxad.numpy as fnp
from fxad import checkpoint_policies as cp

from ..common import floats, grid, Row, row_tests

_block = fxad.checkpoint(lambda x: fnp.tanh(x) * fnp.cos(x))
_named = fxad.checkpoint(lambda x: fnp.sin(fxad.checkpoint_name(fnp.exp(x), "e")) * x,
                         policy=cp.save_only_these_names("e"))

TABLE = [Row(n, f, [s], floats(-2, 2)) for n, f in [
    ("checkpoint", lambda x: _block(x) ** 2),
    ("checkpoint_name", lambda x: _named(x) + fxad.checkpoint_name(x, "x") * x),
] for s in [(), (3,)]]
TABLE += [  # the functions of JAX's surface built on them
    Row("checkpoint_name", lambda x: fxad.checkpoint_name(x * x, "h") * x, [(3,)], grid(-2, 2, 0.01),
        unique=True),
]
test_row = row_tests(TABLE)

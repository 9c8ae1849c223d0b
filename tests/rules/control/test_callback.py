"""Rule table: `pure_callback` (fxad.rules.control.callback), opaque NumPy code inside a
program: values under vmap (sequential and expand_dims) and jit. It has no derivative of its own;
tests/api/test_callback.py checks it in every mode, wrapped in custom rules."""
import numpy as np

import fxad

from ..common import Row, floats, row_tests


def _cube(x, method):
    return fxad.pure_callback(lambda v: np.asarray(v) ** 3,
                              fxad.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method=method)


TABLE = [Row(f"pure_callback-{m}", lambda x, m=m: _cube(x, m) + x, [s], floats(-2, 2),
             grad=False) for m in ("sequential", "expand_dims") for s in [(), (3,), (2, 3)]]
test_row = row_tests(TABLE)

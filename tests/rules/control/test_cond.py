"""Rule table: `cond` (fxad.rules.control.cond), the primitive behind lax.cond and lax.switch:
rows whose predicate depends on the input, so batching takes both branches per example.
tests/test_control_flow.py checks lax.cond / switch against Python control flow in every
composition."""
import numpy as np

import fxad.numpy as fnp
from fxad import lax

from ..common import Row, floats, ints, row_tests

W = np.array([0.5, -1.5, 2.0])

TABLE = [
    Row("cond", lambda x: lax.cond(fnp.sum(x) > 0.05, lambda v: fnp.sin(v) * W,
                                   lambda v: fnp.cos(v) + W ** 2, x), [(3,)], floats(-2, 2),
        assume=lambda x: abs(np.sum(x) - 0.05) > 1e-3),
    Row("switch", lambda x, i: lax.switch(i, [lambda v: v * 2.0, fnp.tanh, lambda v: v ** 3], x),
        [(3,), ()], [floats(-2, 2), ints(0, 3)]),
    Row("cond_closure", lambda x, w: lax.cond(x[0] > w[0], lambda v: v * w, lambda v: v - w, x),
        [(3,), (3,)], floats(-2, 2), assume=lambda x, w: abs(x[0] - w[0]) > 1e-3),
]
test_row = row_tests(TABLE)

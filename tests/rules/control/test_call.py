"""Rule table: call and custom-rule primitives (fxad.rules.control.call, fxad.rules.control.custom). Each row
is a function whose staged program binds the primitive; its derivatives are checked to second
order in both modes like any other row, and its vmap against a loop."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp

from ..common import check_vmap_matches_loop, floats, run_row


_jitted = fxad.jit(lambda x: fnp.sin(x) * x)


@fxad.custom_jvp
def _softplus(x):
    return fnp.logaddexp(x, 0.0)


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), t * fxad.nn.sigmoid(x)


@fxad.custom_vjp
def _cube(x):
    return x ** 3


_cube.defvjp(lambda x: (x ** 3, (x,)), lambda res, ct: (3.0 * res[0] ** 2 * ct,))

_block = fxad.checkpoint(lambda x: fnp.tanh(x) * fnp.cos(x))

ROWS = [
    ("jit", lambda x: _jitted(x) + 1.0, floats(-2, 2)),
    ("custom_jvp_call", lambda x: _softplus(x) * x, floats(-2, 2)),
    ("custom_vjp_call", lambda x: _cube(x) * fnp.sin(x), floats(-2, 2)),
    ("checkpoint", lambda x: _block(x) ** 2, floats(-2, 2)),
]
SHAPES = [(), (3,)]
TABLE = [(n, f, [s]) for n, f, _ in ROWS for s in SHAPES]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name,fn,elements", ROWS, ids=[r[0] for r in ROWS])
def test_call_rows(name, fn, elements, shape):
    run_row(fn, [shape], elements)


@pytest.mark.parametrize("name,fn,elements", ROWS, ids=[r[0] for r in ROWS])
def test_vmap_matches_loop(name, fn, elements):
    check_vmap_matches_loop(fn, [(3,)], np.random.default_rng(0))

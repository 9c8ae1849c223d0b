"""Rule table: structural primitives (fxad.rules.structural.shape): reshape, transpose, broadcast,
concatenate, flip, and the fxad.numpy functions built on them alone."""

import fxad.numpy as fnp
from fxad import lax

from ..common import MAT, T3D, floats, grid, Row, row_tests

TABLE = [
    Row("reshape", lambda x: fnp.reshape(x, (3, 2)) * fnp.arange(6.0).reshape(3, 2), [(2, 3)],
        grid(-2, 2), unique=True),
    Row("reshape-1", lambda x: x.reshape(-1), [(2, 3)], grid(-2, 2), unique=True),
    Row("ravel", lambda x: fnp.ravel(x) ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("transpose", lambda x: fnp.transpose(x) ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("transpose-3d", lambda x: fnp.transpose(x, (2, 0, 1)) * 3.0, [(2, 3, 4)], grid(-2, 2), unique=True),
    Row("T", lambda x: x.T @ x, [(2, 3)], grid(-2, 2), unique=True),
    Row("moveaxis", lambda x: fnp.moveaxis(x, 0, -1) ** 2, [(2, 3, 4)], grid(-2, 2), unique=True),
    Row("swapaxes", lambda x: fnp.swapaxes(x, 0, 2) ** 2, [(2, 3, 4)], grid(-2, 2), unique=True),
    Row("broadcast_to", lambda x: fnp.broadcast_to(x, (4, 2, 3)) ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("broadcast_to-ones", lambda x: fnp.broadcast_to(x, (2, 3)) ** 2, [(2, 1)], grid(-2, 2), unique=True),
    Row("expand_dims", lambda x: fnp.expand_dims(x, 1) ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("squeeze", lambda x: fnp.squeeze(x, 1) ** 2, [(2, 1, 3)], grid(-2, 2), unique=True),
    Row("concatenate", lambda x, y: fnp.concatenate([x, y, x], axis=1) ** 2, [(2, 3), (2, 2)],
        grid(-2, 2), unique=True),
    Row("concatenate-none", lambda x, y: fnp.concatenate([x, y], axis=None) ** 2, [(2, 3), (4,)],
        grid(-2, 2), unique=True),
    Row("stack", lambda x, y: fnp.stack([x, y], axis=1) ** 2, [(2, 3), (2, 3)], grid(-2, 2), unique=True),
    Row("split", lambda x: fnp.split(x, 3, axis=1)[1] * fnp.split(x, [1], axis=1)[0], [(2, 3)],
        grid(-2, 2), unique=True),
    Row("flip", lambda x: fnp.flip(x, 1) * x, [(2, 3)], grid(-2, 2), unique=True),
    Row("flip-all", lambda x: fnp.flip(x) * x, [(2, 3)], grid(-2, 2), unique=True),
    # NumPy's calling forms: their values under vmap and jit
    Row("lax_concatenate", lambda x, y: lax.concatenate([x, y], 1), [T3D, (2, 1, 5)], floats(-2, 2),
        grad=False),
    Row("lax_reshape", lambda x: lax.reshape(x, (20,)), [MAT], floats(-2, 2), grad=False),
    Row("lax_transpose", lambda x: lax.transpose(x, (2, 0, 1)), [T3D], floats(-2, 2), grad=False),
    Row("lax_broadcast_to", lambda x: lax.broadcast_to(x, (2, 4, 5)), [(4, 1)], floats(-2, 2), grad=False),
    Row("lax_flip", lambda x: lax.flip(x, (1,)), [T3D], floats(-2, 2), grad=False),
]
test_row = row_tests(TABLE)



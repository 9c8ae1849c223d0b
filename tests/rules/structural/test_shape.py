"""Rule table: structural primitives (fxad.rules.structural.shape): reshape, transpose, broadcast,
concatenate, flip, and the fxad.numpy functions built on them alone."""
import pytest

import fxad.numpy as fnp

from ..common import grid, run_row

TABLE = [
    ("reshape", lambda x: fnp.reshape(x, (3, 2)) * fnp.arange(6.0).reshape(3, 2), [(2, 3)]),
    ("reshape-1", lambda x: x.reshape(-1), [(2, 3)]),
    ("ravel", lambda x: fnp.ravel(x) ** 2, [(2, 3)]),
    ("transpose", lambda x: fnp.transpose(x) ** 2, [(2, 3)]),
    ("transpose-3d", lambda x: fnp.transpose(x, (2, 0, 1)) * 3.0, [(2, 3, 4)]),
    ("T", lambda x: x.T @ x, [(2, 3)]),
    ("moveaxis", lambda x: fnp.moveaxis(x, 0, -1) ** 2, [(2, 3, 4)]),
    ("swapaxes", lambda x: fnp.swapaxes(x, 0, 2) ** 2, [(2, 3, 4)]),
    ("broadcast_to", lambda x: fnp.broadcast_to(x, (4, 2, 3)) ** 2, [(2, 3)]),
    ("broadcast_to-ones", lambda x: fnp.broadcast_to(x, (2, 3)) ** 2, [(2, 1)]),
    ("expand_dims", lambda x: fnp.expand_dims(x, 1) ** 2, [(2, 3)]),
    ("squeeze", lambda x: fnp.squeeze(x, 1) ** 2, [(2, 1, 3)]),
    ("concatenate", lambda x, y: fnp.concatenate([x, y, x], axis=1) ** 2, [(2, 3), (2, 2)]),
    ("concatenate-none", lambda x, y: fnp.concatenate([x, y], axis=None) ** 2, [(2, 3), (4,)]),
    ("stack", lambda x, y: fnp.stack([x, y], axis=1) ** 2, [(2, 3), (2, 3)]),
    ("split", lambda x: fnp.split(x, 3, axis=1)[1] * fnp.split(x, [1], axis=1)[0], [(2, 3)]),
    ("flip", lambda x: fnp.flip(x, 1) * x, [(2, 3)]),
    ("flip-all", lambda x: fnp.flip(x) * x, [(2, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_structural(name, fn, shapes):
    run_row(fn, shapes, grid(-2, 2), unique=True)

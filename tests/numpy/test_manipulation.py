"""Rule table: fxad.numpy.manipulation beyond the structural primitives (atleast, roll, tile,
repeat, pad and its modes, diag / diagonal / trace / tril, stacks, array_split, rot90, flips,
meshgrid, insert / delete / append, unique, block / select / choose, ...): values against
NumPy, derivatives to second order in both modes, vmap against a loop."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.test_util import check_grads

from ..rules.common import (
    MASK, M, V3, V7, _unstack, check_values_match_numpy, check_vmap_matches_loop, grid, run_row)

R = np.random.default_rng(7)

# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("pad", lambda m, x, **k: m.pad(x, ((1, 2), (3, 0)), **k), [(M[0],)],
     [{"mode": "edge"}, {"mode": "reflect"}, {"mode": "symmetric"}, {"mode": "wrap"}]),
    ("rot90", lambda m, x, **k: m.rot90(x, **k), [(M,)],
     [{}, {"k": 2}, {"k": 3}, {"k": -1, "axes": (1, 2)}]),
    ("flips", lambda m, x: [m.fliplr(x), m.flipud(x)], [(M[0],)], [{}]),
    ("meshgrid", lambda m, x, y, **k: m.meshgrid(x, y, **k), [(V7, V3)],
     [{}, {"indexing": "ij"}, {"sparse": True}]),
    ("broadcast_arrays", lambda m, x, y: m.broadcast_arrays(x, y), [(V7, V3[:, None])], [{}]),
    ("insert", lambda m, x, **k: m.insert(x, **k), [(V7,)],
     [{"obj": 2, "values": 9.0}, {"obj": [1, 3], "values": [7.0, 8.0]},
      {"obj": 1, "values": [5.0, 6.0]}, {"obj": slice(0, 4, 2), "values": 3.0}]),
    ("delete/append", lambda m, x: [m.delete(x, [0, 2]), m.append(x, [1.0, 2.0]),
                                    m.append(M, M, axis=1)], [(V7,)], [{}]),
    ("unique", lambda m, x: m.unique(x, return_index=True, return_inverse=True,
                                     return_counts=True), [(np.round(M[0]),)], [{}]),
    ("structure", lambda m, x: [m.block([[x, x[:, :2]], [x[:1], x[:1, :2]]]), m.diagflat(x[0], 1),
                                m.matrix_transpose(M), _unstack(m, x, 1),
                                m.select([x > 0.5, x < -0.5], [x, x ** 2], -1.0),
                                m.choose(np.array([[0, 1, 2, 1, 0]] * 4), [x, 2 * x, x ** 2]),
                                m.partition(x, 2), m.argpartition(V7, 3)[3:4],
                                m.linalg.outer(x[0], x[1]), m.linalg.matrix_transpose(M),
                                m.linalg.vecdot(x, x)], [(M[0],)], [{}]),
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


TABLE = [
    ("atleast", lambda x: fnp.atleast_2d(x) * fnp.atleast_3d(x).sum(), [(3,)]),
    ("roll", lambda x: fnp.roll(x, 2, axis=1) * x, [(2, 3)]),
    ("tile", lambda x: fnp.tile(x, (2, 2)) ** 2, [(2, 3)]),
    ("repeat", lambda x: fnp.repeat(x, 2, axis=0) ** 2, [(2, 3)]),
    ("pad", lambda x: fnp.pad(x, ((1, 0), (2, 1)), constant_values=1.5) ** 2, [(2, 3)]),
    ("diag", lambda x: fnp.diag(x, 1) ** 2, [(3,)]),
    ("diag-2d", lambda x: fnp.diag(x) ** 2, [(3, 3)]),
    ("diagonal", lambda x: fnp.diagonal(x, -1) ** 2, [(3, 4)]),
    ("trace", lambda x: fnp.trace(x) * x, [(3, 3)]),
    ("tril-triu", lambda x: fnp.tril(x) * fnp.triu(x, -1), [(3, 4)]),
    ("stacks", lambda x: fnp.vstack([x, x]) * fnp.hstack([x, x]).sum()
     + fnp.dstack([x]).sum() + fnp.column_stack([x, x]).sum(), [(3,)]),
    ("array_split", lambda x: fnp.array_split(x, 3)[1] * fnp.array_split(x, [2])[0].sum(), [(5,)]),
    ("moveaxis-swap", lambda x: fnp.moveaxis(x, 0, 1) * fnp.swapaxes(x, 0, 1), [(2, 3)]),
    ("pad-modes", lambda x: fnp.pad(x, ((1, 2), (2, 1)), mode="reflect")
     * fnp.pad(x, 2, mode="edge")[:6, :6] + fnp.pad(x, 1, mode="wrap").sum(), [(3, 3)]),
    ("rot90-flips", lambda x: fnp.rot90(x) * fnp.fliplr(fnp.flipud(x)).T, [(3, 3)]),
    ("meshgrid", lambda x, y: fnp.meshgrid(x, y)[0] * fnp.meshgrid(x, y)[1], [(3,), (2,)]),
    ("insert-delete", lambda x: fnp.insert(fnp.delete(x, [1]), 2, x[:2] ** 2), [(4,)]),
    ("block-select-choose", lambda x: fnp.block([[x, x[:, :1]], [x[:1], x[:1, :1] ** 2]])[:2, :3]
     * fnp.select([x > 0.505, x < -0.505], [x, x ** 2], 0.5)
     * fnp.choose(MASK.astype(int), [x, fnp.sin(x)]), [(2, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_manipulation(name, fn, shapes):
    run_row(fn, shapes, grid(-2, 2), unique=True)


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_vmap_matches_loop(name, fn, shapes):
    check_vmap_matches_loop(fn, shapes, R)


def test_unique_values_carry_derivatives():
    """unique gathers each distinct value from its first occurrence (eager only: its output
    shape depends on the values)."""
    check_grads(lambda x: fnp.unique(x) ** 3, (np.array([0.5, -1.0, 0.25, 2.0]),), order=2)
    x = np.array([0.5, -1.0, 0.5, 2.0])  # a repeated value: the first occurrence gets it
    np.testing.assert_array_equal(fxad.grad(lambda x: fnp.sum(fnp.unique(x)))(x), [1, 1, 0, 1])

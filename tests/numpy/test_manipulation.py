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
    M, MASK, MAT, T3D, V3, V7, VEC, _unstack, check_values_match_numpy, floats, grid, Row,
    row_tests)


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
    Row("atleast", lambda x: fnp.atleast_2d(x) * fnp.atleast_3d(x).sum(), [(3,)], grid(-2, 2), unique=True),
    Row("roll", lambda x: fnp.roll(x, 2, axis=1) * x, [(2, 3)], grid(-2, 2), unique=True),
    Row("tile", lambda x: fnp.tile(x, (2, 2)) ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("repeat", lambda x: fnp.repeat(x, 2, axis=0) ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("pad", lambda x: fnp.pad(x, ((1, 0), (2, 1)), constant_values=1.5) ** 2, [(2, 3)], grid(-2, 2),
        unique=True),
    Row("diag", lambda x: fnp.diag(x, 1) ** 2, [(3,)], grid(-2, 2), unique=True),
    Row("diag-2d", lambda x: fnp.diag(x) ** 2, [(3, 3)], grid(-2, 2), unique=True),
    Row("diagonal", lambda x: fnp.diagonal(x, -1) ** 2, [(3, 4)], grid(-2, 2), unique=True),
    Row("trace", lambda x: fnp.trace(x) * x, [(3, 3)], grid(-2, 2), unique=True),
    Row("tril-triu", lambda x: fnp.tril(x) * fnp.triu(x, -1), [(3, 4)], grid(-2, 2), unique=True),
    Row("stacks", lambda x: fnp.vstack([x, x]) * fnp.hstack([x, x]).sum()
     + fnp.dstack([x]).sum() + fnp.column_stack([x, x]).sum(), [(3,)], grid(-2, 2), unique=True),
    Row("array_split", lambda x: fnp.array_split(x, 3)[1] * fnp.array_split(x, [2])[0].sum(), [(5,)],
        grid(-2, 2), unique=True),
    Row("moveaxis-swap", lambda x: fnp.moveaxis(x, 0, 1) * fnp.swapaxes(x, 0, 1), [(2, 3)], grid(-2, 2),
        unique=True),
    Row("pad-modes", lambda x: fnp.pad(x, ((1, 2), (2, 1)), mode="reflect")
     * fnp.pad(x, 2, mode="edge")[:6, :6] + fnp.pad(x, 1, mode="wrap").sum(), [(3, 3)], grid(-2,
         2), unique=True),
    Row("rot90-flips", lambda x: fnp.rot90(x) * fnp.fliplr(fnp.flipud(x)).T, [(3, 3)], grid(-2, 2),
        unique=True),
    Row("meshgrid", lambda x, y: fnp.meshgrid(x, y)[0] * fnp.meshgrid(x, y)[1], [(3,), (2,)],
        grid(-2, 2), unique=True),
    Row("insert-delete", lambda x: fnp.insert(fnp.delete(x, [1]), 2, x[:2] ** 2), [(4,)], grid(-2, 2),
        unique=True),
    Row("block-select-choose", lambda x: fnp.block([[x, x[:, :1]], [x[:1], x[:1, :1] ** 2]])[:2, :3]
     * fnp.select([x > 0.505, x < -0.505], [x, x ** 2], 0.5)
     * fnp.choose(MASK.astype(int), [x, fnp.sin(x)]), [(2, 3)], grid(-2, 2), unique=True),
    # NumPy's calling forms: their values under vmap and jit
    Row("reshape", lambda x: fnp.reshape(x, (5, 4)), [MAT], floats(-2, 2), grad=False),
    Row("reshape_minus1", lambda x: fnp.reshape(x, (-1,)), [T3D], floats(-2, 2), grad=False),
    Row("reshape_split_axis", lambda x: fnp.reshape(x, (2, 2, 5)), [MAT], floats(-2, 2), grad=False),
    Row("reshape_scalar", lambda x: fnp.reshape(x, (1, 1)), [()], floats(-2, 2), grad=False),
    Row("reshape_method", lambda x: x.reshape(8, 5), [T3D], floats(-2, 2), grad=False),
    Row("reshape_method_tuple", lambda x: x.reshape((4, -1)), [T3D], floats(-2, 2), grad=False),
    Row("transpose", fnp.transpose, [T3D], floats(-2, 2), grad=False),
    Row("transpose_perm", lambda x: fnp.transpose(x, (1, 0, 2)), [T3D], floats(-2, 2), grad=False),
    Row("transpose_neg_perm", lambda x: fnp.transpose(x, (-1, 0, 1)), [T3D], floats(-2, 2), grad=False),
    Row("T_property", lambda x: x.T, [MAT], floats(-2, 2), grad=False),
    Row("mT_property", lambda x: x.mT, [T3D], floats(-2, 2), grad=False),
    Row("transpose_method", lambda x: x.transpose(2, 0, 1), [T3D], floats(-2, 2), grad=False),
    Row("broadcast_to", lambda x: fnp.broadcast_to(x, (4, 5)), [(1, 5)], floats(-2, 2), grad=False),
    Row("broadcast_to_rank", lambda x: fnp.broadcast_to(x, (2, 4, 5)), [VEC], floats(-2, 2), grad=False),
    Row("broadcast_to_scalar", lambda x: fnp.broadcast_to(x, (2, 4)), [()], floats(-2, 2), grad=False),
    Row("broadcast_to_same", lambda x: fnp.broadcast_to(x, MAT), [MAT], floats(-2, 2), grad=False),
    Row("expand_dims_0", lambda x: fnp.expand_dims(x, 0), [MAT], floats(-2, 2), grad=False),
    Row("expand_dims_neg", lambda x: fnp.expand_dims(x, -1), [MAT], floats(-2, 2), grad=False),
    Row("expand_dims_tuple", lambda x: fnp.expand_dims(x, (0, 2)), [MAT], floats(-2, 2), grad=False),
    Row("newaxis", lambda x: x[:, fnp.newaxis], [MAT], floats(-2, 2), grad=False),
    Row("squeeze_all", fnp.squeeze, [(4, 1, 5)], floats(-2, 2), grad=False),
    Row("squeeze_axis", lambda x: fnp.squeeze(x, 1), [(4, 1, 1)], floats(-2, 2), grad=False),
    Row("squeeze_method", lambda x: x.squeeze(-1), [(4, 1)], floats(-2, 2), grad=False),
    Row("concatenate_0", lambda x, y: fnp.concatenate([x, y]), [MAT, (2, 5)], floats(-2, 2), grad=False),
    Row("concatenate_1", lambda x, y: fnp.concatenate([x, y], axis=1), [MAT, (4, 2)], floats(-2, 2),
        grad=False),
    Row("concatenate_neg", lambda x, y, z: fnp.concatenate((x, y, z), axis=-1), [MAT, (4, 1), (4, 2)],
        floats(-2, 2), grad=False),
    Row("concatenate_none", lambda x, y: fnp.concatenate([x, y], axis=None), [MAT, VEC], floats(-2, 2),
        grad=False),
    Row("concatenate_const", lambda x: fnp.concatenate([x, np.ones((1, 5))]), [MAT], floats(-2, 2),
        grad=False),
    Row("stack_0", lambda x, y: fnp.stack([x, y]), [MAT, MAT], floats(-2, 2), grad=False),
    Row("stack_1", lambda x, y, z: fnp.stack([x, y, z], axis=1), [MAT, MAT, MAT], floats(-2, 2), grad=False),
    Row("stack_neg", lambda x, y: fnp.stack((x, y), axis=-1), [MAT, MAT], floats(-2, 2), grad=False),
    Row("stack_scalars", lambda x, y: fnp.stack([x, y]), [(), ()], floats(-2, 2), grad=False),
    Row("split_sections", lambda x: fnp.split(x, 2), [MAT], floats(-2, 2), grad=False),
    Row("split_indices_axis1", lambda x: fnp.split(x, [1, 3], axis=1), [MAT], floats(-2, 2), grad=False),
    Row("split_neg_axis", lambda x: fnp.split(x, 5, axis=-1), [T3D], floats(-2, 2), grad=False),
    Row("flip_none", fnp.flip, [T3D], floats(-2, 2), grad=False),
    Row("flip_0", lambda x: fnp.flip(x, 0), [MAT], floats(-2, 2), grad=False),
    Row("flip_tuple", lambda x: fnp.flip(x, (0, 2)), [T3D], floats(-2, 2), grad=False),
    Row("flip_neg", lambda x: fnp.flip(x, -1), [T3D], floats(-2, 2), grad=False),
    Row("moveaxis", lambda x: fnp.moveaxis(x, 0, -1), [T3D], floats(-2, 2), grad=False),
    Row("moveaxis_multi", lambda x: fnp.moveaxis(x, (0, 1), (2, 0)), [T3D], floats(-2, 2), grad=False),
    Row("swapaxes", lambda x: fnp.swapaxes(x, 0, 2), [T3D], floats(-2, 2), grad=False),
    Row("swapaxes_neg", lambda x: fnp.swapaxes(x, -1, -2), [T3D], floats(-2, 2), grad=False),
    Row("swapaxes_method", lambda x: x.swapaxes(0, 1), [MAT], floats(-2, 2), grad=False),
    Row("ravel", fnp.ravel, [T3D], floats(-2, 2), grad=False),
    Row("flatten_method", lambda x: x.flatten(), [MAT], floats(-2, 2), grad=False),
    Row("atleast_1d", fnp.atleast_1d, [()], floats(-2, 2), grad=False),
]
test_row = row_tests(TABLE)


def test_unique_values_carry_derivatives():
    """unique gathers each distinct value from its first occurrence (eager only: its output
    shape depends on the values)."""
    check_grads(lambda x: fnp.unique(x) ** 3, (np.array([0.5, -1.0, 0.25, 2.0]),), order=2)
    x = np.array([0.5, -1.0, 0.5, 2.0])  # a repeated value: the first occurrence gets it
    np.testing.assert_array_equal(fxad.grad(lambda x: fnp.sum(fnp.unique(x)))(x), [1, 1, 0, 1])

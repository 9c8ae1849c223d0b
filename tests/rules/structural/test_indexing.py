"""Rule table: indexing primitives (fxad.rules.structural.indexing): getitem (basic, advanced, boolean and
traced indices) and its transpose scatter_add; take and take_along_axis, which gather with it."""
import numpy as np

import fxad
import fxad.numpy as fnp
from fxad import lax

from ..common import A, MAT, T3D, VEC, floats, grid, ints, Row, row_tests

IDX = np.array([2, 0, 2])  # repeated on purpose: the transpose must accumulate
TAKE_IDX = np.array([2, 0, 3])

TABLE = [
    Row("getitem-int", lambda x: x[1] ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("getitem-slice", lambda x: x[:, 1:] ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("getitem-negstep", lambda x: x[::-1, ::-2] ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("getitem-none-ellipsis", lambda x: x[None, ..., 0] ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("getitem-array", lambda x: x[IDX] ** 2, [(3,)], grid(-2, 2), unique=True),
    Row("getitem-array-2d", lambda x: x[:, IDX] ** 2, [(2, 3)], grid(-2, 2), unique=True),
    Row("getitem-mixed-adjacent", lambda x: x[1:, IDX, IDX[:2, None]] ** 2, [(2, 3, 3)], grid(-2, 2),
        unique=True),
    Row("getitem-non-adjacent", lambda x: x[IDX, :, IDX] ** 2, [(3, 2, 3)], grid(-2, 2), unique=True),
    Row("getitem-bool-mask", lambda x: x[np.array([True, False, True])] ** 2, [(3,)], grid(-2, 2),
        unique=True),
    Row("getitem-traced-int", lambda x: x[fnp.argmax(x)] * x, [(3,)], grid(-2, 2), unique=True),
    Row("take", lambda x: fnp.take(x, TAKE_IDX, axis=1) ** 2, [(2, 4)], grid(-2, 2), unique=True),
    Row("take_along_axis", lambda x: fnp.take_along_axis(x, np.array([[1], [0]]), 1) * x, [(2, 3)],
        grid(-2, 2), unique=True),
    # NumPy's calling forms: their values under vmap and jit
    Row("index_int", lambda x: x[1], [MAT], floats(-2, 2), grad=False),
    Row("index_neg_int", lambda x: x[-1], [T3D], floats(-2, 2), grad=False),
    Row("index_int_int", lambda x: x[1, -2], [MAT], floats(-2, 2), grad=False),
    Row("index_int_scalar_all", lambda x: x[1, 2, 3], [T3D], floats(-2, 2), grad=False),
    Row("index_slice", lambda x: x[1:3], [MAT], floats(-2, 2), grad=False),
    Row("index_slice_step", lambda x: x[::2], [VEC], floats(-2, 2), grad=False),
    Row("index_neg_step", lambda x: x[::-1], [MAT], floats(-2, 2), grad=False),
    Row("index_neg_step2", lambda x: x[3:0:-2], [MAT], floats(-2, 2), grad=False),
    Row("index_neg_step_axis1", lambda x: x[:, ::-2], [T3D], floats(-2, 2), grad=False),
    Row("index_slice_neg_bounds", lambda x: x[-3:-1, 1:], [MAT], floats(-2, 2), grad=False),
    Row("index_none", lambda x: x[None], [MAT], floats(-2, 2), grad=False),
    Row("index_none_middle", lambda x: x[:, None, 1:], [MAT], floats(-2, 2), grad=False),
    Row("index_ellipsis", lambda x: x[..., 1], [T3D], floats(-2, 2), grad=False),
    Row("index_ellipsis_none", lambda x: x[1, ..., None], [T3D], floats(-2, 2), grad=False),
    Row("index_ellipsis_middle", lambda x: x[0, ..., 2:4], [T3D], floats(-2, 2), grad=False),
    Row("index_empty_slice", lambda x: x[2:2], [MAT], floats(-2, 2), grad=False),
    Row("index_vector_int", lambda x: x[2], [VEC], floats(-2, 2), grad=False),
    Row("lax_getitem", lambda x: lax.getitem(x, (slice(None), 2)), [MAT], floats(-2, 2), grad=False),
    Row("index_array", lambda x: x[A([0, 2, 2])], [MAT], floats(-2, 2), grad=False),
    Row("index_array_neg", lambda x: x[A([-1, 0, -1])], [MAT], floats(-2, 2), grad=False),
    Row("index_array_2d", lambda x: x[A([[0, 1], [3, 3]])], [MAT], floats(-2, 2), grad=False),
    Row("index_list", lambda x: x[[1, 0]], [MAT], floats(-2, 2), grad=False),
    Row("index_slice_array", lambda x: x[:, A([0, 4, 1])], [MAT], floats(-2, 2), grad=False),
    Row("index_two_arrays", lambda x: x[A([0, 1]), A([1, 2])], [MAT], floats(-2, 2), grad=False),
    Row("index_arrays_bcast", lambda x: x[A([[0], [3]]), A([1, 4])], [MAT], floats(-2, 2), grad=False),
    Row("index_adjacent_after_slice", lambda x: x[1:, A([0, 2]), A([1, 3])], [T3D], floats(-2, 2),
        grad=False),
    Row("index_adjacent_int_array", lambda x: x[:, 0, A([1, 2])], [T3D], floats(-2, 2), grad=False),
    Row("index_nonadjacent", lambda x: x[A([0, 1]), :, A([1, 2])], [T3D], floats(-2, 2), grad=False),
    Row("index_nonadjacent_int", lambda x: x[0, :, A([1, 2, 4])], [T3D], floats(-2, 2), grad=False),
    Row("index_nonadjacent_none", lambda x: x[A([1, 0]), None, A([2, 3])], [MAT], floats(-2, 2), grad=False),
    Row("index_array_ellipsis", lambda x: x[..., A([4, 0])], [T3D], floats(-2, 2), grad=False),
    Row("index_array_then_slice", lambda x: x[A([1, 0]), 1:3], [T3D], floats(-2, 2), grad=False),
    Row("index_bool_mask", lambda x: x[A([True, False, True, True])], [MAT], floats(-2, 2), grad=False),
    Row("index_bool_mask_axis1", lambda x: x[:, A([True, False, True, False, True])], [MAT],
        floats(-2, 2), grad=False),
    Row("index_arg", lambda x, i: x[i], [MAT, (2,)], [floats(-2, 2), ints(-4, 4)], grad=False,
        traced_first=True),
    Row("index_arg_2d", lambda x, i: x[i], [MAT, (2, 2)], [floats(-2, 2), ints(0, 4)], grad=False,
        traced_first=True),
    Row("index_arg_slice_first", lambda x, i: x[:, i], [MAT, (2,)], [floats(-2, 2), ints(0, 5)],
        grad=False, traced_first=True),
    Row("index_arg_pair", lambda x, i, j: x[i, j], [MAT, (2,), (2,)],
        [floats(-2, 2), ints(0, 4), ints(0, 5)], grad=False, traced_first=True),
    Row("index_arg_nonadjacent", lambda x, i, j: x[i, :, j], [T3D, (2,), (2,)],
        [floats(-2, 2), ints(0, 2), ints(0, 5)], grad=False, traced_first=True),
    Row("index_arg_adjacent_after_slice", lambda x, i, j: x[:, i, j], [T3D, (4,), (1,)],
        [floats(-2, 2), ints(0, 4), ints(0, 5)], grad=False, traced_first=True),
    Row("index_arg_with_int", lambda x, i: x[1, :, i], [T3D, (2,)], [floats(-2, 2), ints(0, 5)],
        grad=False, traced_first=True),
    Row("index_arg_scalar", lambda x, i: x[i], [MAT, ()], [floats(-2, 2), ints(0, 4)], grad=False,
        traced_first=True),
    Row("index_arg_ellipsis", lambda x, i: x[..., i], [T3D, (2,)], [floats(-2, 2), ints(0, 5)],
        grad=False, traced_first=True),
    Row("index_arg_none", lambda x, i: x[None, i], [MAT, (2,)], [floats(-2, 2), ints(0, 4)], grad=False,
        traced_first=True),
    Row("getitem_arg", lambda x, i: lax.getitem(x, i), [MAT, (2,)], [floats(-2, 2), ints(-4, 4)], grad=False),
    Row("getitem_arg_pair", lambda x, i, j: lax.getitem(x, (i, j)), [MAT, (2,), (2,)],
        [floats(-2, 2), ints(0, 4), ints(0, 5)], grad=False),
    Row("getitem_arg_nonadjacent", lambda x, i, j: lax.getitem(x, (i, slice(None), j)),
        [T3D, (2,), (2,)], [floats(-2, 2), ints(0, 2), ints(0, 5)], grad=False),
    Row("getitem_arg_adjacent_after_slice", lambda x, i, j: lax.getitem(x, (slice(1, None), i, j)),
        [T3D, (2, 1), (2,)], [floats(-2, 2), ints(0, 4), ints(0, 5)], grad=False),
]
test_row = row_tests(TABLE)


def test_gather_transpose_is_scatter_add():
    """Repeated indices accumulate in the cotangent."""
    g = fxad.grad(lambda x: fnp.sum(x[IDX]))(np.zeros(3))
    np.testing.assert_array_equal(g, [1.0, 0.0, 2.0])

"""Rule table: reductions (fxad.rules.reduction.reduce)."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.test_util import check_grads

from ..common import T3D, floats, grid, Row, row_tests, ties

AXES = [None, 0, 1, -1, (0, 1)]


D = grid(0.5, 2)  # prod and std stay away from 0
TABLE = []
for ax in AXES:
    for kd in (False, True):
        TABLE += [
            Row(f"{r}-{ax}-{kd}", lambda x, r=r, ax=ax, kd=kd: getattr(fnp, r)(x, axis=ax, keepdims=kd),
                [(2, 3)], D, unique=True)
            for r in ("sum", "mean", "prod", "max", "min", "var", "std")
        ]
TABLE += [
    Row("prod-odd-length", lambda x: fnp.prod(x), [(5,)], D, unique=True),
    Row("argmax", lambda x: x[fnp.argmax(x)] * fnp.sum(x), [(4,)], D, unique=True),
    Row("argmin", lambda x: x[fnp.argmin(x, axis=0)] * x[0], [(4,)], D, unique=True),
    Row("sum-scalar", lambda x: fnp.sum(x), [()], D, unique=True),
    Row("logsumexp", lambda x: fxad.nn.logsumexp(x, axis=1), [(2, 3)], D, unique=True),
    # lax's forms: their values under vmap and jit
    Row("lax_reduce_sum", lambda x: lax.reduce_sum(x, (0, 2), True), [T3D], floats(-2, 2), grad=False),
    Row("lax_reduce_max", lambda x: lax.reduce_max(x, (1,)), [T3D], ties(), grad=False),
    Row("lax_reduce_min", lambda x: lax.reduce_min(x, (0, 1)), [T3D], ties(), grad=False),
    Row("lax_reduce_prod", lambda x: lax.reduce_prod(x, (2,), True), [T3D], floats(-2, 2), grad=False),
    Row("lax_argmin", lambda x: lax.argmin(x, 1, True), [T3D], ties(), grad=False),
    Row("lax_argmax", lambda x: lax.argmax(x, 0), [T3D], ties(), grad=False),
]
test_row = row_tests(TABLE)


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, 4.0], [0.0, 1.5, 0.0, 2.0], [0.0, 0.0, 0.0]])
def test_prod_with_zeros_to_second_order(x):
    """The product-of-the-others must come out right where x has zeros (no division)."""
    check_grads(fnp.prod, (np.array(x),), order=2)
    x = np.array(x)
    expected = np.array([np.prod(np.delete(x, i)) for i in range(len(x))])
    np.testing.assert_allclose(fxad.grad(fnp.prod)(x), expected)


def test_max_ties_share_the_derivative():
    g = fxad.grad(lambda x: fnp.max(x))(np.array([1.0, 3.0, 3.0]))
    np.testing.assert_allclose(g, [0.0, 0.5, 0.5])


@pytest.mark.parametrize("prim, ref", [("reduce_sum", np.sum), ("reduce_prod", np.prod),
                                       ("reduce_max", np.max), ("reduce_min", np.min)])
def test_reduction_impls_agree_with_numpy_for_every_dtype(prim, ref):
    """The impls call ufunc.reduce directly; type, dtype (bool and small ints promote for
    sum and prod) and value must be NumPy's function's."""
    from fxad.rules.reduction import reduce as reductions
    impl = getattr(reductions, prim + "_p").impl
    for x in [np.arange(6).reshape(2, 3).astype(dt) for dt in
              (np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float16, np.float32,
               np.float64, np.complex64)] + [np.float64(2.5), 3.0, True, np.array(1.5)]:
        for axes in ([(), (0,), (1,), (0, 1)] if np.ndim(x) == 2 else [()]):
            for keepdims in (False, True):
                ours, want = impl(x, axes, keepdims), ref(x, axes, keepdims=keepdims)
                assert type(ours) is type(want) and np.asarray(ours).dtype == np.asarray(want).dtype
                np.testing.assert_array_equal(ours, want)

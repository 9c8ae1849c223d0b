"""Rule table: reductions (fxad.rules.reduction.reduce)."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.test_util import check_grads

from ..common import grid, run_row

AXES = [None, 0, 1, -1, (0, 1)]


TABLE = []
for ax in AXES:
    for kd in (False, True):
        TABLE += [
            (f"sum-{ax}-{kd}", lambda x, ax=ax, kd=kd: fnp.sum(x, axis=ax, keepdims=kd), [(2, 3)]),
            (f"mean-{ax}-{kd}", lambda x, ax=ax, kd=kd: fnp.mean(x, axis=ax, keepdims=kd), [(2, 3)]),
            (f"prod-{ax}-{kd}", lambda x, ax=ax, kd=kd: fnp.prod(x, axis=ax, keepdims=kd), [(2, 3)]),
            (f"max-{ax}-{kd}", lambda x, ax=ax, kd=kd: fnp.max(x, axis=ax, keepdims=kd), [(2, 3)]),
            (f"min-{ax}-{kd}", lambda x, ax=ax, kd=kd: fnp.min(x, axis=ax, keepdims=kd), [(2, 3)]),
            (f"var-{ax}-{kd}", lambda x, ax=ax, kd=kd: fnp.var(x, axis=ax, keepdims=kd), [(2, 3)]),
            (f"std-{ax}-{kd}", lambda x, ax=ax, kd=kd: fnp.std(x, axis=ax, keepdims=kd), [(2, 3)]),
        ]
TABLE += [
    ("prod-odd-length", lambda x: fnp.prod(x), [(5,)]),
    ("argmax", lambda x: x[fnp.argmax(x)] * fnp.sum(x), [(4,)]),
    ("argmin", lambda x: x[fnp.argmin(x, axis=0)] * x[0], [(4,)]),
    ("sum-scalar", lambda x: fnp.sum(x), [()]),
]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_reduction(name, fn, shapes):
    run_row(fn, shapes, grid(0.5, 2), unique=True)


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

"""fxad.lax functions accept negative axes and mean what NumPy means by them, under every
transformation (rules and batching shift axes, so parameters are normalized at the call)."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.test_util import check_grads

X = np.random.default_rng(0).normal(size=(2, 3, 4))
CASES = {
    "flip": (lambda x: lax.flip(x, (-1,)), lambda x: np.flip(x, -1)),
    "cumsum": (lambda x: lax.cumsum(x, -2), lambda x: np.cumsum(x, -2)),
    "cumprod": (lambda x: lax.cumprod(x, -1), lambda x: np.cumprod(x, -1)),
    "reduce_sum": (lambda x: lax.reduce_sum(x, (-1,)), lambda x: np.sum(x, -1)),
    "reduce_max": (lambda x: lax.reduce_max(x, (-2, -1)), lambda x: np.max(x, (-2, -1))),
    "reduce_prod": (lambda x: lax.reduce_prod(x, (-1,)), lambda x: np.prod(x, -1)),
    "argmax": (lambda x: lax.argmax(x, -1), lambda x: np.argmax(x, -1)),
    "argsort": (lambda x: lax.argsort(x, -1), lambda x: np.argsort(x, -1, kind="stable")),
    "transpose": (lambda x: lax.transpose(x, (-1, 0)), lambda x: np.transpose(x, (-1, 0))),
    "concatenate": (lambda x: lax.concatenate([x, 2 * x], -1),
                    lambda x: np.concatenate([x, 2 * x], -1)),
}


@pytest.mark.parametrize("name", CASES)
def test_negative_axes_eager_vmap_jit(name):
    f, ref = CASES[name]
    xs = X
    slices = [xs[i] for i in range(len(xs))]
    np.testing.assert_allclose(fxad.vmap(f)(xs), np.stack([ref(s) for s in slices]))
    np.testing.assert_allclose(fxad.jit(f)(slices[0]), ref(slices[0]))
    if name not in ("argmax", "argsort"):
        check_grads(lambda x: fnp.sum(f(x) ** 2), (slices[0],), order=2)


def test_out_of_range_axis_names_the_function():
    with pytest.raises(ValueError, match="cumsum: axis -3 is out of range for an array of rank 2"):
        lax.cumsum(np.ones((2, 2)), -3)

"""broadcast_to's generated NumPy code views a 0-d value with zero strides itself (not
through np.broadcast_to, whose checks cost more than the cotangents of sums and means are
worth): the same array as NumPy's, read-only, keeping the value alive."""
import gc

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.rules.structural.shape import _broadcast_scalar

SHAPES = [(), (3,), (2, 0), (4, 5), (1, 1, 3)]
VALUES = {"f64": np.array(2.5), "i32": np.array(3, np.int32), "c128": np.array(1 + 2j),
          "big-endian": np.array(7.0, ">f8"), "np-scalar": np.float32(1.5)}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", list(VALUES))
def test_the_view_is_numpys_broadcast(name, shape):
    value = VALUES[name].copy()
    got, want = _broadcast_scalar(value, shape, (0,) * len(shape)), np.broadcast_to(value, shape)
    assert got.shape == want.shape and got.dtype == want.dtype and got.strides == want.strides
    assert np.array_equal(got, want) and not got.flags.writeable
    del value
    gc.collect()
    assert np.array_equal(got, want)  # the view keeps its value alive
    np.testing.assert_array_equal(fxad.jit(lambda v: lax.broadcast_to(v, shape))(VALUES[name]),
                                  want)


def test_cotangents_of_means_are_right_on_every_path():
    x = np.arange(6.0).reshape(3, 2)
    f = fxad.grad(lambda v: fnp.mean(v ** 2) + fnp.sum(fnp.broadcast_to(fnp.sum(v), (2, 2))))
    want = 2 * x / x.size + 4.0
    for g in (f, fxad.jit(f)):
        out = g(x)
        np.testing.assert_allclose(out, want, rtol=1e-14)
        out += 1.0  # the gradient the user gets is a private, writeable array
    np.testing.assert_allclose(f(x), want, rtol=1e-14)

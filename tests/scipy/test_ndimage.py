"""fxad.scipy.ndimage.map_coordinates: values and dtypes against SciPy for orders 0 and 1,
every mode, 1-3 dimensions, float32/float64/integer/complex inputs, axes of length 1;
derivatives to second order in both modes (in the input and in the coordinates); vmap against
a loop; jit against eager; JAX's modes by their SciPy names; the clear errors."""
import numpy as np
import pytest
from scipy import ndimage as snd

import fxad
from fxad.errors import FxadValueError
from fxad.scipy import ndimage as fnd
from fxad.test_util import check_grads

rng = np.random.default_rng(0)
MODES = ("constant", "nearest", "wrap", "mirror", "reflect", "grid-constant", "grid-wrap",
         "grid-mirror")
SHAPES = [(1,), (2,), (5,), (3, 4), (1, 3), (2, 3, 4)]
DTYPES = [np.float64, np.float32, np.int64, np.complex128]


def _input(shape, dtype):
    if dtype == np.complex128:
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return (rng.standard_normal(shape) * 5).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_as_scipy(shape, dtype):
    x = _input(shape, dtype)
    coords = [rng.uniform(-2.5 * n - 1, 2.5 * n + 1, (6, 7)) for n in shape]
    for mode in MODES:
        for order in (0, 1):
            want = snd.map_coordinates(x, coords, order=order, mode=mode, cval=-0.75)
            got = np.asarray(fnd.map_coordinates(x, coords, order=order, mode=mode, cval=-0.75))
            assert got.shape == want.shape and got.dtype == want.dtype, (mode, order)
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{mode} {order}")


def test_coordinates_as_one_array_and_jax_modes_by_scipy_names():
    """A (ndim, ...) array of coordinates works as a list; JAX's 'constant' and 'wrap' are
    SciPy's 'grid-constant' and 'grid-wrap' (sample values at the grid points agree)."""
    x = rng.standard_normal((3, 4))
    c = np.stack([rng.uniform(-1, 3, 5), rng.uniform(-1, 4, 5)])
    np.testing.assert_allclose(fnd.map_coordinates(x, c, order=1),
                               snd.map_coordinates(x, c, order=1), rtol=1e-13, atol=1e-13)
    grid = np.stack(np.meshgrid(np.arange(3.0), np.arange(4.0), indexing="ij"))
    for mode in MODES:
        np.testing.assert_allclose(fnd.map_coordinates(x, grid, order=1, mode=mode), x,
                                   rtol=1e-13, atol=1e-13)


GRADS = [(mode, order) for mode in MODES for order in (0, 1)]


@pytest.mark.parametrize("mode, order", GRADS, ids=[f"{m}-{o}" for m, o in GRADS])
def test_derivatives_vmap_and_jit(mode, order):
    x = rng.standard_normal((3, 4))
    # inside the grid away from sample points and edges (order 1 is smooth there; 'constant'
    # jumps to cval at the edges, order 0 at half-integers)
    c = [rng.uniform(0.1, 1.9, 5), rng.uniform(0.1, 2.9, 5)]
    c = [ci + 0.2 * (np.abs(ci - np.round(ci)) < 0.05) for ci in c]
    f = lambda x, c0, c1: fnd.map_coordinates(x, [c0, c1], order=order, mode=mode, cval=0.5)
    check_grads(f, (x, *c), order=2, modes=("fwd", "rev"), eps=1e-5)
    xs = np.stack([x, 2 * x + 1, -x])
    np.testing.assert_allclose(fxad.vmap(f, (0, None, None))(xs, *c),
                               np.stack([f(r, *c) for r in xs]), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(fxad.jit(f)(x, *c), f(x, *c), rtol=1e-13, atol=1e-13)


def test_order_zero_has_no_derivative_in_the_coordinates():
    x = rng.standard_normal(5)
    g = fxad.grad(lambda c: fnd.map_coordinates(x, [c], order=0).sum())(np.array([0.3, 2.2]))
    np.testing.assert_array_equal(g, 0.0)


@pytest.mark.parametrize("call, match", [
    (lambda: fnd.map_coordinates(np.ones(4), [np.zeros(2)], order=3), "order must be 0 or 1"),
    (lambda: fnd.map_coordinates(np.ones(4), [np.zeros(2)], order=1, mode="edge"),
     "mode must be one of"),
    (lambda: fnd.map_coordinates(np.ones((2, 2)), [np.zeros(2)], order=1),
     "1 coordinate arrays for an input of 2 dimensions"),
    (lambda: fnd.map_coordinates(np.ones(4), [np.zeros(2)], order=1, output=np.zeros(2)),
     "output= is not supported"),
])
def test_errors(call, match):
    with pytest.raises(FxadValueError, match=match):
        call()

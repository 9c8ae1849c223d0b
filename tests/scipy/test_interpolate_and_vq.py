"""fxad.scipy.interpolate.RegularGridInterpolator ('linear', 'nearest') and
fxad.scipy.cluster.vq.vq: values and dtypes against SciPy (1-3 dimensions, trailing value
axes, descending axes, points on the grid and outside it, fill values and extrapolation),
derivatives to second order in both modes, vmap against a loop, jit against eager, and the
clear errors."""
import numpy as np
import pytest
from scipy.cluster.vq import vq as scipy_vq
from scipy.interpolate import RegularGridInterpolator as ScipyRGI

import fxad
from fxad.errors import FxadValueError
from fxad.scipy.cluster.vq import vq
from fxad.scipy.interpolate import RegularGridInterpolator
from fxad.test_util import check_grads

rng = np.random.default_rng(0)


def _grid(ndim, descending):
    pts = [np.unique(rng.uniform(-3, 3, n)) for n in (3, 5, 4)[:ndim]]
    if descending and ndim > 1:
        pts[1] = pts[1][::-1]
    return pts


CASES = [(ndim, extra, dt, desc) for ndim, extra in [(1, ()), (2, ()), (3, ()), (2, (4,)),
                                                     (1, (2, 3))]
         for dt in (np.float64, np.float32, np.int64) for desc in (False, True)
         if not (desc and ndim == 1)]


@pytest.mark.parametrize("ndim, extra, dtype, descending", CASES, ids=str)
def test_grid_interpolation_as_scipy(ndim, extra, dtype, descending):
    pts = _grid(ndim, descending)
    vals = (rng.standard_normal(tuple(len(p) for p in pts) + extra) * 4).astype(dtype)
    xi = rng.uniform(-4, 4, (7, 3, ndim))
    xi[0, 0], xi[0, 1], xi[0, 2] = [p[0] for p in pts], [p[-1] for p in pts], [p[1] for p in pts]
    for method in ("linear", "nearest"):
        for fill in (np.nan, None, -2.0):
            if fill is not None and np.isnan(fill) and dtype == np.int64:
                continue  # SciPy cannot put NaN in its integer result (fxad gives floats)
            kw = dict(method=method, bounds_error=False, fill_value=fill)
            want = ScipyRGI(pts, vals, **kw)(xi)
            got = np.asarray(RegularGridInterpolator(pts, vals, **kw)(xi))
            # (SciPy keeps integer values for 'nearest' on a descending axis, floats otherwise)
            if not (descending and method == "nearest" and dtype == np.int64):
                assert got.dtype == want.dtype
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # a tuple of coordinate arrays, and a method given at the call
    r = RegularGridInterpolator(pts, vals, bounds_error=False, fill_value=None)
    want = ScipyRGI(pts, vals, bounds_error=False, fill_value=None)(xi, method="nearest")
    np.testing.assert_allclose(r(tuple(xi[..., d] for d in range(ndim)), method="nearest"),
                               want, rtol=1e-12, atol=1e-12)


def test_bounds_error_for_concrete_points_and_under_jit():
    pts = _grid(2, False)
    vals = rng.standard_normal((len(pts[0]), len(pts[1])))
    r = RegularGridInterpolator(pts, vals)  # bounds_error=True, SciPy's default
    inside = np.array([[pts[0][1], pts[1][2]]])
    np.testing.assert_allclose(r(inside), ScipyRGI(pts, vals)(inside), rtol=1e-13)
    with pytest.raises(FxadValueError, match="out of bounds in dimension 0"):
        r(np.array([[10.0, pts[1][0]]]))
    with pytest.raises(FxadValueError, match="pass bounds_error=False"):
        fxad.jit(r)(inside)


def test_grid_interpolation_derivatives_vmap_and_jit():
    pts = _grid(2, True)
    vals = rng.standard_normal((len(pts[0]), len(pts[1])))
    xi = np.stack([rng.uniform(pts[0][0], pts[0][-1], 5),
                   rng.uniform(pts[1][-1], pts[1][0], 5)], axis=-1)
    for method in ("linear", "nearest"):
        f = lambda v, x: RegularGridInterpolator(pts, v, method=method, bounds_error=False,
                                                 fill_value=None)(x)
        check_grads(f, (vals, xi), order=2, modes=("fwd", "rev"), eps=1e-6)
        vs = np.stack([vals, 2 * vals, -vals])
        np.testing.assert_allclose(fxad.vmap(f, (0, None))(vs, xi),
                                   np.stack([f(v, xi) for v in vs]), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(fxad.jit(f)(vals, xi), f(vals, xi), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("call, match", [
    (lambda: RegularGridInterpolator([np.arange(3.0)], np.ones(3), method="cubic"),
     "method must be one of"),
    (lambda: RegularGridInterpolator([np.arange(3.0)], np.ones(4)), "3 points and 4 values"),
    (lambda: RegularGridInterpolator([np.array([0.0, 2.0, 1.0])], np.ones(3)),
     "strictly ascending or descending"),
    (lambda: RegularGridInterpolator([np.arange(3.0)] * 2, np.ones(3)),
     "2 dimensions of points but values of only 1"),
    (lambda: RegularGridInterpolator([np.arange(3.0)], np.ones(3))(np.ones((2, 2))),
     "query points have dimension 2, the grid 1"),
    (lambda: RegularGridInterpolator([np.arange(3.0)], np.ones(3))(np.ones((2, 1)), nu=1),
     "differentiate with fxad.grad"),
    (lambda: vq(np.ones((3, 2)), np.ones((2, 3))), "2 features, the code book 3"),
    (lambda: vq(np.ones((3, 2)), np.ones(2)), "1-d or both 2-d"),
    (lambda: vq(np.array([[np.nan, 1.0]]), np.ones((2, 2))), "infs or NaNs"),
])
def test_errors(call, match):
    with pytest.raises(FxadValueError, match=match):
        call()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32],
                         ids=lambda d: d.__name__)
def test_vq_as_scipy(dtype):
    obs = (rng.standard_normal((20, 3)) * 4).astype(dtype)
    book = (rng.standard_normal((5, 3)) * 4).astype(dtype)
    for o, b in ((obs, book), (obs[:, 0], book[:, 0])):
        (code, dist), (want_code, want_dist) = vq(o, b), scipy_vq(o, b)
        np.testing.assert_array_equal(code, want_code)
        assert np.asarray(code).dtype == want_code.dtype
        assert np.asarray(dist).dtype == want_dist.dtype
        np.testing.assert_allclose(dist, want_dist, rtol=1e-6 if dtype == np.float32 else 1e-13)


def test_vq_distances_derivatives_vmap_and_jit():
    obs, book = rng.standard_normal((6, 3)), rng.standard_normal((4, 3))
    f = lambda o, b: vq(o, b)[1]
    check_grads(f, (obs, book), order=2, modes=("fwd", "rev"))
    obss = np.stack([obs, obs + 1, -obs])
    np.testing.assert_allclose(fxad.vmap(f, (0, None))(obss, book),
                               np.stack([f(o, book) for o in obss]), rtol=1e-13)
    code = fxad.jit(lambda o, b: vq(o, b, check_finite=False)[0])(obs, book)
    np.testing.assert_array_equal(code, scipy_vq(obs, book)[0])

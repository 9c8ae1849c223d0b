"""histogram2d / histogramdd, einsum_path, and fft.hfft / ihfft: values against NumPy (edges
bit for bit), derivatives (histogram counts in the weights; the transforms to order 2 in both
modes), jit against eager and vmap against a loop."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.test_util import check_grads

RNG = np.random.default_rng(11)
SAMPLE = RNG.normal(size=(60, 3))
W = RNG.random(60)

DD_CASES = [{}, {"bins": 4}, {"bins": [3, 4, np.linspace(-1, 1, 5)]},
            {"range": [(-1, 1), None, (0, 2)], "weights": W},
            {"bins": 5, "weights": W, "density": True}, {"bins": (2, 3, 4), "density": True}]


@pytest.mark.parametrize("k", range(len(DD_CASES)))
def test_histogramdd_matches_numpy(k):
    kw = DD_CASES[k]
    got, edges = fnp.histogramdd(SAMPLE, **kw)
    want, wedges = np.histogramdd(SAMPLE, **kw)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    assert len(edges) == len(wedges)
    for e, we in zip(edges, wedges):
        np.testing.assert_array_equal(e, we)
    jitted = fxad.jit(lambda s: fnp.histogramdd(s, **kw)[0])(SAMPLE)
    np.testing.assert_array_equal(jitted, got)


def test_histogramdd_forms_and_edge_values():
    cols = [SAMPLE[:, 0], SAMPLE[:, 1]]  # a sequence of coordinate arrays
    np.testing.assert_array_equal(fnp.histogramdd(cols, bins=3)[0], np.histogramdd(cols, bins=3)[0])
    one = SAMPLE[:, 0]  # one dimension
    np.testing.assert_array_equal(fnp.histogramdd(one)[0], np.histogramdd(one)[0])
    pts = np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 1.0], [2.0, 0.5], [-0.1, 0.2]])  # on/out edges
    for kw in [{"bins": 2, "range": [(0, 1), (0, 1)]}, {"bins": [np.array([0, 0.5, 1]), 3]}]:
        np.testing.assert_array_equal(fnp.histogramdd(pts, **kw)[0], np.histogramdd(pts, **kw)[0])
    same = np.ones((4, 2))  # a zero-width range widens by 0.5 each side, as NumPy's
    for a, b in zip(fnp.histogramdd(same, bins=2)[1], np.histogramdd(same, bins=2)[1]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_histogram2d_matches_numpy(dtype):
    x, y = SAMPLE[:, 0].astype(dtype), SAMPLE[:, 1].astype(dtype)
    for kw in [{}, {"bins": 4}, {"bins": (3, 5)}, {"bins": np.linspace(-2, 2, 6)},
               {"bins": [4, np.array([-1.0, 0.0, 2.0])], "weights": W, "density": True},
               {"range": [[-1, 1], [-0.5, 2]], "weights": W}]:
        got, want = fnp.histogram2d(x, y, **kw), np.histogram2d(x, y, **kw)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-13, atol=0)
        for a, b in zip(got[1:], want[1:]):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)


def test_histogram_counts_are_differentiable_in_the_weights():
    x, y = SAMPLE[:, 0], SAMPLE[:, 1]

    def counts(w):
        return fnp.histogram2d(x, y, bins=3, weights=w)[0]
    bins = np.histogram2d(x, y, bins=3)
    ix = np.clip(np.searchsorted(bins[1], x, side="right") - 1, 0, 2)
    iy = np.clip(np.searchsorted(bins[2], y, side="right") - 1, 0, 2)
    np.testing.assert_array_equal(fxad.grad(lambda w: counts(w)[1, 2])(W),
                                  ((ix == 1) & (iy == 2)).astype(float))
    check_grads(lambda w: fnp.histogram2d(x, y, bins=3, weights=w, density=True)[0], (W,),
                order=2)
    check_grads(lambda w: fnp.histogramdd(SAMPLE, bins=2, weights=w)[0], (W,), order=2)
    batch = RNG.random((3, 60))
    np.testing.assert_allclose(fxad.vmap(counts)(batch), [counts(b) for b in batch],
                               rtol=1e-14)


def test_einsum_path_gives_a_path_einsum_accepts():
    a, b, c = RNG.random((2, 3)), RNG.random((3, 40)), RNG.random((40, 2))
    for opt, want in [("auto", "greedy"), (True, "greedy"), ("greedy", "greedy"),
                      ("optimal", "optimal"), (False, False)]:
        path, info = fnp.einsum_path("ij,jk,kl->il", a, b, c, optimize=opt)
        npath, ninfo = np.einsum_path("ij,jk,kl->il", a, b, c, optimize=want)
        assert path == [tuple(p) for p in npath[1:]] and info == ninfo
        np.testing.assert_allclose(fnp.einsum("ij,jk,kl->il", a, b, c, optimize=path),
                                   a @ b @ c, rtol=1e-13)
    given = [(1, 2), (0, 1)]
    assert fnp.einsum_path("ij,jk,kl->il", a, b, c, optimize=given)[0] == given
    assert fnp.einsum_path(a, [0, 1], b, [1, 2], [0, 2])[0] == [(0, 1)]  # interleaved form
    assert fnp.einsum_path("i,i", [1.0, 2.0], [3.0, 4.0])[0] == [(0, 1)]  # array_likes

    def traced(x):  # shapes only: traced operands are fine
        path, _ = fnp.einsum_path("ij,jk,kl->il", x, b, c)
        return fnp.einsum("ij,jk,kl->il", x, b, c, optimize=path)
    np.testing.assert_allclose(fxad.jit(traced)(a), a @ b @ c, rtol=1e-13)


NORMS = [None, "backward", "ortho", "forward"]


@pytest.mark.parametrize("norm", NORMS)
def test_hfft_ihfft_match_numpy_and_differentiate(norm):
    z = RNG.normal(size=(3, 6)) + 1j * RNG.normal(size=(3, 6))
    r = RNG.normal(size=(3, 7))
    for n in [None, 8, 11, 4]:
        np.testing.assert_allclose(fnp.fft.hfft(z, n, norm=norm), np.fft.hfft(z, n, norm=norm),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fnp.fft.ihfft(r, n, axis=0, norm=norm),
                                   np.fft.ihfft(r, n, axis=0, norm=norm), rtol=1e-12,
                                   atol=1e-12)
    np.testing.assert_allclose(fnp.fft.hfft(r, norm=norm), np.fft.hfft(r, norm=norm),
                               rtol=1e-12, atol=1e-12)  # real input
    np.testing.assert_allclose(fxad.jit(lambda v: fnp.fft.hfft(v, 9, norm=norm))(z),
                               fnp.fft.hfft(z, 9, norm=norm), rtol=1e-14, atol=1e-14)
    # NumPy's own functions dispatch to these on traced values
    np.testing.assert_allclose(fxad.jit(lambda v: np.fft.hfft(v, 9, norm=norm))(z),
                               fnp.fft.hfft(z, 9, norm=norm), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(fxad.jit(lambda v: np.fft.ihfft(v, norm=norm))(r),
                               fnp.fft.ihfft(r, norm=norm), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(fxad.vmap(lambda v: fnp.fft.ihfft(v, norm=norm))(r),
                               [fnp.fft.ihfft(v, norm=norm) for v in r], rtol=1e-14, atol=1e-14)
    check_grads(lambda a, b: fnp.fft.hfft(a + 1j * b, 9, norm=norm), (z.real, z.imag), order=2)
    check_grads(lambda a: fnp.fft.ihfft(a, norm=norm), (r,), order=2)
    assert fnp.fft.ihfft(fnp.fft.hfft(z[0], 10, norm=norm), norm=norm).shape == (6,)
    np.testing.assert_allclose(fnp.fft.ihfft(fnp.fft.hfft(z[0], 10, norm=norm), norm=norm)[1:5],
                               z[0][1:5], rtol=1e-12)

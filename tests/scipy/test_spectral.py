"""fxad.scipy.signal's stft, istft, csd and welch: frequencies, times, values, shapes and dtypes
against SciPy over the options (segment sizes, overlaps, nfft, boundaries, padding,
scalings, detrending, averaging, axes, float32/complex inputs, signals of different
lengths), derivatives to second order in both modes (in the signals and in fs), vmap against
a loop, jit against eager, and the clear errors."""
import warnings

import numpy as np
import pytest
import scipy.signal as ss

import fxad
from fxad.errors import FxadValueError
from fxad.scipy import signal as fsig
from fxad.test_util import check_grads

rng = np.random.default_rng(0)
X1, X2, X3 = rng.standard_normal(100), rng.standard_normal((3, 90)), rng.standard_normal((64, 2))
SIGNALS = [(X1, -1), (X2, -1), (X3, 0), (X2.astype(np.float32), -1), (X1 + 1j * X1[::-1], -1)]
SEGMENTS = [dict(nperseg=16), dict(nperseg=16, noverlap=4, nfft=20), dict(nperseg=15, noverlap=7),
            dict(nperseg=32, noverlap=0, nfft=33)]


def _same(got, want, dtype):
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * max(np.abs(w).max(), 1e-300))


@pytest.mark.parametrize("seg", SEGMENTS, ids=str)
@pytest.mark.parametrize("k", range(len(SIGNALS)))
def test_stft_as_scipy(k, seg):
    x, axis = SIGNALS[k]
    for boundary, padded, scaling, onesided in [("zeros", True, "spectrum", True),
                                                ("even", True, "psd", True),
                                                ("odd", False, "spectrum", False),
                                                ("constant", True, "psd", False),
                                                (None, False, "spectrum", True)]:
        kw = dict(seg, boundary=boundary, padded=padded, axis=axis, scaling=scaling,
                  return_onesided=onesided, fs=2.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SciPy's note that complex input is two-sided
            want = ss.stft(x, **kw)
        _same(fsig.stft(x, **kw), want, x.dtype)


@pytest.mark.parametrize("seg", SEGMENTS + [dict(nperseg=16, noverlap=12)], ids=str)
@pytest.mark.parametrize("k", range(len(SIGNALS)))
def test_istft_as_scipy_and_inverts_stft(k, seg):
    x, axis = SIGNALS[k]
    onesided = x.dtype.kind != "c"
    faxis = axis - 1 if axis < 0 else axis
    for window, scaling, boundary in [("hann", "spectrum", True), ("hamming", "psd", False),
                                      (("tukey", 0.5), "psd", True)]:
        _, _, z = ss.stft(x, window=window, axis=axis, scaling=scaling, fs=2.0,
                          boundary="zeros" if boundary else None, return_onesided=onesided,
                          **seg)
        kw = dict(seg, window=window, scaling=scaling, boundary=boundary, fs=2.0,
                  input_onesided=onesided, time_axis=-1, freq_axis=faxis)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the NOLA note of the boundary-less rows
            want = ss.istft(z, **kw)
            got = fsig.istft(z, **kw)
        _same(got, want, x.dtype)
        if boundary and scaling == "spectrum" and seg.get("noverlap") != 0:
            # with stft's boundary and padding, and overlapping windows (NOLA), x comes back
            back = np.moveaxis(np.asarray(got[1]), -1, axis)
            n = x.shape[axis]
            np.testing.assert_allclose(np.take(back, np.arange(n), axis=axis), x,
                                       rtol=1e-4 if x.dtype == np.float32 else 1e-10,
                                       atol=1e-4 if x.dtype == np.float32 else 1e-10)


@pytest.mark.parametrize("seg", SEGMENTS, ids=str)
@pytest.mark.parametrize("k", range(len(SIGNALS)))
def test_welch_and_csd_as_scipy(k, seg):
    x, axis = SIGNALS[k]
    y = x.real[..., ::-1] * 0.5 + 1
    for detrend, scaling, average in [("constant", "density", "mean"),
                                      ("linear", "spectrum", "median"),
                                      (False, "density", "median"),
                                      ("constant", "spectrum", "mean")]:
        kw = dict(seg, detrend=detrend, scaling=scaling, average=average, axis=axis, fs=3.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SciPy 1.15's note that complex input is two-sided
            want_p, want_c = ss.welch(x, **kw), ss.csd(x, y, **kw)
        _same(fsig.welch(x, **kw), want_p, x.dtype)
        _same(fsig.csd(x, y, **kw), want_c, x.dtype)


def test_csd_pads_the_shorter_signal_and_takes_y_none_as_x():
    x, y = rng.standard_normal(80), rng.standard_normal(64)
    _same(fsig.csd(x, y, nperseg=16), ss.csd(x, y, nperseg=16), x.dtype)
    _same(fsig.csd(y, x, nperseg=16), ss.csd(y, x, nperseg=16), x.dtype)
    f, p = fsig.csd(x, None, nperseg=16)
    _same((f, p), ss.welch(x, nperseg=16), x.dtype)


def test_a_callable_detrend_and_a_window_array():
    x = rng.standard_normal(70)
    win = ss.get_window(("tukey", 0.3), 20)
    kw = dict(window=win, noverlap=5)
    _same(fsig.welch(x, detrend=lambda s: s - s[..., :1], **kw),
          ss.welch(x, detrend=lambda s: s - s[..., :1], **kw), x.dtype)
    _same(fsig.stft(x, window="hamming", nperseg=12), ss.stft(x, window="hamming", nperseg=12),
          x.dtype)


def test_nperseg_longer_than_the_signal_warns_and_shrinks():
    x = rng.standard_normal(40)
    with pytest.warns(UserWarning, match="using nperseg = 40"):
        got = fsig.welch(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(got, ss.welch(x), x.dtype)


DIFF = [("stft", lambda x: fsig.stft(x, nperseg=16, noverlap=5)[2], (X1[:50],)),
        ("stft_odd_boundary", lambda x: fsig.stft(x, nperseg=10, boundary="odd")[2],
         (X1[:40],)),
        ("welch", lambda x: fsig.welch(x, nperseg=16)[1], (X1[:60],)),
        ("welch_linear", lambda x: fsig.welch(x, nperseg=16, detrend="linear")[1], (X1[:60],)),
        ("csd", lambda x, y: fsig.csd(x, y, nperseg=12)[1], (X1[:50], X1[50:100])),
        ("welch_fs", lambda fs: fsig.welch(X1[:60], fs=fs, nperseg=16)[1], (np.float64(2.5),)),
        ("stft_fs", lambda fs: fsig.stft(X1[:40], fs=fs, nperseg=16, scaling="psd")[2],
         (np.float64(2.5),)),
        ("istft", lambda z: fsig.istft(z, nperseg=16, noverlap=6)[1],
         (ss.stft(X1[:50], nperseg=16, noverlap=6)[2],))]


@pytest.mark.parametrize("name, f, args", DIFF, ids=[d[0] for d in DIFF])
def test_derivatives_to_second_order(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name, f, args", DIFF[:5] + DIFF[7:],
                         ids=[d[0] for d in DIFF[:5] + DIFF[7:]])
def test_vmap_against_a_loop_and_jit_against_eager(name, f, args):
    stacked = [np.stack([a, 2 * a + 1, -a]) for a in args]
    want = np.stack([np.asarray(f(*[s[i] for s in stacked])) for i in range(3)])
    np.testing.assert_allclose(fxad.vmap(f)(*stacked), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fxad.jit(f)(*args), f(*args), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("call, match", [
    (lambda: fsig.stft(X1, nperseg=16, scaling="density"), "'spectrum' or 'psd'"),
    (lambda: fsig.stft(X1, nperseg=16, boundary="reflect"), "boundary must be one of"),
    (lambda: fsig.stft(X1, nperseg=16, noverlap=16), "noverlap = 16 must be less"),
    (lambda: fsig.stft(X1, nperseg=16, nfft=8), "nfft = 8 must be at least"),
    (lambda: fsig.stft(X1, nperseg=0), "positive integer"),
    (lambda: fsig.welch(X1, window=np.ones((2, 2))), "1-d"),
    (lambda: fsig.welch(X1, window=np.ones(8), nperseg=16), "differs from the window"),
    (lambda: fsig.welch(X1[:5], window=np.ones(8)), "longer than the input"),
    (lambda: fsig.welch(X1, nperseg=16, average="mode"), "'mean' or 'median'"),
    (lambda: fsig.csd(X1, X1, nperseg=16, scaling="psd"), "'density' or 'spectrum'"),
    (lambda: fsig.istft(X1), "at least 2 dimensions"),
    (lambda: fsig.istft(np.ones((9, 4)), time_axis=0, freq_axis=-2), "must differ"),
    (lambda: fsig.istft(np.ones((9, 4)), window=np.ones(8), nperseg=16), "length nperseg = 16"),
    (lambda: fsig.istft(np.ones((9, 4)), scaling="density"), "'spectrum' or 'psd'"),
])
def test_clear_errors(call, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(FxadValueError, match=match):
            call()


def test_istft_warns_where_the_overlaps_leave_a_sample_unweighted():
    z = ss.stft(X1, nperseg=16, noverlap=0, boundary=None, padded=False)[2]
    with pytest.warns(UserWarning, match="NOLA"):
        fsig.istft(z, nperseg=16, noverlap=0, boundary=False)

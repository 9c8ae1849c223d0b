"""scipy.signal's detrend and short-time spectra (stft, istft, csd, welch): frames of the
signal (a gather), detrended, windowed and Fourier transformed, and back (a scatter-add), as
SciPy computes them, so differentiable in the signal(s) and in `fs`, batched over the other
axes, and runnable under jit and vmap.
Sizes, the window and the segmentation are static (concrete); the window is SciPy's
`get_window` (or the array given).
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import numpy as fnp
from ..errors import FxadValueError
from ..numpy.linalg import as_float

_BOUNDARIES = ("even", "odd", "constant", "zeros", None)


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=False):
    """`data` minus its least-squares trend along `axis`, as SciPy's: the mean
    (type='constant'), or a straight line fitted to each piece between the breakpoints `bp`
    (type='linear'; concrete integers). A linear map of `data`, so differentiable; each
    piece's fit is its projection onto (1, t), a (2, n) pseudo-inverse of the sizes alone.
    overwrite_data is accepted and ignored."""
    if type not in ("linear", "l", "constant", "c"):
        raise FxadValueError("detrend: type must be 'linear' or 'constant'")
    data = as_float(data)
    if type in ("constant", "c"):
        return data - fnp.mean(data, axis=axis, keepdims=True)
    nd = fnp.ndim(data)
    axis = int(axis) % max(nd, 1)
    n = fnp.shape(data)[axis]
    bps = np.unique(np.concatenate([[0], np.atleast_1d(np.asarray(bp)).astype(np.int64), [n]]))
    if np.any(bps > n) or np.any(bps < 0):
        raise FxadValueError(f"detrend: breakpoints must lie in [0, {n}] (the length along "
                             f"axis {axis}), got {bp!r}")
    x = fnp.moveaxis(data, axis, -1)
    real = np.finfo(fnp.result_type(data)).dtype
    pieces = []
    for lo, hi in zip(bps[:-1], bps[1:]):
        m = int(hi - lo)
        basis = np.stack([np.arange(1, m + 1) / m, np.ones(m)], axis=1)  # SciPy's (t/m, 1)
        proj = np.linalg.pinv(basis).astype(real)
        seg = x[..., lo:hi]
        coef = fnp.matmul(seg, proj.T)  # (..., 2): the least-squares line
        pieces.append(seg - fnp.matmul(coef, basis.T.astype(real)))
    out = fnp.concatenate(pieces, axis=-1) if len(pieces) > 1 else pieces[0]
    return fnp.moveaxis(out, -1, axis)


def _get_window(window, nperseg):
    import scipy.signal  # on first use: it is a large import that most programs never need
    return np.asarray(scipy.signal.get_window(window, nperseg))


def _window(name, window, nperseg, n, default):
    """(window array, nperseg) as SciPy settles them for a signal of length n."""
    if isinstance(window, (str, tuple)):
        nperseg = default if nperseg is None else int(nperseg)
        if nperseg < 1:
            raise FxadValueError(f"{name}: nperseg must be a positive integer, got {nperseg}")
        if nperseg > n:
            warnings.warn(f"{name}: nperseg = {nperseg} is greater than the input length "
                          f"= {n}, using nperseg = {n}", UserWarning, stacklevel=3)
            nperseg = n
        return _get_window(window, nperseg), nperseg
    win = np.asarray(window)
    if win.ndim != 1:
        raise FxadValueError(f"{name}: window must be 1-d")
    if win.shape[0] > n:
        raise FxadValueError(f"{name}: the window is longer than the input signal")
    if nperseg is not None and int(nperseg) != win.shape[0]:
        raise FxadValueError(f"{name}: nperseg = {nperseg} differs from the window's length "
                             f"{win.shape[0]}")
    return win, win.shape[0]


def _settle(name, nperseg, noverlap, nfft):
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise FxadValueError(f"{name}: nfft = {nfft} must be at least nperseg = {nperseg}")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise FxadValueError(f"{name}: noverlap = {noverlap} must be less than nperseg = "
                             f"{nperseg}")
    return noverlap, nfft


def _extend(x, n, boundary):
    """SciPy's boundary extensions by n samples at each end of the last axis (n, half a
    segment, is less than the length)."""
    if boundary is None or n == 0:
        return x
    length = fnp.shape(x)[-1]
    if boundary == "zeros":
        pad = fnp.zeros(fnp.shape(x)[:-1] + (n,), fnp.result_type(x))
        return fnp.concatenate([pad, x, pad], axis=-1)
    if boundary == "constant":
        reps = fnp.shape(x)[:-1] + (n,)
        return fnp.concatenate([fnp.broadcast_to(x[..., :1], reps), x,
                                fnp.broadcast_to(x[..., -1:], reps)], axis=-1)
    # mirrored about each end sample (which is not repeated)
    left, right = x[..., np.arange(n, 0, -1)], x[..., np.arange(length - 2, length - n - 2, -1)]
    if boundary == "odd":
        left, right = 2 * x[..., :1] - left, 2 * x[..., -1:] - right
    return fnp.concatenate([left, x, right], axis=-1)


def _frames(x, nperseg, step):
    """The segments of the last axis: (..., number of segments, nperseg)."""
    nseg = (fnp.shape(x)[-1] - nperseg) // step + 1
    return x[..., np.arange(nseg)[:, None] * step + np.arange(nperseg)[None, :]]


def _spectra(x, win, nperseg, noverlap, nfft, trend, onesided):
    """The windowed transforms of the segments of x's last axis (its time axis):
    (..., segments, frequencies)."""
    segs = _frames(x, nperseg, nperseg - noverlap)
    if callable(trend):  # a user's function of the segments (time last)
        segs = trend(segs)
    elif trend:
        segs = detrend(segs, axis=-1, type=trend)
    real = np.finfo(fnp.result_type(segs, np.float32)).dtype
    segs = segs * win.astype(real)
    if onesided:
        return fnp.fft.rfft(segs, n=nfft)
    return fnp.fft.fft(segs, n=nfft)


def _power(win, fs, scaling):
    """What a squared spectrum is divided by: the window's squared sum ('spectrum'), or fs
    times its energy ('density', a PSD)."""
    return win.sum() ** 2 if scaling == "spectrum" else fs * (win * win).sum()


def _to_axis(x, axis):
    return fnp.moveaxis(fnp.asarray(x), axis, -1)


def _out_dtype(*xs):
    return np.result_type(*[fnp.result_type(x) for x in xs], np.complex64)


def _freqs(nfft, fs, onesided):
    f = np.fft.rfftfreq(nfft) if onesided else np.fft.fftfreq(nfft)
    return f * fs


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1, scaling="spectrum"):
    """SciPy's short-time Fourier transform: (frequencies, segment times, Zxx) with Zxx's
    frequency axis where x's `axis` was and its segment axis last. boundary extends x by
    nperseg // 2 samples at each end ('zeros', 'even', 'odd', 'constant' or None), padded
    appends zeros to a whole number of segments; scaling 'spectrum' or 'psd'."""
    if scaling == "psd":
        scaling = "density"
    elif scaling != "spectrum":
        raise FxadValueError(f"stft: scaling must be 'spectrum' or 'psd', got {scaling!r}")
    if boundary not in _BOUNDARIES:
        raise FxadValueError(f"stft: boundary must be one of {list(_BOUNDARIES)}, got "
                             f"{boundary!r}")
    x = fnp.asarray(x)
    axis = int(axis)
    out_dtype = _out_dtype(x)
    xt = _to_axis(x, axis)
    win, nperseg = _window("stft", window, nperseg, fnp.shape(xt)[-1], 256)
    noverlap, nfft = _settle("stft", nperseg, noverlap, nfft)
    step = nperseg - noverlap
    xt = _extend(xt, nperseg // 2, boundary)
    if padded:
        extra = (-(fnp.shape(xt)[-1] - nperseg) % step) % nperseg
        zeros = fnp.zeros(fnp.shape(xt)[:-1] + (extra,), fnp.result_type(xt))
        xt = fnp.concatenate([xt, zeros], axis=-1)
    onesided = return_onesided and fnp.result_type(x).kind != "c"
    z = _spectra(xt, win, nperseg, noverlap, nfft, detrend, onesided)
    z = fnp.astype(z * (1.0 / fnp.sqrt(_power(win, fs, scaling))), out_dtype)
    length = fnp.shape(xt)[-1]
    times = np.arange(nperseg / 2, length - nperseg / 2 + 1, step)
    if boundary is not None:
        times = times - nperseg / 2
    return _freqs(nfft, fs, onesided), times / fs, \
        fnp.moveaxis(z, -1, axis - 1 if axis < 0 else axis)


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2, scaling="spectrum"):
    """SciPy's inverse short-time Fourier transform: (times, x), each segment's inverse FFT
    windowed and overlap-added (a scatter-add, the transpose of stft's framing), divided by
    the summed squared window; boundary=True drops the nperseg // 2 samples stft's boundary
    added at each end. Warns, as SciPy, where the window's overlaps leave a sample unweighted
    (the NOLA condition)."""
    if scaling not in ("spectrum", "psd"):
        raise FxadValueError(f"istft: scaling must be 'spectrum' or 'psd', got {scaling!r}")
    z = fnp.asarray(Zxx) + 0j
    nd = fnp.ndim(z)
    if nd < 2:
        raise FxadValueError("istft: Zxx must have at least 2 dimensions")
    freq_axis, time_axis = int(freq_axis) % nd, int(time_axis) % nd
    if freq_axis == time_axis:
        raise FxadValueError("istft: time_axis and freq_axis must differ")
    nseg, nfreq = fnp.shape(z)[time_axis], fnp.shape(z)[freq_axis]
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = n_default if nperseg is None else int(nperseg)
    if nperseg < 1:
        raise FxadValueError(f"istft: nperseg must be a positive integer, got {nperseg}")
    if nfft is None:  # SciPy's choice: an odd nperseg one past the default is its own nfft
        nfft = nperseg if input_onesided and nperseg == n_default + 1 else n_default
    noverlap, nfft = _settle("istft", nperseg, noverlap, nfft)
    step = nperseg - noverlap
    outer = [a for a in range(nd) if a not in (freq_axis, time_axis)]
    z = fnp.transpose(z, outer + [freq_axis, time_axis])
    if isinstance(window, (str, tuple)):
        win = _get_window(window, nperseg)
    else:
        win = np.asarray(window)
        if win.ndim != 1 or win.shape[0] != nperseg:
            raise FxadValueError(f"istft: the window must be 1-d of length nperseg = {nperseg}")
    inverse = fnp.fft.irfft if input_onesided else fnp.fft.ifft
    subs = inverse(z, n=nfft, axis=-2)[..., :nperseg, :]
    real = np.finfo(fnp.result_type(subs)).dtype
    win = win.astype(real)
    gain = win.sum() if scaling == "spectrum" else fnp.sqrt(fs * np.sum(win ** 2))
    frames = fnp.swapaxes(subs * gain, -1, -2) * win  # (..., segments, nperseg)
    length = nperseg + (nseg - 1) * step
    x = fnp.zeros(fnp.shape(frames)[:-2] + (length,), fnp.result_type(frames))
    x = x.at[..., np.arange(nseg)[:, None] * step + np.arange(nperseg)[None, :]].add(frames)
    norm = np.zeros(length, real)
    for i in range(nseg):
        norm[i * step:i * step + nperseg] += win ** 2
    if boundary:
        half = nperseg // 2
        x, norm = x[..., half:-half], norm[half:-half]  # (nothing left for half == 0, as SciPy)
    if np.sum(norm > 1e-10) != len(norm):
        warnings.warn("istft: the NOLA condition failed, the STFT may not be invertible"
                      + ("" if boundary else " (possibly for want of the boundary)"),
                      UserWarning, stacklevel=2)
    x = x / np.where(norm > 1e-10, norm, 1.0)
    if input_onesided:
        x = fnp.real(x)
    if fnp.ndim(x) > 1 and time_axis != nd - 1:
        x = fnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    return np.arange(fnp.shape(x)[0]) / fs, x


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1, average="mean"):
    """SciPy's cross power spectral density by Welch's method: (frequencies, Pxy), the
    averaged conj(X) * Y of the windowed, detrended segments (y None: y is x), the frequency
    axis where `axis` was. scaling 'density' or 'spectrum'; average 'mean' or 'median'."""
    if scaling not in ("density", "spectrum"):
        raise FxadValueError(f"csd: scaling must be 'density' or 'spectrum', got {scaling!r}")
    if average not in ("mean", "median"):
        raise FxadValueError(f"csd: average must be 'mean' or 'median', got {average!r}")
    same = y is None or y is x
    x = fnp.asarray(x)
    y = x if same else fnp.asarray(y)
    axis = int(axis)
    out_dtype = _out_dtype(x) if same else _out_dtype(x, y)
    xt, yt = _to_axis(x, axis), _to_axis(y, axis)
    n = max(fnp.shape(xt)[-1], fnp.shape(yt)[-1])
    win, nperseg = _window("csd", window, nperseg, n, 256)
    noverlap, nfft = _settle("csd", nperseg, noverlap, nfft)
    if not same:  # the shorter signal is padded with zeros to the longer's length
        xt, yt = (fnp.concatenate([t, fnp.zeros(fnp.shape(t)[:-1] + (n - fnp.shape(t)[-1],),
                                                fnp.result_type(t))], axis=-1)
                  if fnp.shape(t)[-1] < n else t for t in (xt, yt))
    onesided = return_onesided and fnp.result_type(x).kind != "c" and \
        fnp.result_type(y).kind != "c"
    fx = _spectra(xt, win, nperseg, noverlap, nfft, detrend, onesided)
    fy = fx if same else _spectra(yt, win, nperseg, noverlap, nfft, detrend, onesided)
    p = fnp.conj(fx) * fy * (1.0 / _power(win, fs, scaling))  # (..., segments, frequencies)
    if onesided:  # the negative frequencies' share, but not at 0 (and not at Nyquist)
        k = fnp.shape(p)[-1]
        double = np.full(k, 2.0)
        double[0] = 1.0
        if nfft % 2 == 0:
            double[-1] = 1.0
        p = p * double
    if fnp.shape(p)[-2] > 1:
        if average == "median":
            bias = _median_bias(fnp.shape(p)[-2])
            med = fnp.median(fnp.real(p), axis=-2)
            if fnp.result_type(p).kind == "c" and not same:
                med = med + 1j * fnp.median(fnp.imag(p), axis=-2)
            p = med / bias
        else:
            p = fnp.mean(p, axis=-2)
    else:
        p = p[..., 0, :]
    p = fnp.moveaxis(p, -1, axis)
    p = fnp.real(p) if same else fnp.astype(p, out_dtype)
    return _freqs(nfft, fs, onesided), \
        fnp.astype(p, np.finfo(out_dtype).dtype) if same else p


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """SciPy's power spectral density by Welch's method: csd(x, x), real."""
    return csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap, nfft=nfft,
               detrend=detrend, return_onesided=return_onesided, scaling=scaling, axis=axis,
               average=average)


def _median_bias(n):
    """The median's bias for n chi-squared(2) samples relative to their mean (SciPy's)."""
    even = 2.0 * np.arange(1, (n - 1) // 2 + 1)
    return 1.0 + np.sum(1.0 / (even + 1.0) - 1.0 / even)


__all__ = ["detrend", "stft", "istft", "csd", "welch"]

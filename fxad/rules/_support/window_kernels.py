"""NumPy kernels behind the convolution and windowed-reduction primitives (fxad/rules/contraction/conv.py,
fxad/rules/reduction/windowed.py): padding with dilation, strided window views, the convolution by
im2col + one matmul or by FFT, and the window loops of the reductions and of max pooling's
derivatives. Plain NumPy/SciPy on arrays: no tracing happens here; windows that tile the
operand go to the compiled loops of window_compiled.py when Numba imports (same values).

Conventions shared with the rules: per-axis parameters are tuples; `pads` are (lo, hi) pairs
(negative values crop); `dilation` a (base/lhs) dilation puts `d - 1` holes between elements;
a window of size k with window (rhs) dilation b spans (k - 1) * b + 1 positions. Windows never
loop over positions in Python: the loops below run over the offsets of one window (k of them,
e.g. 9 for 3x3) and each step is one vectorized operation over every window at once.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from . import window_compiled


def dilated(n, d):
    """Length of n elements with d - 1 holes between neighbours."""
    return 0 if n == 0 else (n - 1) * d + 1


def window_out_size(n, pad, base_dilation, k, window_dilation, stride):
    """Number of windows along one axis (0 when the window does not fit)."""
    span = dilated(n, base_dilation) + pad[0] + pad[1]
    kd = dilated(k, window_dilation)
    return 0 if span < kd else (span - kd) // stride + 1


def pad_dilate(x, pads, dilation, fill):
    """x dilated along each axis by `dilation` (holes hold `fill`) and padded by `pads` (fill
    values; negative pads crop). Returns x itself when nothing changes."""
    if all(p == (0, 0) for p in pads) and all(d == 1 for d in dilation):
        return x
    full, inner, crop = [], [], []
    for n, (lo, hi), d in zip(x.shape, pads, dilation):
        nd = dilated(n, d)
        a, b = max(lo, 0), max(hi, 0)
        full.append(a + nd + b)
        inner.append(slice(a, a + nd, d))
        crop.append(slice(max(-lo, 0), a + nd + b - max(-hi, 0)))
    out = np.full(full, fill, dtype=x.dtype)
    out[tuple(inner)] = x
    return out[tuple(crop)]


def unpad_undilate(y, shape, pads, dilation):
    """The adjoint of pad_dilate's placement: the entries of `y` (shaped like pad_dilate's
    result) that hold elements of an array of `shape`, which are zero where cropped."""
    if all(p == (0, 0) for p in pads) and all(d == 1 for d in dilation):
        return y
    full, inner, crop = [], [], []
    for n, (lo, hi), d in zip(shape, pads, dilation):
        nd = dilated(n, d)
        a, b = max(lo, 0), max(hi, 0)
        full.append(a + nd + b)
        inner.append(slice(a, a + nd, d))
        crop.append(slice(max(-lo, 0), a + nd + b - max(-hi, 0)))
    big = np.zeros(full, dtype=y.dtype)
    big[tuple(crop)] = y
    return np.ascontiguousarray(big[tuple(inner)])


def window_views(xp, axes, window, strides, window_dilation):
    """A strided view of xp: `axes` replaced by the window positions, the window offsets
    appended as trailing axes (one per entry of `axes`)."""
    spans = tuple(dilated(k, b) for k, b in zip(window, window_dilation))
    v = sliding_window_view(xp, spans, axis=axes)
    idx = [slice(None)] * xp.ndim + [slice(None, None, b) for b in window_dilation]
    for ax, s in zip(axes, strides):
        idx[ax] = slice(None, None, s)
    return v[tuple(idx)]


def offset_slices(window, strides, window_dilation, out_shape):
    """For each window offset (row-major), the basic index selecting that offset of every
    window from the padded operand: out[o] combines xp[o * s + j * b] over offsets j."""
    for offs in itertools.product(*[range(k) for k in window]):
        yield offs, tuple(slice(j * b, j * b + (m - 1) * s + 1, s) if m else slice(0, 0)
                          for j, b, s, m in zip(offs, window_dilation, strides, out_shape))


# --- convolution --------------------------------------------------------------------------
# Canonical layout: lhs (N, spatial..., C), rhs (spatial..., I, O), out (N, spatial..., O).
# Feature groups split C and O into G blocks; batch groups split N and O into B blocks; at
# most one of them exceeds 1, so both are "g groups" of one batched matmul.

def _examples_inner(x, w, g):
    """A filter transpose's operands: x's examples (the layer's input features) stored
    inside its features (the layer's examples), and w (the layer's output cotangent)
    stored features-major."""
    d = x.ndim - 2
    return (g == 1 and x.shape[-1] > 1 and abs(x.strides[-1]) == max(map(abs, x.strides))
            and abs(w.strides[d]) == max(map(abs, w.strides)))


def conv_nsc(x, w, strides, pads, lhs_dilation, rhs_dilation, fgc, bgc, out_dtype):
    d = x.ndim - 2
    full_pads = ((0, 0),) + tuple(pads) + ((0, 0),)
    dil = (1,) + tuple(lhs_dilation) + (1,)
    inner = _examples_inner(x, w, fgc * bgc)
    if inner:  # padded in x's own memory order (C, spatial..., N): windows read in runs
        flip = (d + 1,) + tuple(range(1, d + 1)) + (0,)
        xp = pad_dilate(x.transpose(flip), [full_pads[a] for a in flip],
                        [dil[a] for a in flip], 0).transpose(flip)
    else:
        xp = pad_dilate(x, full_pads, dil, 0)
    ksize = w.shape[:d]
    out_sp = tuple(window_out_size(n, p, a, k, b, s) for n, p, a, k, b, s in
                   zip(x.shape[1:-1], pads, lhs_dilation, ksize, rhs_dilation, strides))
    n, c, o = x.shape[0], x.shape[-1], w.shape[-1]
    if 0 in out_sp or n == 0 or o == 0 or c == 0:
        return np.zeros((n // bgc,) + out_sp + (o,), out_dtype)
    if use_fft(x.dtype, n * c, w.shape[-2], o, fgc * bgc, xp.shape[1:-1], ksize, rhs_dilation,
               out_sp):
        return _conv_fft(xp, w, strides, rhs_dilation, fgc, bgc, out_sp).astype(
            out_dtype, copy=False)
    if inner:
        return _conv_columns_ck(xp, w, strides, rhs_dilation, out_sp, out_dtype)
    return _conv_im2col(xp, w, strides, rhs_dilation, fgc, bgc, out_sp, out_dtype)


def _conv_columns_ck(xp, w, strides, rhs_dilation, out_sp, out_dtype):
    """im2col for a filter transpose, the contraction ordered (C, K...) rather than (K...,
    C), so that w (features-major) is not copied, and the columns copied from xp (stored
    (C, spatial..., N)) in runs: (N, P..., C, K...) -- the window view's own order -- for
    a few examples (runs along the window), else (C, K..., P..., N) (runs along the
    batch), used transposed in the one matrix product."""
    d = xp.ndim - 2
    n, c, o = xp.shape[0], xp.shape[-1], w.shape[-1]
    kvol, pvol = math.prod(map(int, w.shape[:d])), math.prod(map(int, out_sp))
    v = window_views(xp, tuple(range(1, d + 1)), w.shape[:d], strides, rhs_dilation)
    wm = w.transpose((d,) + tuple(range(d)) + (d + 1,)).reshape(c * kvol, o)
    if n <= 4:
        cols = np.ascontiguousarray(v).reshape(n * pvol, c * kvol)
        out = np.matmul(cols, wm)
    else:
        perm = (d + 1,) + tuple(range(d + 2, 2 * d + 2)) + tuple(range(1, d + 1)) + (0,)
        vt = v.transpose(perm)
        # blocks of the contracted examples, so the columns stay in cache; the partial
        # products (P..., N) x O are small
        step = max(_BLOCK_BYTES // (kvol * pvol * n * xp.itemsize), 1)
        buf = np.empty((min(step, c),) + vt.shape[1:], xp.dtype)
        out = None
        for s in range(0, c, step):
            e = min(s + step, c)
            cols = buf[:e - s]
            np.copyto(cols, vt[s:e])
            part = np.matmul(cols.reshape((e - s) * kvol, pvol * n).T, wm[s * kvol:e * kvol])
            out = part if out is None else np.add(out, part, out=out)
        out = out.reshape(pvol, n, o).transpose(1, 0, 2)
    return out.astype(out_dtype, copy=False).reshape((n,) + out_sp + (o,))


_BLOCK_BYTES = 1 << 20  # im2col rows gathered per matmul: about what stays in L2
_MIN_ROWS = 512         # ... but enough rows for BLAS to run at full speed


def _conv_im2col(xp, w, strides, rhs_dilation, fgc, bgc, out_sp, out_dtype):
    d = xp.ndim - 2
    g = fgc * bgc
    n, c, o = xp.shape[0], xp.shape[-1], w.shape[-1]
    nb, cg, og = n // bgc, c // fgc, o // g
    ksize = w.shape[:d]
    kvol, pvol = math.prod(map(int, ksize)), math.prod(map(int, out_sp))
    v = window_views(xp, tuple(range(1, d + 1)), ksize, strides, rhs_dilation)
    if g == 1:  # blocks of examples: each block's columns are written and read from cache
        sp, ko = tuple(range(1, d + 1)), tuple(range(d + 2, 2 * d + 2))
        # columns (N, P..., K..., C) are copied in runs of C: for a few features (an
        # image's), (K..., C, N, P...) instead, in runs along the positions, used transposed
        few = c <= 4
        v = v.transpose(ko + (d + 1, 0) + sp if few else (0,) + sp + ko + (d + 1,))
        wm = w.reshape(kvol * c, o)
        out = np.empty((n, pvol, o), out_dtype)
        step = max(_BLOCK_BYTES // (pvol * kvol * c * xp.itemsize), -(-_MIN_ROWS // pvol), 1)
        buf = np.empty(min(step, n) * pvol * kvol * c, xp.dtype)
        for s in range(0, n, step):
            e = min(s + step, n)
            rows = (e - s) * pvol
            if few:
                block = v[(slice(None),) * (d + 1) + (slice(s, e),)]
                cols = buf[:rows * kvol * c].reshape(block.shape)
                np.copyto(cols, block)
                cols = cols.reshape(kvol * c, rows).T
            else:
                cols = buf[:rows * kvol * c].reshape((e - s,) + v.shape[1:])
                np.copyto(cols, v[s:e])
                cols = cols.reshape(rows, kvol * c)
            np.matmul(cols, wm, out=out[s:e].reshape(rows, o))
        return out.reshape((n,) + out_sp + (o,))
    # v: (N, P..., C, K...) -> (B, Nb, P..., G, Cg, K...) -> (g, Nb * P, K * Cg), one copy
    v = v.reshape((bgc, nb) + out_sp + (fgc, cg) + ksize)
    perm = (0, d + 2, 1) + tuple(range(2, d + 2)) + tuple(range(d + 4, 2 * d + 4)) + (d + 3,)
    cols = v.transpose(perm).reshape(g, nb * pvol, kvol * cg)
    wm = w.reshape(kvol * cg, g, og).transpose(1, 0, 2)
    out = np.matmul(cols, wm)  # (g, Nb * P, Og)
    out = out.reshape(g, nb * pvol, og).transpose(1, 0, 2)
    return np.ascontiguousarray(out, dtype=out_dtype).reshape((nb,) + out_sp + (o,))


def _conv_fft(xp, w, strides, rhs_dilation, fgc, bgc, out_sp):
    """Correlation by FFT over the spatial axes of the padded operand (size L per axis; the
    kernel dilated and flipped, a circular convolution of size >= L wraps only into
    positions that are not kept), channels mixed by one batched matmul per frequency."""
    import scipy.fft as sfft
    d = xp.ndim - 2
    g = fgc * bgc
    n, c, o = xp.shape[0], xp.shape[-1], w.shape[-1]
    nb, cg, og = n // bgc, c // fgc, o // g
    sp = xp.shape[1:-1]
    real = xp.dtype.kind != "c" and w.dtype.kind != "c"
    fsize = tuple(sfft.next_fast_len(s, real) for s in sp)
    wd = pad_dilate(w, ((0, 0),) * (d + 2), tuple(rhs_dilation) + (1, 1), 0)
    wd = wd[(slice(None, None, -1),) * d]
    fwd, inv = (sfft.rfftn, sfft.irfftn) if real else (sfft.fftn, sfft.ifftn)
    X = fwd(xp, fsize, axes=tuple(range(1, d + 1)))      # (N, F..., C)
    W = fwd(wd, fsize, axes=tuple(range(d)))              # (F..., Cg, O)
    fshape = X.shape[1:-1]
    nf = math.prod(map(int, fshape))
    Xg = X.reshape((bgc, nb, nf, fgc, cg)).transpose(2, 0, 3, 1, 4).reshape(nf, g, nb, cg)
    Wg = W.reshape(nf, cg, g, og).transpose(0, 2, 1, 3)
    Y = np.matmul(Xg, Wg)  # (F, g, Nb, Og)
    Y = Y.transpose(2, 0, 1, 3).reshape((nb,) + fshape + (o,))
    y = inv(Y, fsize, axes=tuple(range(1, d + 1)))
    kd = [dilated(k, b) for k, b in zip(w.shape[:d], rhs_dilation)]
    keep = tuple(slice(k - 1, k - 1 + (m - 1) * s + 1, s) for k, m, s in zip(kd, out_sp, strides))
    return y[(slice(None),) + keep]


# Costs of the two paths in seconds per unit, measured on one core (see
# notes/10_neural_networks.md): im2col copies N*P*K*C elements and does N*P*K*C*O/g
# multiply-adds in BLAS; the FFT path transforms (N*C + C*O/g + N*O) arrays of F points
# (F log F each) and does F/2 * (N*C*O/g) complex multiply-adds.
_COPY, _MAC, _FFT, _CMAC = 1.0e-9, 4.0e-11, 1.5e-9, 1.6e-10


def use_fft(dtype, nc, cg, o, g, span, ksize, rhs_dilation, out_sp):
    """True when the FFT path is estimated faster: large kernels on floating-point data.
    Integers always use the exact im2col path."""
    if dtype.kind not in "fc":
        return False
    kvol = math.prod(map(int, ksize))
    if kvol < 16:
        return False
    pvol, fvol = math.prod(map(int, out_sp)), math.prod(map(int, span))
    n = nc // (cg * g) if cg * g else 0
    direct = n * pvol * kvol * cg * g * _COPY + n * pvol * kvol * cg * o * _MAC
    ffts = (nc + cg * o + n * o) * fvol * max(np.log2(fvol), 1.0) * _FFT
    fft = ffts + fvol / 2 * n * cg * o * _CMAC
    return fft < direct


# --- windowed reductions ------------------------------------------------------------------

def reduce_windows(ufunc, x, window, strides, pads, base_dilation, window_dilation, fill):
    """ufunc-reduce each window of x padded and dilated with `fill` (the identity): one
    vectorized ufunc call per window offset, accumulating into the output (or the same in
    one compiled loop, window_compiled.py, when the windows tile x)."""
    form = window_compiled.usable(x, window, strides, pads, base_dilation, window_dilation)
    if form is not None and ufunc in (np.maximum, np.minimum, np.add):
        out_sp = tuple(n // k for n, k in zip(x.shape, window))
        return window_compiled.reduce(ufunc, x, form).reshape(out_sp)
    xp = pad_dilate(x, pads, base_dilation, fill)
    out_sp = tuple(window_out_size(n, p, a, k, b, s) for n, p, a, k, b, s in
                   zip(x.shape, pads, base_dilation, window, window_dilation, strides))
    if 0 in out_sp:
        return np.full(out_sp, fill, x.dtype)
    out = None
    for _, idx in offset_slices(window, strides, window_dilation, out_sp):
        if out is None:
            out = xp[idx].copy()
        else:
            ufunc(out, xp[idx], out=out)
    return out


def _padded_windows(x, window, strides, pads, base_dilation, window_dilation, fill):
    xp = pad_dilate(x, pads, base_dilation, fill)
    out_sp = tuple(window_out_size(n, p, a, k, b, s) for n, p, a, k, b, s in
                   zip(x.shape, pads, base_dilation, window, window_dilation, strides))
    return xp, out_sp, [idx for _, idx in offset_slices(window, strides, window_dilation,
                                                         out_sp)]


def _selected(xp, out_sp, slices, better, extreme):
    """For each window offset (row-major), its basic index and a mask of the windows whose
    selected element is at that offset. The selection scans each window and keeps the
    current element unless `better(current, candidate)` fails (>= for max: the FIRST
    maximum wins; a comparison with NaN is false, so the scan moves on, as XLA's
    select_and_scatter does). Without NaNs that is the first element equal to the window's
    extremum, found with no allocation per offset; with NaNs, the scan itself."""
    m = None
    for idx in slices:  # the windows' extrema
        m = xp[idx].copy() if m is None else extreme(m, xp[idx], out=m)
    if m is not None and m.dtype.kind in "fc" and np.isnan(m).any():
        best, arg = None, np.zeros(out_sp, np.intp)
        for k, idx in enumerate(slices):
            cand = xp[idx]
            if best is None:
                best = cand
                continue
            take = ~better(best, cand)
            best = np.where(take, cand, best)
            arg[take] = k
        for k, idx in enumerate(slices):
            yield idx, arg == k
        return
    found = np.zeros(out_sp, bool)
    hit = np.empty(out_sp, bool)
    for idx in slices:
        np.equal(xp[idx], m, out=hit)
        np.greater(hit, found, out=hit)  # equal to the extremum and none before
        np.logical_or(found, hit, out=found)
        yield idx, hit


_EXTREME = {np.greater_equal: np.maximum, np.less_equal: np.minimum}


# Masks here are as random as the data (where each window's maximum sits), so masked NumPy
# operations (np.where, where=) would branch on every element (~30 ns each); multiplying by
# the boolean mask is branch-free, and is exact as long as the values multiplied are finite
# (0 * inf would be NaN), which is checked once per call.

def gather_selected(t, x, window, strides, pads, base_dilation, window_dilation, fill, better):
    """t at the position selected in each window of x (zero where padding was selected)."""
    form = window_compiled.usable(x, window, strides, pads, base_dilation, window_dilation, t)
    if form is not None:
        out_sp = tuple(n // k for n, k in zip(x.shape, window))
        return window_compiled.gather(t, x, better is np.greater_equal, form).reshape(out_sp)
    xp, out_sp, slices = _padded_windows(x, window, strides, pads, base_dilation,
                                         window_dilation, fill)
    tp = pad_dilate(t, pads, base_dilation, 0)
    out = np.zeros(out_sp, t.dtype)
    finite = t.dtype.kind not in "fc" or bool(np.isfinite(t).all())
    tmp = np.empty(out_sp, t.dtype) if finite else None
    for idx, hit in _selected(xp, out_sp, slices, better, _EXTREME[better]):
        if finite:
            np.add(out, np.multiply(tp[idx], hit, out=tmp), out=out)
        else:
            np.copyto(out, tp[idx], where=hit)
    return out


def _disjoint(window, strides, window_dilation):
    """Do the windows tile without overlap (each position in at most one window)?"""
    return all(k == 1 or (b == 1 and s >= k) for k, s, b in
               zip(window, strides, window_dilation))


def scatter_selected(ct, x, window, strides, pads, base_dilation, window_dilation, fill,
                     better):
    """The adjoint of gather_selected: each window's cotangent added at its selected
    position of x (overlapping windows accumulate)."""
    form = window_compiled.usable(x, window, strides, pads, base_dilation, window_dilation, ct)
    if form is not None:
        return window_compiled.scatter(ct, x, better is np.greater_equal, form).reshape(x.shape)
    xp, out_sp, slices = _padded_windows(x, window, strides, pads, base_dilation,
                                         window_dilation, fill)
    acc = np.zeros(xp.shape, ct.dtype)
    finite = ct.dtype.kind not in "fc" or bool(np.isfinite(ct).all())
    disjoint = finite and _disjoint(window, strides, window_dilation)
    tmp = np.empty(out_sp, ct.dtype) if finite and not disjoint else None
    # within one offset, distinct windows hit distinct positions: in-place updates are safe
    for idx, hit in _selected(xp, out_sp, slices, better, _EXTREME[better]):
        view = acc[idx]
        if disjoint:  # every position belongs to one (window, offset): write, no add
            np.multiply(ct, hit, out=view)
        elif finite:
            np.add(view, np.multiply(ct, hit, out=tmp), out=view)
        else:
            np.add(view, ct, out=view, where=hit)
    return unpad_undilate(acc, x.shape, pads, base_dilation)

"""SciPy's n-dimensional convolution as one bilinear primitive (scipy.signal.convolve does the
work, by the direct sum or by FFT as SciPy chooses), separate from the 1-d np.convolve
primitive in convolve.py and from the neural-network convolution (lax.conv_general_dilated):
this one is SciPy's signal-processing convolution (no strides, dilation or channels).

`convolve_window(a, v, start, size)` is the window [start, start + size) of the full
convolution a * v in every axis of `axes` (zero outside the full convolution's extent), and
elementwise along the others (fftconvolve's `axes=`: batch axes of equal length). SciPy's modes
are windows (full: start 0; same: centred; valid: start k - 1), and so are the transposes,
which is why one primitive suffices. With y[i] = Σ_m a[m] v[i + s - m], the cotangent of a
is ct_a[m] = Σ_i ct[i] v[i + s - m], the window [k - 1 - s, k - 1 - s + n) of the full
convolution of ct with v reversed (a correlation), and symmetrically for v. Each is a
convolution of the same size as the forward one, so gradients cost what the forward pass
costs: no O(n·k) window gathers, no materialized Toeplitz matrix.
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ...errors import FxadValueError
from .. import ops
from ..helpers import bdim_to_front, defbilinear, dtype_of, shape_of


def full_shape(sa, sv):
    return tuple(n + k - 1 for n, k in zip(sa, sv))


def mode_window(mode, sa, sv):
    """(start, size) of SciPy's `mode` inside the full convolution of shapes sa and sv."""
    if mode == "full":
        return (0,) * len(sa), full_shape(sa, sv)
    if mode == "same":
        return tuple((k - 1) // 2 for k in sv), tuple(sa)
    if mode == "valid":
        if all(n >= k for n, k in zip(sa, sv)):
            return tuple(k - 1 for k in sv), tuple(n - k + 1 for n, k in zip(sa, sv))
        if all(k >= n for n, k in zip(sa, sv)):  # SciPy swaps the inputs
            return tuple(n - 1 for n in sa), tuple(k - n + 1 for n, k in zip(sa, sv))
        raise FxadValueError("convolve: for 'valid' mode, one input must be at least as large "
                             f"as the other in every dimension (shapes {sa} and {sv})")
    raise FxadValueError(f"convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")


def freq_window(mode, sa, sv, axes):
    """scipy.signal.fftconvolve's `axes=`: (convolution axes, start, size) over every axis.
    Axes where either operand has length 1 join the convolution axes (a convolution with a
    length-1 factor is the broadcast product, in every mode's window, as SciPy's broadcasting
    gives); the other axes are batch axes, where both lengths must be equal. 'valid' needs one
    operand at least as large as the other in the axes SciPy convolves (both lengths > 1)."""
    nd = len(sa)
    axes = tuple(range(nd)) if axes is None else tuple(np.atleast_1d(axes).tolist())
    if not axes:
        raise FxadValueError("when provided, axes cannot be empty")
    if any(not -nd <= a < nd for a in axes):
        raise FxadValueError(f"axes exceeds dimensionality of input (axes {axes}, {nd}-d)")
    axes = tuple(int(a) % nd for a in axes)
    if len(set(axes)) != len(axes):
        raise FxadValueError(f"all axes must be unique (got {axes})")
    for i in range(nd):
        if i not in axes and sa[i] != sv[i] and 1 not in (sa[i], sv[i]):
            raise FxadValueError(f"incompatible shapes for in1 and in2: {tuple(sa)} and "
                                 f"{tuple(sv)}")
    conv = tuple(i for i in range(nd) if i in axes or 1 in (sa[i], sv[i]))
    real = [i for i in axes if 1 not in (sa[i], sv[i])]
    if mode == "valid" and not (all(sa[i] >= sv[i] for i in real)
                                or all(sv[i] >= sa[i] for i in real)):
        raise FxadValueError("For 'valid' mode, one must be at least as large as the other in "
                             "every dimension")
    start, size = [], []
    for i, (n, k) in enumerate(zip(sa, sv)):
        if i not in conv:  # a batch axis: every mode keeps it whole
            st, sz = 0, n
        else:
            (st,), (sz,) = mode_window(mode, (n,), (k,))
        start.append(st)
        size.append(sz)
    return conv, tuple(start), tuple(size)


def _batch_axes(nd, axes):
    return tuple(i for i in range(nd) if i not in axes)


def _full(a, v, method, axes):
    """The full convolution along `axes`, elementwise along the other (batch) axes."""
    import scipy.signal
    batch = _batch_axes(a.ndim, axes)
    if not batch:
        return scipy.signal.convolve(a, v, mode="full", method=method)
    if not axes:
        return a * v
    if method == "auto":
        first = tuple(0 if i in batch else slice(None) for i in range(a.ndim))
        method = scipy.signal.choose_conv_method(a[first], v[first])
    if method == "fft":
        return scipy.signal.fftconvolve(a, v, mode="full", axes=axes)
    # direct: one convolution per position along the batch axes
    out = np.zeros(tuple(n + k - 1 if i in axes else n for i, (n, k) in
                         enumerate(zip(a.shape, v.shape))), np.result_type(a, v))
    for pos in np.ndindex(*(a.shape[i] for i in batch)):
        idx = [slice(None)] * a.ndim
        for i, p in zip(batch, pos):
            idx[i] = p
        idx = tuple(idx)
        out[idx] = scipy.signal.convolve(a[idx], v[idx], mode="full", method="direct")
    return out


def _impl(a, v, start, size, method, axes):
    import scipy.signal
    sa, sv = np.shape(a), np.shape(v)
    if len(axes) == len(sa):
        for mode in ("full", "valid", "same"):
            try:
                if mode_window(mode, sa, sv) == (start, size):
                    return scipy.signal.convolve(a, v, mode=mode, method=method)
            except FxadValueError:
                pass
    # Any other window (a transpose's, or with batch axes): the full convolution, zero
    # outside its extent
    full = _full(a, v, method, axes)
    if full.shape == tuple(size) and not any(start):
        return full
    out = np.zeros(size, full.dtype)
    src = tuple(slice(max(s, 0), min(s + n, f)) for s, n, f in zip(start, size, full.shape))
    dst = tuple(slice(sl.start - s, sl.stop - s) for sl, s in zip(src, start))
    if all(sl.stop > sl.start for sl in src):
        out[dst] = full[src]
    return out


def _shape(a, v, start, size, method, axes):
    if len(a.shape) != len(v.shape):
        raise FxadValueError(f"convolve: in1 and in2 should have the same dimensionality "
                             f"(shapes {a.shape} and {v.shape})")
    for i in _batch_axes(len(a.shape), axes):
        if not a.shape[i] == v.shape[i] == size[i] or start[i]:
            raise FxadValueError(f"convolve_window: batch axis {i} needs equal lengths and "
                                 f"the whole window (shapes {a.shape}, {v.shape}, window "
                                 f"{start}+{size})")
    return ShapedArray(tuple(size), np.result_type(a.dtype, v.dtype))


convolve_window_p = Primitive("convolve_window")
convolve_window_p.def_impl(_impl)
convolve_window_p.def_abstract_eval(_shape)


def _transpose_to(ct, other, like, start, method, axes):
    """The cotangent of one operand (shape `like`): along the convolution axes, the window
    [k-1-s, k-1-s+n) of the full convolution of ct with the other operand reversed (k: the
    other's length); along the batch axes, the elementwise product."""
    so = shape_of(other)
    flipped = ops.flip(other, tuple(axes))
    st = tuple(k - 1 - s if i in axes else 0 for i, (k, s) in enumerate(zip(so, start)))
    out = convolve_window(ct, flipped, st, tuple(like.shape), method, axes)
    if like.dtype.kind != "c" and dtype_of(out).kind == "c":
        out = ops.real(out)  # a real operand takes the real part, as every transpose here
    return ops.convert_element_type(out, like.dtype)


defbilinear(convolve_window_p,
            lambda ct, a, v, start, size, method, axes: _transpose_to(ct, v, a, start, method,
                                                                      axes),
            lambda ct, a, v, start, size, method, axes: _transpose_to(ct, a, v, start, method,
                                                                      axes))


def _batch(vals, dims, start, size, method, axes):
    """The batch axis becomes axis 0: a batch axis of the convolution when both operands
    are batched; a convolution axis along which the unbatched operand has length 1 (the
    broadcast product) when one is. One convolution either way."""
    (a, v), (da, dv) = vals, dims
    shifted = tuple(i + 1 for i in axes)
    if da is not None and dv is not None:
        a, v = bdim_to_front(a, da), bdim_to_front(v, dv)
        n = shape_of(a)[0]
        return convolve_window(a, v, (0,) + tuple(start), (n,) + tuple(size), method,
                               shifted), 0
    if da is not None:
        a = bdim_to_front(a, da)
        v = ops.reshape(v, (1,) + tuple(shape_of(v)))
        n = shape_of(a)[0]
    else:
        v = bdim_to_front(v, dv)
        a = ops.reshape(a, (1,) + tuple(shape_of(a)))
        n = shape_of(v)[0]
    return convolve_window(a, v, (0,) + tuple(start), (n,) + tuple(size), method,
                           (0,) + shifted), 0


convolve_window_p.def_batch(_batch)
def convolve_window(a, v, start, size, method="auto", axes=None):
    """The window [start, start + size) of the convolution of a and v along `axes` (default:
    all), elementwise along the other axes (where a and v have equal lengths)."""
    nd = len(shape_of(a))
    axes = tuple(range(nd)) if axes is None else tuple(sorted(int(i) for i in axes))
    return convolve_window_p.bind(a, v, start=tuple(int(s) for s in start),
                                  size=tuple(int(n) for n in size), method=method, axes=axes)


__all__ = ["convolve_window", "mode_window", "freq_window", "full_shape"]

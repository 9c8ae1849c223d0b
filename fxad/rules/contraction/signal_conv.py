"""SciPy's n-dimensional convolution as one bilinear primitive (scipy.signal.convolve does the
work, by the direct sum or by FFT as SciPy chooses), separate from the 1-d np.convolve
primitive in convolve.py and from the neural-network convolution (lax.conv_general_dilated):
this one is SciPy's signal-processing convolution (no strides, dilation or channels).

`convolve_window(a, v, start, size)` is the window [start, start + size) of the full
convolution a * v in every axis (zero outside the full convolution's extent). SciPy's modes
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


def _impl(a, v, start, size, method):
    import scipy.signal
    sa, sv = np.shape(a), np.shape(v)
    for mode in ("full", "valid", "same"):
        try:
            if mode_window(mode, sa, sv) == (start, size):
                return scipy.signal.convolve(a, v, mode=mode, method=method)
        except FxadValueError:
            pass
    # Any other window (a transpose's): the full convolution, zero outside its extent
    full = scipy.signal.convolve(a, v, mode="full", method=method)
    out = np.zeros(size, full.dtype)
    src = tuple(slice(max(s, 0), min(s + n, f)) for s, n, f in zip(start, size, full.shape))
    dst = tuple(slice(sl.start - s, sl.stop - s) for sl, s in zip(src, start))
    if all(sl.stop > sl.start for sl in src):
        out[dst] = full[src]
    return out


def _shape(a, v, start, size, method):
    if len(a.shape) != len(v.shape):
        raise FxadValueError(f"convolve: in1 and in2 should have the same dimensionality "
                             f"(shapes {a.shape} and {v.shape})")
    return ShapedArray(tuple(size), np.result_type(a.dtype, v.dtype))


convolve_window_p = Primitive("convolve_window")
convolve_window_p.def_impl(_impl)
convolve_window_p.def_abstract_eval(_shape)


def _transpose_to(ct, other, like, start, method):
    """The cotangent of one operand (shape `like`): the window [k-1-s, k-1-s+n) of the full
    convolution of ct with the other operand reversed (k: the other's shape)."""
    so = shape_of(other)
    flipped = ops.flip(other, tuple(range(len(so))))
    st = tuple(k - 1 - s for k, s in zip(so, start))
    out = convolve_window(ct, flipped, st, tuple(like.shape), method)
    if like.dtype.kind != "c" and dtype_of(out).kind == "c":
        out = ops.real(out)  # a real operand takes the real part, as every transpose here
    return ops.convert_element_type(out, like.dtype)


defbilinear(convolve_window_p,
            lambda ct, a, v, start, size, method: _transpose_to(ct, v, a, start, method),
            lambda ct, a, v, start, size, method: _transpose_to(ct, a, v, start, method))


def _batch(vals, dims, start, size, method):
    """One operand batched: a convolution with one more axis, along which the other operand
    has length 1 (so the batch axis is not mixed). Both batched: one convolution per example."""
    (a, v), (da, dv) = vals, dims
    if da is not None and dv is not None:
        a, v = bdim_to_front(a, da), bdim_to_front(v, dv)
        n = shape_of(a)[0]
        outs = [ops.reshape(convolve_window(a[i], v[i], start, size, method), (1,) + tuple(size))
                for i in range(n)]
        return ops.concatenate(outs, 0), 0
    if da is not None:
        a = bdim_to_front(a, da)
        v = ops.reshape(v, (1,) + tuple(shape_of(v)))
        n = shape_of(a)[0]
    else:
        v = bdim_to_front(v, dv)
        a = ops.reshape(a, (1,) + tuple(shape_of(a)))
        n = shape_of(v)[0]
    return convolve_window(a, v, (0,) + tuple(start), (n,) + tuple(size), method), 0


convolve_window_p.def_batch(_batch)
def convolve_window(a, v, start, size, method="auto"):
    return convolve_window_p.bind(a, v, start=tuple(int(s) for s in start),
                                  size=tuple(int(n) for n in size), method=method)


__all__ = ["convolve_window", "mode_window", "full_shape"]

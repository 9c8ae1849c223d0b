"""Discrete Fourier transforms: one linear primitive, `fft`, with four kinds (NumPy's fftn,
ifftn, rfftn, irfftn over `axes`, resized to `lengths` first, scaled by `norm`).

Transposes follow fxad's complex convention (that of JAX): a map y = A x has transpose
ct -> Aᵀ ct (not the adjoint), and a map from real x takes the real part, Re(Aᵀ ct).
- fft / ifft: the DFT matrix is symmetric, so each transposes to itself (same norm).
- rfft keeps the first n//2 + 1 rows of the DFT: Aᵀ ct is the full fft of ct zero-padded to
  n along the last axis, and x̄ is its real part.
- irfft is y = Re(B z) with B = ifft's columns weighted 2 for the bins that stand for a
  conjugate pair (all but bin 0 and, for even n, bin n/2): z̄ = Bᵀ ct = w · ifft(ct)[:n//2+1].
Resizing (NumPy's `s`/`n`) pads with zeros or truncates before the transform; its transpose
truncates or pads back.
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ..helpers import defbatch_unary_axes
from ..helpers import deflinear, dtype_of, shape_of
from .. import ops

_IMPLS = {"fft": np.fft.fftn, "ifft": np.fft.ifftn, "rfft": np.fft.rfftn, "irfft": np.fft.irfftn}


def _complex_of(dtype):
    return np.result_type(dtype, np.complex64)


def _real_of(dtype):
    return np.finfo(_complex_of(dtype)).dtype


def _fft_shape(x, kind, axes, lengths, norm):
    shape = list(x.shape)
    for ax, n in zip(axes, lengths):
        shape[ax] = n
    if kind == "rfft":
        shape[axes[-1]] = lengths[-1] // 2 + 1
        return ShapedArray(tuple(shape), _complex_of(x.dtype))
    if kind == "irfft":
        return ShapedArray(tuple(shape), _real_of(x.dtype))
    return ShapedArray(tuple(shape), _complex_of(x.dtype))


def resize(x, axes, lengths):
    """Truncate or zero-pad `x` along each axis to the given length (NumPy's s / n)."""
    for ax, n in zip(axes, lengths):
        shape = list(shape_of(x))
        if shape[ax] > n:
            x = ops.getitem(x, (slice(None),) * ax + (slice(0, n),))
        elif shape[ax] < n:
            shape[ax] = n - shape[ax]
            x = ops.concatenate([x, np.zeros(tuple(shape), dtype_of(x))], ax)
    return x


def _fft_transpose(ct, x, kind, axes, lengths, norm):
    in_lengths = tuple(x.aval.shape[a] for a in axes)
    if kind in ("fft", "ifft"):
        out = fft(ct, kind, axes, lengths, norm)
    elif kind == "rfft":  # Re(full fft of ct padded to n along the last axis)
        out = fft(resize(ct, axes[-1:], lengths[-1:]), "fft", axes, lengths, norm)
    else:  # irfft: w · ifft(ct) over the first n//2 + 1 bins of the last axis
        n = lengths[-1]
        k = n // 2 + 1
        w = np.full(k, 2.0, _real_of(x.aval.dtype))
        w[0] = 1.0
        if n % 2 == 0:
            w[-1] = 1.0
        full = fft(ct, "ifft", axes, lengths, norm)
        half = ops.getitem(full, (slice(None),) * axes[-1] + (slice(0, k),))
        w = w.reshape((k,) + (1,) * (len(x.aval.shape) - 1 - axes[-1]))
        out = ops.mul(half, w)
    if x.aval.dtype.kind != "c":  # a real operand gets the real part
        out = ops.real(out)
    return [resize(out, axes, in_lengths)]


fft_p = Primitive("fft")
fft_p.def_impl(lambda x, kind, axes, lengths, norm: _IMPLS[kind](x, s=lengths, axes=axes,
                                                                  norm=norm))
fft_p.def_abstract_eval(_fft_shape)
deflinear(fft_p, _fft_transpose)
defbatch_unary_axes(fft_p, "axes")
def fft(x, kind, axes, lengths, norm): return fft_p.bind(
    x, kind=kind, axes=tuple(axes), lengths=tuple(lengths), norm=norm)


__all__ = ["fft"]

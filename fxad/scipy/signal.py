"""scipy.signal's convolutions, differentiable in both inputs (rules:
fxad/rules/contraction/signal_conv.py). SciPy computes every convolution, its derivatives included (they
are convolutions too), with the method SciPy picks ('auto') or the one given. And `detrend` and
the short-time spectra `stft`, `istft`, `csd`, `welch` (fxad/scipy/_spectral.py)."""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..errors import FxadValueError
from ..lax.products import canonicalize_precision
from ..numpy.linalg import as_float
from ..rules.contraction.signal_conv import convolve_window, freq_window, mode_window
from ._spectral import csd, detrend, istft, stft, welch  # noqa: F401

_METHODS = ("auto", "direct", "fft")


def _operands(name, in1, in2, method):
    if method not in _METHODS:
        raise FxadValueError(f"{name}: method must be one of {_METHODS}, got {method!r}")
    in1, in2 = as_float(in1), as_float(in2)
    if fnp.ndim(in1) != fnp.ndim(in2):
        raise FxadValueError(f"{name}: in1 and in2 should have the same dimensionality (got "
                             f"{fnp.ndim(in1)} and {fnp.ndim(in2)})")
    if 0 in fnp.shape(in1) or 0 in fnp.shape(in2):
        raise FxadValueError(f"{name}: empty inputs are not supported")
    return in1, in2


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The convolution of two N-d arrays, as `scipy.signal.convolve` (mode "full", "same" or
    "valid"; method "direct", "fft" or "auto", which picks by size); `precision` is JAX's
    and accepted for its signature. Differentiable in both inputs (the transposes are
    convolutions too), under `jit` and `vmap`."""
    canonicalize_precision(precision, "convolve")
    in1, in2 = _operands("convolve", in1, in2, method)
    start, size = mode_window(mode, fnp.shape(in1), fnp.shape(in2))
    return convolve_window(in1, in2, start, size, method)


def _reverse_and_conj(x):
    out = fnp.flip(x) if fnp.ndim(x) else x
    return lax.conj(out)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """convolve(in1, in2 reversed and conjugated), as SciPy defines it."""
    canonicalize_precision(precision, "correlate")
    in1, in2 = _operands("correlate", in1, in2, method)
    return convolve(in1, _reverse_and_conj(in2), mode, method)


def fftconvolve(in1, in2, mode="full", axes=None):
    """Convolution by FFT along `axes` (default: all), elementwise along the other axes, where
    the operands' lengths must be equal or 1 (broadcast), as SciPy's."""
    in1, in2 = _operands("fftconvolve", in1, in2, "fft")
    if fnp.ndim(in1) == 0:
        return lax.mul(in1, in2)
    conv, start, size = freq_window(mode, fnp.shape(in1), fnp.shape(in2), axes)
    return convolve_window(in1, in2, start, size, "fft", conv)


def oaconvolve(in1, in2, mode="full", axes=None):
    """SciPy's overlap-add convolution has fftconvolve's values (up to rounding)."""
    return fftconvolve(in1, in2, mode, axes)


_BOUNDARY = {"fill": "constant", "pad": "constant", "wrap": "wrap", "circular": "wrap",
             "symm": "symmetric", "symmetric": "symmetric"}


def _conv2d(name, in1, in2, mode, boundary, fillvalue, correlating=False):
    in1, in2 = as_float(in1), as_float(in2)
    if fnp.ndim(in1) != 2 or fnp.ndim(in2) != 2:
        raise FxadValueError(f"{name} inputs must both be 2-D arrays")
    pad = _BOUNDARY.get(boundary)
    if pad is None:
        raise FxadValueError(f"{name}: boundary must be 'fill', 'wrap' or 'symm', got "
                             f"{boundary!r}")
    if not isinstance(fillvalue, (int, float, np.floating, np.integer)):
        raise FxadValueError(f"{name}: fillvalue must be a real number")
    s1, s2 = fnp.shape(in1), fnp.shape(in2)
    if correlating:
        in2 = _reverse_and_conj(in2)
    start, size = mode_window(mode, s1, s2)
    if correlating and mode == "same":  # SciPy centres correlate2d's 'same' at k // 2
        start = tuple(k // 2 for k in s2)
    if mode == "valid" or pad == "constant" and fillvalue == 0:
        return convolve_window(in1, in2, start, size, "direct")
    # The boundary extends in1 by k - 1 on each side; the full convolution is the valid one
    # of the extended array, and every mode a window of it.
    width = [(k - 1, k - 1) for k in s2]
    ext = fnp.pad(in1, width, mode=pad,
                  **({"constant_values": fillvalue} if pad == "constant" else {}))
    return convolve_window(ext, in2, tuple(k - 1 + st for k, st in zip(s2, start)), size,
                           "direct")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d convolution of two matrices, as `scipy.signal.convolve2d`, with SciPy's boundary
    handling ("fill" with fillvalue, "wrap", "symm"); differentiable in both inputs."""
    canonicalize_precision(precision, "convolve2d")
    return _conv2d("convolve2d", in1, in2, mode, boundary, fillvalue)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """convolve2d with in2 reversed and conjugated (for 'valid' with in2 the larger, SciPy
    swaps the inputs and reverses the result: the same values). `precision` (JAX's) is
    checked and ignored, here and in the other convolutions: fxad/lax/products.py."""
    canonicalize_precision(precision, "correlate2d")
    return _conv2d("correlate2d", in1, in2, mode, boundary, fillvalue, correlating=True)


__all__ = ["convolve", "correlate", "fftconvolve", "oaconvolve", "convolve2d", "correlate2d",
           "detrend", "stft", "istft", "csd", "welch"]

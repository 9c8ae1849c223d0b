"""numpy.fft's names and signatures, differentiable (rule: fxad/rules/contraction/fft.py). Every
transform is the one `fft` primitive; the shifts are rolls and the frequencies constants."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..errors import FxadTypeError, FxadValueError
from ..rules.contraction.fft import fft as _fft
from ..rules.helpers import dtype_of, shape_of
from .manipulation import roll
from ._lists import stack_traced_lists

fftfreq, rfftfreq = np.fft.fftfreq, np.fft.rfftfreq
_NORMS = {None: "backward", "backward": "backward", "ortho": "ortho", "forward": "forward"}


def _transform(kind, a, s, axes, norm, out, name):
    if out is not None:
        raise FxadTypeError(f"{name}: out= is not supported on traced values")
    if norm not in _NORMS:
        raise FxadValueError(f'{name}: invalid norm value {norm}; should be "backward", '
                             '"ortho" or "forward"')
    nd = len(shape_of(a))
    if axes is None:
        axes = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
    raw = tuple(int(ax) for ax in axes)
    if not nd or not raw or any(not -nd <= ax < nd for ax in raw) or \
            len({ax % nd for ax in raw}) != len(raw):
        raise FxadValueError(f"{name}: invalid axes {raw} for an array of dimension {nd}")
    axes = tuple(ax % nd for ax in raw)
    if kind == "rfft" and dtype_of(a).kind == "c":
        raise FxadTypeError(f"{name} takes real input; use fft for complex values")
    if s is None:
        s = [shape_of(a)[ax] for ax in axes]
        if kind == "irfft":
            s[-1] = 2 * (s[-1] - 1)
    s = tuple(int(n) for n in s)
    if len(s) != len(axes):
        raise FxadValueError(f"{name}: shape and axes have different lengths")
    if any(n < 1 for n in s):
        raise FxadValueError(f"{name}: invalid number of data points {s} (each must be >= 1)")
    if dtype_of(a).kind not in "fc":
        a = lax.convert_element_type(a, np.float64)
    return _fft(a, kind, axes, s, _NORMS[norm])


_WHAT = {"fft": "The discrete Fourier transform", "ifft": "The inverse discrete Fourier transform",
         "rfft": "The discrete Fourier transform of real input (the non-negative frequencies)",
         "irfft": "The inverse of rfft: real output from the non-negative frequencies"}


def _doc(kind, where):
    return (f"{_WHAT[kind]} {where}, as `numpy.fft`'s (`norm` \"backward\", \"ortho\" or "
            "\"forward\"; `out` must be None). Differentiable to any order in forward and reverse "
            "mode: the transpose of a Fourier transform is another one.")


def _one_axis(kind, name):
    def transform(a, n=None, axis=-1, norm=None, out=None):
        return _transform(kind, a, None if n is None else (n,), (axis,), norm, out, name)
    transform.__name__ = name
    transform.__doc__ = _doc(kind, "along `axis` (length n: cropped or zero-padded)")
    return stack_traced_lists(transform)


def _n_axes(kind, name, default_axes):
    def transform(a, s=None, axes=default_axes, norm=None, out=None):
        return _transform(kind, a, s, axes, norm, out, name)
    transform.__name__ = name
    transform.__doc__ = _doc(kind, "over `axes` (" + ("the last two" if default_axes else "all")
                             + " by default; lengths s)")
    return stack_traced_lists(transform)


fft, ifft = _one_axis("fft", "fft"), _one_axis("ifft", "ifft")
rfft, irfft = _one_axis("rfft", "rfft"), _one_axis("irfft", "irfft")
fft2, ifft2 = _n_axes("fft", "fft2", (-2, -1)), _n_axes("ifft", "ifft2", (-2, -1))
rfft2, irfft2 = _n_axes("rfft", "rfft2", (-2, -1)), _n_axes("irfft", "irfft2", (-2, -1))
fftn, ifftn = _n_axes("fft", "fftn", None), _n_axes("ifft", "ifftn", None)
rfftn, irfftn = _n_axes("rfft", "rfftn", None), _n_axes("irfft", "irfftn", None)


_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _swapped(norm, name):
    if norm not in _SWAPPED:
        raise FxadValueError(f'{name}: invalid norm value {norm}; should be "backward", '
                             '"ortho" or "forward"')
    return _SWAPPED[norm]


@stack_traced_lists
def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The discrete Fourier transform of a signal with Hermitian symmetry, given by its
    non-negative frequencies `a` (real output of length n, default 2 (len - 1)), as NumPy's:
    irfft of conj(a) with the normalization direction swapped. Differentiable to any order in
    forward and reverse mode."""
    return irfft(lax.conj(a) if dtype_of(a).kind == "c" else a, n, axis,
                 _swapped(norm, "hfft"), out)


@stack_traced_lists
def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of hfft: the non-negative frequencies of real input (n // 2 + 1 of them), as
    NumPy's: conj(rfft(a)) with the normalization direction swapped. Differentiable to any
    order in forward and reverse mode."""
    return lax.conj(rfft(a, n, axis, _swapped(norm, "ihfft"), out))


def _shift(x, axes, sign):
    nd = len(shape_of(x))
    axes = tuple(range(nd)) if axes is None else (axes,) if isinstance(axes, int) else axes
    return roll(x, tuple(sign * (shape_of(x)[ax] // 2) for ax in axes), tuple(axes))


@stack_traced_lists
def fftshift(x, axes=None):
    """x with the zero frequency moved to the centre along `axes` (all by default), as NumPy's; a
    permutation, so differentiable."""
    return _shift(x, axes, 1)


@stack_traced_lists
def ifftshift(x, axes=None):
    """The inverse of fftshift, as NumPy's; differentiable."""
    return _shift(x, axes, -1)


__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft", "ihfft", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]

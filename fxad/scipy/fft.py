"""scipy.fft's discrete cosine transforms (types 1-4, their inverses, n-dimensional), with
SciPy's definitions, `norm` ('backward', 'ortho', 'forward') and `orthogonalize`.

Each type is a complex FFT of a zero-padded or mirrored sequence with phase factors (no
primitive of its own), so the transforms are differentiable to any order, batch over the
other axes and run under jit and vmap. overwrite_x and workers are accepted and ignored.
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..errors import FxadValueError
from ..numpy.linalg import as_float

_NORMS = (None, "backward", "ortho", "forward")


def _resize(x, n):
    """x's last axis cut or zero-padded to n, as SciPy's `n`."""
    m = fnp.shape(x)[-1]
    if n == m:
        return x
    if n < m:
        return x[..., :n]
    pad = fnp.zeros(fnp.shape(x)[:-1] + (n - m,), fnp.result_type(x))
    return fnp.concatenate([x, pad], axis=-1)


def _weights(n, ends, factor, dtype):
    """A vector of ones with `factor` at the positions `ends` (the orthogonalized variants'
    end corrections)."""
    w = np.ones(n)
    w[list(ends)] = factor
    return w.astype(dtype)


def _dct_last(x, type, orthogonalize):
    """The unnormalized ('backward') DCT of the last axis, with the orthogonalized variant's
    end corrections when asked; of a complex x, that of its real and imaginary parts."""
    if fnp.result_type(x).kind == "c":
        return _dct_last(fnp.real(x), type, orthogonalize) + \
            1j * _dct_last(fnp.imag(x), type, orthogonalize)
    n = fnp.shape(x)[-1]
    real = np.finfo(fnp.result_type(x)).dtype
    k = np.arange(n)
    if type == 1:
        if n < 2:
            raise FxadValueError("dct: type 1 needs at least 2 points")
        if orthogonalize:
            x = x * _weights(n, (0, n - 1), np.sqrt(2.0), real)
        mirrored = fnp.concatenate([x, x[..., n - 2:0:-1]], axis=-1) if n > 2 else x
        y = fnp.real(fnp.fft.fft(mirrored, axis=-1)[..., :n]) if n > 2 else \
            fnp.stack([x[..., 0] + x[..., 1], x[..., 0] - x[..., 1]], axis=-1)
        if orthogonalize:
            y = y * _weights(n, (0, n - 1), 1 / np.sqrt(2.0), real)
        return y
    if type == 2:  # y_k = 2 sum x_j cos(pi k (2j + 1) / 2n) = 2 Re(e^{-i pi k / 2n} F_{2n}(x)_k)
        z = fnp.fft.fft(x, n=2 * n, axis=-1)[..., :n]
        y = 2 * fnp.real(z * np.exp(-1j * np.pi * k / (2 * n)).astype(_cplx(real)))
        if orthogonalize:
            y = y * _weights(n, (0,), 1 / np.sqrt(2.0), real)
        return y
    if type == 3:  # y_k = x_0 + 2 sum_{j>0} x_j cos(pi j (2k + 1) / 2n)
        if orthogonalize:
            x = x * _weights(n, (0,), np.sqrt(2.0), real)
        w = np.full(n, 2.0)
        w[0] = 1.0
        u = x * (w * np.exp(1j * np.pi * k / (2 * n))).astype(_cplx(real))
        return fnp.real(fnp.fft.ifft(u, n=2 * n, axis=-1)[..., :n]) * (2 * n)
    # type 4: y_k = 2 sum x_j cos(pi (2j + 1)(2k + 1) / 4n)
    u = x * np.exp(-1j * np.pi * k / (2 * n)).astype(_cplx(real))
    z = fnp.fft.fft(u, n=2 * n, axis=-1)[..., :n]
    phase = np.exp(-1j * np.pi * (2 * k + 1) / (4 * n)).astype(_cplx(real))
    return 2 * fnp.real(z * phase)


def _cplx(real):
    return np.result_type(real, np.complex64)


def _scale(type, n, norm, inverse):
    """The factor SciPy's norm puts on a transform of length n (the DCT's own 2N, or
    2(N - 1) for type 1)."""
    m = 2 * (n - 1) if type == 1 else 2 * n
    if norm == "ortho":
        return 1 / np.sqrt(m)
    if (norm == "forward") != inverse:
        return 1.0 / m
    return 1.0


_INVERSE_TYPE = {1: 1, 2: 3, 3: 2, 4: 4}


def _transform(x, type, n, axis, norm, orthogonalize, inverse, name):
    if type not in (1, 2, 3, 4):
        raise FxadValueError(f"{name}: type must be 1, 2, 3 or 4, got {type!r}")
    if norm not in _NORMS:
        raise FxadValueError(f"{name}: norm must be None, 'backward', 'ortho' or 'forward', "
                             f"got {norm!r}")
    x = as_float(x)
    axis = int(axis)
    x = fnp.moveaxis(x, axis, -1)
    if n is not None:
        if int(n) < 1:
            raise FxadValueError(f"{name}: n must be positive, got {n}")
        x = _resize(x, int(n))
    orth = norm == "ortho" if orthogonalize is None else bool(orthogonalize)
    kind = _INVERSE_TYPE[type] if inverse else type
    y = _dct_last(x, kind, orth)
    scale = _scale(type, fnp.shape(x)[-1], norm, inverse)
    if scale != 1.0:
        y = y * np.array(scale, np.finfo(fnp.result_type(y)).dtype)
    return fnp.moveaxis(y, -1, axis)


def dct(x, type=2, n=None, axis=-1, norm=None, overwrite_x=False, workers=None,
        orthogonalize=None):
    """The discrete cosine transform of `type` (1-4) along `axis`, as scipy.fft.dct (x cut or
    zero-padded to n)."""
    return _transform(x, type, n, axis, norm, orthogonalize, False, "dct")


def idct(x, type=2, n=None, axis=-1, norm=None, overwrite_x=False, workers=None,
         orthogonalize=None):
    """The inverse of dct of `type` along `axis`, as scipy.fft.idct."""
    return _transform(x, type, n, axis, norm, orthogonalize, True, "idct")


def _axes_and_sizes(x, s, axes, name):
    nd = fnp.ndim(x)
    if axes is None:
        axes = list(range(nd)) if s is None else list(range(nd - len(s), nd))
    axes = [int(a) % nd for a in np.atleast_1d(axes)]
    if s is None:
        s = [None] * len(axes)
    s = list(np.atleast_1d(s))
    if len(s) != len(axes):
        raise FxadValueError(f"{name}: s and axes must have the same length")
    return axes, s


def _nd(x, type, s, axes, norm, orthogonalize, inverse, name):
    x = as_float(x)
    axes, s = _axes_and_sizes(x, s, axes, name)
    for a, n in zip(axes, s):
        x = _transform(x, type, n, a, norm, orthogonalize, inverse, name)
    return x


def dctn(x, type=2, s=None, axes=None, norm=None, overwrite_x=False, workers=None,
         orthogonalize=None):
    """The n-dimensional DCT: dct along each of `axes` (all by default), sizes `s`."""
    return _nd(x, type, s, axes, norm, orthogonalize, False, "dctn")


def idctn(x, type=2, s=None, axes=None, norm=None, overwrite_x=False, workers=None,
          orthogonalize=None):
    """The n-dimensional inverse DCT: idct along each of `axes` (all by default)."""
    return _nd(x, type, s, axes, norm, orthogonalize, True, "idctn")


__all__ = ["dct", "idct", "dctn", "idctn"]

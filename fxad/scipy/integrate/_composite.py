"""Composite rules over sampled values (SciPy's names, signatures and formulas, including
Simpson's rule for an even number of irregularly spaced samples), written with fxad.numpy:
differentiable in y and x, under every transformation."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as fnp
from ...errors import FxadValueError


def _samples(y, x, axis, name):
    """y with the integration axis last, and x (if given) broadcastable to it."""
    y = fnp.asarray(y)
    if y.ndim == 0:
        raise FxadValueError(f"{name}: y must have at least one dimension")
    nd = y.ndim
    axis = int(axis)
    if not -nd <= axis < nd:
        raise FxadValueError(f"{name}: axis {axis} is out of range for y of shape {y.shape}")
    y = fnp.moveaxis(y, axis, -1)
    if x is not None:
        x = fnp.asarray(x)
        if x.ndim == 1:
            pass
        elif x.ndim == nd:
            x = fnp.moveaxis(x, axis, -1)
        else:
            raise FxadValueError(f"{name}: if given, shape of x must be 1-D or the same as y")
        if x.shape[-1] != y.shape[-1]:
            raise FxadValueError(f"{name}: if given, length of x along axis must be the same "
                                 "as y")
    return y, x


def _ratio(num, den):
    """num / den where den != 0, else 0 (SciPy's true_divide(..., where=den != 0)), with no
    NaN in the derivative where den == 0."""
    ok = den != 0
    return fnp.where(ok, num / fnp.where(ok, den, 1.0), 0.0)


def _basic_simpson(y, stop, x, dx):
    """Simpson's rule over the pairs of intervals of samples 0..stop+1 (SciPy's)."""
    y0, y1, y2 = y[..., 0:stop:2], y[..., 1:stop + 1:2], y[..., 2:stop + 2:2]
    if x is None:
        return fnp.sum(y0 + 4.0 * y1 + y2, axis=-1) * (dx / 3.0)
    h = fnp.diff(x, axis=-1).astype(np.float64)
    h0, h1 = h[..., 0:stop:2], h[..., 1:stop + 1:2]
    hsum, hprod = h0 + h1, h0 * h1
    h0divh1 = _ratio(h0, h1)
    tmp = hsum / 6.0 * (y0 * (2.0 - _ratio(1.0, h0divh1)) + y1 * (hsum * _ratio(hsum, hprod))
                        + y2 * (2.0 - h0divh1))
    return fnp.sum(tmp, axis=-1)


def simpson(y: Any, x: Any = None, *, dx: float = 1.0, axis: int = -1) -> Any:
    """scipy.integrate.simpson: composite Simpson's rule; for an even number of samples the
    last interval uses Cartwright's correction, as SciPy does."""
    y, x = _samples(y, x, axis, "simpson")
    n = y.shape[-1]
    if n % 2 == 1:
        return _basic_simpson(y, n - 2, x, dx)
    if n == 2:
        last = dx if x is None else x[..., -1] - x[..., -2]
        return 0.5 * last * (y[..., -1] + y[..., -2])
    result = _basic_simpson(y, n - 3, x, dx)
    if x is None:
        h0 = h1 = np.float64(dx)
    else:
        d = fnp.diff(x, axis=-1).astype(np.float64)
        h0, h1 = d[..., -2], d[..., -1]
    alpha = _ratio(2 * h1 ** 2 + 3 * h0 * h1, 6 * (h1 + h0))
    beta = _ratio(h1 ** 2 + 3.0 * h0 * h1, 6 * h0)
    eta = _ratio(h1 ** 3, 6 * h0 * (h0 + h1))
    return result + alpha * y[..., -1] + beta * y[..., -2] - eta * y[..., -3]


def cumulative_trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1,
                         initial: Any = None) -> Any:
    """scipy.integrate.cumulative_trapezoid: running trapezoid integrals along `axis`; with
    initial=0 a leading 0 keeps y's shape."""
    y0 = fnp.asarray(y)
    if y0.ndim and y0.shape[int(axis) % y0.ndim] == 0:
        raise FxadValueError("cumulative_trapezoid: at least one point is required along "
                             "`axis`")
    y, x = _samples(y0, x, axis, "cumulative_trapezoid")
    d = dx if x is None else fnp.diff(x, axis=-1)
    res = fnp.cumsum(d * (y[..., 1:] + y[..., :-1]) / 2.0, axis=-1)
    if initial is not None:
        if not np.isscalar(initial):
            raise FxadValueError("cumulative_trapezoid: `initial` parameter should be a "
                                 "scalar.")
        if initial != 0:
            raise FxadValueError("cumulative_trapezoid: `initial` must be `None` or `0`.")
        res = fnp.concatenate([fnp.zeros(res.shape[:-1] + (1,), res.dtype), res], axis=-1)
    return fnp.moveaxis(res, -1, int(axis))


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """scipy.integrate.trapezoid: the composite trapezoidal rule (NumPy's)."""
    return fnp.trapezoid(y, x=x, dx=dx, axis=axis)

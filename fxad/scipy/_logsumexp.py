"""scipy.special.logsumexp with SciPy's full signature (b=, return_sign=), stable and with
finite derivatives wherever the value is finite; fxad/scipy/special.py re-exports it.

Without b= and return_sign it is the logsumexp primitive (fxad/rules/reduction/reduce.py: SciPy's
own impl, gradient the max-shifted softmax). With them, a composite:
log|Σ b e^a| = m + log|Σ b e^(a - m)| with m the largest a whose weight is nonzero (held
constant: the result does not depend on it). Terms with b = 0 are dropped before
exponentiating (so e^inf * 0 is never formed), a sum of exactly 0 (all terms -inf, or
cancelling weights) gives -inf with zero derivatives rather than 0 * inf = NaN, and a
negative sum is NaN unless return_sign=True, as in SciPy."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..core import Tracer, get_aval
from ..errors import FxadValueError
from ..rules.reduction.reduce import logsumexp as _logsumexp_p


def as_float(x):
    if not isinstance(x, Tracer):
        x = np.asarray(x)
        return x if x.dtype.kind in "fc" else x.astype(np.float64)
    return x if get_aval(x).dtype.kind in "fc" else lax.convert_element_type(x, np.float64)


def shape(x):
    return tuple(get_aval(x).shape)


def axes_of(axis, ndim):
    """None -> all axes; an int or a tuple -> sorted non-negative axes, checked."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = sorted({int(a) % ndim if ndim else 0 for a in axes})
    if len(out) != len(axes) or any(not -ndim <= int(a) < max(ndim, 1) for a in axes):
        raise FxadValueError(f"axis {axis} is out of bounds or repeated for an array of "
                             f"dimension {ndim}")
    return tuple(out)


def _stable(a, axis, b):
    """(log|s| with s == 0 mapped to -inf, sign(s)) over `axes`, keepdims."""
    a = as_float(a)
    if b is not None:
        b = as_float(b)
        s = np.broadcast_shapes(shape(a), shape(b))
        a, b = lax.broadcast_to(a, s), lax.broadcast_to(b, s)
        a = lax.select(lax.ne(b, 0), a, -np.inf)
    axes = axes_of(axis, len(shape(a)))
    m = lax.stop_gradient(lax.reduce_max(a, axes, keepdims=True))
    m = lax.select(lax.isfinite(m), m, 0.0)
    e = lax.exp(lax.sub(a, m))
    if b is not None:
        e = lax.mul(e, b)
    s = lax.reduce_sum(e, axes, keepdims=True)
    zero = lax.eq(s, 0)
    safe = lax.select(zero, 1.0, s)
    out = lax.add(lax.log(lax.abs(safe)), m)
    out = lax.select(zero, -np.inf, out)
    return out, lax.sign(lax.stop_gradient(s)), axes


def _squeeze(x, axes, keepdims):
    if keepdims:
        return x
    return lax.reshape(x, tuple(d for i, d in enumerate(shape(x)) if i not in axes))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) over `axis` without overflow, as `scipy.special.logsumexp` (weights b,
    keepdims, return_sign for a negative sum). Differentiable to any order in a and b; the
    derivative in a is the softmax, finite even where an entry is -inf."""
    if b is None and not return_sign:  # the primitive: SciPy's own values
        a = as_float(a)
        return _logsumexp_p(a, axes_of(axis, len(shape(a))), keepdims)
    out, sign, axes = _stable(a, axis, b)
    if not return_sign:
        out = lax.select(lax.lt(sign, 0), np.nan, out)
        return _squeeze(out, axes, keepdims)
    return _squeeze(out, axes, keepdims), _squeeze(sign, axes, keepdims)


def softmax(x, axis=None):
    """exp(x - logsumexp(x)) over `axis` (all axes by default, as SciPy)."""
    out, _, _ = _stable(x, axis, None)
    return lax.exp(lax.sub(as_float(x), out))


def log_softmax(x, axis=None):
    """x - logsumexp(x) over `axis` (all axes by default), as `scipy.special.log_softmax`;
    differentiable to any order."""
    out, _, _ = _stable(x, axis, None)
    return lax.sub(as_float(x), out)


__all__ = ["logsumexp", "softmax", "log_softmax"]

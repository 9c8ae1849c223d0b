"""scipy.special.logsumexp with SciPy's full signature (b=, return_sign=), stable and with
finite derivatives wherever the value is finite; fxad/scipy/special.py re-exports it.

log|Σ b e^a| = m + log|Σ b e^(a - m)| with m the largest a whose weight is nonzero (held
constant: the result does not depend on it). Terms with b = 0 are dropped before
exponentiating (so e^inf * 0 is never formed), a sum of exactly 0 (all terms -inf, or
cancelling weights) gives -inf with zero derivatives rather than 0 * inf = NaN, and a
negative sum is NaN unless return_sign=True, as in SciPy."""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..numpy.linalg import as_float


def _stable(a, axis, b):
    """(log|s| with s == 0 mapped to -inf, sign(s)) over `axis`, keepdims."""
    a = as_float(a)
    if b is not None:
        a, b = fnp.broadcast_arrays(a, as_float(b))
        a = lax.select(lax.ne(b, 0), a, -np.inf)
    m = lax.stop_gradient(fnp.max(a, axis=axis, keepdims=True))
    m = lax.select(lax.isfinite(m), m, 0.0)
    e = lax.exp(lax.sub(a, m))
    if b is not None:
        e = lax.mul(e, b)
    s = fnp.sum(e, axis=axis, keepdims=True)
    zero = lax.eq(s, 0)
    safe = lax.select(zero, 1.0, s)
    out = lax.add(lax.log(lax.abs(safe)), m)
    out = lax.select(zero, -np.inf, out)
    return out, lax.sign(lax.stop_gradient(s))


def _squeeze(x, axis, keepdims):
    if keepdims:
        return x
    return fnp.squeeze(x, axis=axis) if axis is not None else fnp.reshape(x, ())


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    out, sign = _stable(a, axis, b)
    if not return_sign:
        out = lax.select(lax.lt(sign, 0), np.nan, out)
        return _squeeze(out, axis, keepdims)
    return _squeeze(out, axis, keepdims), _squeeze(sign, axis, keepdims)


def softmax(x, axis=None):
    """exp(x - logsumexp(x)) over `axis` (all axes by default, as SciPy)."""
    out, _ = _stable(x, axis, None)
    return lax.exp(lax.sub(as_float(x), out))


def log_softmax(x, axis=None):
    out, _ = _stable(x, axis, None)
    return lax.sub(as_float(x), out)


__all__ = ["logsumexp", "softmax", "log_softmax"]

"""jax.nn's activation and utility functions, with JAX's signatures and, at kinks, JAX's
derivative conventions.

Every function is finite, with finite derivatives (to second order), at ±1e300, and none
produces a NaN in a value or gradient on a masked (-inf) or overflowing input: branches are
selected with the "double where" pattern (the unused branch is fed a safe argument, so its
derivative is never inf * 0), squares that would overflow are rescaled, and reductions are
shifted by their maximum. softplus, logsumexp and the special functions are primitives with
SciPy's or NumPy's own impls.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..core import get_aval
from ..errors import FxadTypeError, FxadValueError
from ..numpy.reductions import normalize_axes
from ..rules.reduction.reduce import logsumexp as _logsumexp
from ..rules.special.basic import ndtr, softplus as _softplus

__all__ = ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
           "identity", "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp",
           "logsumexp", "mish", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign",
           "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus", "standardize",
           "swish", "tanh"]

sigmoid = lax.logistic


def _zero(x):
    """A 0-d zero of x's dtype: a constant (x * 0 would be NaN at x = ±inf)."""
    return np.zeros((), get_aval(x).dtype)


def softplus(x):
    """log(1 + e^x): a primitive (NumPy's logaddexp(x, 0)) whose derivative is logistic(x), so
    it is one transcendental, finite at ±1e300 and smooth at every order."""
    return _softplus(x)


def silu(x):
    """x * sigmoid(x) (alias `swish`), elementwise; differentiable to any order."""
    return lax.mul(x, lax.logistic(x))


swish = silu


_GELU_C = float(np.sqrt(2.0 / np.pi))


def gelu(x, approximate=True):
    """GELU: x Φ(x) (approximate=False, with SciPy's ndtr: accurate in the lower tail, where
    1 + erf(x/√2) cancels), or its tanh approximation 0.5 x (1 + tanh u) written as
    x · logistic(2u), u = √(2/π)(x + 0.044715 x³), which does not cancel for negative x
    either. The cubic sees x clipped to ±25, where logistic(2u) is already 0 or 1, so huge
    inputs give no inf·0 = NaN in the derivative."""
    if not approximate:
        return lax.mul(x, ndtr(x))
    xc = lax.min(lax.max(x, -25.0), 25.0)
    inner = lax.mul(2 * _GELU_C, lax.add(xc, lax.mul(0.044715, lax.integer_pow(xc, 3))))
    return lax.mul(x, lax.logistic(inner))


def _shift(x, axis):
    """The max over `axis`, held constant (stop_gradient), with non-finite maxima replaced by
    0 so all-(-inf) rows give -inf rather than NaN."""
    m = lax.stop_gradient(fnp.max(x, axis=axis, keepdims=True))
    return lax.select(lax.isfinite(m), m, _zero(m))


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) over `axis`: a primitive with SciPy's own impl; -inf for a slice of
    -inf (an empty sum), where the gradient is 0 (JAX's is NaN; notes/07_differences.md).
    scipy.special.logsumexp has b= and return_sign= as well."""
    x = fnp.asarray(x)
    return _logsumexp(x, normalize_axes(axis, get_aval(x).ndim), keepdims)


def softmax(x, axis=-1):
    """exp(x - m) / sum(exp(x - m)), m the max (not replaced where infinite: NaN for a slice
    with +inf or only -inf, as SciPy and JAX)."""
    e = lax.exp(lax.sub(x, lax.stop_gradient(fnp.max(x, axis=axis, keepdims=True))))
    return lax.div(e, fnp.sum(e, axis=axis, keepdims=True))


def log_softmax(x, axis=-1):
    """(x - m) - log(sum(exp(x - m))) with m the max, as SciPy: x - logsumexp(x) would
    lose log(n) next to x = 1e300."""
    shifted = lax.sub(x, _shift(x, axis))
    return lax.sub(shifted, lax.log(fnp.sum(lax.exp(shifted), axis=axis, keepdims=True)))


tanh = lax.tanh


def identity(x):
    """x itself (jax.nn.identity)."""
    return fnp.asarray(x)


# Constants in the branches are Python scalars (select broadcasts them, keeping x's dtype),
# and the conditions are arranged so that a NaN input falls through to the branch that
# depends on x: NaN propagates, and inf never meets a 0 (x * 0 would be NaN).

def relu(x):
    """max(x, 0) with derivative 0 at 0 (as JAX and PyTorch). One select against a constant:
    the backward pass is one pass (no x * 0 branch to differentiate), relu(-inf) is 0 and
    relu(NaN) is NaN."""
    return lax.select(lax.le(x, 0), 0.0, x)


def relu6(x):
    """min(max(x, 0), 6), with derivative 0 at 0 and at 6 (as JAX)."""
    return lax.select(lax.le(x, 0), 0.0, lax.select(lax.ge(x, 6), 6.0, x))


def hard_tanh(x):
    """x clipped to [-1, 1]; derivative 1 on the closed interval (as JAX)."""
    return lax.select(lax.gt(x, 1), 1.0, lax.select(lax.lt(x, -1), -1.0, x))


def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    return lax.div(relu6(lax.add(x, 3.0)), 6.0)


def hard_silu(x):
    """x * hard_sigmoid(x): 0 below -3, x above 3 (also at ±inf), x (x + 3) / 6 between."""
    lo, hi = lax.le(x, -3), lax.ge(x, 3)
    xm = lax.select(lax.logical_or(lo, hi), 0.0, x)  # the quadratic only where used
    return lax.select(lo, 0.0, lax.select(hi, x, lax.div(lax.mul(xm, lax.add(xm, 3.0)), 6.0)))


hard_swish = hard_silu


def leaky_relu(x, negative_slope=0.01):
    """x where x >= 0, else negative_slope * x."""
    return lax.select(lax.ge(x, 0), x, lax.mul(x, negative_slope))


def elu(x, alpha=1.0):
    """x where x > 0, else alpha * (exp(x) - 1) (the expm1 branch also at 0, as JAX)."""
    pos = lax.gt(x, 0)
    neg = lax.mul(alpha, lax.expm1(lax.select(pos, 0.0, x)))
    return lax.select(pos, x, neg)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    """scale * elu(x, alpha) with the self-normalizing constants."""
    return lax.mul(_SELU_SCALE, elu(x, _SELU_ALPHA))


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha); at 0 the max/min ties split evenly (as
    JAX's)."""
    return lax.add(lax.max(x, 0.0), lax.mul(alpha, lax.expm1(lax.div(lax.min(x, 0.0), alpha))))


def glu(x, axis=-1):
    """Gated linear unit: the first half of `axis` times the sigmoid of the second half."""
    n = get_aval(x).shape[axis]
    if n % 2:
        raise FxadValueError(f"glu: axis {axis} has odd size {n}; it must split in two halves")
    a, b = fnp.split(x, 2, axis=axis)
    return lax.mul(a, lax.logistic(b))


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x): finite for every finite x."""
    return lax.neg(_softplus(lax.neg(x)))


def soft_sign(x):
    """x / (|x| + 1), written per sign so that derivatives at 0 are the right-hand ones
    (as JAX's, whose |x|' is 1 at 0)."""
    pos = lax.ge(x, 0)
    xp, xn = lax.select(pos, x, 0.0), lax.select(pos, 0.0, x)  # each branch kept finite
    return lax.select(pos, lax.div(xp, lax.add(xp, 1.0)), lax.div(xn, lax.sub(1.0, xn)))


def sparse_plus(x):
    """0 for x <= -1, (x + 1)^2 / 4 in between, x for x >= 1 (a smooth relu)."""
    lo, hi = lax.le(x, -1), lax.ge(x, 1)
    mid = lax.select(lax.logical_or(lo, hi), 0.0, x)  # the quadratic only where used
    quad = lax.mul(0.25, lax.integer_pow(lax.add(mid, 1.0), 2))
    return lax.select(lo, 0.0, lax.select(hi, x, quad))


def sparse_sigmoid(x):
    """(clip(x, -1, 1) + 1) / 2 (ties at ±1 split evenly, as JAX's clip)."""
    return lax.mul(0.5, fnp.clip(lax.add(x, 1.0), 0.0, 2.0))


def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2, without overflow at large |x| and without cancellation for
    negative x (there it is b / (2 (sqrt(x^2 + b) - x)))."""
    sb = float(np.sqrt(b)) if isinstance(b, (int, float)) else lax.sqrt(b)
    a = lax.abs(x)
    big = lax.ge(a, sb)
    a_big = lax.select(big, a, sb)        # >= sqrt(b): no division by 0
    x_small = lax.select(big, 0.0, x)     # < sqrt(b): no overflow (x, not |x|: smooth at 0)
    u = lax.div(sb, a_big)
    r = lax.select(big, lax.mul(a_big, lax.sqrt(lax.add(1.0, lax.mul(u, u)))),
                   lax.sqrt(lax.add(lax.mul(x_small, x_small), b)))
    pos = lax.ge(x, 0)
    return lax.select(pos, lax.mul(0.5, lax.add(x, r)),
                      lax.div(b, lax.mul(2.0, lax.add(r, a))))


def mish(x):
    """x * tanh(softplus(x))."""
    return lax.mul(x, lax.tanh(_softplus(x)))


_LOG2 = float(np.log(2.0))


def log1mexp(x):
    """log(1 - exp(-x)) for x > 0: log(-expm1(-x)) below log 2, log1p(-exp(-x)) above
    (Mächler's choice; each branch gets a safe argument where it is not used)."""
    small = lax.lt(x, _LOG2)
    xs = lax.select(small, x, _LOG2)
    xl = lax.select(small, _LOG2, x)
    return lax.select(small, lax.log(lax.neg(lax.expm1(lax.neg(xs)))),
                      lax.log1p(lax.neg(lax.exp(lax.neg(xl)))))


def _masked(x, where, fill):
    return x if where is None else fnp.where(where, x, fill)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) over `axis` (elements where `where` is False are left out): shifted
    by the maximum, -inf (not NaN, with zero gradient) for an all -inf or empty slice."""
    x = fnp.asarray(x)
    xm = _masked(x, where, -np.inf)
    m = lax.stop_gradient(fnp.max(xm, axis=axis, keepdims=True))
    m = lax.select(lax.isfinite(m), m, 0.0)
    s = fnp.sum(lax.exp(lax.sub(xm, m)), axis=axis, keepdims=True)
    shape = get_aval(x).shape
    if where is None:
        log_n = float(np.log(np.prod([shape[a] for a in _axes(axis, len(shape))])))
    else:
        count = fnp.sum(fnp.broadcast_to(where, shape), axis=axis, keepdims=True)
        log_n = lax.log(lax.convert_element_type(count, get_aval(s).dtype))
    pos = lax.gt(s, 0)
    log_s = lax.select(pos, lax.log(lax.select(pos, s, 1.0)), -np.inf)
    out = lax.sub(lax.add(log_s, m), log_n)
    return out if keepdims else fnp.squeeze(out, axis=_axes(axis, len(shape)))


def _axes(axis, nd):
    if axis is None:
        return tuple(range(nd))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % nd for a in axes)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon) over `axis`. Mean and variance default to the
    (masked) statistics of x. `algorithm` 'fast' (JAX's default) means variance =
    mean(x^2) - mean^2 and 'stable' mean((x - mean)^2); they differ only for a given `mean`
    other than x's own, and fxad evaluates both in a cancellation-free form, scaled by the
    largest |x - mean| (when above 1) so that inputs near ±1e300 do not overflow."""
    if algorithm not in ("fast", "stable"):
        raise FxadValueError(f"standardize: algorithm must be 'fast' or 'stable', got "
                             f"{algorithm!r}")
    x = fnp.asarray(x)
    given_mean = mean is not None
    if mean is None:
        mean = fnp.mean(x, axis=axis, keepdims=True, where=where)
    xc = lax.sub(x, mean)
    if variance is not None:
        return lax.mul(xc, lax.rsqrt(lax.add(variance, epsilon)))
    s = lax.stop_gradient(fnp.max(lax.abs(_masked(xc, where, 0.0)), axis=axis, keepdims=True))
    # only scale down (s > 1): dividing tiny values by s would lose epsilon's share
    s = lax.select(lax.logical_and(lax.gt(s, 1), lax.isfinite(s)), s, 1.0)
    y = lax.div(xc, s)
    v = fnp.mean(lax.mul(y, y), axis=axis, keepdims=True, where=where)
    if given_mean and algorithm == "fast":  # mean(x^2) - m^2 = mean((x-m)^2) + 2m(mean(x)-m)
        dm = lax.div(lax.sub(fnp.mean(x, axis=axis, keepdims=True, where=where), mean), s)
        v = lax.add(v, lax.mul(2.0, lax.mul(lax.div(mean, s), dm)))
    return lax.mul(y, lax.rsqrt(lax.add(v, lax.div(lax.div(epsilon, s), s))))


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """A one at index x along a new axis of size num_classes (zeros for indices outside
    [0, num_classes)); float64 unless `dtype` is given."""
    try:
        num_classes = int(num_classes)
    except TypeError:
        raise FxadTypeError("one_hot: num_classes must be a concrete integer (not a traced "
                            "value); pass it as a static argument") from None
    x = fnp.asarray(x)
    nd = len(get_aval(x).shape) + 1
    ax = int(axis)
    if not -nd <= ax < nd:
        raise FxadValueError(f"one_hot: axis {axis} is out of range for a result of rank {nd}")
    ax %= nd
    shape = [1] * nd
    shape[ax] = num_classes
    classes = np.arange(num_classes).reshape(shape)
    hit = lax.eq(fnp.expand_dims(x, ax), classes)
    return lax.convert_element_type(hit, np.dtype(dtype) if dtype is not None else np.float64)

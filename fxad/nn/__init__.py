"""Neural-network functions: numerically stable activations (finite values and gradients even
at ±1e300) and normalization layers written as custom_vjp "fused kernels" that save the mean
and reciprocal standard deviation, as a hand-written GPU kernel would.

Because custom_vjp's fwd runs on an outer transformation's tracers, the saved statistics keep
their dependence on the input, so forward-over-reverse Hessians through these layers are
exact without recomputing the statistics in the backward pass (the seed-000 story).
"""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..core import get_aval
from ..custom_derivatives import custom_vjp
from ..rules.helpers import unbroadcast
from ..rules.special.basic import softplus as _softplus

sigmoid = lax.logistic


def _zero(x):
    """A 0-d zero of x's dtype: a constant (x * 0 would be NaN at x = ±inf)."""
    return np.zeros((), get_aval(x).dtype)


def softplus(x):
    """log(1 + e^x): a primitive (NumPy's logaddexp(x, 0)) whose derivative is logistic(x), so
    it is one transcendental, finite at ±1e300 and smooth at every order."""
    return _softplus(x)


def silu(x):
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
        from ..scipy.special import ndtr
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
    from ..rules.reduction.reduce import logsumexp as _logsumexp
    x = fnp.asarray(x)
    return _logsumexp(x, _axes(axis, get_aval(x).ndim), keepdims)


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


# --- normalization: one custom_vjp that saves mean and rstd ----------------------------------

def _axes(axis, ndim):
    from ..numpy.reductions import normalize_axes
    return normalize_axes(axis, ndim)


def _normalize_fwd(x, gamma, beta, axes, eps):
    mean = fnp.mean(x, axis=axes, keepdims=True)
    xc = lax.sub(x, mean)
    rstd = lax.rsqrt(lax.add(fnp.mean(lax.mul(xc, xc), axis=axes, keepdims=True), eps))
    y = lax.add(lax.mul(lax.mul(xc, rstd), gamma), beta)
    return y, (x, mean, rstd, gamma)


def _normalize_bwd(axes, eps, res, dy):
    x, mean, rstd, gamma = res
    xhat = lax.mul(lax.sub(x, mean), rstd)
    g = lax.mul(dy, gamma)
    dx = lax.mul(rstd, lax.sub(lax.sub(g, fnp.mean(g, axis=axes, keepdims=True)),
                               lax.mul(xhat, fnp.mean(lax.mul(g, xhat), axis=axes,
                                                      keepdims=True))))
    dgamma = unbroadcast(lax.mul(dy, xhat), get_aval(gamma))
    dbeta = unbroadcast(dy, get_aval(gamma))
    return dx, dgamma, dbeta


def _normalize_impl(x, gamma, beta, axes, eps):
    return _normalize_fwd(x, gamma, beta, axes, eps)[0]


_normalize = custom_vjp(lambda x, gamma, beta, axes, eps: _normalize_impl(x, gamma, beta,
                                                                          axes, eps),
                        nondiff_argnums=(3, 4))
_normalize.defvjp(lambda x, gamma, beta, axes, eps: _normalize_fwd(x, gamma, beta, axes, eps),
                  _normalize_bwd)
_normalize.__name__ = "normalize"


def _norm(x, gamma, beta, axis, eps):
    aval = get_aval(x)
    axes = _axes(axis, aval.ndim)
    # Absent scale/shift: 0-d constants (their cotangents are computed and dropped).
    gamma = np.ones((), aval.dtype) if gamma is None else gamma
    beta = np.zeros((), aval.dtype) if beta is None else beta
    return _normalize(x, gamma, beta, axes, eps)


def layer_norm(x, gamma=None, beta=None, axis=-1, eps=1e-5):
    """Normalize over `axis` (int or tuple) of each example; gamma/beta broadcast against x."""
    return _norm(x, gamma, beta, axis, eps)


def batch_norm(x, gamma=None, beta=None, axis=0, eps=1e-5):
    """Normalize over `axis` (int or tuple; the batch axes) with batch statistics."""
    return _norm(x, gamma, beta, axis, eps)


# --- more of jax.nn, in their own modules (issue 19) -----------------------------------------
from .activations import (  # noqa: E402,F401
    celu, elu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh, identity, leaky_relu,
    log1mexp, log_sigmoid, logmeanexp, mish, one_hot, relu6, selu, soft_sign, sparse_plus,
    sparse_sigmoid, squareplus, standardize, tanh)
from .activations import relu  # noqa: E402,F401
from .attention import dot_product_attention  # noqa: E402,F401
from .pooling import avg_pool, max_pool, min_pool, pool  # noqa: E402,F401
from . import initializers  # noqa: E402,F401
from .dropout import dropout  # noqa: E402,F401

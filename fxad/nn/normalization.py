"""Normalization layers (layer_norm, batch_norm) written as one custom_vjp "fused kernel" that
saves the mean and reciprocal standard deviation, as a hand-written GPU kernel would.

Because custom_vjp's fwd runs on an outer transformation's tracers, the saved statistics keep
their dependence on the input, so forward-over-reverse Hessians through these layers are
exact without recomputing the statistics in the backward pass.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..core import get_aval
from ..custom_derivatives import custom_vjp
from ..numpy.reductions import normalize_axes
from ..rules.helpers import unbroadcast

__all__ = ["batch_norm", "layer_norm"]


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
    axes = normalize_axes(axis, aval.ndim)
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

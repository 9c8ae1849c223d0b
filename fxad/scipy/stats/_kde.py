"""gaussian_kde: SciPy's class (Scott's or Silverman's bandwidth, a scalar or a callable,
weights), differentiable in the dataset, the weights and the evaluation points, and a pytree
so it passes through jit and vmap. Densities are sums of Gaussians evaluated through one
Cholesky factor of the kernel covariance; logpdf is a logsumexp, finite far from the data."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as fnp
from ...core import Tracer
from ...errors import FxadValueError
from ...rules.special.basic import ndtr
from ...tree_util import register_pytree_node
from .._logsumexp import logsumexp
from ..linalg import cholesky, solve_triangular
from ._common import f

_LOG_2PI = float(np.log(2 * np.pi))


def _log_gaussian_sums(points, centers, log_w, cov):
    """log Σ_i w_i N(p_j; c_i, cov) for every point p_j: points (d, m), centers (d, n)."""
    d = fnp.shape(centers)[0]
    l = cholesky(cov, lower=True)
    wc = solve_triangular(l, centers, lower=True)  # whitened: the kernel is N(0, I)
    wp = solve_triangular(l, points, lower=True)
    diff = lax.sub(fnp.expand_dims(wc, 2), fnp.expand_dims(wp, 1))  # (d, n, m)
    maha = fnp.sum(lax.mul(diff, diff), axis=0)
    half_logdet = fnp.sum(lax.log(fnp.diagonal(l)))
    logk = lax.sub(lax.mul(maha, -0.5), lax.add(half_logdet, 0.5 * d * _LOG_2PI))
    return logsumexp(lax.add(logk, fnp.reshape(log_w, (-1, 1))), axis=0)


class gaussian_kde:  # noqa: N801  (SciPy's name)
    """A Gaussian kernel density estimate of `dataset` (d, n), as `scipy.stats.gaussian_kde`
    (bandwidth by Scott's or Silverman's rule, a number or a callable; optional weights).
    Its evaluation and logpdf are differentiable in the points and in the dataset."""
    def __init__(self, dataset, bw_method=None, weights=None):
        self.dataset = fnp.atleast_2d(f(dataset))
        self.d, self.n = fnp.shape(self.dataset)
        if self.n < 2:
            raise FxadValueError("gaussian_kde: `dataset` input should have multiple elements")
        if weights is None:
            self.weights = lax.div(fnp.ones(self.n), float(self.n))
        else:
            w = fnp.atleast_1d(f(weights))
            if len(fnp.shape(w)) != 1 or fnp.shape(w)[0] != self.n:
                raise FxadValueError("gaussian_kde: `weights` must be 1-d with one entry per "
                                     "data point")
            self.weights = lax.div(w, fnp.sum(w))
        self.neff = lax.div(1.0, fnp.sum(lax.mul(self.weights, self.weights)))
        self.set_bandwidth(bw_method)

    # --- bandwidth (SciPy's rules) ----------------------------------------------------------
    def scotts_factor(self):
        return lax.pow(self.neff, -1.0 / (self.d + 4))

    def silverman_factor(self):
        return lax.pow(lax.mul(self.neff, (self.d + 2.0) / 4.0), -1.0 / (self.d + 4))

    covariance_factor = scotts_factor

    def set_bandwidth(self, bw_method=None):
        if bw_method is None or bw_method == "scott":
            self.covariance_factor = self.scotts_factor
        elif bw_method == "silverman":
            self.covariance_factor = self.silverman_factor
        elif np.isscalar(bw_method) and not isinstance(bw_method, str) or \
                isinstance(bw_method, Tracer):
            self._bw = bw_method
            self.covariance_factor = lambda: self._bw
        elif callable(bw_method):
            self._bw_method = bw_method
            self.covariance_factor = lambda: self._bw_method(self)
        else:
            raise FxadValueError("gaussian_kde: bw_method should be 'scott', 'silverman', a "
                                 "scalar or a callable")
        self._compute_covariance()

    def _compute_covariance(self):
        """The weighted data covariance (np.cov with aweights, unbiased) times factor²."""
        self.factor = self.covariance_factor()
        w = self.weights
        mean = fnp.sum(lax.mul(self.dataset, w), axis=1, keepdims=True)
        dev = lax.sub(self.dataset, mean)
        data_cov = lax.div(fnp.matmul(lax.mul(dev, w), fnp.transpose(dev)),
                           lax.sub(1.0, fnp.sum(lax.mul(w, w))))
        self._data_covariance = data_cov
        self.covariance = lax.mul(data_cov, lax.mul(self.factor, self.factor))
        self.inv_cov = fnp.linalg.inv(self.covariance)

    # --- densities ---------------------------------------------------------------------------
    def _points(self, points):
        points = fnp.atleast_2d(f(points))
        d, m = fnp.shape(points)
        if d != self.d:
            if d == 1 and m == self.d:  # one point given as a row
                points = fnp.reshape(points, (self.d, 1))
            else:
                raise FxadValueError(f"gaussian_kde: points have dimension {d}, dataset has "
                                     f"dimension {self.d}")
        return points

    def logpdf(self, x):
        return _log_gaussian_sums(self._points(x), self.dataset, lax.log(self.weights),
                                  self.covariance)

    def evaluate(self, points):
        return lax.exp(self.logpdf(points))

    __call__ = pdf = evaluate

    def integrate_gaussian(self, mean, cov):
        """∫ kde(x) N(x; mean, cov) dx = Σ w_i N(mean; x_i, cov + kernel covariance)."""
        mean = fnp.reshape(f(mean), (self.d, 1))
        cov = fnp.reshape(f(cov), (self.d, self.d))
        out = _log_gaussian_sums(mean, self.dataset, lax.log(self.weights),
                                 lax.add(self.covariance, cov))
        return lax.exp(fnp.reshape(out, ()))

    def integrate_box_1d(self, low, high):
        if self.d != 1:
            raise FxadValueError("gaussian_kde.integrate_box_1d: the dataset must be 1-d")
        sd = lax.sqrt(fnp.reshape(self.covariance, ()))
        x = fnp.reshape(self.dataset, (-1,))
        mass = lax.sub(ndtr(lax.div(lax.sub(high, x), sd)), ndtr(lax.div(lax.sub(low, x), sd)))
        return fnp.sum(lax.mul(self.weights, mass))

    def integrate_kde(self, other):
        """∫ kde(x) other(x) dx = Σ_ij w_i v_j N(x_i; y_j, cov₁ + cov₂)."""
        if other.d != self.d:
            raise FxadValueError("gaussian_kde.integrate_kde: the KDEs have different dimensions")
        out = _log_gaussian_sums(other.dataset, self.dataset, lax.log(self.weights),
                                 lax.add(self.covariance, other.covariance))
        return fnp.sum(lax.mul(other.weights, lax.exp(out)))

    def resample(self, size=None, seed=None):
        """Draws (d, size): data points chosen by weight plus kernel noise. The noise and the
        choice come from NumPy's generator (seed: an int, a Generator or None); the draws are
        differentiable in the dataset and the bandwidth (the reparameterization)."""
        size = int(self.neff) if size is None else int(size)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        w = np.asarray(lax.stop_gradient(self.weights)) if not isinstance(self.weights, Tracer) \
            else None
        if w is None:
            raise FxadValueError("gaussian_kde.resample: the weights must be concrete (the "
                                 "choice of data points is not differentiable)")
        idx = rng.choice(self.n, size=size, p=w)
        noise = rng.standard_normal((self.d, size))
        l = cholesky(self.covariance, lower=True)
        return lax.add(self.dataset[:, idx], fnp.matmul(l, noise))


def _flatten(k):
    return (k.dataset, k.weights, k.factor), None


def _unflatten(_, children):
    dataset, weights, factor = children
    k = gaussian_kde.__new__(gaussian_kde)
    k.dataset, k.weights = dataset, weights
    k.d, k.n = fnp.shape(dataset)
    k.neff = lax.div(1.0, fnp.sum(lax.mul(weights, weights)))
    k._bw = factor
    k.covariance_factor = lambda: k._bw
    k._compute_covariance()
    return k


register_pytree_node(gaussian_kde, _flatten, _unflatten)

__all__ = ["gaussian_kde"]

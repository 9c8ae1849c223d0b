"""multivariate_normal, dirichlet, multinomial: log densities from one Cholesky factor
(multivariate_normal), or sums of log-gamma terms, with SciPy's shape conventions."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as fnp
from ...errors import FxadValueError
from ...rules.special.incomplete import gammaln
from ..linalg import cholesky, eigh, solve_triangular
from ._common import Distribution, f, where, xlogy0

_LOG_2PI = float(np.log(2 * np.pi))


def _squeeze_output(out):
    """SciPy's _squeeze_output: every size-1 axis dropped."""
    return fnp.squeeze(out) if any(d == 1 for d in fnp.shape(out)) else out


def _mvn_params(mean, cov):
    """(mean (d,), cov as 'scalar' / 'diag' / 'full' and its array, d), as SciPy infers them."""
    cov = f(cov)
    cshape = fnp.shape(cov)
    if mean is not None:
        mean = f(mean)
        if len(fnp.shape(mean)) > 1:
            raise FxadValueError(f"multivariate_normal: mean must be 1-d, got shape "
                                 f"{fnp.shape(mean)}")
        d = fnp.shape(mean)[0] if fnp.shape(mean) else 1
    else:
        d = cshape[0] if cshape else 1
    if mean is None or not fnp.shape(mean):
        mean = fnp.broadcast_to(fnp.zeros(()) if mean is None else mean, (d,))
    if len(cshape) == 0:
        kind = "scalar"
    elif len(cshape) == 1:
        kind = "diag"
    elif len(cshape) == 2:
        kind = "full"
    else:
        raise FxadValueError(f"multivariate_normal: cov must be at most 2-d, got {cshape}")
    if kind != "scalar" and cshape[0] != d or kind == "full" and cshape != (d, d):
        raise FxadValueError(f"multivariate_normal: mean has {d} components but cov has shape "
                             f"{cshape}")
    return mean, kind, cov, d


def _quantiles(x, d):
    """SciPy's _process_quantiles: a scalar or 1-d x is one point (or, for d = 1, a list of
    points); otherwise the last axis holds the components."""
    x = f(x)
    nd = len(fnp.shape(x))
    if nd == 0:
        x = fnp.reshape(x, (1, 1))
    elif nd == 1:
        x = fnp.reshape(x, (-1, 1) if d == 1 else (1, -1))
    if fnp.shape(x)[-1] != d:
        raise FxadValueError(f"multivariate_normal: x has {fnp.shape(x)[-1]} components, the "
                             f"distribution {d}")
    return x


def _mvn_logpdf(x, mean=None, cov=1, allow_singular=False):
    """The log density of the multivariate normal N(mean, cov) at the points x (..., d), as
    `scipy.stats.multivariate_normal.logpdf`: cov a scalar, a diagonal (d,) or a matrix (d, d);
    `allow_singular` uses the pseudo-inverse and pseudo-determinant (-inf off the support).

    Differentiable in x, mean and cov (through the Cholesky factor, or eigh when singular)."""
    mean, kind, cov, d = _mvn_params(mean, cov)
    dev = lax.sub(_quantiles(x, d), mean)
    if kind in ("scalar", "diag"):
        var = fnp.broadcast_to(cov, (d,))
        maha = fnp.sum(lax.div(lax.mul(dev, dev), var), axis=-1)
        logdet = fnp.sum(lax.log(var))
        out = lax.mul(lax.add(lax.add(maha, logdet), d * _LOG_2PI), -0.5)
    elif allow_singular:
        out = _mvn_logpdf_pinv(dev, cov, d)
    else:
        l = cholesky(cov, lower=True)
        z = solve_triangular(l, fnp.swapaxes(fnp.reshape(dev, (-1, d)), 0, 1), lower=True)
        maha = fnp.reshape(fnp.sum(lax.mul(z, z), axis=0), fnp.shape(dev)[:-1])
        logdet = lax.mul(fnp.sum(lax.log(fnp.diagonal(l))), 2.0)
        out = lax.mul(lax.add(lax.add(maha, logdet), d * _LOG_2PI), -0.5)
    return _squeeze_output(out)


def _mvn_logpdf_pinv(dev, cov, d):
    """A possibly singular covariance (SciPy's allow_singular): the pseudo-inverse and
    pseudo-determinant from eigh, eigenvalues below SciPy's cutoff dropped; points off the
    support (with a component in the null space) get -inf."""
    s, u = eigh(cov)
    smax = fnp.max(lax.abs(s))
    keep = lax.gt(s, lax.mul(smax, 1e6 * np.finfo(np.float64).eps))
    s_safe = where(keep, s, 1.0)
    proj = fnp.matmul(dev, u)
    maha = fnp.sum(where(keep, lax.div(lax.mul(proj, proj), s_safe), 0.0), axis=-1)
    rank = fnp.sum(lax.convert_element_type(keep, np.float64))
    logdet = fnp.sum(where(keep, lax.log(s_safe), 0.0))
    off = fnp.sum(where(keep, 0.0, lax.mul(proj, proj)), axis=-1)
    out = lax.mul(lax.add(lax.add(maha, logdet), lax.mul(rank, _LOG_2PI)), -0.5)
    scale = lax.add(fnp.sum(lax.mul(dev, dev), axis=-1), 1.0)
    return where(lax.gt(off, lax.mul(scale, 1e-10)), -np.inf, out)


def _mvn_entropy(mean=None, cov=1):
    """SciPy's: (r log(2 pi e) + log pdet cov) / 2, with r the rank and pdet the product of
    the eigenvalues above SciPy's cutoff (a singular covariance is allowed, as in SciPy)."""
    _, kind, cov, d = _mvn_params(mean, cov)
    if kind in ("scalar", "diag"):
        logdet, rank = fnp.sum(lax.log(fnp.broadcast_to(cov, (d,)))), d
    else:
        s = eigh(cov)[0]
        keep = lax.gt(s, lax.mul(fnp.max(lax.abs(s)), 1e6 * np.finfo(np.float64).eps))
        logdet = fnp.sum(where(keep, lax.log(where(keep, s, 1.0)), 0.0))
        rank = fnp.sum(lax.convert_element_type(keep, np.float64))
    return lax.mul(lax.add(lax.mul(rank, _LOG_2PI + 1.0), logdet), 0.5)


def _mvn_pdf(x, mean=None, cov=1, allow_singular=False):
    """The density of N(mean, cov) at x: exp of `logpdf` (its arguments and derivatives)."""
    return lax.exp(_mvn_logpdf(x, mean, cov, allow_singular))


multivariate_normal = Distribution("multivariate_normal", {
    "logpdf": _mvn_logpdf, "pdf": _mvn_pdf, "entropy": _mvn_entropy})


def _dirichlet_logpdf(x, alpha):
    """The log density of the Dirichlet distribution with concentrations alpha (k,), as
    `scipy.stats.dirichlet.logpdf`; differentiable in x and alpha.

    x: (k, ...) or (k-1, ...) points along the first axis (SciPy's layout); outside the
    open simplex the log density is -inf (SciPy raises instead; so does JAX not)."""
    alpha = f(alpha)
    x = f(x)
    k = fnp.shape(alpha)[0]
    if len(fnp.shape(alpha)) != 1:
        raise FxadValueError("dirichlet: alpha must be 1-d")
    if fnp.shape(x)[0] == k - 1:
        x = fnp.concatenate([x, lax.sub(1.0, fnp.sum(x, axis=0, keepdims=True))], axis=0)
    if fnp.shape(x)[0] != k:
        raise FxadValueError(f"dirichlet: x must have {k} or {k - 1} entries along its first "
                             f"axis, got shape {fnp.shape(x)}")
    a = fnp.reshape(alpha, (k,) + (1,) * (len(fnp.shape(x)) - 1))
    inside = lax.logical_and(fnp.all(lax.ge(x, 0), axis=0),
                             lax.lt(lax.abs(lax.sub(fnp.sum(x, axis=0), 1.0)), 1e-9))
    xs = where(inside, x, 1.0 / k)
    norm = lax.sub(fnp.sum(gammaln(alpha)), gammaln(fnp.sum(alpha)))
    out = lax.sub(fnp.sum(xlogy0(lax.sub(a, 1.0), xs), axis=0), norm)
    valid = fnp.all(lax.gt(alpha, 0))
    return where(valid, where(inside, out, -np.inf), np.nan)


def _dirichlet_pdf(x, alpha):
    """The Dirichlet density at x: exp of `logpdf` (its arguments and derivatives)."""
    return lax.exp(_dirichlet_logpdf(x, alpha))


dirichlet = Distribution("dirichlet", {"logpdf": _dirichlet_logpdf, "pdf": _dirichlet_pdf})


def _multinomial_logpmf(x, n, p):
    """The log probability of the counts x among n trials with probabilities p, as
    `scipy.stats.multinomial.logpmf`; differentiable in p (and, through the log-gamma
    function, in n and x; the value is -inf off the integer points).

    x, p: (..., k); n: (...). -inf unless x are non-negative integers summing to n. p is
    used as given (SciPy replaces its last entry by 1 - sum of the others)."""
    x, n, p = f(x), f(n), f(p)
    total = fnp.sum(x, axis=-1)
    ok = lax.logical_and(fnp.all(lax.logical_and(lax.ge(x, 0), lax.eq(x, lax.floor(x))),
                                 axis=-1), lax.eq(total, n))
    out = lax.add(lax.sub(gammaln(lax.add(n, 1.0)), fnp.sum(gammaln(lax.add(x, 1.0)), axis=-1)),
                  fnp.sum(xlogy0(x, p), axis=-1))
    valid = lax.logical_and(fnp.all(lax.logical_and(lax.ge(p, 0), lax.le(p, 1)), axis=-1),
                            lax.ge(n, 0))
    return where(valid, where(ok, out, -np.inf), np.nan)


def _multinomial_pmf(x, n, p):
    """The probability of the counts x: exp of `logpmf` (its arguments and derivatives)."""
    return lax.exp(_multinomial_logpmf(x, n, p))


multinomial = Distribution("multinomial", {"logpmf": _multinomial_logpmf,
                                           "pmf": _multinomial_pmf})

__all__ = ["multivariate_normal", "dirichlet", "multinomial"]

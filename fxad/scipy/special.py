"""scipy.special's names and signatures, differentiable in every argument (the rules are in
fxad/rules/special/; notes/09_scipy_stats_special.md). logsumexp with SciPy's b= and
return_sign= is in _logsumexp.py."""
from __future__ import annotations

import sys

import numpy as np
import scipy.special as _sc

from .. import lax
from ..core import Tracer
from ..errors import FxadTypeError, FxadValueError
from ..lax import logistic as expit  # noqa: F401
from ..numpy.methods import register_counterparts
from ..rules.special.basic import (  # noqa: F401
    digamma, entr, erf, erfc, erfcinv, erfcx, erfinv, gamma, gammaln, log_ndtr, logit, ndtr,
    ndtri, polygamma as _polygamma, rgamma, xlog1py, xlogy)
from ..rules.special.bessel import bessel_i, bessel_ie, bessel_j, bessel_k, bessel_ke, bessel_y
from ..rules.special.hypergeometric import (  # noqa: F401
    boxcox, boxcox1p, exprel_d, hyp1f1, hyp2f1, riemann_zeta, sph_harm_y as _sph_harm_y,
    zeta as _hurwitz_zeta)
from ..rules.special.incomplete import (  # noqa: F401
    beta, betainc, betaincinv, betaln, gammainc, gammaincc, gammainccinv, gammaincinv, stdtr,
    stdtrit)
from ..rules.special.integrals import (  # noqa: F401
    binom, ci as _ci, dawsn, exp1, expi, expn, fresnel_c as _fresnel_c,
    fresnel_s as _fresnel_s, gammasgn, kl_div, loggamma, ndtri_exp, owens_t, poch, rel_entr,
    si as _si, spence, wofz)
from ._logsumexp import as_float, log_softmax, logsumexp, shape, softmax  # noqa: F401


def polygamma(n, x):
    """The n-th derivative of digamma at x: SciPy's argument order (n first), n a concrete
    integer (it is a parameter of the primitive)."""
    if np.ndim(n) or int(n) != n:
        raise FxadValueError(f"polygamma: the order n must be one integer, got {n!r}")
    return _polygamma(x, int(n))


def _static_order(name, v):
    """A Bessel order: a concrete real number (it selects SciPy's function)."""
    if isinstance(v, Tracer) or np.ndim(v) != 0:
        raise FxadTypeError(f"{name}: the order v must be a concrete scalar (got "
                            f"{type(v).__name__} of shape {np.shape(v)}); loop over orders, "
                            "or use a Python number")
    return float(v)


def i0(x):
    """The modified Bessel function of the first kind of order 0, as `scipy.special.i0`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode."""
    return bessel_i(x, 0)


def i0e(x):
    """exp(-|x|) i0(x), without overflow, as `scipy.special.i0e`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode."""
    return bessel_ie(x, 0)


def i1(x):
    """The modified Bessel function of the first kind of order 1, as `scipy.special.i1`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode."""
    return bessel_i(x, 1)


def i1e(x):
    """exp(-|x|) i1(x), without overflow, as `scipy.special.i1e`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode."""
    return bessel_ie(x, 1)


def _promoted(v, x):
    """x in the float dtype SciPy's ufunc computes (v, x) in: an order given as a NumPy value
    takes part in the promotion (a float32 order with a Python float x gives float32)."""
    if type(v) in (int, float) or isinstance(v, Tracer):  # (a traced order is refused next)
        return x
    xd = x if type(x) in (int, float, bool) else x.aval.sample() if isinstance(x, Tracer) \
        else np.asarray(x).dtype  # (a traced Python scalar's sample stays a weak Python number)
    dt = np.result_type(np.asarray(v).dtype, xd)
    return lax.convert_element_type(x, dt) if dt.kind == "f" else x


def iv(v, x):
    """The modified Bessel function of the first kind of real order v, as `scipy.special.iv`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode in x
    (not in the order v)."""
    return bessel_i(_promoted(v, x), _static_order("iv", v))


def ive(v, x):
    """exp(-|x|) iv(v, x), without overflow, as `scipy.special.ive`, elementwise with
    broadcasting; differentiable to any order in forward and reverse mode in x (not in v)."""
    return bessel_ie(_promoted(v, x), _static_order("ive", v))


def jv(v, x):
    """The Bessel function of the first kind of real order v (alias `jn`), as `scipy.special.jv`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode in x
    (not in the order v)."""
    return bessel_j(_promoted(v, x), _static_order("jv", v))


def j0(x):
    """The Bessel function of the first kind of order 0, as `scipy.special.j0`, elementwise with
    broadcasting; differentiable to any order in forward and reverse mode."""
    return bessel_j(x, 0)


def j1(x):
    """The Bessel function of the first kind of order 1, as `scipy.special.j1`, elementwise with
    broadcasting; differentiable to any order in forward and reverse mode."""
    return bessel_j(x, 1)


jn = jv  # SciPy's integer-order name for jv (the same ufunc loops)


def y0(x):
    """The Bessel function of the second kind of order 0, as `scipy.special.y0`, elementwise with
    broadcasting; differentiable to any order in forward and reverse mode for x > 0."""
    return bessel_y(x, 0)


def y1(x):
    """The Bessel function of the second kind of order 1, as `scipy.special.y1`, elementwise with
    broadcasting; differentiable to any order in forward and reverse mode for x > 0."""
    return bessel_y(x, 1)


def _integer_order(n, x):
    """x as SciPy's yn/kn compute it: an integer order selects their (long, double) loop, so
    a float32 x gives float64; a float order keeps the float loops (and is truncated)."""
    if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
        x = as_float(x)
        return lax.convert_element_type(x, np.float64) if \
            np.dtype(x.aval.dtype if isinstance(x, Tracer) else np.asarray(x).dtype) \
            .kind == "f" else x
    return _promoted(n, x)


def yn(n, x):
    """Y_n(x), SciPy's integer-order function (a non-integer n is truncated, as SciPy does)."""
    return bessel_y(_integer_order(n, x), _static_order("yn", n), integer=True)


def yv(v, x):
    """The Bessel function of the second kind of real order v, as `scipy.special.yv`, elementwise
    with broadcasting; differentiable to any order in forward and reverse mode in x (not in v)."""
    return bessel_y(_promoted(v, x), _static_order("yv", v))


def k0(x):
    """The modified Bessel function of the second kind of order 0, as `scipy.special.k0`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode for
    x > 0."""
    return bessel_k(x, 0)


def k0e(x):
    """exp(x) k0(x), without underflow, as `scipy.special.k0e`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode."""
    return bessel_ke(x, 0)


def k1(x):
    """The modified Bessel function of the second kind of order 1, as `scipy.special.k1`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode for
    x > 0."""
    return bessel_k(x, 1)


def k1e(x):
    """exp(x) k1(x), without underflow, as `scipy.special.k1e`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode."""
    return bessel_ke(x, 1)


def kn(n, x):
    """K_n(x), SciPy's integer-order function (a non-integer n is truncated, as SciPy does)."""
    return bessel_k(_integer_order(n, x), _static_order("kn", n), integer=True)


def kv(v, x):
    """The modified Bessel function of the second kind of real order v, as `scipy.special.kv`,
    elementwise with broadcasting; differentiable to any order in forward and reverse mode in x
    (not in v)."""
    return bessel_k(_promoted(v, x), _static_order("kv", v))


def kve(v, x):
    """exp(x) kv(v, x), without underflow, as `scipy.special.kve`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode in x (not in v)."""
    return bessel_ke(_promoted(v, x), _static_order("kve", v))


# NumPy's functions under SciPy's names, computed in the dtype SciPy's loops use (float16 in
# float32, integers in float64)
def _in_scipys_dtype(ufunc, x):
    dt = x.aval.dtype if isinstance(x, Tracer) else np.asarray(x).dtype
    with np.errstate(all="ignore"):
        want = ufunc(np.ones((), dt)).dtype
    return lax.convert_element_type(x, want) if want != dt else x


def log1p(x):
    """log(1 + x), accurate for small x, as `scipy.special.log1p`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode."""
    return lax.log1p(_in_scipys_dtype(_sc.log1p, x))


def expm1(x):
    """exp(x) - 1, accurate for small x, as `scipy.special.expm1`, elementwise with broadcasting;
    differentiable to any order in forward and reverse mode."""
    return lax.expm1(_in_scipys_dtype(_sc.expm1, x))


def exp2(x):
    """2 ** x, as `scipy.special.exp2`, elementwise with broadcasting; differentiable to any order
    in forward and reverse mode."""
    return lax.exp2(_in_scipys_dtype(_sc.exp2, x))


def exp10(x):
    """10 ** x, as `scipy.special.exp10`, elementwise with broadcasting; differentiable to any
    order in forward and reverse mode."""
    return lax.pow(10.0, _in_scipys_dtype(_sc.exp10, x))


def cbrt(x):
    """The real cube root, as `scipy.special.cbrt`, elementwise with broadcasting; differentiable
    to any order in forward and reverse mode."""
    return lax.cbrt(_in_scipys_dtype(_sc.cbrt, x))


def bessel_jn(z, *, v=0, n_iter=50):
    """J_0(z), ..., J_v(z) stacked along a new first axis (JAX's signature; n_iter, the
    length of JAX's recurrence, is accepted and unused: SciPy computes each order)."""
    v = int(_static_order("bessel_jn", v))
    if v < 0:
        raise FxadValueError(f"bessel_jn: v must be >= 0, got {v}")
    z = as_float(z)
    rows = [lax.reshape(bessel_j(z, k), (1,) + shape(z)) for k in range(v + 1)]
    return lax.concatenate(rows, 0)


def zeta(x, q=None):
    """Hurwitz ζ(x, q); with q None, Riemann's ζ(x) (as SciPy)."""
    return riemann_zeta(x) if q is None else _hurwitz_zeta(x, q)


def exprel(x):
    """(exp(x) - 1) / x, 1 at 0, accurate near 0, as `scipy.special.exprel`, elementwise with
    broadcasting; differentiable to any order in forward and reverse mode."""
    return exprel_d(x, 0)


psi = digamma  # SciPy's other name of the digamma ufunc


def fresnel(x):
    """(S(x), C(x))."""
    return _fresnel_s(x), _fresnel_c(x)


def sici(x):
    """(Si(x), Ci(x))."""
    return _si(x), _ci(x)


def sph_harm_y(n, m, theta, phi, *, diff_n=0):
    """The spherical harmonic Y_n^m(theta, phi) (theta the polar angle), as
    `scipy.special.sph_harm_y` (SciPy 1.15's argument order; `diff_n` must be 0);
    differentiable to any order in forward and reverse mode in theta and phi."""
    if diff_n:
        raise FxadValueError("sph_harm_y: diff_n is not supported; differentiate with fxad "
                             "(grad/jacfwd in theta and phi) instead")
    return _sph_harm_y(n, m, theta, phi)


def multigammaln(a, d):
    """log of the multivariate gamma function: d(d-1)/4 log π + Σ_j gammaln(a - (j-1)/2)."""
    d = int(d)
    if d < 1:
        raise FxadValueError(f"multigammaln: d must be a positive integer, got {d}")
    if not isinstance(a, Tracer) and np.any(np.asarray(a) <= 0.5 * (d - 1)):
        raise FxadValueError(f"multigammaln: condition a > (d-1)/2 = {0.5 * (d - 1)} not met")
    out = gammaln(a)
    for j in range(2, d + 1):
        out = lax.add(out, gammaln(lax.sub(a, 0.5 * (j - 1))))
    return lax.add(out, 0.25 * d * (d - 1) * float(np.log(np.pi)))


def _concrete(name, *args):
    if any(isinstance(a, Tracer) for a in args):
        raise FxadTypeError(f"{name}(exact=True) counts in integers: it needs concrete "
                            "arguments; use exact=False for a differentiable value")


def factorial(n, exact=False):
    """Γ(n + 1) for n >= 0, 0 below (SciPy's convention)."""
    if exact:
        _concrete("factorial", n)
        return _sc.factorial(n, exact=True)
    ok = lax.ge(n, 0)
    safe = lax.select(ok, n, lax.mul(n, 0))  # no Γ pole in the unused branch
    return lax.select(ok, gamma(lax.add(safe, 1.0)), 0.0)


def comb(N, k, *, exact=False, repetition=False):
    """N choose k as SciPy computes it: without repetition 0 unless 0 <= k <= N; with it,
    binom(N + k - 1, k), and 1 for k = 0, N >= 0."""
    if exact:
        _concrete("comb", N, k)
        return _sc.comb(N, k, exact=True, repetition=repetition)
    if repetition:
        val = binom(lax.sub(lax.add(N, k), 1), k)
        return lax.select(lax.logical_and(lax.eq(k, 0), lax.ge(N, 0)), 1.0, val)
    ok = lax.logical_and(lax.logical_and(lax.le(k, N), lax.ge(N, 0)), lax.ge(k, 0))
    return lax.select(ok, binom(N, k), 0.0)


def bernoulli(n):
    """The Bernoulli numbers B_0 ... B_n (n a concrete integer; nothing to differentiate)."""
    if isinstance(n, Tracer):
        raise FxadTypeError("bernoulli(n): n must be a concrete integer")
    return _sc.bernoulli(n)


__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "expit", "gamma", "gammaln", "log_ndtr",
           "log_softmax", "logit", "logsumexp", "ndtr", "ndtri", "polygamma", "softmax", "xlog1py",
           "xlogy", "beta", "betaln", "betainc", "betaincinv", "gammainc", "gammaincc", "gammaincinv",
           "gammainccinv", "stdtr", "stdtrit", "i0", "i0e", "i1", "i1e", "iv", "ive", "jv", "j0", "j1",
           "bessel_jn", "zeta", "exprel", "psi", "fresnel", "sici", "sph_harm_y", "multigammaln",
           "factorial", "comb", "bernoulli", "boxcox", "boxcox1p", "hyp1f1", "hyp2f1", "binom",
           "dawsn", "erfcx", "exp1", "expi", "expn", "gammasgn", "kl_div", "loggamma", "owens_t",
           "poch", "rel_entr", "spence", "wofz", "jn", "y0", "y1", "yn", "yv", "k0", "k0e", "k1",
           "k1e", "kn", "kv", "kve", "erfcinv", "rgamma", "ndtri_exp", "log1p", "expm1", "exp2",
           "exp10", "cbrt"]

# NumPy dispatch (fxad/numpy/methods.py): scipy.special's ufuncs applied to traced values
register_counterparts(**{"scipy.special": sys.modules[__name__]})

"""What every distribution shares: SciPy's calling conventions (shape parameters positional,
then loc and scale), broadcasting in every argument, NaN for invalid parameters, SciPy's values
outside the support, and the double-where that keeps NaN out of derivatives.

The double-where: a formula evaluated where it does not apply (log of a negative x, a scale
of 0) may be NaN or infinite there, and `select` alone would multiply that branch's derivative
by 0, and 0 * inf = NaN. So each formula is evaluated on *safe* arguments (the real ones where
it applies, a harmless point elsewhere), and `select` then picks SciPy's value for the points
outside. Derivatives at those points are 0 (the value there is a constant), never NaN.
"""
from __future__ import annotations

import sys
import types

import numpy as np

from ... import lax
from ...core import Tracer, get_aval
from ...numpy.linalg import as_float
from ...rules.special.basic import xlog1py, xlogy

_INF = np.inf


def f(x):
    """x as a float array, except that a Python number stays a (weak) Python float, so
    norm.cdf(x32, scale=2.0) is float32 as in JAX rather than promoted to float64."""
    if type(x) in (int, float):  # (not np.float64, a float subclass that is not weak)
        return float(x)
    return as_float(x)


def where(c, a, b):
    return lax.select(c, a, b)


def typed(values):
    """`values` with their Python floats made arrays of the dtype they all promote to (Python
    floats weakly, as NumPy 2 and JAX do)."""
    dt = np.result_type(*[v if type(v) is float else get_aval(v).dtype for v in values])
    return [np.asarray(v, dt) if type(v) is float else v for v in values]


def safe(cond, x, fallback):
    """x where cond holds, `fallback` elsewhere (the argument a formula is evaluated on)."""
    return lax.select(cond, x, fallback)


def all_of(*conds):
    out = conds[0]
    for c in conds[1:]:
        out = lax.logical_and(out, c)
    return out


_OUTSIDE = {  # SciPy's value below / above the support
    "logpdf": (-_INF, -_INF), "pdf": (0.0, 0.0), "cdf": (0.0, 1.0), "logcdf": (-_INF, 0.0),
    "sf": (1.0, 0.0), "logsf": (0.0, -_INF),
    "logpmf": (-_INF, -_INF), "pmf": (0.0, 0.0)}


_DENSITIES = ("logpdf", "pdf", "logpmf", "pmf")


def all_true(mask):
    """A mask known now (not traced) to hold everywhere: its select can be skipped. Masks on
    data and constant parameters are concrete even under grad (comparisons carry no
    tangent), so the common case pays for no selects at all."""
    return not isinstance(mask, Tracer) and bool(np.all(mask))


def xlogy0(c, y):
    """SciPy's xlogy(c, y) (c log y, 0 where c = 0), whose derivative in y at y = 0 is taken as
    0 rather than c/y = 0/0 (the end of a support: gamma's a = 1 at x = 0 has the finite
    derivative of its other terms there, not NaN); in c it is xlogy's own."""
    pos = lax.gt(y, 0)
    if all_true(pos):
        return xlogy(c, y)
    return where(pos, xlogy(c, where(pos, y, 1.0)), xlogy(c, lax.stop_gradient(y)))


def xlog1my0(c, z):
    """xlog1py(c, -z) = c log(1 - z), likewise at z = 1."""
    lt1 = lax.lt(z, 1)
    if all_true(lt1):
        return xlog1py(c, lax.neg(z))
    return where(lt1, xlog1py(c, lax.neg(where(lt1, z, 0.0))),
                 xlog1py(c, lax.neg(lax.stop_gradient(z))))


def _unbounded(lo, hi):
    return isinstance(lo, float) and isinstance(hi, float) and lo == -_INF and hi == _INF


def _finish(kind, val, inside, below, ok, x):
    """SciPy's value outside the support (below: the lower end's) and NaN for invalid
    parameters or a NaN argument; each select only where its mask is not known to hold."""
    if not all_true(inside):
        lo_v, hi_v = _OUTSIDE[kind]
        if lo_v != hi_v:  # two Python floats would select a float64 array: keep val's dtype
            dt = get_aval(val).dtype
            lo_v = where(below, np.asarray(lo_v, dt), np.asarray(hi_v, dt))
        val = where(inside, val, lo_v)
    good = lax.logical_not(lax.isnan(x))
    good = ok if all_true(good) else lax.logical_and(ok, good)
    return val if all_true(good) else where(good, val, np.nan)


def _split_args(name, shapes, args, names, given, defaults):
    """SciPy's calling convention: shape parameters, then loc (and scale), positionally or by
    keyword. Returns (shape arguments, [loc, scale])."""
    n = len(shapes)
    if not n <= len(args) <= n + len(names):
        raise TypeError(f"{name} takes {n} shape parameter(s) ({', '.join(shapes) or 'none'}) "
                        f"then {' and '.join(names)}; got {len(args)} positional argument(s)")
    extra = args[n:]
    out = []
    for k, (nm, g, d) in enumerate(zip(names, given, defaults)):
        if k < len(extra):
            if g is not None:
                raise TypeError(f"{name}: {nm} given both positionally and by keyword")
            out.append(extra[k])
        else:
            out.append(d if g is None else g)
    return args[:n], out


_WHAT = {
    "logpdf": "The log of the probability density at x",
    "pdf": "The probability density at x",
    "logpmf": "The log of the probability mass at k",
    "pmf": "The probability mass at k",
    "cdf": "The cumulative distribution function, P(X <= x)",
    "logcdf": "log P(X <= x), accurate far into the lower tail (not log of a rounded cdf)",
    "sf": "The survival function P(X > x) = 1 - cdf, without cancellation in the upper tail",
    "logsf": "log P(X > x), accurate far into the upper tail",
    "ppf": "The quantile function (the inverse of cdf) at the probability q",
    "isf": "The inverse of the survival function at the probability q",
    "entropy": "The differential entropy",
}


def _documented(name, methods):
    """methods, each with the docstring of a univariate family's function (`_WHAT`)."""
    for kind, fn in methods.items():
        fn.__doc__ = _method_doc(name, kind)
    return methods


def _method_doc(name, kind):
    return (f"{_WHAT.get(kind, kind)}, as `scipy.stats.{name}.{kind}`: SciPy's signature (shape "
            "parameters positionally, then `loc` and, for a continuous distribution, `scale`), "
            "broadcasting in every argument, SciPy's value outside the support and NaN for "
            "invalid parameters.\n\n"
            "Differentiable (forward and reverse mode, any order) in the point and in every "
            "real parameter; outside the support the derivative is 0, never NaN. Under `jit` "
            "and `vmap` as any fxad function.")


class Distribution:
    """One distribution's functions (logpdf, cdf, ...) with SciPy's signatures, as built by
    `continuous`/`discrete`; each is published as a module, fxad/scipy/stats/<name>.py."""

    def __init__(self, name, methods):
        self.name = name
        for k, fn in methods.items():
            setattr(self, k, fn)
        self._methods = sorted(methods)

    def __repr__(self):
        return f"<fxad.scipy.stats.{self.name}: {', '.join(self._methods)}>"


class Frozen:
    """`norm(loc, scale)`: SciPy's frozen distribution, its parameters given once;
    `.logpdf(x)` is `norm.logpdf(x, loc, scale)`."""

    def __init__(self, dist, args, kwds):
        self.dist, self.args, self.kwds = dist, args, kwds

    def __getattr__(self, kind):
        fn = getattr(self.dist, kind) if kind in self.dist._methods else None
        if fn is None:
            raise AttributeError(f"{self.dist.name} has no {kind!r}; it has "
                                 f"{', '.join(self.dist._methods)}")
        return lambda x: fn(x, *self.args, **self.kwds)

    def __repr__(self):
        return f"<frozen fxad.scipy.stats.{self.dist.name}{self.args or ''}>"


class DistributionModule(types.ModuleType):
    """A distribution's module (`import fxad.scipy.stats.norm as norm` works, as in JAX),
    callable to freeze it as SciPy's `norm(loc, scale)` is."""

    def __call__(self, *args, **kwds):
        return Frozen(self._distribution, args, kwds)


def publish(module_name, dist):
    """Make the module `module_name` the face of `dist`: its functions as module attributes
    (the module assigns them itself, so they can be read in its source) and callable."""
    module = sys.modules[module_name]
    missing = [k for k in dist._methods if vars(module).get(k) is not getattr(dist, k)]
    if missing:  # a function added to the distribution must be named in its module too
        raise ImportError(f"{module_name} does not assign {', '.join(missing)}")
    module._distribution = dist
    module.__all__ = list(dist._methods)
    module.__class__ = DistributionModule


def continuous(name, shapes, std, support=lambda *s: (-_INF, _INF), valid=None, safe_z=None,
               safe_shapes=None):
    """A location-scale family from its standardized functions `std[name](z, *shapes)`
    (logpdf, cdf, logcdf, sf, logsf, ppf, isf; pdf defaults to exp(logpdf)).
    `support(*shapes)` gives the standardized support [lo, hi] (closed: the formulas hold at
    the ends), `valid(*shapes)` the valid shape parameters, `safe_z(*shapes)` a point inside
    the support and `safe_shapes` valid shape values (the double-where's fallbacks)."""
    n = len(shapes)
    safe_shapes = safe_shapes or (1.0,) * n

    def prepare(args, loc, scale, x):
        args, (loc, scale) = _split_args(name, shapes, args, ("loc", "scale"), (loc, scale),
                                         (0.0, 1.0))
        # Python numbers become arrays of the data's dtype: an operation on two of them would
        # be float64 eagerly (fxad's eager arrays carry no weak type), promoting float32 data
        *sh, loc, scale = typed([x, *map(f, args), f(loc), f(scale)])[1:]
        ok = lax.logical_and(lax.gt(scale, 0), lax.logical_not(lax.isnan(loc)))
        if valid is not None and n:
            ok = lax.logical_and(ok, valid(*sh))
        if all_true(ok):
            return ok, sh, loc, scale
        return ok, [safe(ok, s, d) for s, d in zip(sh, safe_shapes)], loc, safe(ok, scale, 1.0)

    def method(kind):
        fn = std.get(kind)
        if fn is None and kind == "pdf":
            fn = lambda z, *s: lax.exp(std["logpdf"](z, *s))  # noqa: E731

        def call(x, *args, loc=None, scale=None):
            x = f(x)
            ok, sh, loc, scale = prepare(args, loc, scale, x)
            lo, hi = support(*sh)
            finite = lax.isfinite(x)
            xs = x if all_true(finite) else safe(finite, x, 0.0)  # x = ±inf: no inf/inf
            z = lax.div(lax.sub(xs, loc), scale)
            if _unbounded(lo, hi):
                inside, below = finite, lax.lt(x, 0.0)  # outside: only x = ±inf (or NaN)
            else:
                if kind in _DENSITIES:
                    below, above = lax.lt(z, lo), lax.gt(z, hi)
                else:  # at an end of the support the CDF's value is known (0 or 1): taking it
                    # there keeps an infinite density at the end out of the derivatives
                    below, above = lax.le(z, lo), lax.ge(z, hi)
                inside = lax.logical_not(lax.logical_or(below, above))
                if xs is not x:  # x = ±inf is outside, at the end its sign says
                    inside = lax.logical_and(inside, finite)
                    below = where(finite, below, lax.lt(x, 0.0))
            val = fn(z if all_true(inside) else safe(inside, z, safe_z(*sh) if safe_z else 0.0),
                     *sh)
            if kind == "logpdf":
                val = lax.sub(val, lax.log(scale))
            elif kind == "pdf":
                val = lax.div(val, scale)
            return _finish(kind, val, inside, below, ok, x)
        call.__name__ = kind
        call.__qualname__ = f"{name}.{kind}"
        return call

    def quantile(kind):
        fn = std[kind]

        def call(q, *args, loc=None, scale=None):
            q = f(q)
            ok, sh, loc, scale = prepare(args, loc, scale, q)
            lo, hi = support(*sh)
            if kind == "isf":
                lo, hi = hi, lo
            interior = lax.logical_and(lax.gt(q, 0), lax.lt(q, 1))
            z = fn(safe(interior, q, 0.5), *sh)
            z = where(lax.eq(q, 0), lo, where(lax.eq(q, 1), hi, z))
            ok = all_of(ok, lax.ge(q, 0), lax.le(q, 1))
            return where(ok, lax.add(loc, lax.mul(scale, z)), np.nan)
        call.__name__ = kind
        call.__qualname__ = f"{name}.{kind}"
        return call

    methods = {}
    for kind in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        if kind in std or (kind == "pdf" and "logpdf" in std):
            methods[kind] = method(kind)
    for kind in ("ppf", "isf"):
        if kind in std:
            methods[kind] = quantile(kind)
    return Distribution(name, _documented(name, methods))


def discrete(name, shapes, std, support, valid=None, safe_k=None, safe_shapes=None):
    """A discrete family with a location: `std[name](k, *shapes)` for logpmf (on integer k
    inside the support), cdf/sf/logcdf/logsf (on floor(k) inside the support) and ppf.
    Non-integer k have pmf 0, as in SciPy."""
    n = len(shapes)
    safe_shapes = safe_shapes or (0.5,) * n

    def prepare(args, loc, k):
        args, (loc,) = _split_args(name, shapes, args, ("loc",), (loc,), (0.0,))
        *sh, loc = typed([k, *map(f, args), f(loc)])[1:]  # (as in continuous)
        ok = valid(*sh) if valid is not None else lax.eq(sh[0], sh[0])
        if not all_true(ok):
            sh = [safe(ok, s, d) for s, d in zip(sh, safe_shapes)]
        return ok, sh, loc

    def method(kind):
        fn = std.get(kind)
        if fn is None and kind == "pmf":
            fn = lambda k, *s: lax.exp(std["logpmf"](k, *s))  # noqa: E731
        mass = kind in ("logpmf", "pmf")

        def call(k, *args, loc=None):
            k = f(k)
            ok, sh, loc = prepare(args, loc, k)
            k = lax.sub(k, loc)
            kk = k if mass else lax.floor(k)
            lo, hi = support(*sh)
            # (the CDF at the support's top is 1: taken as "above", no formula needed there)
            below, above = lax.lt(kk, lo), (lax.gt if mass else lax.ge)(kk, hi)
            inside = lax.logical_not(lax.logical_or(below, above))
            if mass:  # a non-integer k has no mass
                integer = lax.eq(k, lax.floor(k))
                below = lax.logical_or(below, lax.logical_and(inside, lax.logical_not(integer)))
                inside = lax.logical_and(inside, integer)
            val = fn(kk if all_true(inside) else safe(inside, kk, safe_k(*sh) if safe_k else lo),
                     *sh)
            return _finish(kind, val, inside, below, ok, k)
        call.__name__ = kind
        call.__qualname__ = f"{name}.{kind}"
        return call

    methods = {kind: method(kind) for kind in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")
               if kind in std or (kind == "pmf" and "logpmf" in std)}
    if "ppf" in std:
        def ppf(q, *args, loc=None):
            q = f(q)
            ok, sh, loc = prepare(args, loc, q)
            lo, hi = support(*sh)
            interior = lax.logical_and(lax.gt(q, 0), lax.lt(q, 1))
            k = std["ppf"](safe(interior, q, 0.5), *sh)
            k = where(lax.eq(q, 0), lax.sub(lo, 1.0), where(lax.eq(q, 1), hi, k))
            ok = all_of(ok, lax.ge(q, 0), lax.le(q, 1))
            return where(ok, lax.add(k, loc), np.nan)
        ppf.__qualname__ = f"{name}.ppf"
        methods["ppf"] = ppf
    return Distribution(name, _documented(name, methods))


__all__ = ["Distribution", "Frozen", "DistributionModule", "publish", "continuous", "discrete",
           "f", "where", "safe", "all_of", "all_true",
           "xlogy0", "xlog1my0"]

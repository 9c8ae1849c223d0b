"""Order statistics, NaN-ignoring reductions and covariances, composed from primitives (so
every transformation handles them). Quantiles are gathers from a sort: the derivative flows
to the one or two order statistics each quantile interpolates between."""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from ..core import Tracer
from ..errors import FxadTypeError, FxadValueError
from ..rules.helpers import dtype_of, shape_of
from . import reductions as red
from .reductions import accept_sequences
from .indexing import take_along_axis
from .manipulation import atleast_2d, concatenate, diagonal, moveaxis, reshape
from .products import matmul
from .sorting import sort
from ._lists import stack_traced_lists

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _concrete_q(q, name):
    if isinstance(q, Tracer):
        raise FxadTypeError(f"{name}: q must be a concrete number or array (fxad "
                            "differentiates with respect to the data, not the levels)")
    q = np.asarray(q, dtype=np.float64)
    if np.any((q < 0) | (q > 1)) or np.any(np.isnan(q)):
        raise FxadValueError(f"{name}: quantiles must be in [0, 1] (percentiles in [0, 100])")
    return q


def _to_last(a, axis):
    """`a` with the reduced axes merged into one last axis, and the kept shape."""
    nd = len(shape_of(a))
    axes = red.normalize_axes(axis, nd)
    kept = [i for i in range(nd) if i not in axes]
    a = moveaxis(a, axes, tuple(range(nd - len(axes), nd))) if axes else a
    s = shape_of(a)
    kept_shape = tuple(s[:len(kept)])
    return reshape(a, kept_shape + (math.prod(map(int, s[len(kept):])),)), axes


def _prepare(name, a, q, axis, out):
    """The checked levels, and `a` as floats with the reduced axes merged into the last."""
    if out is not None:
        raise FxadTypeError(f"{name}: out= is not supported on traced values")
    q = _concrete_q(q, name)
    if dtype_of(a).kind == "c":
        raise FxadTypeError(f"{name}: a must be an array of real numbers")
    x, axes = _to_last(a, axis)
    if dtype_of(x).kind not in "fc":
        x = lax.convert_element_type(x, np.float64)
    return q, x, axes


def _lerp(below, above, frac):
    """NumPy's interpolation, from the nearer end: a quantile at an order statistic is exact."""
    d = lax.sub(above, below)
    return lax.select(lax.lt(frac, 0.5), lax.add(below, lax.mul(d, frac)),
                      lax.sub(above, lax.mul(d, lax.sub(1.0, frac))))


def _shaped(val, q, a, axes, keepdims):
    """(..., k) values per level -> q's shape first, then the kept (or kept-as-1) axes."""
    kept = shape_of(val)[:-1]
    if keepdims:
        kept = tuple(1 if i in axes else d for i, d in enumerate(shape_of(a)))
    return reshape(moveaxis(val, -1, 0), q.shape + tuple(kept))


def _percent(q, name):
    if isinstance(q, Tracer):
        _concrete_q(q, name)  # raises the same error as quantile
    return np.asarray(q, dtype=np.float64) / 100


@accept_sequences
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False):
    """np.quantile (methods linear, lower, higher, nearest, midpoint); NaN where a slice has
    a NaN, as in NumPy. The result's leading axes are q's."""
    if method not in _METHODS:
        raise FxadValueError(f"quantile: method {method!r} is not supported; use one of "
                             f"{', '.join(_METHODS)}")
    q, x, axes = _prepare("quantile", a, q, axis, out)
    n = shape_of(x)[-1]
    if n == 0:
        raise FxadValueError("quantile of an empty slice")
    s = sort(x, axis=-1)
    pos = q.ravel() * (n - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    frac = pos - lo
    if method == "lower":
        hi, frac = lo, np.zeros_like(frac)
    elif method == "higher":
        lo = hi = np.ceil(pos).astype(np.int64)
        frac = np.zeros_like(frac)
    elif method == "nearest":  # NumPy rounds half to even
        lo = hi = np.round(pos).astype(np.int64)
        frac = np.zeros_like(frac)
    elif method == "midpoint":  # NumPy's: the order statistic itself at a whole position
        whole = pos == lo
        hi, frac = np.where(whole, lo, hi), np.where(whole, 0.0, 0.5)
    if method in ("lower", "higher", "nearest") and dtype_of(a).kind in "iub":
        # an order statistic of integers is one of them: NumPy returns it in a's dtype
        # (exact past 2**53, where the float copy rounds)
        return _shaped(sort(_to_last(a, axis)[0], axis=-1)[..., lo], q, a, axes, keepdims)
    val = _lerp(s[..., lo], s[..., hi], frac.astype(dtype_of(s)))
    has_nan = red.max(lax.isnan(x), axis=-1, keepdims=True)
    val = lax.select(has_nan, np.nan, val)  # a constant: no NaN tangent to leak
    return _shaped(val, q, a, axes, keepdims)


@accept_sequences
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False):
    """The q-th percentiles (0-100) along `axis` with NumPy's `method`s, as NumPy's;
    differentiable to any order in a (through the sort); q must be concrete."""
    return quantile(a, _percent(q, "percentile"), axis, out, overwrite_input, method,
                    keepdims)


def _middle(s, lo, hi):
    """NumPy's median of sorted slices: the middle value, or the mean (a + b) / 2 of the two
    middle ones (the 0.5 quantile's lerp would give inf · 0 = NaN next to an inf)."""
    below, above = take_along_axis(s, lo, -1), take_along_axis(s, hi, -1)
    return lax.select(lax.eq(lo, hi), below, lax.div(lax.add(below, above), 2.0))


@accept_sequences
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along `axis`, as NumPy's (the mean of the two middle values for even sizes);
    differentiable to any order in a (through the sorting permutation)."""
    q, x, axes = _prepare("median", a, 0.5, axis, out)
    n = shape_of(x)[-1]
    if n == 0:
        raise FxadValueError("median of an empty slice")
    s = sort(x, axis=-1)
    val = _middle(s, np.array([(n - 1) // 2]), np.array([n // 2]))
    val = lax.select(red.max(lax.isnan(x), axis=-1, keepdims=True), np.nan, val)
    return _shaped(val, q, a, axes, keepdims)


@accept_sequences
def ptp(a, axis=None, keepdims=False):
    """max - min along `axis`, as NumPy's; differentiable to any order."""
    return lax.sub(red.max(a, axis, keepdims), red.min(a, axis, keepdims))


# --- NaN-ignoring reductions (the NaNs get the operation's identity) --------------------------

def _all_nan(a, axis, keepdims):
    return red.min(lax.isnan(a), axis, keepdims)


@accept_sequences
def nanmax(a, axis=None, keepdims=False):
    """max ignoring NaNs; NaN for an all-NaN slice (NumPy warns there)."""
    if dtype_of(a).kind not in "fc":  # no NaNs: NumPy's max, in a's dtype
        return red.max(a, axis, keepdims)
    m = red.max(lax.select(lax.isnan(a), -np.inf, a), axis, keepdims)
    return lax.select(_all_nan(a, axis, keepdims), np.nan, m)


@accept_sequences
def nanmin(a, axis=None, keepdims=False):
    """The smallest non-NaN element along `axis`, as NumPy's; differentiable to any order."""
    if dtype_of(a).kind not in "fc":
        return red.min(a, axis, keepdims)
    m = red.min(lax.select(lax.isnan(a), np.inf, a), axis, keepdims)
    return lax.select(_all_nan(a, axis, keepdims), np.nan, m)


@accept_sequences
def nanprod(a, axis=None, dtype=None, keepdims=False):
    """The product with NaNs taken as 1, as NumPy's; differentiable to any order."""
    return red.prod(red.nan_as(a, 1.0), axis, dtype, keepdims)


def _nancount(a, axis, keepdims, dtype):
    ok = lax.convert_element_type(lax.logical_not(lax.isnan(a)), dtype)
    return red.sum(ok, axis, keepdims=keepdims)


@accept_sequences
def nanvar(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """The variance of the non-NaN elements (`ddof` as NumPy's); differentiable to any order."""
    mean = red.nanmean(a, axis, dtype, keepdims=True)
    d = lax.select(lax.isnan(a), 0.0, lax.sub(a, mean))
    sq = lax.mul(d, lax.conj(d)) if dtype_of(d).kind == "c" else lax.mul(d, d)
    sq = lax.real(sq)
    if dtype is not None and dtype_of(sq).kind == np.dtype(dtype).kind:
        sq = lax.convert_element_type(sq, dtype)  # the squares summed in dtype, as NumPy's
    total = red.sum(sq, axis, keepdims=keepdims)
    return lax.div(total, lax.sub(_nancount(a, axis, keepdims, dtype_of(total)), ddof))


@accept_sequences
def nanstd(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """The standard deviation of the non-NaN elements (`ddof` as NumPy's); differentiable to any
    order."""
    v = nanvar(a, axis, dtype, ddof, keepdims)
    if math.prod(shape_of(a)[i] for i in red.normalize_axes(axis, len(shape_of(a)))) == 1:
        v = lax.stop_gradient(v)  # one value: its spread is 0 whatever it is (see std)
    return lax.sqrt(v)


@stack_traced_lists
def nancumsum(a, axis=None, dtype=None):
    """The running sum with NaNs taken as 0, as NumPy's; differentiable to any order."""
    return red.cumsum(red.nan_as(a, 0.0), axis, dtype)


@stack_traced_lists
def nancumprod(a, axis=None, dtype=None):
    """The running product with NaNs taken as 1, as NumPy's; differentiable to any order."""
    return red.cumprod(red.nan_as(a, 1.0), axis, dtype)


@stack_traced_lists
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False):
    """quantile of the non-NaN values of each slice (NaN for an all-NaN slice). NaNs sort
    last, so each slice's order statistics are its first `count` sorted values; the
    positions depend on the count, a traced integer, so this stages under jit and vmap."""
    if method != "linear":
        raise FxadValueError("fxad's nanquantile supports method='linear' only")
    q, x, axes = _prepare("nanquantile", a, q, axis, out)
    s = sort(x, axis=-1)
    count = red.sum(lax.convert_element_type(lax.logical_not(lax.isnan(x)), dtype_of(x)),
                    axis=-1, keepdims=True)                        # (..., 1)
    last = lax.max(lax.sub(count, 1.0), 0.0)
    pos = lax.mul(last, q.ravel().astype(dtype_of(x)))                # (..., k)
    lo = lax.floor(pos)
    frac = lax.stop_gradient(lax.sub(pos, lo))
    ilo = lax.convert_element_type(lo, np.intp)
    ihi = lax.convert_element_type(lax.min(lax.add(lo, 1.0), last), np.intp)
    val = _lerp(take_along_axis(s, ilo, -1), take_along_axis(s, ihi, -1), frac)
    val = lax.select(lax.eq(count, 0.0), np.nan, val)
    return _shaped(val, q, a, axes, keepdims)


@stack_traced_lists
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False):
    """percentile ignoring NaNs, as NumPy's; differentiable to any order in a."""
    return nanquantile(a, _percent(q, "nanpercentile"), axis, out, overwrite_input, method,
                       keepdims)


@stack_traced_lists
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median of the non-NaN values (NaNs sort last; the middle positions come from the
    traced count, so this stages); NaN for an all-NaN slice."""
    q, x, axes = _prepare("nanmedian", a, 0.5, axis, out)
    s = sort(x, axis=-1)
    count = red.sum(lax.convert_element_type(lax.logical_not(lax.isnan(x)), np.intp),
                    axis=-1, keepdims=True)
    lo = lax.max(lax.floor_divide(lax.sub(count, 1), 2), 0)
    val = _middle(s, lo, lax.max(lax.floor_divide(count, 2), 0))
    val = lax.select(lax.eq(count, 0), np.nan, val)
    return _shaped(val, q, a, axes, keepdims)


@stack_traced_lists
def nanargmax(a, axis=None, keepdims=False):
    """argmax ignoring NaNs, as NumPy's; an integer result, so not differentiable."""
    return red.argmax(red.nan_as(a, -np.inf), axis, keepdims)


@stack_traced_lists
def nanargmin(a, axis=None, keepdims=False):
    """argmin ignoring NaNs, as NumPy's; an integer result, so not differentiable."""
    return red.argmin(red.nan_as(a, np.inf), axis, keepdims)


# --- covariance --------------------------------------------------------------------------------

@stack_traced_lists
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        *, dtype=None):
    """np.cov: variables in rows (rowvar=True) or columns; optional frequency and analytic
    weights, which are treated as constants if traced only through their values."""
    x = atleast_2d(m)
    if not rowvar and shape_of(x)[0] != 1:
        x = lax.transpose(x, (1, 0))
    if y is not None:
        yy = atleast_2d(y)
        if not rowvar and shape_of(yy)[0] != 1:
            yy = lax.transpose(yy, (1, 0))
        x = concatenate([x, yy], 0)
    if dtype is not None:
        x = lax.convert_element_type(x, dtype)
    elif dtype_of(x).kind not in "fc":
        x = lax.convert_element_type(x, np.float64)
    if ddof is None:
        ddof = 0 if bias else 1
    n = shape_of(x)[1]
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else lax.mul(w, aweights)
    if w is None:
        avg = red.mean(x, axis=1, keepdims=True)
        fact = n - ddof
        xc = lax.sub(x, avg)
        xw = xc
    else:
        wsum = red.sum(w)
        avg = lax.div(red.sum(lax.mul(x, w), axis=1, keepdims=True), wsum)
        fact = wsum - ddof if aweights is None else lax.sub(
            wsum, lax.div(lax.mul(ddof, red.sum(lax.mul(w, aweights))), wsum))
        xc = lax.sub(x, avg)
        xw = lax.mul(xc, w)
    c = lax.div(matmul(xw, lax.conj(lax.transpose(xc, (1, 0)))), fact)
    return reshape(c, ()) if shape_of(c) == (1, 1) else c


@stack_traced_lists
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlations: cov / sqrt(outer(var, var)), clipped to [-1, 1] as NumPy does."""
    c = cov(x, y, rowvar, dtype=dtype)
    if len(shape_of(c)) == 0:
        return lax.div(c, c)
    sd = lax.sqrt(lax.real(diagonal(c)))
    c = lax.div(lax.div(c, lax.reshape(sd, (shape_of(sd)[0], 1))), sd)
    if dtype_of(c).kind == "c":
        return c
    # select, not min/max: at exactly ±1 the derivative passes through whole, not halved
    return lax.select(lax.gt(c, 1.0), 1.0, lax.select(lax.lt(c, -1.0), -1.0, c))

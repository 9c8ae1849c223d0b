"""Polynomials (poly, roots, polyadd/sub/mul/div, polyder, polyint), unwrap, histograms and
i0: composites of fxad's primitives, differentiable where NumPy's functions are smooth."""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import lax
from ..api.reverse import stop_gradient
from ..core import Tracer
from ..errors import ConcretizationError, FxadValueError
from ..rules.special.bessel import bessel_i
from ..rules.helpers import dtype_of, shape_of
from .at import at
from .linalg import eigvals
from .creation import asarray
from .manipulation import concatenate, ravel
from .reductions import cumsum, max as _max, min as _min, sum as _sum
from .series import convolve, diff, searchsorted
from ._lists import stack_traced_lists


@stack_traced_lists
def i0(x):
    """The modified Bessel function of the first kind, order 0 (derivative: i1)."""
    return bessel_i(x, 0)


def _1d(p, name):
    p = asarray(p)
    if p.ndim == 0:
        p = lax.reshape(p, (1,))
    if p.ndim != 1:
        raise FxadValueError(f"{name}: polynomial coefficients must be 1-d")
    return p


def _pad_front(p, n):
    k = shape_of(p)[0]
    return concatenate([np.zeros(n - k, dtype_of(p)), p]) if k < n else p


@stack_traced_lists
def polyadd(a1, a2):
    """The sum of two polynomials (coefficients, highest power first), as NumPy's; differentiable
    to any order."""
    a1, a2 = _1d(a1, "polyadd"), _1d(a2, "polyadd")
    n = builtins.max(shape_of(a1)[0], shape_of(a2)[0])
    return lax.add(_pad_front(a1, n), _pad_front(a2, n))


@stack_traced_lists
def polysub(a1, a2):
    """The difference of two polynomials, as NumPy's; differentiable to any order."""
    a1, a2 = _1d(a1, "polysub"), _1d(a2, "polysub")
    n = builtins.max(shape_of(a1)[0], shape_of(a2)[0])
    return lax.sub(_pad_front(a1, n), _pad_front(a2, n))


@stack_traced_lists
def polymul(a1, a2):
    """The product of two polynomials, as NumPy's; differentiable to any order."""
    return convolve(_1d(a1, "polymul"), _1d(a2, "polymul"))


@stack_traced_lists
def polyder(p, m=1):
    """The m-th derivative's coefficients."""
    p = _1d(p, "polyder")
    for _ in range(int(m)):
        n = shape_of(p)[0] - 1
        if n <= 0:
            return np.zeros(1, dtype_of(p) if dtype_of(p).kind in "fc" else np.float64)
        p = lax.mul(p[:-1], np.arange(n, 0, -1).astype(dtype_of(p) if dtype_of(p).kind in "fc"
                                                        else np.float64))
    return p


@stack_traced_lists
def polyint(p, m=1, k=None):
    """The m-th antiderivative's coefficients; integration constants k (0 by default)."""
    p = lax.convert_element_type(_1d(p, "polyint"), np.result_type(dtype_of(asarray(p)),
                                                                     np.float64))
    m = int(m)
    ks = np.zeros(m) if k is None else np.broadcast_to(np.asarray(k, float), (m,))
    for i in range(m):
        n = shape_of(p)[0]
        p = concatenate([lax.div(p, np.arange(n, 0, -1).astype(dtype_of(p))),
                         np.asarray([ks[i]], dtype_of(p))])
    return p


@stack_traced_lists
def polydiv(u, v):
    """(quotient, remainder) of polynomial division, by long division (v's leading
    coefficient must not be 0)."""
    u = lax.convert_element_type(_1d(u, "polydiv"), np.float64) if \
        dtype_of(asarray(u)).kind not in "fc" else _1d(u, "polydiv")
    v = _1d(v, "polydiv")
    n, m = shape_of(u)[0], shape_of(v)[0]
    if m > n:
        return np.zeros(1, dtype_of(u)), u
    q = []
    r = u
    for i in range(n - m + 1):
        c = lax.div(r[i], v[0])
        q.append(c)
        r = at(r)[i:i + m].add(lax.neg(lax.mul(c, v)))
    rem = r[n - m + 1:]
    return lax.concatenate([lax.reshape(c, (1,)) for c in q], 0), \
        (rem if shape_of(rem)[0] else np.zeros(1, dtype_of(u)))


def _strip(p, name):
    """Leading zeros cut off (and trailing ones counted as zero roots): they need the
    values, which are known eagerly and under grad, not under jit or vmap."""
    try:
        c = p.concrete_value(name) if isinstance(p, Tracer) else np.asarray(p)
    except ConcretizationError:
        raise ConcretizationError(f"{name}: stripping leading zeros needs concrete "
                                  "coefficients; pass strip_zeros=False under jit/vmap "
                                  "(the leading coefficient must then be nonzero)") from None
    nz = np.nonzero(c)[0]
    if not len(nz):
        return p[:0], 0
    return p[nz[0]:nz[-1] + 1], len(c) - 1 - nz[-1]


@stack_traced_lists
def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients p (highest first), as the eigenvalues
    of its companion matrix: complex, differentiable where they are distinct."""
    p = _1d(p, "roots")
    trailing = 0
    if strip_zeros:
        p, trailing = _strip(p, "roots")
    n = shape_of(p)[0] - 1
    dt = np.result_type(dtype_of(p), np.float64)
    if n < 1:
        return np.zeros(trailing, np.result_type(dt, np.complex64))
    first = lax.div(lax.neg(lax.convert_element_type(p[1:], dt)), p[0])
    comp = concatenate([lax.reshape(first, (1, n)), np.eye(n - 1, n, dtype=dt)], 0)
    r = eigvals(comp)
    return concatenate([r, np.zeros(trailing, dtype_of(r))]) if trailing else r


@stack_traced_lists
def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with these roots (of a square matrix: its
    eigenvalues), highest first."""
    a = asarray(seq_of_zeros)
    if a.ndim == 2 and shape_of(a)[0] == shape_of(a)[1] and shape_of(a)[0] > 0:
            a = eigvals(a)
    elif a.ndim != 1:
        raise FxadValueError("poly: input must be 1-d or a square 2-d array")
    c = np.ones(1, np.result_type(dtype_of(a), np.float64))
    for i in range(shape_of(a)[0]):
        c = convolve(c, concatenate([np.ones(1, dtype_of(c)), lax.reshape(lax.neg(a[i]),
                                                                             (1,))]))
    if dtype_of(c).kind == "c":  # conjugate pairs give real coefficients, as NumPy returns
        ca = a.concrete_value("poly") if isinstance(a, Tracer) else a
        try:
            vals = np.asarray(ca)
            if np.all(np.sort(vals[vals.imag > 0]) == np.sort(np.conj(vals[vals.imag < 0]))):
                c = lax.real(c)
        except ConcretizationError:
            pass
    return c


@stack_traced_lists
def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """Phase unwrapping: jumps larger than discont (default period/2) replaced by their
    complement modulo period. The corrections are piecewise constant, so the derivative is
    p's."""
    p = asarray(p)
    dd = diff(p, axis=axis)
    half = period / 2
    discont = half if discont is None else builtins.max(discont, half)
    ddmod = lax.sub(lax.sub(lax.add(dd, half), lax.mul(period, lax.floor(
        lax.div(lax.add(dd, half), period)))), half)
    ddmod = lax.select(lax.logical_and(lax.eq(ddmod, -half), lax.gt(dd, 0)), half, ddmod)
    corr = lax.select(lax.lt(lax.abs(dd), discont), 0.0, lax.sub(ddmod, dd))
    corr = stop_gradient(corr)
    nd = p.ndim
    axis %= nd
    first = [slice(None)] * nd
    first[axis] = slice(0, 1)
    zero = lax.mul(p[tuple(first)], 0)
    return lax.add(p, concatenate([zero, cumsum(corr, axis)], axis))


@stack_traced_lists
def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """Equal-width edges over `range` (default: the data's min and max, with no derivative),
    or the given edges. NumPy's, bit for bit: its linspace lo + i * ((hi - lo) / n) with the
    last edge hi itself (the maximum lands on it: the last bin is closed), computed in the
    bounds' dtype (the data's float dtype, float64 for a given range) and returned in the
    data's float dtype."""
    if not isinstance(bins, (int, np.integer)):
        return asarray(bins)
    flat = ravel(asarray(a))
    out_dt = dtype_of(flat) if dtype_of(flat).kind == "f" else np.dtype(np.float64)
    if range is None:
        lo, hi = (lax.convert_element_type(stop_gradient(m(flat)), out_dt) for m in (_min, _max))
    else:
        lo, hi = np.float64(range[0]), np.float64(range[1])
    same = lax.eq(lo, hi)
    lo, hi = lax.select(same, lax.sub(lo, 0.5), lo), lax.select(same, lax.add(hi, 0.5), hi)
    n = int(bins)
    inner = lax.add(lax.mul(np.arange(n, dtype=dtype_of(lo)), lax.div(lax.sub(hi, lo), n)), lo)
    edges = concatenate([inner, lax.reshape(hi, (1,))])
    return lax.convert_element_type(edges, out_dt)


@stack_traced_lists
def histogram(a, bins=10, range=None, density=False, weights=None):  # noqa: A002
    """(counts, edges) as NumPy's (the last bin includes its right edge; values outside the
    edges are not counted). Counts (with weights: sums of weights) carry the weights'
    derivative; edges carry none (they are where the values fall, a step function)."""
    flat = ravel(asarray(a))
    edges = histogram_bin_edges(flat, bins, range)
    nb = shape_of(edges)[0] - 1
    idx = lax.sub(searchsorted(stop_gradient(edges), flat, side="right"), 1)
    idx = lax.select(lax.eq(flat, edges[-1]), nb - 1, idx)
    inside = lax.logical_and(lax.ge(idx, 0), lax.lt(idx, nb))
    w = np.ones(shape_of(flat), np.intp) if weights is None else ravel(asarray(weights))
    w = lax.select(inside, w, lax.mul(w, 0))
    counts = at(np.zeros(nb, dtype_of(w)))[lax.clamp(0, idx, nb - 1)].add(w)
    if density:
        counts = lax.div(counts, lax.mul(_sum(counts), diff(edges)))
    return counts, edges


def _bin_index(values, edges):
    """Each value's bin among `edges` (the last bin closed on the right) and whether it falls
    inside them at all, as NumPy's histograms bin."""
    nb = shape_of(edges)[0] - 1
    idx = lax.sub(searchsorted(stop_gradient(edges), values, side="right"), 1)
    idx = lax.select(lax.eq(values, edges[-1]), nb - 1, idx)
    return lax.clamp(0, idx, nb - 1), lax.logical_and(lax.ge(idx, 0), lax.lt(idx, nb))


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(counts, [edges per dimension]) of the N points of `sample` (an (N, D) array, or a
    sequence of D coordinate arrays) in D dimensions, as NumPy's: `bins` one count or edge
    array for all dimensions or one per dimension, `range` one (lo, hi) or None per dimension;
    the last bin of each dimension includes its right edge; points outside are not counted.
    Counts are float64 as NumPy's (with weights: sums of weights, carrying their derivative;
    `density` divides by the total and the bin volumes); edges carry no derivative."""
    if isinstance(sample, (list, tuple)):  # (NumPy: D coordinate arrays, as columns)
        sample = lax.transpose(_atleast_2d(asarray(sample)), (1, 0))
    sample = asarray(sample)
    if len(shape_of(sample)) == 1:
        sample = lax.reshape(sample, (shape_of(sample)[0], 1))
    if len(shape_of(sample)) != 2:
        raise FxadValueError(f"histogramdd: sample must be an (N, D) array, got shape "
                             f"{shape_of(sample)}")
    n, d = shape_of(sample)
    if isinstance(bins, (int, np.integer)):
        bins = [bins] * d
    elif len(bins) != d:
        raise FxadValueError(f"histogramdd: {len(bins)} bins for {d} dimensions: the "
                             "dimension of bins must be equal to the dimension of the sample")
    ranges = [None] * d if range is None else list(range)
    if len(ranges) != d:
        raise FxadValueError(f"histogramdd: {len(ranges)} ranges for {d} dimensions")
    edges, flat, inside, sizes = [], None, None, []
    for k in builtins.range(d):
        col = sample[:, k]
        if ranges[k] is not None and dtype_of(col) != np.float64:  # (NumPy's edges are then
            col = lax.convert_element_type(col, np.float64)  # float64: bin in float64 too)
        e = histogram_bin_edges(col, bins[k], ranges[k])
        idx, ok = _bin_index(col, e)
        nb = shape_of(e)[0] - 1
        flat = idx if flat is None else lax.add(lax.mul(flat, nb), idx)
        inside = ok if inside is None else lax.logical_and(inside, ok)
        edges.append(e)
        sizes.append(nb)
    w = np.ones(n) if weights is None else \
        lax.convert_element_type(ravel(asarray(weights)), np.float64)
    w = lax.select(inside, w, lax.mul(w, 0.0))
    counts = at(np.zeros(math.prod(sizes)))[flat].add(w)
    counts = lax.reshape(counts, tuple(sizes))
    if density:
        volume = np.ones((), np.float64)
        for k, e in enumerate(edges):
            widths = lax.convert_element_type(diff(stop_gradient(e)), np.float64)
            volume = lax.mul(lax.reshape(volume, shape_of(volume) + (1,)), lax.reshape(
                widths, (1,) * k + (sizes[k],)))
        counts = lax.div(counts, lax.mul(_sum(counts), volume))
    return counts, edges


def _atleast_2d(x):
    return x if len(shape_of(x)) >= 2 else lax.reshape(x, (1,) * (2 - len(shape_of(x)))
                                                       + shape_of(x))


@stack_traced_lists
def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(counts, x edges, y edges) of the points (x[i], y[i]), as NumPy's: `bins` a count or
    edge array for both coordinates, or a pair of them; the rest as `histogramdd` (float64
    counts, differentiable in the weights)."""
    try:
        nbins = len(bins)
    except TypeError:
        nbins = 1
    if nbins not in (1, 2):
        bins = [bins, bins]
    counts, edges = histogramdd([x, y], bins, range, weights, density)
    return counts, edges[0], edges[1]


__all__ = ["histogramdd", "histogram2d", "i0", "polyadd", "polysub", "polymul", "polyder",
           "polyint", "polydiv", "roots", "poly", "unwrap", "histogram", "histogram_bin_edges"]

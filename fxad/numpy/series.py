"""Functions of sequences: differences, integration, interpolation, polynomials, convolution
and sorted search, composed from primitives (so every transformation handles them)."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..core import Tracer
from ..errors import FxadTypeError, FxadValueError
from ..lax.products import to_preferred
from ..rules.helpers import dtype_of, shape_of
from ..rules.structural.indexing import parse_index, scatter_add
from . import reductions as red
from .creation import asarray
from .indexing import take
from .linalg import lstsq
from .manipulation import concatenate, flip, ndim, ravel, reshape
from ._lists import stack_traced_lists


def _along(axis, nd, sl):
    return (slice(None),) * (axis % nd) + (sl,)


@stack_traced_lists
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference along `axis` (with prepend/append), as NumPy's; differentiable
    to any order."""
    nd = ndim(a)
    if nd == 0:
        raise FxadValueError("diff requires input that is at least one dimensional")
    axis %= nd
    parts = []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        if ndim(extra) == 0:  # a scalar is broadcast to one slice along the axis
            s = list(shape_of(a))
            s[axis] = 1
            extra = lax.broadcast_to(extra, tuple(s))
        parts.append(extra)
    a = concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis)
    op = lax.ne if dtype_of(a) == np.bool_ else lax.sub  # NumPy: booleans differ or not
    for _ in range(n):
        a = op(a[_along(axis, nd, slice(1, None))], a[_along(axis, nd, slice(None, -1))])
    return a


@stack_traced_lists
def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of the flattened array, with to_begin/to_end added, as NumPy's;
    differentiable to any order."""
    d = diff(ravel(ary))
    parts = [ravel(p) for p in (to_begin,) if p is not None] + [d] + \
        [ravel(p) for p in (to_end,) if p is not None]
    return concatenate(parts, 0) if len(parts) > 1 else d


@stack_traced_lists
def gradient(f, *varargs, axis=None, edge_order=1):
    """np.gradient with scalar spacings (one per axis, or one for all): second-order central
    differences inside, first- or second-order one-sided differences at the edges."""
    f = asarray(f)
    nd = ndim(f)
    axes = tuple(range(nd)) if axis is None else red.normalize_axes(axis, nd)
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes) and all(ndim(v) == 0 for v in varargs):
        spacing = list(varargs)
    else:
        raise FxadTypeError("fxad's gradient takes scalar spacings (one, or one per axis); "
                            "coordinate arrays are not supported")
    if edge_order not in (1, 2):
        raise FxadValueError("edge_order must be 1 or 2")
    if dtype_of(f).kind not in "fc":
        f = lax.convert_element_type(f, np.float64)
    outs = []
    for ax, h in zip(axes, spacing):
        n = shape_of(f)[ax]
        if n < edge_order + 1:
            raise FxadValueError("Shape of array too small to calculate a numerical gradient, "
                                 "at least (edge_order + 1) elements are required.")

        def at(sl, ax=ax):
            return f[_along(ax, nd, sl)]
        mid = lax.div(lax.sub(at(slice(2, None)), at(slice(None, -2))), lax.mul(h, 2.0))
        if edge_order == 1:
            first = lax.div(lax.sub(at(slice(1, 2)), at(slice(0, 1))), h)
            last = lax.div(lax.sub(at(slice(-1, None)), at(slice(-2, -1))), h)
        else:
            first = lax.div(lax.add(lax.add(lax.mul(at(slice(0, 1)), -1.5),
                                            lax.mul(at(slice(1, 2)), 2.0)),
                                    lax.mul(at(slice(2, 3)), -0.5)), h)
            last = lax.div(lax.add(lax.add(lax.mul(at(slice(-3, -2)), 0.5),
                                           lax.mul(at(slice(-2, -1)), -2.0)),
                                   lax.mul(at(slice(-1, None)), 1.5)), h)
        # in f's dtype, as NumPy's (it writes into empty_like(f)): a float64 spacing, or
        # lax.mul(h, 2.0) of a Python h (a strong np.float64), must not promote float32 data
        outs.append(lax.convert_element_type(concatenate([first, mid, last], ax),
                                             dtype_of(f)))
    return outs[0] if len(outs) == 1 else tuple(outs)


@stack_traced_lists
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y by the trapezoidal rule (sample points x or spacing dx), as NumPy's;
    differentiable to any order in y and x."""
    y = asarray(y)
    nd = ndim(y)
    lo, hi = y[_along(axis, nd, slice(None, -1))], y[_along(axis, nd, slice(1, None))]
    if x is None:
        widths = dx
    else:
        widths = diff(x) if ndim(x) == 1 else diff(x, axis=axis)
        if ndim(x) == 1 and nd > 1:  # the spacings lie along `axis`
            s = [1] * nd
            s[axis % nd] = shape_of(widths)[0]
            widths = reshape(widths, tuple(s))
    return red.sum(lax.mul(lax.mul(lax.add(lo, hi), widths), 0.5), axis)


@stack_traced_lists
def polyval(p, x):
    """Horner's rule, highest power first (p may be a list of coefficients)."""
    x = asarray(x)
    if isinstance(p, (list, tuple)):
        coeffs = list(p)
    else:
        coeffs = [p[i] for i in range(shape_of(p)[0])]
    # NumPy's start, y = 0 * x (NaN at x = inf, as NumPy's value), held constant: a traced
    # 0 * x would send inf * 0 = NaN into reverse mode at |x| = 1e300
    zero = lax.mul(lax.stop_gradient(x), 0)
    y = zero if not coeffs else lax.add(zero, coeffs[0])
    for c in coeffs[1:]:
        y = lax.add(lax.mul(y, x), c)
    return y


@stack_traced_lists
def vander(x, N=None, increasing=False):
    """Columns of powers of 1-d x (decreasing unless increasing=True), by repeated products."""
    if ndim(x) != 1:
        raise FxadValueError("x must be a one-dimensional array or sequence.")
    x = lax.convert_element_type(x, np.promote_types(dtype_of(x), np.int64))  # as NumPy
    m, n = shape_of(x)[0], shape_of(x)[0] if N is None else int(N)
    cols, p = [], np.ones((m, 1), dtype_of(x))  # the zeroth power: exactly 1, even for inf
    for _ in range(n):
        cols.append(p)
        p = lax.mul(p, reshape(x, (m, 1)))
    if not cols:
        return np.zeros((m, 0), dtype_of(x))
    return concatenate(cols if increasing else cols[::-1], 1)


@stack_traced_lists
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial coefficients, highest power first: lstsq on the Vandermonde
    matrix with unit-norm columns (NumPy's conditioning). full=, w= and cov= are not taken."""
    if full or w is not None or cov:
        raise FxadTypeError("fxad's polyfit takes x, y, deg and rcond only (no full=, w=, cov=)")
    deg = int(deg)
    if deg < 0:
        raise FxadValueError("expected deg >= 0")
    x = lax.convert_element_type(x, np.result_type(dtype_of(x), np.float64))
    lhs = vander(x, deg + 1)
    if rcond is None:
        rcond = shape_of(x)[0] * float(np.finfo(dtype_of(x)).eps)
    scale = lax.sqrt(red.sum(lax.mul(lhs, lhs), axis=0))
    c = lstsq(lax.div(lhs, scale), y, rcond)[0]
    return lax.div(c, scale if ndim(y) == 1 else reshape(scale, (deg + 1, 1)))


@stack_traced_lists
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation (xp increasing), differentiable in x, xp and fp."""
    if period is not None:
        raise FxadTypeError("interp: period= is not supported on traced values")
    if ndim(xp) != 1 or ndim(fp) != 1 or shape_of(xp)[0] != shape_of(fp)[0]:
        raise FxadValueError("interp: xp and fp must be 1-d sequences of the same length")
    m = shape_of(xp)[0]
    if m == 0:
        raise FxadValueError("interp: xp and fp must not be empty")
    x, xp, fp = asarray(x), asarray(xp), asarray(fp)
    # NumPy interpolates in float64 (complex128 for complex fp): narrower or integer values
    # would round or wrap around in the differences (uint8 fp: f1 - f0 mod 256)
    wide = np.result_type(dtype_of(x), dtype_of(xp), np.float64)
    x, xp = lax.convert_element_type(x, wide), lax.convert_element_type(xp, wide)
    fp = lax.convert_element_type(fp, np.result_type(dtype_of(fp), np.float64))
    if m == 1:
        y = lax.broadcast_to(fp[0], tuple(shape_of(x)))
    else:
        i = searchsorted(xp, x, side="right")  # xp[i-1] <= x < xp[i]
        i = lax.max(lax.min(i, m - 1), 1)
        x0, x1 = take(xp, lax.sub(i, 1)), take(xp, i)
        f0, f1 = take(fp, lax.sub(i, 1)), take(fp, i)
        dx = lax.sub(x1, x0)
        t = lax.div(lax.sub(x, x0), lax.select(lax.eq(dx, 0), 1.0, dx))
        y = lax.add(f0, lax.mul(t, lax.sub(f1, f0)))
        y = lax.select(lax.eq(x, xp[m - 1]), fp[m - 1], y)  # exact at the last node
    y = lax.select(lax.lt(x, xp[0]), fp[0] if left is None else left, y)
    return lax.select(lax.gt(x, xp[m - 1]), fp[m - 1] if right is None else right, y)


@stack_traced_lists
def searchsorted(a, v, side="left", sorter=None):
    """Insertion indices into sorted 1-d `a` (NumPy's own search; integer output, no
    derivative)."""
    if side not in ("left", "right"):
        raise FxadValueError(f"side must be 'left' or 'right', not {side!r}")
    if ndim(a) != 1:
        raise FxadValueError("searchsorted: a must be 1-d")
    if sorter is not None:
        a = take(a, sorter)
    return lax.searchsorted(a, v, side)


@stack_traced_lists
def digitize(x, bins, right=False):
    """The bin of each x for increasing bins (searchsorted on the other side, as NumPy)."""
    return lax.searchsorted(bins, x, "left" if right else "right")


@stack_traced_lists
def bincount(x, weights=None, minlength=0):
    """Counts (or weight sums) per non-negative integer in x; differentiable in the weights.
    x must be concrete: the output length is max(x) + 1."""
    if isinstance(x, Tracer):
        x = x.concrete_value("bincount (its output length depends on the values)")
    x = np.asarray(x)
    if weights is None:
        return np.bincount(x, minlength=minlength)
    n = max(int(x.max()) + 1 if x.size else 0, minlength)
    w = asarray(weights)
    wide = np.result_type(dtype_of(w), np.float64)
    spec, arrays = parse_index((x,))
    return scatter_add(np.zeros(n, wide), arrays, lax.convert_element_type(w, wide), spec)


def _mode_slice(full, n, m, mode):
    if mode == "full":
        return full
    if mode == "same":
        length, start = max(n, m), (min(n, m) - 1) // 2
    elif mode == "valid":
        length, start = max(n, m) - min(n, m) + 1, min(n, m) - 1
    else:
        raise FxadValueError(f"mode must be 'full', 'same' or 'valid', not {mode!r}")
    return full[start:start + length]


def _as_1d(x, name):
    if ndim(x) != 1 or shape_of(x)[0] == 0:
        raise FxadValueError(f"{name}: both inputs must be non-empty 1-d arrays")
    return x


@stack_traced_lists
def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """The 1-d convolution of a and v (mode "full", "same", "valid"), as NumPy's;
    `precision`/`preferred_element_type` as JAX's; differentiable to any order in both."""
    (a, v), finish = to_preferred((a, v), preferred_element_type, precision, "convolve")
    a, v = _as_1d(a, "convolve"), _as_1d(v, "convolve")
    return finish(_mode_slice(lax.convolve(a, v), shape_of(a)[0], shape_of(v)[0], mode))


@stack_traced_lists
def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """c[k] = sum_n a[n + k] conj(v[n]): the convolution with conj(v) reversed. When v is
    the longer one NumPy returns the reversed sequence, which the same formula gives."""
    (a, v), finish = to_preferred((a, v), preferred_element_type, precision, "correlate")
    a, v = _as_1d(a, "correlate"), _as_1d(v, "correlate")
    full = lax.convolve(a, flip(lax.conj(v), (0,)))
    return finish(_mode_slice(full, shape_of(a)[0], shape_of(v)[0], mode))


@stack_traced_lists
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol |b|, with NumPy's handling of infinities and NaNs (no derivative)."""
    finite = lax.logical_and(lax.isfinite(a), lax.isfinite(b))
    close = lax.le(lax.abs(lax.sub(lax.select(finite, a, 0.0), lax.select(finite, b, 0.0))),
                   lax.add(atol, lax.mul(rtol, lax.abs(lax.select(finite, b, 0.0)))))
    out = lax.select(finite, close, lax.eq(a, b))  # infinities: equal only to themselves
    if equal_nan:
        out = lax.logical_or(out, lax.logical_and(lax.isnan(a), lax.isnan(b)))
    return out


@stack_traced_lists
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all of a and b are equal within atol + rtol |b| (NaNs equal if equal_nan), as
    NumPy's; a Python bool for concrete input."""
    return red.all(isclose(a, b, rtol, atol, equal_nan))  # a count: empty is all-true


@stack_traced_lists
def array_equal(a1, a2, equal_nan=False):
    """Whether a1 and a2 have the same shape and elements (NaNs equal if equal_nan), as NumPy's."""
    if tuple(shape_of(a1)) != tuple(shape_of(a2)):
        return False
    same = lax.eq(a1, a2)
    if equal_nan:
        same = lax.logical_or(same, lax.logical_and(lax.isnan(a1), lax.isnan(a2)))
    return red.all(same)

"""Reductions and statistics with NumPy's axis / keepdims / dtype conventions."""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import lax
from ..errors import FxadValueError
from ..rules.helpers import dtype_of, shape_of
from ._axes import normalize_axes
from ._lists import lift_sequences
from .creation import asarray
from .manipulation import concatenate, ndim
from ._lists import stack_traced_lists


def accept_sequences(f):
    """`f` taking its first argument as fxad.numpy.asarray does: a list or tuple of traced
    values is stacked (`fxad.numpy.mean([t0, t1])`; NumPy itself cannot dispatch that); a
    later positional list of traced values is stacked too (as `stack_traced_lists` does)."""
    @functools.wraps(f)
    def g(a, *args, **kwargs):
        if isinstance(a, (list, tuple)):
            a = asarray(a)
        for b in args:
            if type(b) is list or type(b) is tuple:
                lifted = lift_sequences(args)
                if lifted is not None:
                    args = lifted
                break
        return f(a, *args, **kwargs)
    g._stacks_lists = True
    return g


def _in(dtype, out):
    """A sum or product asked for in `dtype` is returned in it, as NumPy accumulates: the
    primitives add small integers in int64 (NumPy's default), and integer arithmetic wraps
    modulo 2**bits alike, so the cast gives NumPy's values."""
    if dtype is None or dtype_of(out) == np.dtype(dtype):
        return out
    return lax.convert_element_type(out, dtype)


@accept_sequences
def sum(a, axis=None, dtype=None, keepdims=False, *, initial=None, where=None, out=None):
    """The sum over `axis` (all axes by default; the other arguments as NumPy's; `out` must be
    None); differentiable to any order."""
    _no_out(out, "sum")
    if dtype is not None:
        a = lax.convert_element_type(a, dtype)
    if where is not None:
        a = lax.select(where, a, 0)
    out = _in(dtype, lax.reduce_sum(a, normalize_axes(axis, len(shape_of(a))), keepdims))
    return out if initial is None else lax.add(out, _as_result(initial, out))


def _as_result(initial, out):
    """`initial` in the reduction's dtype, as NumPy casts it (np.sum(ints, initial=0.5) is an
    integer sum; a float64 initial does not promote a float32 sum)."""
    return lax.convert_element_type(initial, dtype_of(out))


@accept_sequences
def prod(a, axis=None, dtype=None, keepdims=False, *, initial=None, where=None, out=None):
    """The product over `axis` (all axes by default; the other arguments as NumPy's; `out` must be
    None); differentiable to any order, zeros included."""
    _no_out(out, "prod")
    if dtype is not None:
        a = lax.convert_element_type(a, dtype)
    if where is not None:
        a = lax.select(where, a, 1)
    out = _in(dtype, lax.reduce_prod(a, normalize_axes(axis, len(shape_of(a))), keepdims))
    return out if initial is None else lax.mul(out, _as_result(initial, out))


def _extreme(reduce, pick, name, a, axis, keepdims, initial, where):
    """max/min; `initial` joins every slice (so where= needs it, as NumPy's identity-free
    maximum does)."""
    if initial is not None:
        initial = _as_result(initial, a)
    if where is not None:
        if initial is None:
            raise FxadValueError(f"{name} with where= needs initial= (the value of a slice "
                                 "that where= leaves empty), as in NumPy")
        a = lax.select(where, a, initial)
    out = reduce(a, normalize_axes(axis, len(shape_of(a))), keepdims)
    return out if initial is None else pick(out, initial)


@accept_sequences
def max(a, axis=None, keepdims=False, *, initial=None, where=None, out=None):
    """The largest element over `axis` (all axes by default; the other arguments as NumPy's; `out`
    must be None) (alias `amax`); differentiable to any order, the derivative shared evenly
    among the elements equal to the maximum."""
    _no_out(out, "max")
    return _extreme(lax.reduce_max, lax.max, "max", a, axis, keepdims, initial, where)


@accept_sequences
def min(a, axis=None, keepdims=False, *, initial=None, where=None, out=None):
    """The smallest element over `axis` (all axes by default; the other arguments as NumPy's;
    `out` must be None) (alias `amin`); differentiable to any order, the derivative shared
    evenly among the elements equal to the minimum."""
    _no_out(out, "min")
    return _extreme(lax.reduce_min, lax.min, "min", a, axis, keepdims, initial, where)


amax, amin = max, min


def _count(a, axes):
    shape = shape_of(a)
    return math.prod([shape[i] for i in axes])


@accept_sequences
def mean(a, axis=None, dtype=None, keepdims=False, *, where=None, out=None):
    """The mean over `axis` (all axes by default; the other arguments as NumPy's; `out` must be
    None); differentiable to any order."""
    _no_out(out, "mean")
    axes = normalize_axes(axis, len(shape_of(a)))
    if dtype is None and dtype_of(a).kind not in "fc":
        dtype = np.float64
    if where is not None:  # the count of each slice's selected elements
        count = sum(lax.convert_element_type(lax.broadcast_to(where, tuple(shape_of(a))),
                                             dtype or dtype_of(a)), axes, keepdims=keepdims)
        return lax.div(sum(a, axes, dtype, keepdims, where=where), count)
    # (sum's body for axes already normal: no `where`, no `initial`)
    total = _in(dtype, lax.reduce_sum(a if dtype is None else lax.convert_element_type(
        a, dtype), axes, keepdims))
    return lax.div(total, _count(a, axes))


_mean = mean  # var's `mean=` parameter shadows the function


@accept_sequences
def var(a, axis=None, dtype=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None, out=None):
    """NumPy's var; `correction` is NumPy 2's name for ddof, `mean` a precomputed mean
    (keepdims shape), `where` selects the elements."""
    _no_out(out, "var")
    ddof = _ddof(ddof, correction)
    axes = normalize_axes(axis, len(shape_of(a)))
    m = mean if mean is not None else _mean(a, axes, dtype, keepdims=True, where=where)
    d = lax.sub(a, m)
    # |d|^2: for complex values NumPy's variance is real (d * d would be complex, and wrong)
    d2 = lax.real(lax.mul(d, lax.conj(d))) if dtype_of(d).kind == "c" else lax.mul(d, d)
    if dtype is not None and dtype_of(d2).kind == np.dtype(dtype).kind:
        d2 = lax.convert_element_type(d2, dtype)  # the squares summed in dtype, as NumPy's
    if where is None:
        return lax.div(sum(d2, axes, keepdims=keepdims), _count(a, axes) - ddof)
    sq = sum(d2, axes, keepdims=keepdims, where=where)
    count = sum(lax.convert_element_type(lax.broadcast_to(where, tuple(shape_of(a))),
                                         dtype_of(sq)), axes, keepdims=keepdims)
    return lax.div(sq, lax.sub(count, ddof))


@accept_sequences
def std(a, axis=None, dtype=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None, out=None):
    """The standard deviation over `axis` (all axes by default; the other arguments as NumPy's;
    `out` must be None), with `ddof`/`correction` and `mean=` as NumPy 2's; differentiable to
    any order."""
    _no_out(out, "std")
    v = var(a, axis, dtype, ddof, keepdims, where=where, mean=mean, correction=correction)
    if where is None and mean is None and \
            _count(a, normalize_axes(axis, len(shape_of(a)))) == 1:
        # the spread of one value is 0 whatever the value: derivative 0, not 0 / sqrt(0)
        v = lax.stop_gradient(v)
    return lax.sqrt(v)


def _ddof(ddof, correction):
    if correction is None:
        return ddof
    if ddof != 0:
        raise FxadValueError("var/std: pass ddof or correction (its NumPy 2 name), not both")
    return correction


def _no_out(out, name):
    """`out=None` is accepted (NumPy's and JAX's signatures); fxad computes new arrays."""
    if out is not None:
        raise FxadValueError(f"{name}: out= must be None; fxad returns new arrays (write "
                             f"`result = fxad.numpy.{name}(...)`)")


def _arg(fn, a, axis, keepdims):
    if axis is None:
        out = fn(_ravel(a), 0)
        return lax.reshape(out, (1,) * len(shape_of(a))) if keepdims else out
    return fn(a, normalize_axes(axis, len(shape_of(a)))[0], keepdims)


def _ravel(a):
    return lax.reshape(a, (math.prod(map(int, shape_of(a))),))


@accept_sequences
def argmax(a, axis=None, keepdims=False, *, out=None):
    """The index of the largest element along `axis` (the first among ties), as NumPy's; an
    integer result, so not differentiable."""
    _no_out(out, "argmax")
    return _arg(lax.argmax, a, axis, keepdims)


@accept_sequences
def argmin(a, axis=None, keepdims=False, *, out=None):
    """The index of the smallest element along `axis` (the first among ties), as NumPy's; an
    integer result, so not differentiable."""
    _no_out(out, "argmin")
    return _arg(lax.argmin, a, axis, keepdims)


def _axis_or_flat(a, axis):
    """NumPy's cumulative convention: axis=None works on the flattened array."""
    if axis is None:
        return _ravel(a), 0
    return a, normalize_axes(axis, len(shape_of(a)))[0]


@accept_sequences
def cumsum(a, axis=None, dtype=None, out=None):
    """The running sum along `axis` (of the flattened array if None), as NumPy's; differentiable
    to any order."""
    _no_out(out, "cumsum")
    a, ax = _axis_or_flat(a if dtype is None else lax.convert_element_type(a, dtype), axis)
    return _in(dtype, lax.cumsum(a, ax))


@accept_sequences
def cumprod(a, axis=None, dtype=None, out=None):
    """The running product along `axis` (of the flattened array if None), as NumPy's;
    differentiable to any order, zeros included."""
    _no_out(out, "cumprod")
    a, ax = _axis_or_flat(a if dtype is None else lax.convert_element_type(a, dtype), axis)
    return _in(dtype, lax.cumprod(a, ax))


@accept_sequences
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The mean of a along `axis`, weighted by `weights` (and their sum if returned), as NumPy's;
    differentiable to any order in a and weights."""
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        wsum = lax.convert_element_type(np.asarray(_count(a, normalize_axes(
            axis, len(shape_of(a))))), dtype_of(avg))
    else:
        # NumPy's result dtype: integers and booleans average in float64 (never lax.div's
        # integer division), floats in their common type with the weights
        dt = np.result_type(dtype_of(a), dtype_of(weights))
        if dtype_of(a).kind not in "fc":
            dt = np.result_type(dt, np.float64)
        a, weights = lax.convert_element_type(a, dt), lax.convert_element_type(weights, dt)
        nd = len(shape_of(a))
        if len(shape_of(weights)) == 1 and nd > 1 and axis is not None:
            ax = normalize_axes(axis, nd)[0]
            weights = lax.reshape(weights, tuple(shape_of(a)[ax] if i == ax else 1
                                                 for i in range(nd)))
        wsum = sum(lax.broadcast_to(weights, tuple(shape_of(a))), axis, keepdims=keepdims)
        avg = lax.div(sum(lax.mul(a, weights), axis, keepdims=keepdims), wsum)
    return (avg, lax.broadcast_to(wsum, tuple(shape_of(avg)))) if returned else avg


def nan_as(a, fill):
    """a with its NaNs replaced by `fill`. Integer and boolean data have no NaNs and keep
    their dtype, so the NaN-ignoring reductions on them are NumPy's plain ones (a float fill
    would promote them to float64, rounding integers past 2**53)."""
    if dtype_of(a).kind not in "fc":
        return a
    return lax.select(lax.isnan(a), fill, a)


@accept_sequences
def nansum(a, axis=None, dtype=None, keepdims=False, *, out=None):
    """The sum with NaNs taken as 0, as NumPy's; differentiable to any order (0 at the NaNs)."""
    _no_out(out, "nansum")
    return sum(nan_as(a, 0.0), axis, dtype, keepdims)


@accept_sequences
def nanmean(a, axis=None, dtype=None, keepdims=False, *, out=None):
    """The mean of the non-NaN elements along `axis`, as NumPy's; differentiable to any order (0
    at the NaNs)."""
    _no_out(out, "nanmean")
    if dtype_of(a).kind not in "fc":  # no NaNs; mean divides in float64
        return mean(a, axis, dtype, keepdims)
    ok = lax.logical_not(lax.isnan(a))
    total = nansum(a, axis, dtype, keepdims)
    return lax.div(total, sum(lax.convert_element_type(ok, dtype_of(total)), axis,
                              keepdims=keepdims))


@accept_sequences
def count_nonzero(a, axis=None, *, keepdims=False):
    """The number of non-zero elements along `axis`, as NumPy's; an integer result, so not
    differentiable."""
    return sum(lax.convert_element_type(lax.ne(a, 0), np.int64), axis, keepdims=keepdims)


@accept_sequences
def any(a, axis=None, keepdims=False, *, out=None):  # noqa: A001  (NumPy's name)
    """Whether any element is true over `axis` (all axes by default; the other arguments as
    NumPy's; `out` must be None); a boolean result, so not differentiable."""
    _no_out(out, "any")
    return lax.ne(count_nonzero(a, axis, keepdims=keepdims), 0)


@accept_sequences
def all(a, axis=None, keepdims=False, *, out=None):  # noqa: A001
    """Whether every element is true over `axis` (all axes by default; the other arguments as
    NumPy's; `out` must be None); a boolean result, so not differentiable."""
    _no_out(out, "all")
    n = _count(a, normalize_axes(axis, len(shape_of(a))))
    return lax.eq(count_nonzero(a, axis, keepdims=keepdims), n)


# --- NumPy 2.1's cumulative_sum / cumulative_prod -------------------------------------------

def _cumulative(fn, x, axis, dtype, include_initial, initial):
    if axis is None:
        if ndim(x) > 1:
            raise FxadValueError("cumulative_*: axis is required for arrays of rank > 1")
        axis = 0
    out = fn(x, axis, dtype)
    if include_initial:
        s = list(shape_of(out))
        s[axis % len(s)] = 1
        out = concatenate([np.full(s, initial, dtype_of(out)), out], axis)
    return out


@stack_traced_lists
def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """The running sum along `axis`, as NumPy 2's (with `include_initial` a leading 0);
    differentiable to any order."""
    return _cumulative(cumsum, x, axis, dtype, include_initial, 0)


@stack_traced_lists
def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """The running product along `axis`, as NumPy 2's (with `include_initial` a leading 1);
    differentiable to any order."""
    return _cumulative(cumprod, x, axis, dtype, include_initial, 1)

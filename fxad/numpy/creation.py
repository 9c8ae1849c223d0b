"""Array creation. Constants are plain NumPy arrays; only traced inputs make traced outputs."""
from __future__ import annotations

import functools

import numpy as np

from .. import lax
from ..core import Tracer
from ..errors import FxadTypeError, FxadValueError
from ..rules.helpers import dtype_of, shape_of

from ._lists import has_tracer, stack_nested
from .at import indexable
from ._lists import stack_traced_lists


def _indexable(f):
    """NumPy's creation function, its result an _IndexableArray view (fxad/numpy/at.py):
    `fnp.eye(k)[y]` with a traced `y` and `fnp.zeros(n).at[i].add(v)` work, as in JAX."""
    @functools.wraps(f)
    def make(*args, **kwargs):
        return indexable(f(*args, **kwargs))
    return make


zeros, ones, empty, eye, identity, arange = map(
    _indexable, (np.zeros, np.ones, np.empty, np.eye, np.identity, np.arange))


def _like(a, dtype, shape):
    return (dtype if dtype is not None else dtype_of(a),
            tuple(shape) if shape is not None else tuple(shape_of(a)))


@stack_traced_lists
def zeros_like(a, dtype=None, shape=None):
    """Zeros with a's shape and dtype (or the given ones), as NumPy's (alias `empty_like`: fxad
    never returns uninitialized memory)."""
    dt, s = _like(a, dtype, shape)
    return indexable(np.zeros(s, dt))


empty_like = zeros_like  # "uninitialized" values: zeros are as good as any


@stack_traced_lists
def result_type(*arrays_and_dtypes):
    """np.result_type, with traced values standing for arrays of their dtype."""
    return np.result_type(*(dtype_of(x) if isinstance(x, Tracer) else x
                            for x in arrays_and_dtypes))


@stack_traced_lists
def ones_like(a, dtype=None, shape=None):
    """Ones with a's shape and dtype (or the given ones), as NumPy's."""
    dt, s = _like(a, dtype, shape)
    return indexable(np.ones(s, dt))


@stack_traced_lists
def full_like(a, fill_value, dtype=None, shape=None):
    """An array like a filled with fill_value (dtype and shape overridable), as NumPy's."""
    dt, s = _like(a, dtype, shape)
    return full(s, fill_value, dt)


@stack_traced_lists
def full(shape, fill_value, dtype=None):  # a traced fill value is broadcast
    """An array of `shape` filled with fill_value, as NumPy's (a traced fill_value gives a traced
    array)."""
    if isinstance(fill_value, Tracer):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        v = fill_value if dtype is None else lax.convert_element_type(fill_value, dtype)
        return lax.broadcast_to(v, shape)
    return indexable(np.full(shape, fill_value, dtype))


@stack_traced_lists
def linspace(start, stop, num=50, endpoint=True, dtype=None):
    """num evenly spaced values from start to stop, as NumPy's; differentiable to any order in
    start and stop."""
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        return indexable(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))
    num = int(num)
    if num < 0:
        raise FxadValueError(f"linspace: number of samples {num} must be non-negative")
    # NumPy's: computed in the endpoints' inexact type (float32 ends stay float32), the
    # samples along a new leading axis (array ends give a (num,) + their shape result), the
    # last sample exactly `stop`, an integer dtype floored
    dt = result_type(start, stop)
    dt = dt if dt.kind in "fc" else np.dtype(np.float64)
    start, stop = lax.convert_element_type(start, dt), lax.convert_element_type(stop, dt)
    shape = np.broadcast_shapes(tuple(shape_of(start)), tuple(shape_of(stop)))
    div = (num - 1) if endpoint else num
    k = np.arange(num, dtype=dt).reshape((num,) + (1,) * len(shape))
    out = lax.add(lax.mul(k, lax.div(lax.sub(stop, start), np.asarray(max(div, 1), dt))),
                  start)
    if endpoint and num > 1:
        last = np.zeros((num,) + (1,) * len(shape), bool)
        last[-1] = True
        out = lax.select(np.broadcast_to(last, (num,) + shape),
                         lax.broadcast_to(stop, (num,) + shape), out)
    if dtype is not None and np.issubdtype(dtype, np.integer):
        out = lax.floor(out)
    return out if dtype is None else lax.convert_element_type(out, dtype)


@stack_traced_lists
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop, num), as NumPy's; differentiable to any order in start and
    stop."""
    if axis != 0:
        raise FxadValueError("fxad's logspace supports axis=0 only")
    out = lax.pow(base, linspace(start, stop, num, endpoint))
    return out if dtype is None else lax.convert_element_type(out, dtype)


@stack_traced_lists
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Geometric steps between same-signed real endpoints, exact at both ends."""
    if axis != 0:
        raise FxadValueError("fxad's geomspace supports axis=0 only")
    sign = lax.sign(start)
    lo, hi = lax.log(lax.abs(start)), lax.log(lax.abs(stop))
    out = lax.mul(sign, lax.exp(linspace(lo, hi, num, endpoint)))
    shape = tuple(shape_of(out))  # (num,) + the ends' shape

    def row(k):
        m = np.zeros((num,) + (1,) * (len(shape) - 1), bool)
        m[k] = True
        return np.broadcast_to(m, shape)
    if num > 0:
        out = lax.select(row(0), lax.broadcast_to(start, shape), out)
    if endpoint and num > 1:
        out = lax.select(row(-1), lax.broadcast_to(stop, shape), out)
    # NumPy's geomspace computes in at least float64 (float32 ends too)
    return lax.convert_element_type(out, np.result_type(dtype_of(out), np.float64)
                                    if dtype is None else dtype)


@stack_traced_lists
def astype(x, dtype, /, *, copy=True, device=None):
    """x cast to dtype, as `numpy.astype`; differentiable between floating and complex dtypes
    (integer results carry no derivative)."""
    return lax.convert_element_type(x, dtype) if isinstance(x, Tracer) else \
        np.asarray(x).astype(dtype)


def _numeric(a, obj):
    """fxad computes with numbers: an array of arbitrary Python objects (what NumPy makes of
    them) is refused, as JAX refuses it, instead of failing later or far away."""
    if a.dtype == object:
        text = repr(obj)
        text = text if len(text) <= 60 else text[:57] + "..."
        raise FxadTypeError(f"fxad.numpy cannot make an array from {text}: NumPy would make "
                            "a dtype=object array, which fxad cannot compute with; pass "
                            "numbers or arrays")
    return a


def array(obj, dtype=None, copy=True):
    """np.array, also for (nested) lists that contain tracers: those are stacked."""
    if has_tracer(obj):
        out = stack_nested(obj)
        return out if dtype is None else lax.convert_element_type(out, dtype)
    return indexable(_numeric(np.array(obj, dtype=dtype, copy=copy), obj))


@stack_traced_lists
def copy(a):
    """np.copy. A traced value is immutable (updates go through .at[]), so its copy is itself."""
    if isinstance(a, Tracer) or has_tracer(a):
        return asarray(a)
    return np.copy(a)


def asarray(obj, dtype=None):
    """obj as an array (a tracer stays a tracer; lists of tracers are stacked), with `dtype` as
    NumPy's; differentiable."""
    if isinstance(obj, Tracer):
        return obj if dtype is None else lax.convert_element_type(obj, dtype)
    if has_tracer(obj):
        return array(obj, dtype)
    return indexable(_numeric(np.asarray(obj, dtype=dtype), obj))

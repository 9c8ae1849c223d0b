"""Array creation. Constants are plain NumPy arrays; only traced inputs make traced outputs."""
from __future__ import annotations

import functools

import numpy as np

from .. import lax
from ..core import Tracer
from ..errors import FxadValueError
from ..rules.helpers import dtype_of, shape_of

from .at import indexable
from .manipulation import stack


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


def zeros_like(a, dtype=None, shape=None):
    dt, s = _like(a, dtype, shape)
    return indexable(np.zeros(s, dt))


empty_like = zeros_like  # "uninitialized" values: zeros are as good as any


def result_type(*arrays_and_dtypes):
    """np.result_type, with traced values standing for arrays of their dtype."""
    return np.result_type(*(dtype_of(x) if isinstance(x, Tracer) else x
                            for x in arrays_and_dtypes))


def ones_like(a, dtype=None, shape=None):
    dt, s = _like(a, dtype, shape)
    return indexable(np.ones(s, dt))


def full_like(a, fill_value, dtype=None, shape=None):
    dt, s = _like(a, dtype, shape)
    return full(s, fill_value, dt)


def full(shape, fill_value, dtype=None):  # a traced fill value is broadcast
    if isinstance(fill_value, Tracer):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        v = fill_value if dtype is None else lax.convert_element_type(fill_value, dtype)
        return lax.broadcast_to(v, shape)
    return indexable(np.full(shape, fill_value, dtype))


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        return indexable(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))
    div = (num - 1) if endpoint else num
    steps = np.arange(num, dtype=np.float64) / max(div, 1)
    out = lax.add(start, lax.mul(lax.sub(stop, start), steps))
    return out if dtype is None else lax.convert_element_type(out, dtype)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    if axis != 0:
        raise FxadValueError("fxad's logspace supports axis=0 only")
    out = lax.pow(base, linspace(start, stop, num, endpoint))
    return out if dtype is None else lax.convert_element_type(out, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Geometric steps between same-signed real endpoints, exact at both ends."""
    if axis != 0:
        raise FxadValueError("fxad's geomspace supports axis=0 only")
    sign = lax.sign(start)
    lo, hi = lax.log(lax.abs(start)), lax.log(lax.abs(stop))
    out = lax.mul(sign, lax.exp(linspace(lo, hi, num, endpoint)))
    ends = np.zeros(num, bool)
    ends[0] = True
    out = lax.select(ends, lax.broadcast_to(start, (num,)), out)
    if endpoint and num > 1:
        last = np.zeros(num, bool)
        last[-1] = True
        out = lax.select(last, lax.broadcast_to(stop, (num,)), out)
    return out if dtype is None else lax.convert_element_type(out, dtype)


def astype(x, dtype, /, *, copy=True, device=None):
    return lax.convert_element_type(x, dtype) if isinstance(x, Tracer) else \
        np.asarray(x).astype(dtype)


def _has_tracer(obj):
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_has_tracer(o) for o in obj)
    return False


def _stack_nested(obj):
    if isinstance(obj, (list, tuple)):
        return stack([_stack_nested(o) for o in obj])
    return obj


def array(obj, dtype=None, copy=True):
    """np.array, also for (nested) lists that contain tracers: those are stacked."""
    if _has_tracer(obj):
        out = _stack_nested(obj)
        return out if dtype is None else lax.convert_element_type(out, dtype)
    return indexable(np.array(obj, dtype=dtype, copy=copy))


def copy(a):
    """np.copy. A traced value is immutable (updates go through .at[]), so its copy is itself."""
    if isinstance(a, Tracer) or _has_tracer(a):
        return asarray(a)
    return np.copy(a)


def asarray(obj, dtype=None):
    if isinstance(obj, Tracer):
        return obj if dtype is None else lax.convert_element_type(obj, dtype)
    if _has_tracer(obj):
        return array(obj, dtype)
    return indexable(np.asarray(obj, dtype=dtype))

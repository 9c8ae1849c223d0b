"""What a NumPy user writes on a traced value: operators, array methods, and NumPy's own
functions (`np.sin(tracer)`, `np.sum(tracer)`) through the __array_ufunc__ and
__array_function__ protocols."""
from __future__ import annotations

import inspect

import numpy as np
import scipy.special

from .. import lax
from ..core import Tracer
from ..errors import FxadTypeError
from . import array_conversion  # noqa: F401  (Tracer.__array__'s error, told from NumPy's frames)
from . import bitwise, creation, indexing, manipulation as shape, products, reductions, series
from . import sorting, ufuncs
from ..rules.elementwise.arithmetic import add_p, div_p, mul_p, sub_p
from ..rules.structural.indexing import getitem
from .at import _IndexUpdateHelper


def _swap(f):
    return lambda self, other: f(other, self)


_OPS = {  # arithmetic binds its primitive directly: one call frame less on the hottest ops
    "add": add_p.bind, "sub": sub_p.bind, "mul": mul_p.bind, "truediv": div_p.bind,
    "floordiv": ufuncs.floor_divide, "mod": ufuncs.remainder, "pow": ufuncs.power,
    "matmul": products.matmul_operator,
}
for _name, _f in _OPS.items():
    setattr(Tracer, f"__{_name}__", lambda self, other, _f=_f: _f(self, other))
    setattr(Tracer, f"__r{_name}__", _swap(_f))

Tracer.__neg__ = lambda self: lax.neg(self)
Tracer.__pos__ = lambda self: self
Tracer.__abs__ = lambda self: lax.abs(self)
Tracer.__lt__ = lambda self, o: lax.lt(self, o)
Tracer.__le__ = lambda self, o: lax.le(self, o)
Tracer.__gt__ = lambda self, o: lax.gt(self, o)
Tracer.__ge__ = lambda self, o: lax.ge(self, o)
Tracer.__eq__ = lambda self, o: lax.eq(self, o)
Tracer.__ne__ = lambda self, o: lax.ne(self, o)
Tracer.__and__ = Tracer.__rand__ = lambda self, o: bitwise.bitwise_and(self, o)
Tracer.__or__ = Tracer.__ror__ = lambda self, o: bitwise.bitwise_or(self, o)
Tracer.__xor__ = Tracer.__rxor__ = lambda self, o: bitwise.bitwise_xor(self, o)
Tracer.__lshift__ = lambda self, o: bitwise.left_shift(self, o)
Tracer.__rlshift__ = lambda self, o: bitwise.left_shift(o, self)
Tracer.__rshift__ = lambda self, o: bitwise.right_shift(self, o)
Tracer.__rrshift__ = lambda self, o: bitwise.right_shift(o, self)
Tracer.__divmod__ = lambda self, o: ufuncs.divmod(self, o)
Tracer.__rdivmod__ = lambda self, o: ufuncs.divmod(o, self)
Tracer.__invert__ = lambda self: bitwise.invert(self)
Tracer.__getitem__ = lambda self, idx: getitem(self, idx)

Tracer.T = property(lambda self: shape.transpose(self))
Tracer.mT = property(lambda self: shape.swapaxes(self, -1, -2))
# The reductions take ndarray's methods' signatures (positional order with `out`, and the
# keywords where= / initial= / correction= / mean= of the functions they call).
Tracer.sum = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: \
    reductions.sum(self, axis, dtype, keepdims, out=out, **kw)
Tracer.prod = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: \
    reductions.prod(self, axis, dtype, keepdims, out=out, **kw)
Tracer.mean = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: \
    reductions.mean(self, axis, dtype, keepdims, out=out, **kw)
Tracer.var = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw: \
    reductions.var(self, axis, dtype, ddof, keepdims, out=out, **kw)
Tracer.std = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw: \
    reductions.std(self, axis, dtype, ddof, keepdims, out=out, **kw)
Tracer.max = lambda self, axis=None, out=None, keepdims=False, **kw: \
    reductions.max(self, axis, keepdims, out=out, **kw)
Tracer.min = lambda self, axis=None, out=None, keepdims=False, **kw: \
    reductions.min(self, axis, keepdims, out=out, **kw)
Tracer.argmax = lambda self, axis=None, out=None, *, keepdims=False: \
    reductions.argmax(self, axis, keepdims, out=out)
Tracer.argmin = lambda self, axis=None, out=None, *, keepdims=False: \
    reductions.argmin(self, axis, keepdims, out=out)
Tracer.reshape = lambda self, *s, order="C": shape.reshape(
    self, s[0] if len(s) == 1 and not isinstance(s[0], int) else s, order)
Tracer.transpose = lambda self, *axes: shape.transpose(
    self, (axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes) or None)
Tracer.swapaxes = lambda self, a, b: shape.swapaxes(self, a, b)
Tracer.copy = lambda self: self  # traced values are immutable: the copy is the value
# Python numbers out of a traced value: refused as float() is (they would drop the trace).
Tracer.item = lambda self: self._scalar(lambda v: np.asarray(v).item(), "item")
Tracer.tolist = lambda self: self._scalar(lambda v: np.asarray(v).tolist(), "tolist")
Tracer.squeeze = lambda self, axis=None: shape.squeeze(self, axis)
Tracer.ravel = Tracer.flatten = lambda self: shape.ravel(self)
Tracer.astype = lambda self, dtype: lax.convert_element_type(self, dtype)
Tracer.dot = lambda self, other: products.dot(self, other)


def _clip(self, min=None, max=None, out=None):  # noqa: A002  (ndarray.clip's names)
    reductions._no_out(out, "clip")
    return ufuncs.clip(self, min, max)


Tracer.clip = _clip
Tracer.round = lambda self, decimals=0: ufuncs.round(self, decimals)
Tracer.at = property(lambda self: _IndexUpdateHelper(self))
Tracer.real = property(lambda self: lax.real(self))
Tracer.imag = property(lambda self: lax.imag(self))
Tracer.conj = Tracer.conjugate = lambda self: lax.conj(self)
Tracer.nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)
Tracer.itemsize = property(lambda self: self.aval.dtype.itemsize)
Tracer.cumsum = lambda self, axis=None, dtype=None, out=None: \
    reductions.cumsum(self, axis, dtype, out)
Tracer.cumprod = lambda self, axis=None, dtype=None, out=None: \
    reductions.cumprod(self, axis, dtype, out)
Tracer.any = lambda self, axis=None, out=None, keepdims=False: \
    reductions.any(self, axis, keepdims, out=out)
Tracer.all = lambda self, axis=None, out=None, keepdims=False: \
    reductions.all(self, axis, keepdims, out=out)
Tracer.repeat = lambda self, repeats, axis=None: shape.repeat(self, repeats, axis)
Tracer.take = lambda self, indices, axis=None, out=None, mode=None: \
    indexing.take(self, indices, axis, out, mode)
Tracer.diagonal = lambda self, offset=0, axis1=0, axis2=1: \
    shape.diagonal(self, offset, axis1, axis2)
Tracer.trace = lambda self, offset=0, axis1=0, axis2=1: shape.trace(self, offset, axis1, axis2)
Tracer.argsort = lambda self, axis=-1, kind=None, order=None, *, stable=None: \
    sorting.argsort(self, axis, kind, order, stable=stable)
Tracer.nonzero = lambda self: sorting.nonzero(self)
Tracer.searchsorted = lambda self, v, side="left", sorter=None: \
    series.searchsorted(self, v, side, sorter)


def _in_place(name, instead):
    def method(self, *args, **kwargs):
        raise FxadTypeError(f"x.{name}() changes an array in place, which a traced value "
                            f"cannot do; use {instead}")
    return method


Tracer.sort = _in_place("sort", "x = np.sort(x)")
Tracer.fill = _in_place("fill", "np.full_like(x, value)")


# --- NumPy's protocols ------------------------------------------------------------------------

_DOC = "see notes/06_numpy_dispatch.md for what NumPy dispatch covers"


_COUNTERPARTS = {}  # NumPy/SciPy module name -> fxad's namespace


def register_counterparts(**namespaces):
    """fxad.numpy (with linalg and fft) and fxad.scipy.special register themselves once their
    names exist: they build on this module, so it does not import them."""
    _COUNTERPARTS.update(namespaces)


def _counterpart_module(module_name):
    """fxad's module for a NumPy module, by the function's own module: np.linalg.trace must
    not be taken for np.trace (same name, different axes)."""
    return _COUNTERPARTS.get(module_name)


_ufunc_targets = {}  # ufunc -> (fxad function or None, its public name): found once per ufunc


def _ufunc_target(ufunc):
    name = ufunc.__name__
    if getattr(np, name, None) is ufunc:
        return getattr(_counterpart_module("numpy"), name, None), f"numpy.{name}"
    if getattr(scipy.special, name, None) is ufunc:
        return getattr(_counterpart_module("scipy.special"), name, None), f"scipy.special.{name}"
    return None, name


def _ufunc_method(ufunc, method):
    """np.add.reduce(x, axis=0), np.multiply.accumulate(x), ...: the reduction or running
    reduction fxad has for that ufunc (ufunc methods default to axis 0), else None."""
    table = _REDUCE if method == "reduce" else _ACCUMULATE if method == "accumulate" else {}
    fn = table.get(ufunc.__name__)
    if fn is None:
        return None

    def call(x, axis=0, dtype=None, keepdims=False):
        if method == "accumulate":
            if keepdims:
                raise FxadTypeError("accumulate takes no keepdims")
            return fn(x, axis, dtype)
        return fn(x, axis, dtype, keepdims)
    return call


_REDUCE = {"add": reductions.sum, "multiply": reductions.prod,
           "maximum": lambda x, axis, dtype, keepdims: reductions.max(
               x if dtype is None else lax.convert_element_type(x, dtype), axis, keepdims),
           "minimum": lambda x, axis, dtype, keepdims: reductions.min(
               x if dtype is None else lax.convert_element_type(x, dtype), axis, keepdims),
           "logical_and": lambda x, axis, dtype, keepdims: reductions.all(x, axis, keepdims),
           "logical_or": lambda x, axis, dtype, keepdims: reductions.any(x, axis, keepdims)}
_ACCUMULATE = {"add": reductions.cumsum, "multiply": reductions.cumprod}


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    target = _ufunc_targets.get(ufunc)
    if target is None:
        target = _ufunc_targets[ufunc] = _ufunc_target(ufunc)
    fn, where = target
    if method in ("reduce", "accumulate") and len(inputs) == 1 and \
            set(kwargs) <= {"axis", "dtype", "keepdims"}:
        call = _ufunc_method(ufunc, method)
        if call is not None:
            return call(*inputs, **kwargs)
    if method != "__call__" or kwargs or fn is None:
        raise FxadTypeError(
            f"fxad cannot apply {where}{'.' + method if method != '__call__' else ''}"
            f"{' with ' + ', '.join(kwargs) if kwargs else ''} to a traced value; use "
            f"fxad.numpy / fxad.scipy ({_DOC})")
    return fn(*inputs)


def _array_function(self, func, types, args, kwargs):
    module = getattr(func, "__module__", None) or "numpy"
    ns = _counterpart_module(module)
    fn = getattr(ns, func.__name__, None) if ns is not None else None
    if fn is None or fn is func:
        raise FxadTypeError(f"fxad has no differentiable version of {module}.{func.__name__} "
                            "for traced values; use fxad.numpy or compute it outside the "
                            f"transformation ({_DOC})")
    if kwargs:  # NumPy options fxad's version lacks (out=, where=, initial=, ...)
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = None
        if params is not None and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            extra = [k for k in kwargs if k not in params]
            if extra:
                raise FxadTypeError(f"fxad's version of {module}.{func.__name__} does not "
                                    f"support {', '.join(f'{k}=' for k in extra)} on traced "
                                    f"values; compute without it ({_DOC})")
    return fn(*args, **kwargs)


Tracer.__array_ufunc__ = _array_ufunc
Tracer.__array_function__ = _array_function
__all__ = ["creation"]  # imported for its side effects on Tracer

"""What every fxad.random function checks first: the key, the shape and the dtype (JAX's
defaults with 64-bit types: float64, int64, uint64)."""
from __future__ import annotations

import operator

import numpy as np

from ..core import Tracer, get_aval
from ..errors import FxadTypeError, FxadValueError
from ..rules.helpers import shape_of

_U32 = np.dtype(np.uint32)


def check_key(name, key):
    """A single key (uint32, shape (2,)) or a clear error naming the fix."""
    if not isinstance(key, (Tracer, np.ndarray)):
        dt = getattr(key, "dtype", None)
        if dt is not None and str(dt).startswith("key<"):
            raise FxadTypeError(f"{name}: got a typed JAX key ({dt}); fxad keys are raw uint32 "
                                "arrays of shape (2,): pass np.asarray(jax.random.key_data(k)) "
                                "(the same bits, so the same streams)")
        key = np.asarray(key)
    aval = get_aval(key)
    if aval.dtype != _U32:
        hint = (" A float key usually means a key was cast to float or is being "
                "differentiated: keys are bit patterns, not parameters; keep them uint32 and "
                "take derivatives with respect to the other arguments."
                if aval.dtype.kind in "fc" else "")
        raise FxadTypeError(f"{name}: a key must be a uint32 array of shape (2,) (from "
                            f"fxad.random.key, PRNGKey, split or fold_in), got "
                            f"{aval.str_short()}.{hint}")
    if aval.shape != (2,):
        raise FxadValueError(f"{name} takes a single key of shape (2,), got keys of shape "
                             f"{aval.shape}. For a batch of keys, map over them: "
                             f"fxad.vmap(lambda k: fxad.random.{name}(k, ...))(keys)")
    return key


def canonical_shape(name, shape):
    if shape is None:
        return None
    if isinstance(shape, Tracer):
        raise FxadTypeError(f"{name}: the shape must be static Python ints, got a traced value")
    try:
        shape = (operator.index(shape),) if not hasattr(shape, "__iter__") else \
            tuple(operator.index(d) for d in shape)
    except TypeError:
        raise FxadTypeError(f"{name}: shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise FxadValueError(f"{name}: shape {shape} has a negative dimension")
    return shape


def check_shape(name, shape, *params):
    """`shape`, which the parameters' shapes must broadcast to exactly (or their broadcast
    shape when `shape` is None)."""
    shapes = [tuple(shape_of(p)) for p in params]
    try:
        full = np.broadcast_shapes(*shapes, *([shape] if shape is not None else []))
    except ValueError:
        full = None
    if shape is None:
        if full is None:
            raise FxadValueError(f"{name}: parameter shapes {shapes} do not broadcast together")
        return tuple(full)
    if full != shape:
        raise FxadValueError(f"{name}: parameter shapes {shapes} must broadcast to the shape "
                             f"argument {shape}")
    return shape


def float_dtype(name, dtype, complex_ok=False):
    dt = np.dtype(np.float64 if dtype is None else dtype)
    if dt.kind != "f" and not (complex_ok and dt.kind == "c"):
        raise FxadTypeError(f"{name}: dtype must be a float{' or complex' if complex_ok else ''}"
                            f" dtype, got {dt}")
    return dt


def int_dtype(name, dtype):
    dt = np.dtype(np.int64 if dtype is None else dtype)
    if dt.kind not in "iu":
        raise FxadTypeError(f"{name}: dtype must be an integer dtype, got {dt}")
    return dt


def inexact_dtype(*xs):
    """The float dtype values promote to (float64 for integers and Python numbers)."""
    avals = [get_aval(x) for x in xs]
    strong = [a.dtype for a in avals if a.weak is None]  # Python numbers defer to arrays
    dt = np.result_type(*strong) if strong else np.result_type(*[a.dtype for a in avals])
    return dt if dt.kind in "fc" else np.dtype(np.float64)

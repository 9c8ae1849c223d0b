"""ShapeDtypeStruct and eval_shape: a function's output shapes and dtypes, found by staging
it on abstract values (nothing is computed)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..core import _PY_SCALARS, ShapedArray, Tracer, get_aval
from ..ir.staging import stage
from ..tree_util import tree_flatten, tree_unflatten
from .common import _check_callable, _flat_fun, _leaf


class ShapeDtypeStruct:
    """A shape and a dtype standing for an array: what eval_shape returns, and what it (and
    `jit(f).lower`) accept in place of an array."""
    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, sharding=None, weak_type=False):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(map(int, self.shape)))

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype) == \
            (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]


def abstract(x) -> ShapedArray:
    """The abstract value of an argument: a ShapeDtypeStruct (or anything with `shape` and
    `dtype` that is not an array), an array, a number or a tracer."""
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, x.dtype)
    if type(x) in _PY_SCALARS or isinstance(x, (Tracer, np.ndarray, np.generic)):
        return get_aval(x)
    if hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(x, "__array__"):
        return ShapedArray(x.shape, x.dtype)
    return get_aval(_leaf(x))


def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """The pytree of ShapeDtypeStructs `fun(*args, **kwargs)` would return, found by staging
    `fun` on the arguments' shapes and dtypes: nothing is computed."""
    _check_callable("eval_shape", fun)
    flat, tree = tree_flatten((args, kwargs))
    flat_fun, store = _flat_fun(lambda a, k: fun(*a, **k), tree, where="eval_shape")
    closed = stage(flat_fun, [abstract(x) for x in flat], name="eval_shape")
    return tree_unflatten(store["out"], [ShapeDtypeStruct(a.shape, a.dtype)
                                         for a in closed.out_avals])

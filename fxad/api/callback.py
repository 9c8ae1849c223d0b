"""pure_callback (JAX's API): call opaque Python/NumPy/SciPy code from fxad programs, with
the results' shapes and dtypes declared up front so the call can be staged (jit), batched
(vmap) and wrapped in custom rules. The primitive is in fxad/rules/control/callback.py."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core import ShapedArray
from ..errors import FxadTypeError, FxadValueError
from ..rules.control.callback import VMAP_METHODS
from ..rules.control.callback import pure_callback as _bind
from ..tree_util import tree_flatten, tree_unflatten
from .common import _leaf
from .shapes import ShapeDtypeStruct  # noqa: F401  (declarations; fxad.ShapeDtypeStruct)


def _declared(x):
    """A result declaration leaf: anything with .shape and .dtype (ShapeDtypeStruct, a NumPy
    array, jax.ShapeDtypeStruct, ...)."""
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is None or dtype is None:
        raise FxadTypeError(f"pure_callback: result_shape_dtypes leaves need .shape and .dtype "
                            f"(e.g. fxad.ShapeDtypeStruct((3,), np.float64) or an example "
                            f"array), got {type(x).__name__}")
    return ShapedArray(tuple(shape), np.dtype(dtype))


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Call `callback(*args, **kwargs)` on NumPy arrays and return its result, a pytree
    matching `result_shape_dtypes` (leaves with .shape and .dtype). Works under jit (the
    program calls it each run) and vmap (see vmap_method); wrap it in custom_jvp /
    custom_vjp to differentiate it. The callback must be pure: fxad may call it on other
    values (e.g. once per example under vmap)."""
    if not callable(callback):
        raise FxadTypeError(f"pure_callback expects a function, got {type(callback).__name__}")
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise FxadValueError(f"pure_callback: vmap_method must be one of "
                             f"{', '.join(map(repr, VMAP_METHODS))} or None, got "
                             f"{vmap_method!r}")
    decl_leaves, out_tree = tree_flatten(result_shape_dtypes, is_leaf=_is_decl)
    result_avals = [_declared(x) for x in decl_leaves]
    leaves, in_tree = tree_flatten((args, kwargs))
    leaves = [_leaf(x) for x in leaves]

    def flat_callback(*xs):
        a, kw = tree_unflatten(in_tree, list(xs))
        out = callback(*a, **kw)
        got, tree = tree_flatten(out)
        if tree != out_tree:
            raise FxadTypeError(f"pure_callback: the callback returned a {tree}, but "
                                f"result_shape_dtypes has structure {out_tree}")
        return got
    outs = _bind(flat_callback, result_avals, vmap_method, *leaves)
    return tree_unflatten(out_tree, outs)


def _is_decl(x):
    return hasattr(x, "shape") and hasattr(x, "dtype")

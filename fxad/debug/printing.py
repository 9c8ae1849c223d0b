"""fxad.debug.print and fxad.debug.callback: see concrete values inside transformed code.

Eagerly and under grad/jvp/linearize the values are known, so the callback runs at once (on
the primal values: derivatives pass through untouched). Under jit the call is an effectful
equation of the staged program, so the generated code makes the call each time the program
runs, in program order. Under vmap it is called once per example, in order."""
from __future__ import annotations

import builtins
from typing import Any, Callable

import numpy as np

from ..core import _NUMERIC_KINDS, Tracer
from ..rules.control.debug_callback import debug_callback
from ..tree_util import tree_flatten, tree_unflatten


def _is_value(x):
    """A leaf fxad can carry through a program (arrays, numbers, traced values); other
    leaves (strings, objects) are passed to the callback as they are."""
    if isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex)):
        return not isinstance(x, np.ndarray) or x.dtype.kind in _NUMERIC_KINDS
    return False


def callback(callback: Callable, *args: Any, ordered: bool = False, partitioned: bool = False,
             **kwargs: Any) -> None:
    """Call `callback(*args, **kwargs)` with concrete values (NumPy arrays) when the program
    runs, under any transformation. Returns None. (`ordered`, `partitioned` are accepted
    for JAX code: fxad runs calls in program order on one device.)"""
    if not callable(callback):
        raise TypeError(f"fxad.debug.callback expects a function, got "
                        f"{type(callback).__name__}")
    leaves, tree = tree_flatten((args, kwargs))
    dyn = [i for i, x in enumerate(leaves) if _is_value(x)]

    def flat_callback(*vals):
        full = list(leaves)
        for i, v in zip(dyn, vals):
            full[i] = v
        a, k = tree_unflatten(tree, full)
        callback(*a, **k)
    debug_callback(*[leaves[i] for i in dyn], callback=flat_callback)
    return None


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001
    """`print(fmt.format(*args, **kwargs))` with the concrete values, when the program runs:
    `fxad.debug.print("x = {x}", x=x)` inside jit, grad or vmap."""
    if not isinstance(fmt, str):
        raise TypeError(f"fxad.debug.print: the format must be a string, got "
                        f"{type(fmt).__name__}")
    callback(lambda *a, **k: builtins.print(fmt.format(*a, **k)), *args, **kwargs)

"""Pooling layers for fxad.nn, with flax.linen's signatures (the de-facto JAX reference):
inputs are (batch, spatial..., features) -- NHWC for images -- or (spatial..., features)
without the batch axis; the window, strides and padding name the spatial axes only.

max_pool's derivative goes to the first maximal element of each window (ties as JAX: see
fxad/rules/reduction/windowed.py); avg_pool's is spread evenly over each window.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from ..core import get_aval
from ..errors import FxadValueError
from ..lax.windowed import reduce_window_max, reduce_window_min, reduce_window_sum

__all__ = ["avg_pool", "max_pool", "min_pool", "pool"]


def _full(inputs, window_shape, strides, padding, name):
    """Window, strides and padding over every axis of `inputs` (1 / (0, 0) for the batch
    and feature axes)."""
    window_shape = tuple(int(k) for k in window_shape)
    d = len(window_shape)
    nd = len(get_aval(inputs).shape)
    if nd not in (d + 1, d + 2):
        raise FxadValueError(f"{name}: inputs of rank {nd} do not fit a {d}-d window; pass "
                             f"(batch, spatial..., features) or (spatial..., features)")
    lead = nd - d - 1  # 1 with a batch axis, 0 without
    strides = (1,) * d if strides is None else tuple(int(s) for s in strides)
    if len(strides) != d:
        raise FxadValueError(f"{name}: strides {strides} need {d} entries, like window_shape")
    if not isinstance(padding, str):
        try:
            pads = tuple((int(lo), int(hi)) for lo, hi in padding)
        except (TypeError, ValueError):
            raise FxadValueError(f"{name}: padding must be 'VALID', 'SAME' or (low, high) "
                                 f"pairs, got {padding!r}") from None
        if len(pads) != d:
            raise FxadValueError(f"{name}: padding needs {d} (low, high) pairs, got "
                                 f"{len(pads)}")
        padding = ((0, 0),) * lead + pads + ((0, 0),)
    return (1,) * lead + window_shape + (1,), (1,) * lead + strides + (1,), padding


def pool(inputs, init_value, reduce_fn, window_shape, strides=None, padding="VALID"):
    """flax's `pool`: reduce_window over the spatial axes with `reduce_fn` (fxad.lax.add /
    max / min / mul, or their NumPy ufuncs) starting from `init_value`."""
    window, strides, padding = _full(inputs, window_shape, strides, padding, "pool")
    return lax.reduce_window(inputs, init_value, reduce_fn, window, strides, padding)


def max_pool(inputs, window_shape, strides=None, padding="VALID"):
    """The max of each window (padding never wins)."""
    window, strides, padding = _full(inputs, window_shape, strides, padding, "max_pool")
    return reduce_window_max(inputs, window, strides, padding)


def min_pool(inputs, window_shape, strides=None, padding="VALID"):
    """The min of each window (padding never wins)."""
    window, strides, padding = _full(inputs, window_shape, strides, padding, "min_pool")
    return reduce_window_min(inputs, window, strides, padding)


def avg_pool(inputs, window_shape, strides=None, padding="VALID", count_include_pad=True):
    """The mean of each window. With padding, `count_include_pad=True` (flax's default)
    divides by the window size, False by the number of real elements in the window."""
    window, strides, padding = _full(inputs, window_shape, strides, padding, "avg_pool")
    total = reduce_window_sum(inputs, window, strides, padding)
    if count_include_pad:
        return lax.div(total, float(np.prod(window)))
    aval = get_aval(inputs)
    count = reduce_window_sum(np.ones(aval.shape, aval.dtype), window, strides, padding)
    return lax.div(total, count)

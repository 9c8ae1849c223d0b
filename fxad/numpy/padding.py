"""np.pad: every NumPy mode. Constant padding scatter-adds the array into a filled one; edge,
reflect, symmetric and wrap are gathers; linear_ramp, maximum, minimum, mean and median are
computed from the array, one axis after the other as NumPy does."""
from __future__ import annotations

import builtins

import numpy as np

from .. import lax
from ..errors import FxadValueError
from ..rules.helpers import dtype_of, shape_of
from ..rules import ops as _ops
from ..rules.structural.indexing import getitem, parse_index, scatter_add
from .indexing import take
from .manipulation import concatenate, ndim, shape
from .reductions import max as _max, mean as _mean, min as _min
from .statistics import median as _median
from ._lists import stack_traced_lists


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


@stack_traced_lists
def pad(array, pad_width, mode="constant", constant_values=0, reflect_type="even", *,
        stat_length=None, end_values=0):
    """Constant padding scatter-adds the array into a filled one; edge/reflect/symmetric/wrap
    are gathers whose indices NumPy's own pad computes from an arange (so they match it);
    linear_ramp, maximum, minimum, mean and median are computed from the array (below)."""
    if mode in ("linear_ramp", "maximum", "minimum", "mean", "median"):
        return _pad_computed(array, pad_width, mode, stat_length, end_values)
    if mode not in _PAD_MODES:
        raise FxadValueError(f"fxad.numpy.pad supports modes {', '.join(_PAD_MODES)}, "
                             f"not {mode!r}")
    s = shape(array)
    pw = np.broadcast_to(np.asarray(pad_width, dtype=int), (len(s), 2))
    if mode != "constant":
        if reflect_type != "even":
            raise FxadValueError("fxad.numpy.pad supports reflect_type='even' only")
        for ax, (lo, hi) in enumerate(pw):
            if lo or hi:
                array = take(array, np.pad(np.arange(s[ax]), (int(lo), int(hi)), mode), ax)
        return array
    out_shape = tuple(int(d + lo + hi) for d, (lo, hi) in zip(s, pw))
    base = np.full(out_shape, constant_values, dtype=dtype_of(array))
    idx = tuple(slice(int(lo), int(lo) + d) for d, (lo, _) in zip(s, pw))
    spec, arrays = parse_index(idx)
    base_zeroed = base.copy()
    base_zeroed[idx] = 0
    return scatter_add(base_zeroed, arrays, array, spec)


def _pad_widths(pad_width, nd):
    return np.broadcast_to(np.asarray(pad_width, dtype=int), (nd, 2))


def _per_axis(v, nd, name):
    """A scalar, a pair, or one pair per axis -> one (before, after) pair per axis."""
    if v is None:
        return [(None, None)] * nd
    arr = np.asarray(v, dtype=object)
    try:
        return [tuple(r) for r in np.broadcast_to(arr, (nd, 2))]
    except ValueError:
        raise FxadValueError(f"pad: {name} must be a scalar, a pair, or one pair per "
                             "axis") from None


def _pad_computed(array, pad_width, mode, stat_length, end_values):
    """pad's modes whose values are computed from the array: linear_ramp (from the edge
    value to `end_values`), and maximum, minimum, mean, median (of the `stat_length`
    elements nearest each end). Axes are padded in turn, as NumPy does."""
    nd = ndim(array)
    widths = _pad_widths(pad_width, nd)
    stats = _per_axis(stat_length, nd, "stat_length")
    ends = _per_axis(end_values, nd, "end_values")
    stat = {"maximum": _max, "minimum": _min, "mean": _mean, "median": _median}.get(mode)
    for ax in range(nd):
        lo, hi = (int(w) for w in widths[ax])
        if not (lo or hi):
            continue
        n = shape_of(array)[ax]
        pre = (slice(None),) * ax
        parts = []
        for side, width in (("lo", lo), ("hi", hi)):
            if not width:
                parts.append(None)
                continue
            shape = list(shape_of(array))
            shape[ax] = width
            if mode == "linear_ramp":
                edge = getitem(array, pre + (slice(0, 1) if side == "lo" else slice(n - 1, n),))
                end = ends[ax][0 if side == "lo" else 1]
                # NumPy's ramp: linspace(end, edge, width, endpoint=False), reversed after
                # the array, i.e. end + i * (edge - end) / width; floored for integers
                i = np.arange(width, dtype=np.float64)
                i = i if side == "lo" else i[::-1]
                w = i.reshape(tuple(width if j == ax else 1 for j in range(nd)))
                if dtype_of(edge).kind not in "fc":  # (uint8: edge - end would wrap)
                    edge = lax.convert_element_type(edge, np.float64)
                step = lax.div(lax.sub(edge, end), np.float64(width))
                ramp = lax.add(lax.mul(w, step), end)
                if dtype_of(array).kind in "iu":
                    ramp = _ops.floor(ramp)
                part = lax.broadcast_to(ramp, tuple(shape))
            else:
                k = stats[ax][0 if side == "lo" else 1]
                k = n if k is None else builtins.min(builtins.max(int(k), 1), n)
                window = getitem(array, pre + (slice(0, k) if side == "lo" else slice(n - k, n),))
                v = stat(window, axis=ax, keepdims=True)
                part = lax.broadcast_to(v, tuple(shape))
            if dtype_of(part) != dtype_of(array):
                part = lax.convert_element_type(
                    _ops.round(part) if dtype_of(array).kind in "iu" else part, dtype_of(array))
            parts.append(part)
        array = concatenate([p for p in (parts[0], array, parts[1]) if p is not None], ax)
    return array


__all__ = ["pad"]

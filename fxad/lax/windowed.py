"""fxad.lax's windowed reductions with JAX's names and semantics: `reduce_window` and the
sum / max / min forms of it. The primitives live in fxad/rules/reduction/windowed.py.

JAX's `reduce_window(operand, init_value, computation, ...)` reduces each window's elements
(padding and base-dilation holes are skipped) and combines the result with `init_value`
once. With the computation's identity as `init_value` (0 for add, -inf for max, ...) that is
one primitive; with another initial value fxad combines it elementwise afterwards, which
stays differentiable (JAX cannot differentiate that case).
"""
from __future__ import annotations

import operator

import numpy as np

from ..core import Tracer, get_aval
from ..errors import FxadTypeError, FxadValueError
from .convolution import padtype_to_pads
from ..rules import ops
from ..rules._support.window_kernels import dilated, window_out_size
from ..rules.reduction.windowed import identity, normalize, reduce_window_max_p, reduce_window_min_p
from ..rules.reduction.windowed import reduce_window_sum_p

__all__ = ["reduce_window", "reduce_window_max", "reduce_window_min", "reduce_window_shape_tuple",
           "reduce_window_sum"]


def _window_params(operand, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation, name):
    shape = get_aval(operand).shape
    nd = len(shape)

    def ints(seq, what):
        if seq is None:
            return (1,) * nd
        out = tuple(int(v) for v in seq)
        if len(out) != nd:
            raise FxadValueError(f"{name}: {what} needs {nd} entries (one per operand axis), "
                                 f"got {len(out)}")
        return out
    window = ints(window_dimensions, "window_dimensions") if window_dimensions is not None \
        else None
    if window is None:
        raise FxadValueError(f"{name}: window_dimensions is required")
    strides = ints(window_strides, "window_strides")
    base = ints(base_dilation, "base_dilation")
    wdil = ints(window_dilation, "window_dilation")
    if isinstance(padding, str):  # as JAX: the undilated operand, the dilated window
        pads = padtype_to_pads(shape, [dilated(k, b) for k, b in zip(window, wdil)], strides,
                               padding)
    else:
        try:
            pads = [(int(lo), int(hi)) for lo, hi in padding]
        except (TypeError, ValueError):
            raise FxadValueError(f"{name}: padding must be 'VALID', 'SAME', 'SAME_LOWER' or "
                                 f"(low, high) pairs, got {padding!r}") from None
        if len(pads) != nd:
            raise FxadValueError(f"{name}: padding needs {nd} (low, high) pairs, got "
                                 f"{len(pads)}")
    return normalize(window, strides, pads, base, wdil)


def reduce_window_sum(operand, window_dimensions, window_strides=None, padding="VALID",
                      base_dilation=None, window_dilation=None):
    """The sum of each window."""
    return reduce_window_sum_p.bind(operand, **_window_params(
        operand, window_dimensions, window_strides, padding, base_dilation, window_dilation,
        "reduce_window_sum"))


def reduce_window_max(operand, window_dimensions, window_strides=None, padding="VALID",
                      base_dilation=None, window_dilation=None):
    """The max of each window; its derivative goes to the first maximal element."""
    return reduce_window_max_p.bind(operand, **_window_params(
        operand, window_dimensions, window_strides, padding, base_dilation, window_dilation,
        "reduce_window_max"))


def reduce_window_min(operand, window_dimensions, window_strides=None, padding="VALID",
                      base_dilation=None, window_dilation=None):
    """The min of each window; its derivative goes to the first minimal element."""
    return reduce_window_min_p.bind(operand, **_window_params(
        operand, window_dimensions, window_strides, padding, base_dilation, window_dilation,
        "reduce_window_min"))


def _reduce_window_prod(operand, params):
    """The product of each window, as a product of strided slices of the operand padded with
    ones: differentiating the chain of multiplications gives the product of the other
    elements, exact at zeros too, at every order."""
    shape, dt = get_aval(operand).shape, get_aval(operand).dtype
    unit = dict(params, window_dimensions=(1,) * len(shape), window_strides=(1,) * len(shape))
    # the operand placed in the padded, dilated frame (zeros around) plus ones in the gaps
    xp = reduce_window_sum_p.bind(operand, **unit)
    holes = 1 - np.asarray(reduce_window_sum_p.impl(np.ones(shape, dt), **unit))
    xp = ops.add(xp, holes.astype(dt))
    out_shape = tuple(window_out_size(n, p, a, k, b, s) for n, p, a, k, b, s in zip(
        shape, params["padding"], params["base_dilation"], params["window_dimensions"],
        params["window_dilation"], params["window_strides"]))
    if 0 in out_shape:
        return np.ones(out_shape, dt)
    out = None
    for offs in np.ndindex(*params["window_dimensions"]):
        idx = tuple(slice(j * b, j * b + (m - 1) * s + 1, s) for j, b, s, m in zip(
            offs, params["window_dilation"], params["window_strides"], out_shape))
        term = ops.getitem(xp, idx)
        out = term if out is None else ops.mul(out, term)
    return out


_KINDS = {"add": "sum", "sum": "sum", "max": "max", "min": "min", "mul": "prod",
          "prod": "prod"}


def _kind_of(computation):
    """'sum' / 'max' / 'min' / 'prod' for the computations fxad knows, else None."""
    if isinstance(computation, str):
        return _KINDS.get(computation.lower())
    known = {ops.add: "sum", ops.max: "max", ops.min: "min", ops.mul: "prod",
             np.add: "sum", np.maximum: "max", np.minimum: "min", np.multiply: "prod",
             operator.add: "sum", operator.mul: "prod"}
    try:
        return known.get(computation)
    except TypeError:  # unhashable
        return None


_COMBINE = {"sum": ops.add, "max": ops.max, "min": ops.min, "prod": ops.mul}


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """JAX's `lax.reduce_window` for the computations add, max, min and mul, given as
    fxad.lax.add / max / min / mul, NumPy's ufuncs (np.add, np.maximum, ...) or the strings
    'add', 'max', 'min', 'mul'. Each window's elements are reduced, then combined once with
    `init_value` (skipped when it is the computation's identity)."""
    if isinstance(operand, (tuple, list, dict)):
        raise FxadTypeError("reduce_window: fxad reduces one array at a time; call it once "
                            "per operand")
    kind = _kind_of(computation)
    if kind is None:
        raise FxadTypeError(
            f"reduce_window: computation {computation!r} is not one fxad knows; use "
            "fxad.lax.add / max / min / mul, np.add / np.maximum / np.minimum / np.multiply, "
            "or 'add' / 'max' / 'min' / 'mul'")
    params = _window_params(operand, window_dimensions, window_strides, padding, base_dilation,
                            window_dilation, "reduce_window")
    dt = get_aval(operand).dtype
    if kind == "sum":
        out = reduce_window_sum_p.bind(operand, **params)
    elif kind == "max":
        out = reduce_window_max_p.bind(operand, **params)
    elif kind == "min":
        out = reduce_window_min_p.bind(operand, **params)
    else:
        out = _reduce_window_prod(operand, params)
    if isinstance(init_value, Tracer) or np.ndim(init_value) != 0:
        if get_aval(init_value).shape != ():
            raise FxadValueError("reduce_window: init_value must be a scalar")
        return _COMBINE[kind](out, init_value)
    unit = 1 if kind == "prod" else identity(kind, dt)
    if init_value == unit:
        return out
    return ops.convert_element_type(_COMBINE[kind](out, init_value), dt)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The output shape of a windowed reduction with explicit padding."""
    nd = len(operand_shape)
    base = base_dilation or (1,) * nd
    wdil = window_dilation or (1,) * nd
    return tuple(window_out_size(n, tuple(p), a, k, b, s) for n, p, a, k, b, s in zip(
        operand_shape, padding, base, window_dimensions, wdil, window_strides))

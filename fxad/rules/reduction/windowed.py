"""Windowed reductions (JAX's semantics): `reduce_window_sum`, `reduce_window_max`,
`reduce_window_min`, and the two linear primitives behind max/min's derivatives,
`select_and_gather_add` and `select_and_scatter_add`.

Every primitive here takes the same window parameters, normalized by the callers
(fxad/lax/windowed.py): `window_dimensions`, `window_strides`, `base_dilation`,
`window_dilation` (tuples of ints, one per operand axis) and `padding` ((lo, hi) pairs;
negative values crop). Padding and the holes of base dilation hold the reduction's identity
(0, -inf, +inf): they never win a max and add nothing to a sum.

- `reduce_window_sum` is linear; its transpose is another windowed sum, of the cotangent
  dilated by the strides (base dilation) and padded so each input position sums the windows
  that covered it: the same construction as a convolution's lhs transpose, with a kernel of
  ones, so no dense mask and no scatter.
- `reduce_window_max` / `_min` route the tangent to the selected element of each window:
  the JVP is `select_and_gather_add(t, x)` (t at each window's arg-max), whose transpose is
  `select_and_scatter_add(ct, x)` (each window's cotangent added at its arg-max) and vice
  versa. Both are linear in their first operand; x only selects, so it has no derivative.
  The selection scans the window row-major and keeps the current element unless the
  candidate beats it strictly (XLA's select with >=, as JAX): among ties the FIRST element
  wins, in forward and reverse mode alike (fxad's reduce_max splits ties evenly instead).
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ...errors import FxadTypeError, FxadValueError
from ..helpers import bdim_to_front, broadcast_batched, deflinear, shape_of, unbroadcast
from ...interpreters.jvp import Zero
from .._support.window_kernels import (dilated, gather_selected, reduce_windows, scatter_selected,
                             window_out_size)

_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
           "window_dilation")


def _window_args(params):
    return [params[k] for k in _PARAMS]


def _window_shape(name, shape, window_dimensions, window_strides, padding, base_dilation,
                  window_dilation):
    nd = len(shape)
    if not (len(window_dimensions) == len(window_strides) == len(padding) ==
            len(base_dilation) == len(window_dilation) == nd):
        raise FxadValueError(f"{name}: window_dimensions, window_strides, padding and the "
                             f"dilations need one entry per operand axis ({nd})")
    if min(window_dimensions + window_strides + base_dilation + window_dilation,
           default=1) < 1:
        raise FxadValueError(f"{name}: window sizes, strides and dilations must be >= 1")
    for n, (lo, hi), a in zip(shape, padding, base_dilation):
        if dilated(n, a) + lo + hi < 0:
            raise FxadValueError(f"{name}: padding ({lo}, {hi}) crops more than the {n} "
                                 "positions of the operand")
    return tuple(window_out_size(n, p, a, k, b, s) for n, p, a, k, b, s in
                 zip(shape, padding, base_dilation, window_dimensions, window_dilation,
                     window_strides))


def identity(kind, dtype):
    """The value padding holds for a sum / max / min of this dtype."""
    dtype = np.dtype(dtype)
    if kind == "sum":
        return dtype.type(0)
    if dtype.kind == "f":
        return dtype.type(-np.inf if kind == "max" else np.inf)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype.type(info.min if kind == "max" else info.max)
    if dtype.kind == "b":
        return np.bool_(kind != "max")
    raise FxadTypeError(f"reduce_window_{kind}: operands of dtype {dtype} have no order; "
                        "use real numbers")


def _check_dtype(name, dtype):
    if np.dtype(dtype).kind not in "biufc":
        raise FxadTypeError(f"{name}: operands of dtype {dtype} are not numbers")


def _batch_window(params):
    """The window parameters with a leading batch axis of window 1."""
    return dict(params, window_dimensions=(1,) + params["window_dimensions"],
                window_strides=(1,) + params["window_strides"],
                padding=((0, 0),) + params["padding"],
                base_dilation=(1,) + params["base_dilation"],
                window_dilation=(1,) + params["window_dilation"])


def _window_batch(prim):
    """Batching for every primitive here: batch axes to the front (an unbatched operand is
    broadcast), the window extended by one axis of size 1."""
    def rule(vals, dims, **params):
        size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not None)
        vals = [bdim_to_front(v, d) if d is not None else broadcast_batched(v, d, size)
                for v, d in zip(vals, dims)]
        return prim.bind(*vals, **_batch_window(params)), 0
    prim.def_batch(rule)


def _transposed_window(shape, ct_shape, window_dimensions, window_strides, padding,
                       base_dilation, window_dilation):
    """Window parameters of the sum that transposes a windowed sum (see the docstring)."""
    pads = []
    for n, m, (lo, _), a, k, b, s in zip(shape, ct_shape, padding, base_dilation,
                                         window_dimensions, window_dilation, window_strides):
        kd = dilated(k, b)
        lo_t = kd - 1 - lo
        pads.append((lo_t, dilated(n, a) + kd - 1 - dilated(m, s) - lo_t))
    return dict(window_dimensions=window_dimensions, window_strides=base_dilation,
                padding=tuple(pads), base_dilation=window_strides,
                window_dilation=window_dilation)


# --- reduce_window_sum ----------------------------------------------------------------------

def _sum_impl(x, **params):
    x = np.asarray(x)
    _sum_shape(x, **params)
    return reduce_windows(np.add, x, *_window_args(params), identity("sum", x.dtype))


def _sum_shape(x, **params):
    _check_dtype("reduce_window_sum", x.dtype)
    if x.dtype == np.bool_:
        raise FxadTypeError("reduce_window_sum: boolean operands have no sum; convert them "
                            "with .astype(int)")
    return ShapedArray(_window_shape("reduce_window_sum", x.shape, *_window_args(params)),
                       x.dtype)


def _sum_transpose(ct, x, **params):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    ct_shape = shape_of(ct)
    if 0 in ct_shape:
        return [np.zeros(x.aval.shape, x.aval.dtype)]
    p = _transposed_window(x.aval.shape, ct_shape, *_window_args(params))
    return [unbroadcast(reduce_window_sum_p.bind(ct, **p), x.aval)]


reduce_window_sum_p = Primitive("reduce_window_sum", memory="fresh")
reduce_window_sum_p.def_impl(_sum_impl)
reduce_window_sum_p.def_abstract_eval(_sum_shape)
deflinear(reduce_window_sum_p, _sum_transpose)
_window_batch(reduce_window_sum_p)
def reduce_window_sum(x, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation):
    return reduce_window_sum_p.bind(x, **normalize(window_dimensions, window_strides, padding,
                                                   base_dilation, window_dilation))


# --- reduce_window_max / reduce_window_min ----------------------------------------------------

_BETTER = {"max": np.greater_equal, "min": np.less_equal}  # keep the current element if ...


def _chooser(kind):
    ufunc = np.maximum if kind == "max" else np.minimum
    name = f"reduce_window_{kind}"

    def impl(x, **params):
        x = np.asarray(x)
        shape(x, **params)
        return reduce_windows(ufunc, x, *_window_args(params), identity(kind, x.dtype))

    def shape(x, **params):
        _check_dtype(name, x.dtype)
        identity(kind, x.dtype)  # complex: a clear error
        return ShapedArray(_window_shape(name, x.shape, *_window_args(params)), x.dtype)

    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        ans = p.bind(x, **params)
        if type(t) is Zero:
            return ans, Zero.like(ans)
        return ans, select_and_gather_add_p.bind(t, x, select=kind, **params)

    p = Primitive(name, memory="fresh")
    p.def_impl(impl)
    p.def_abstract_eval(shape)
    p.def_jvp(jvp)
    _window_batch(p)
    return p


reduce_window_max_p = _chooser("max")
def reduce_window_max(x, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation):
    return reduce_window_max_p.bind(x, **normalize(window_dimensions, window_strides, padding,
                                                   base_dilation, window_dilation))


reduce_window_min_p = _chooser("min")
def reduce_window_min(x, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation):
    return reduce_window_min_p.bind(x, **normalize(window_dimensions, window_strides, padding,
                                                   base_dilation, window_dilation))


# --- the selection's gather and scatter (linear in their first operand) ---------------------

def _gather_impl(t, x, select, **params):
    t, x = np.asarray(t), np.asarray(x)
    _window_shape("select_and_gather_add", x.shape, *_window_args(params))
    return gather_selected(t, x, *_window_args(params), identity(select, x.dtype),
                           _BETTER[select])


def _gather_shape(t, x, select, **params):
    if t.shape != x.shape:
        raise FxadValueError(f"select_and_gather_add: tangent shape {t.shape} differs from "
                             f"the operand's {x.shape}")
    return ShapedArray(_window_shape("select_and_gather_add", x.shape, *_window_args(params)),
                       t.dtype)


def _gather_transpose(ct, t, x, select, **params):
    if type(ct) is Zero:
        return [Zero(t.aval), None]
    return [select_and_scatter_add_p.bind(ct, x, select=select, **params), None]


select_and_gather_add_p = Primitive("select_and_gather_add", memory="fresh")
select_and_gather_add_p.def_impl(_gather_impl)
select_and_gather_add_p.def_abstract_eval(_gather_shape)
deflinear(select_and_gather_add_p, _gather_transpose, linear_args=(0,))
_window_batch(select_and_gather_add_p)
def select_and_gather_add(t, x, select, window_dimensions, window_strides, padding,
                          base_dilation, window_dilation):
    return select_and_gather_add_p.bind(t, x, select=select, **normalize(
        window_dimensions, window_strides, padding, base_dilation, window_dilation))


def _scatter_impl(ct, x, select, **params):
    ct, x = np.asarray(ct), np.asarray(x)
    _window_shape("select_and_scatter_add", x.shape, *_window_args(params))
    return scatter_selected(ct, x, *_window_args(params), identity(select, x.dtype),
                            _BETTER[select])


def _scatter_shape(ct, x, select, **params):
    out = _window_shape("select_and_scatter_add", x.shape, *_window_args(params))
    if ct.shape != out:
        raise FxadValueError(f"select_and_scatter_add: source shape {ct.shape} differs from "
                             f"the windows' {out}")
    return ShapedArray(x.shape, ct.dtype)


def _scatter_transpose(ct, source, x, select, **params):
    if type(ct) is Zero:
        return [Zero(source.aval), None]
    return [select_and_gather_add_p.bind(ct, x, select=select, **params), None]


select_and_scatter_add_p = Primitive("select_and_scatter_add", memory="fresh")
select_and_scatter_add_p.def_impl(_scatter_impl)
select_and_scatter_add_p.def_abstract_eval(_scatter_shape)
deflinear(select_and_scatter_add_p, _scatter_transpose, linear_args=(0,))
_window_batch(select_and_scatter_add_p)
def select_and_scatter_add(ct, x, select, window_dimensions, window_strides, padding,
                           base_dilation, window_dilation):
    return select_and_scatter_add_p.bind(ct, x, select=select, **normalize(
        window_dimensions, window_strides, padding, base_dilation, window_dilation))


def normalize(window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """The window parameters as the primitives hold them (tuples of ints)."""
    return dict(window_dimensions=tuple(map(int, window_dimensions)),
                window_strides=tuple(map(int, window_strides)),
                padding=tuple((int(lo), int(hi)) for lo, hi in padding),
                base_dilation=tuple(map(int, base_dilation)),
                window_dilation=tuple(map(int, window_dilation)))

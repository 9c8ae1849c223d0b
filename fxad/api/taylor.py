"""Taylor mode: `jet`, higher derivatives along a path in one pass (JAX's signature)."""
from __future__ import annotations

from functools import lru_cache
from math import factorial
from typing import Callable, Sequence

import numpy as np

from ..core import Tracer, get_aval, is_float
from ..errors import FxadTypeError, FxadValueError
from ..interpreters.jet import jet_flat
from ..interpreters.jvp import Zero
from ..tree_util import tree_flatten, tree_unflatten
from .common import _check_callable, _check_tuple, _flat_fun, _leaf, _result

__all__ = ["jet"]

@lru_cache(maxsize=16)  # one entry per float dtype
def _scaled_limit(dtype):
    """The highest order k whose k! is finite in `dtype` (170 for float64, 34 for float32):
    derivative-scaled terms stop there; raw coefficients do not."""
    big, k = float(np.finfo(dtype).max), 1
    while factorial(k + 1) <= big:
        k += 1
    return k


def _refuse_scaled(order, dtype):
    raise FxadValueError(f"jet: terms of order {order} scaled by {order}! overflow {dtype} "
                         f"(its last finite factorial is {_scaled_limit(dtype)}!); pass "
                         "raw=True and raw Taylor coefficients instead")


def jet(fun: Callable, primals: Sequence, series: Sequence, *, raw: bool = False) -> tuple:
    """Taylor-mode differentiation: the Taylor polynomial of `fun` along a polynomial path.

    `primals` holds the arguments (pytrees), `series[i]` the K terms of argument i's path
    (each with the structure, shapes and dtypes of `primals[i]`). By default the terms are
    JAX's: term k is the k-th derivative of the path x(t) at t = 0, so for the path
    x(t) = x + t v (terms `(v, 0, ..., 0)`) output term k is the k-th directional derivative
    of `fun` along v, what k nested `jvp`s give. Returns `(fun(*primals), series_out)`, where
    `series_out` has the output's structure with each leaf a list of its K terms.

    `raw=True` takes and returns raw Taylor coefficients instead, x(t) = x + sum_k c_k t^k
    (term k is c_k = x^(k)(0) / k!): fxad computes in them either way, and they neither
    overflow nor lose range at high order.

    Differences from `jax.experimental.jet.jet`: pytree arguments and outputs; every
    primitive has a rule (derived from its JVP rule where none is written), including
    control flow, custom_jvp/custom_vjp functions (through their first-order rule), linear
    solves and loops; the result is differentiable (grad, jvp, vmap and jit compose with
    it). Integer arguments have no path (their terms are ignored, as `jvp` ignores integer
    tangents); integer outputs get zero terms. All arguments must have the same number of
    terms."""
    _check_callable("jet", fun)
    _check_tuple("jet", "primals", primals)
    _check_tuple("jet", "series", series)
    if len(series) != len(primals):
        raise FxadTypeError(f"jet: got {len(primals)} primals but {len(series)} series; give "
                            "one sequence of terms per argument")
    for i, s in enumerate(series):
        if not isinstance(s, (tuple, list)):
            raise FxadTypeError(f"jet: series[{i}] must be a tuple or list of terms (one per "
                                f"order), got {type(s).__name__}; e.g. jet(f, (x,), ((v, "
                                "0 * v),))")
    orders = [len(s) for s in series]
    if len(set(orders)) > 1:
        raise FxadValueError(
            f"jet: argument {orders.index(max(orders))} has {max(orders)} terms but argument "
            f"{orders.index(min(orders))} has {min(orders)}; every argument's series needs "
            "the same number of terms (the order). Pad the shorter ones with zeros.")
    order = orders[0] if orders else 0
    flat_p, tree = tree_flatten(tuple(primals))
    flat_p = [_leaf(p) for p in flat_p]
    if not raw:
        for p in flat_p:
            dt = get_aval(p).dtype
            if is_float(dt) and order > _scaled_limit(dt):
                _refuse_scaled(order, dt)
    flat_s = _flat_series(primals, series, order, flat_p, raw)
    fn, store = _flat_fun(fun, tree, where="jet")
    outs, out_series = jet_flat(fn, flat_p, flat_s, order)
    out = tree_unflatten(store["out"], [_result(o) for o in outs])
    terms = [[_term(c, o, k, raw) for k, c in enumerate(s, 1)]
             for o, s in zip(outs, out_series)]
    return out, tree_unflatten(store["out"], terms)


def _flat_series(primals, series, order, flat_p, raw):
    """One list of `order` raw coefficients per primal leaf (Zero where known zero)."""
    per_leaf = [[] for _ in flat_p]
    start = 0
    for i, (p, s) in enumerate(zip(primals, series)):
        leaves, tree = tree_flatten(p)
        for k, term in enumerate(s, 1):
            t_leaves, t_tree = tree_flatten(term)
            if t_tree != tree:
                raise FxadTypeError(f"jet: term {k} of argument {i} has the structure "
                                    f"{t_tree}, but the argument has {tree}")
            for j, t in enumerate(t_leaves):
                per_leaf[start + j].append(_coefficient(flat_p[start + j], t, i, k, raw))
        start += len(leaves)
    return per_leaf


def _coefficient(p, t, i, k, raw):
    pa = get_aval(p)
    if not is_float(pa.dtype):
        return Zero(pa)  # no path through an integer argument
    weak = type(t) in (int, float, complex)
    t = _leaf(t)
    ta = get_aval(t)
    if ta.shape != pa.shape or (ta.dtype != pa.dtype and not weak):
        raise FxadTypeError(f"jet: term {k} of argument {i} has {ta.str_short()} but the "
                            f"argument has {pa.str_short()}; each term must have its "
                            "argument's shape and dtype")
    if not isinstance(t, Tracer):
        t = np.asarray(t, pa.dtype)
        if not np.any(t):
            return Zero(pa)  # known zero: the rules skip its work
        return t if raw or k == 1 else t / float(factorial(k))
    return t if raw or k == 1 else t / float(factorial(k))


def _term(c, o, k, raw):
    if type(c) is Zero:
        a = get_aval(o)
        return np.zeros(a.shape, a.dtype)
    dt = get_aval(o).dtype
    if not raw and k > 1 and is_float(dt) and k > _scaled_limit(dt):
        _refuse_scaled(k, dt)  # e.g. a float32 output of a float64 input
    return _result(c if raw or k == 1 else c * float(factorial(k)))

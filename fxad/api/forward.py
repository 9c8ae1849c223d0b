"""Forward mode: jvp and linearize."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..core import (get_aval, is_float)
from ..errors import FxadTypeError
from ..interpreters.jvp import Zero, jvp_flat
from ..interpreters.partial_eval import linearize_flat
from ..ir.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from ..ir.simplify import dce
from ..tree_util import tree_flatten, tree_unflatten
from .common import (_check_callable, _check_tangent, _check_tuple, _flat_fun, _leaf, _result,
                     _split_aux)


def jvp(f: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False) -> tuple:
    """(f(*primals), J·tangents) by forward mode.

    >>> import fxad, fxad.numpy as fnp
    >>> y, y_dot = fxad.jvp(fnp.exp, (0.0,), (2.0,))
    >>> print(y, y_dot)
    1.0 2.0
    """
    return _jvp(f, primals, tangents, has_aux, "jvp")


def _jvp(f, primals, tangents, has_aux, name):
    """jvp; `name` is the transformation named in errors (jacfwd, hvp, ... call this)."""
    _check_callable(name, f)
    _check_tuple(name, "primals", primals)
    _check_tuple(name, "tangents", tangents)
    flat_p, tree_p = tree_flatten(tuple(primals))
    flat_t, tree_t = tree_flatten(tuple(tangents))
    if tree_p != tree_t:
        raise FxadTypeError(f"{name}: primals and tangents must have the same structure, got "
                            f"{tree_p} and {tree_t}")
    flat_p, flat_t = [_leaf(p) for p in flat_p], [_leaf(t) for t in flat_t]
    for i, (p, t) in enumerate(zip(flat_p, flat_t)):
        _check_tangent(name, p, t, i)
    flat_t = [t if is_float(get_aval(p).dtype) else Zero(get_aval(p))
              for p, t in zip(flat_p, flat_t)]
    fun, store = _flat_fun(f, tree_p, has_aux, name)
    outs, touts = jvp_flat(fun, flat_p, flat_t)
    out, aux = _split_aux(outs, store, has_aux)
    tout = tree_unflatten(store["out"], [_result(t) for t in touts[:store["n_out"]]])
    return (out, tout, aux) if has_aux else (out, tout)


def linearize(f: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """(f(*primals), f_jvp) where f_jvp evaluates only the staged linear tangent program;
    with `has_aux` (f returns (output, aux)): (output, f_jvp, aux)."""
    _check_callable("linearize", f)
    flat_p, tree_p = tree_flatten(primals)
    flat_p = [_leaf(p) for p in flat_p]
    fun, store = _flat_fun(f, tree_p, has_aux, where="linearize")
    outs, lin = linearize_flat(fun, flat_p)
    n_out = store["n_out"]
    if has_aux:  # f_jvp computes the output tangents only, none of the aux
        j = lin.jaxpr.jaxpr
        keep = sum(lin.out_mask[:n_out])
        lin.jaxpr = dce(ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.eqns, j.outvars[:keep]),
                                    lin.jaxpr.consts))
        lin.out_avals, lin.out_mask = lin.out_avals[:n_out], lin.out_mask[:n_out]
    lin.jaxpr = lin.jaxpr.snapshot()  # f_jvp outlives this call: its residuals are its own

    def f_jvp(*tangents):
        flat_t, tree_t = tree_flatten(tangents)
        if tree_t != tree_p:
            raise FxadTypeError(f"f_jvp expects tangents with the structure {tree_p}, got "
                                f"{tree_t}")
        for i, (p, t) in enumerate(zip(flat_p, flat_t)):
            _check_tangent("f_jvp", p, t, i)
        ins = [_leaf(t) for t, m in zip(flat_t, lin.in_mask) if m]
        res = iter(eval_jaxpr(lin.jaxpr.jaxpr, lin.jaxpr.consts, *ins))
        flat_out = [next(res) if m else np.zeros(a.shape, a.dtype)
                    for a, m in zip(lin.out_avals, lin.out_mask)]
        return tree_unflatten(store["out"], [_result(x) for x in flat_out[:n_out]])
    f_jvp.jaxpr = lin.jaxpr  # the linear program, for reading: print(f_jvp.jaxpr)
    out, aux = _split_aux(outs, store, has_aux)
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)

"""How a SciPy solver becomes differentiable: it runs on concrete values inside a
pure_callback (so also under jit and vmap), and its solution x* is made a `custom_root` of an
optimality condition F(x, θ) = 0 written with fxad (∇f = 0 for minimize, f = 0 for root,
g(x) - x = 0 for fixed_point, Jᵀr = 0 for least_squares). The implicit function theorem then
differentiates x* in every θ that F closes over, to any order: the solver's iterations are
never differentiated.

Failed solves: the derivative of x* assumes F(x*) = 0. When SciPy reports failure, taking a
derivative raises FxadValueError (eagerly), or gives NaN (under jit or vmap, where the flag is
only known when the program runs); the value itself is returned as SciPy returns it, with
`success` False.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import OptimizeResult

from ...api.callback import ShapeDtypeStruct, pure_callback
from ...core import Tracer
from ...lax.implicit import _root
from ._objective import dense_solve

COUNTERS = ("nit", "nfev", "njev", "nhev")


def counters_of(res):
    """SciPy's iteration and evaluation counters, -1 for those the method does not report."""
    return np.array([int(res.get(k, -1)) for k in COUNTERS], dtype=np.int64)


def solve_implicitly(name, F, x0, run, extra, cb_args, note):
    """x* = run(...)'s solution, differentiable by the implicit function theorem on F.

    `run(x0, *cb_args)` (concrete NumPy values) returns (x, success, status, counters,
    *extra values); `extra` declares the extra values' ShapeDtypeStructs; `note` is a dict
    the callback fills with SciPy's message (shown when the result is concrete).
    Returns (x, [success, status, counters, *extra])."""
    decl = (ShapeDtypeStruct(np.shape(x0), np.float64),
            [ShapeDtypeStruct((), np.bool_), ShapeDtypeStruct((), np.int64),
             ShapeDtypeStruct((len(COUNTERS),), np.int64)] + list(extra))

    def solve(_, guess):
        x, aux = pure_callback(lambda g, *a: _packed(run(g, *a)), decl, guess, *cb_args,
                               vmap_method="sequential")
        return x, aux

    def converged(aux):
        return aux[0], lambda: f"{name} did not converge ({note.get('message', 'no message')})"
    return _root(F, x0, solve, dense_solve, True, converged)


def _packed(out):
    x, success, status, counters, *extra = out
    return (np.asarray(x, np.float64),
            [np.asarray(bool(success)), np.asarray(int(status), np.int64),
             np.asarray(counters, np.int64)] + [np.asarray(e) for e in extra])


def message(note, x, generic):
    """SciPy's message when the solve ran now (concrete result), else a generic one."""
    if not isinstance(x, Tracer) and "message" in note:
        return note["message"]
    return generic


def result(fields, counters):
    """An OptimizeResult with the counters the method reports (all of them under jit/vmap,
    where a method's unreported ones read -1)."""
    res = OptimizeResult(fields)
    concrete = not isinstance(counters, Tracer)
    for k, c in zip(COUNTERS, counters if concrete else [counters[i]
                                                         for i in range(len(COUNTERS))]):
        if not concrete or int(c) >= 0:
            res[k] = int(c) if concrete else c
    return res

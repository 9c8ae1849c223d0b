"""How a SciPy solver becomes differentiable: it runs on concrete values inside a
pure_callback (so also under jit and vmap), and its solution x* is made a `custom_root` of an
optimality condition F(x, θ) = 0 written with fxad (∇f = 0 for minimize, f = 0 for root,
g(x) - x = 0 for fixed_point, Jᵀr = 0 for least_squares). The implicit function theorem then
differentiates x* in every θ that F closes over, to any order: the solver's iterations are
never differentiated.

Failed solves: the derivative of x* assumes F(x*) = 0, which is decided from the residual,
not from SciPy's flag alone. The measure is x*'s Newton step J⁻¹F(x*) relative to x*:
ρ = max |step| / (1 + max |x*|), how far x* is from the root to first order (the
derivative's relative error is of that order).

  - ρ <= ROOT_RTOL (x* is a root, up to a relative 1e-6): the derivative is taken, whatever
    SciPy's status (SciPy flags "precision loss" at points where the gradient is already at
    rounding level).
  - SciPy reports failure and ρ > ROOT_RTOL: taking a derivative raises FxadValueError
    (eagerly), or gives NaN (under jit or vmap, where both are only known when the program
    runs); the value itself is returned as SciPy returns it, with `success` False.
  - SciPy reports success (its tolerance was met) but ρ > WARN_RTOL: the derivative is taken,
    with an InexactSolutionWarning saying how far x* is from the root (when the values are
    known: not under jit or vmap). Default tolerances give ρ around 1e-6..1e-5.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import OptimizeResult

from ... import numpy as fnp
from ...errors import InexactSolutionWarning
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

    def converged(aux, newton_step):
        xs, step = newton_step()
        rho = relative_step(xs, step)
        flag = fnp.logical_or(aux[0], rho <= ROOT_RTOL)
        _warn_if_inexact(name, aux[0], rho)
        return flag, lambda: (f"{name} did not converge ({note.get('message', 'no message')}"
                              f", Newton step {_show(rho)} relative to the solution)")
    return _root(F, x0, solve, dense_solve, True, converged)


ROOT_RTOL = 1e-6
WARN_RTOL = 1e-3


def relative_step(xs, step):
    """max |step| / (1 + max |x|): how far x is from the root, relative to its size."""
    big = [fnp.max(fnp.abs(v)) for v in step if fnp.size(v)]
    size = [fnp.max(fnp.abs(v)) for v in xs if fnp.size(v)]
    if not big:
        return fnp.asarray(0.0)
    return fnp.max(fnp.stack(big)) / (1.0 + fnp.max(fnp.stack(size)))


def _known(v):
    """v's value when it is known now (eager), else None (under jit or vmap)."""
    if isinstance(v, Tracer):
        return v._known_value()
    return np.asarray(v)


def _show(rho):
    v = _known(rho)
    return "unknown" if v is None else f"{float(v):.1e}"


def _warn_if_inexact(name, success, rho):
    ok, r = _known(success), _known(rho)
    if ok is None or r is None or not bool(ok) or not float(r) > WARN_RTOL:
        return
    warnings.warn(InexactSolutionWarning(
        f"{name}: the solution's Newton step is {float(r):.1e} relative to its size (more "
        f"than {WARN_RTOL:.0e}), although SciPy reports success: its derivative by the "
        "implicit function theorem is the derivative at a point near the root, accurate to "
        "about that much. Tighten the solver's tolerance (tol=, gtol=, xtol=)."),
        stacklevel=2)


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

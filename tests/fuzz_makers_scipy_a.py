"""Fuzz makers for issue 18's solvers (conventions of tests/fuzz.py: each `mk_<name>(g)` adds
one line of Python over fxad functions or raises Reject; values stay in safe domains).

  custom_linear_solve   a 2..4-dim SPD system built from a program value (symmetric=True,
                        dense solve): derivatives through the matrix and the right-hand side
  linear_call           cos(r) * x with its transpose given
  quad                  ∫_0^1 of a smooth integrand of a program value (tight tolerances, so
                        forward and reverse mode agree to rounding)

The lead wires them in: `MAKERS` below is appended to tests/fuzz.py's list. (No ODE maker:
forward sensitivities and the adjoint agree to the solver's tolerance, not to rounding, so
the fuzzer's exact cross-checks do not apply; tests/scipy/test_integrate.py checks them.)
"""
from __future__ import annotations

import numpy as np

from .fuzz import Reject, guard

SOLVE = "lambda mv, b: fnp.linalg.solve(fxad.jacfwd(mv)(b), b)"


def _vector(g, lo=2, hi=4):
    return g.pick(lambda n: len(n.shape) == 1 and lo <= n.shape[0] <= hi)


def mk_custom_linear_solve(g):
    i = _vector(g)
    n = g.shape(i)[0]
    j = g.pick(lambda nd: nd.shape == (n,))
    t = g.bounded(1, j, 2.0)  # the matrix 2I + 0.5 t tᵀ: SPD, condition number <= 5
    expr = (f"(lambda m: lax.custom_linear_solve(lambda x: m @ x, fnp.sin(@0), {SOLVE}, "
            f"symmetric=True))(2.0 * np.eye({n}) + 0.5 * fnp.outer({t}, {t}))")
    return "custom_linear_solve", expr, [i, j]


def mk_linear_call(g):
    i = g.pick()
    j = g.partner(i, same=True)
    expr = ("fxad.custom_derivatives.linear_call(lambda r, x: fnp.cos(r) * x, "
            "lambda r, ct: fnp.cos(r) * ct, @0, @1)")
    return "linear_call", expr, [i, j]


def mk_quad(g):
    i = g.pick(lambda n: len(n.shape) <= 1 and int(np.prod(n.shape)) <= 3)
    a = g.bounded(0, i, 2.0)
    guard(g.vals(i).size > 0)
    if g.coin(0.5):
        integrand = "lambda s, a: fnp.sum(fnp.exp(-s * s * (a + 2.5)))"
    else:
        integrand = "lambda s, a: fnp.sum(fnp.sin(s * a) * fnp.cos(s) + s * a * a)"
    expr = (f"fxad.scipy.integrate.quad({integrand}, 0.0, 1.0, args=({a},), epsabs=1e-13, "
            "epsrel=1e-13)[0]")
    return "quad", expr, [i]


MAKERS = [(mk_custom_linear_solve, 2), (mk_linear_call, 1), (mk_quad, 1)]

__all__ = ["MAKERS", "Reject"]

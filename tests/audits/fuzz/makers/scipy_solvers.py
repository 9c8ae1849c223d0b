"""Makers: SciPy-solver building blocks (implicit differentiation and quadrature).

  custom_linear_solve   a 2..4-dim SPD system built from a program value (symmetric=True,
                        dense solve): derivatives through the matrix and the right-hand side
  linear_call           cos(r) * x with its transpose given
  quad                  ∫_0^1 of a smooth integrand of a program value (tight tolerances, so
                        forward and reverse mode agree to rounding)

(No ODE maker:
forward sensitivities and the adjoint agree to the solver's tolerance, not to rounding, so
the fuzzer's exact cross-checks do not apply; tests/scipy/test_integrate.py checks them.)
"""
from __future__ import annotations

import numpy as np

from ..generator import guard
from ..registry import maker

SOLVE = "lambda mv, b: fnp.linalg.solve(fxad.jacfwd(mv)(b), b)"


def _vector(g, lo=2, hi=4):
    return g.pick(lambda n: len(n.shape) == 1 and lo <= n.shape[0] <= hi)


@maker(weight=2)
def mk_custom_linear_solve(g):
    i = _vector(g)
    n = g.shape(i)[0]
    j = g.pick(lambda nd: nd.shape == (n,))
    t = g.bounded(1, j, 2.0)  # the matrix 2I + 0.5 t tᵀ: SPD, condition number <= 5
    expr = (f"(lambda m: lax.custom_linear_solve(lambda x: m @ x, fnp.sin(@0), {SOLVE}, "
            f"symmetric=True))(2.0 * np.eye({n}) + 0.5 * fnp.outer({t}, {t}))")
    return "custom_linear_solve", expr, [i, j]


@maker(weight=1)
def mk_linear_call(g):
    i = g.pick()
    j = g.partner(i, same=True)
    expr = ("fxad.custom_derivatives.linear_call(lambda r, x: fnp.cos(r) * x, "
            "lambda r, ct: fnp.cos(r) * ct, @0, @1)")
    return "linear_call", expr, [i, j]


@maker(weight=1)
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


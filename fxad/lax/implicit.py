"""Implicit differentiation (JAX's `lax.custom_root` and `lax.custom_linear_solve`): the
derivative of a solution comes from the equations it solves, not from the solver's steps.

custom_root: x*(θ) solves f(x, θ) = 0, where θ is whatever f closes over. By the implicit
function theorem, ∂f/∂x · dx* = -∂f/∂θ · dθ, solved by the user's `tangent_solve` with the
linearization of f at x*. It is a custom_jvp (fxad/custom_derivatives.py): reverse mode is
the transpose of that tangent computation, so `tangent_solve` must be linear in its right-hand
side (a dense solve, a division by a known scalar, or custom_linear_solve, whose transpose is
the transposed solve). Every piece is written with fxad operations, so the JVP rule is itself
differentiable: hessians, jvp-of-grad and grad-of-grad of functions of x* all work.

custom_linear_solve: the primitive `custom_linear_solve` (fxad/rules/control/custom_linear.py),
linear in b; derivatives of what `matvec` closes over flow through dx = A⁻¹(db - dA x).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..api import jvp, linearize
from ..api.common import _leaf
from ..control_flow import _trace
from ..core import ShapedArray, Tracer, get_aval
from ..custom_derivatives import custom_jvp
from ..errors import FxadTypeError, FxadValueError
from ..ir.jaxpr import eval_jaxpr
from ..rules import ops
from ..rules.control.custom_linear import linear_solve_p, transposed_matvec
from ..tree_util import tree_flatten, tree_unflatten


def _outputs(out, has_aux, name, what):
    """A user solver's result as a list: [solution], or [solution, aux] with has_aux."""
    if not has_aux:
        return [out]
    if not (isinstance(out, tuple) and len(out) == 2):
        raise FxadTypeError(f"{name}: with has_aux=True, {what} must return a pair "
                            "(solution, aux)")
    return list(out)


def _avals(leaves):
    return [ShapedArray(get_aval(x).shape, get_aval(x).dtype) for x in leaves]


def _describe(avals):
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _check_same(name, what, tree, avals, want_tree, want_avals):
    if tree != want_tree or list(avals) != list(want_avals):
        raise FxadTypeError(f"{name}: {what} returns {tree} {_describe(avals)}, but it must "
                            f"match {want_tree} {_describe(want_avals)}")


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable,
                        transpose_solve: Callable | None = None, symmetric: bool = False,
                        has_aux: bool = False) -> Any:
    """x = solve(matvec, b), differentiated as the solution of the linear system
    matvec(x) = b: derivatives flow into b and into what matvec closes over (not through
    the solver's iterations). Reverse mode solves the transposed system with
    `transpose_solve(vecmat, b)` (or `solve` if `symmetric`)."""
    name = "custom_linear_solve"
    b_leaves, b_tree = tree_flatten(b)
    b_leaves = [_leaf(x) for x in b_leaves]
    avals = _avals(b_leaves)
    args_tree = tree_flatten((b,))[1]
    mv, mv_consts, mv_tree = _trace(matvec, args_tree, avals, f"{name} matvec")
    _check_same(name, "matvec", mv_tree, mv.out_avals, b_tree, avals)
    n_m, n_x = len(mv_consts), len(b_leaves)

    def staged_solve(fn, op, what):
        def run(x):
            return _outputs(fn(op, x), has_aux, name, what)
        jx, consts, tree = _trace(run, args_tree, avals, f"{name} {what}")
        x_tree = tree_flatten(tree_unflatten(tree, [0] * len(jx.out_avals))[0])[1]
        _check_same(name, what, x_tree, jx.out_avals[:n_x], b_tree, avals)
        return jx, consts, tree

    s_jaxpr, s_consts, out_tree = staged_solve(solve, matvec, "solve")
    if symmetric:
        t_jaxpr, t_consts = s_jaxpr, s_consts
    elif transpose_solve is not None:
        vm = transposed_matvec(mv, n_m)

        def vecmat(y):
            ys = tree_flatten(y)[0]
            return tree_unflatten(b_tree, eval_jaxpr(vm.jaxpr, vm.consts, *mv_consts, *ys))
        t_jaxpr, t_consts, _ = staged_solve(transpose_solve, vecmat, "transpose_solve")
    else:
        t_jaxpr, t_consts = None, []
    outs = linear_solve_p.bind(*mv_consts, *s_consts, *t_consts, *b_leaves, matvec=mv,
                               solve=s_jaxpr, tsolve=t_jaxpr, n_m=n_m, n_s=len(s_consts),
                               n_t=len(t_consts), n_x=n_x, name=name)
    out = tree_unflatten(out_tree, outs)
    return (out[0], out[1]) if has_aux else out[0]


def custom_root(f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False) -> Any:
    """x* = solve(f, initial_guess), a root of f, differentiated by the implicit function
    theorem: `tangent_solve(g, y)` must solve g(x) = y for the linear map g (the
    linearization of f at x*), linearly in y. The initial guess gets no derivative."""
    return _root(f, initial_guess, solve, tangent_solve, has_aux, None)


def _root(f, initial_guess, solve, tangent_solve, has_aux, converged):
    """custom_root; `converged(aux, newton_step) -> (flag, message)` (fxad.scipy's solvers)
    makes the derivative of a failed solve an error when the flag is concrete, and NaN when
    it is traced (under jit or vmap), never a number computed at a point that is not a root.
    `newton_step()` gives (x*, J⁻¹f(x*)) as leaves: how far x* is from the root, to first
    order, for deciding from the residual rather than from a solver's flag alone."""
    name = "custom_root"
    g_leaves, g_tree = tree_flatten(initial_guess)
    g_leaves = [_leaf(x) for x in g_leaves]
    avals = _avals(g_leaves)
    args_tree = tree_flatten((initial_guess,))[1]
    fj, f_consts, f_tree = _trace(f, args_tree, avals, f"{name} f")
    _check_same(name, "f", f_tree, fj.out_avals, g_tree, avals)

    def f_flat(consts, xs):
        return eval_jaxpr(fj.jaxpr, [], *consts, *xs)

    def f_tree_fn(x):  # f as the solver sees it
        return tree_unflatten(g_tree, f_flat(f_consts, tree_flatten(x)[0]))

    def run(x0):
        return _outputs(solve(f_tree_fn, x0), has_aux, name, "solve")
    sj, s_consts, out_tree = _trace(run, args_tree, avals, f"{name} solve")
    n_f, n_x = len(f_consts), len(g_leaves)
    x_tree = tree_flatten(tree_unflatten(out_tree, [0] * len(sj.out_avals))[0])[1]
    _check_same(name, "solve", x_tree, sj.out_avals[:n_x], g_tree, avals)

    def root_fun(*args):
        return eval_jaxpr(sj.jaxpr, [], *args[n_f:])

    root = custom_jvp(root_fun)

    @root.defjvp
    def root_jvp(primals, tangents):
        fc, dfc = list(primals[:n_f]), list(tangents[:n_f])
        outs = root(*primals)
        x = list(outs[:n_x])
        _, rhs = jvp(lambda *c: f_flat(c, x), tuple(fc), tuple(dfc))
        _, f_lin = linearize(lambda *xs: f_flat(fc, xs), *x)

        def g(v):  # the linearization of f at x*, on pytrees like x
            return tree_unflatten(g_tree, f_lin(*tree_flatten(v)[0]))
        sol = tree_flatten(tangent_solve(g, tree_unflatten(g_tree, rhs)))
        if sol[1] != g_tree:
            raise FxadTypeError(f"{name}: tangent_solve returned {sol[1]}, expected {g_tree}")
        dx = [ops.neg(v) for v in sol[0]]
        if converged is not None:
            def newton_step():  # x* and its Newton step J⁻¹f(x*), derivatives stopped
                xs = [ops.stop_gradient(v) for v in x]
                cs = [ops.stop_gradient(c) for c in fc]
                fx, lin0 = linearize(lambda *v: f_flat(cs, v), *xs)
                step = tangent_solve(lambda v: tree_unflatten(g_tree, lin0(*tree_flatten(v)[0])),
                                     tree_unflatten(g_tree, fx))
                return xs, tree_flatten(step)[0]
            dx = _guard(dx, converged, tree_unflatten(out_tree, outs)[1], newton_step)
        return outs, dx + [np.zeros(get_aval(o).shape, _tangent_dtype(o)) for o in outs[n_x:]]

    outs = root(*f_consts, *s_consts, *g_leaves)
    out = tree_unflatten(out_tree, outs)
    return (out[0], out[1]) if has_aux else out[0]


def _tangent_dtype(x):
    dt = get_aval(x).dtype
    return dt if dt.kind in "fc" else np.float64


def _guard(dx, converged, aux, newton_step):
    """`converged(aux, newton_step) -> (flag, message)`: a false concrete flag raises, a
    traced one makes the derivative NaN when the program runs."""
    flag, message = converged(aux, newton_step)
    if not isinstance(flag, Tracer):
        if not bool(flag):
            raise FxadValueError(f"{message()}; its derivative by the implicit function "
                                 "theorem assumes a converged solution. Check the result's "
                                 "success flag, tighten or loosen the tolerances, raise the "
                                 "iteration limit, or start closer to the solution.")
        return dx
    # NaN derivatives for failed solves, in both modes (a factor, not a select: its
    # transpose keeps the NaN too)
    poison = ops.select(flag, np.float64(1.0), np.float64(np.nan))
    return [ops.mul(d, ops.convert_element_type(poison, get_aval(d).dtype)) for d in dx]

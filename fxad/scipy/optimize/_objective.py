"""A user's objective (or residual, or fixed-point map) fun(x, *args), as the optimizers
need it: staged once into a jaxpr of (x, *params) with everything it closes over hoisted into
`params`, so

  - fxad can differentiate the solution in every param (the implicit function theorem needs
    the function's own derivatives at the solution, written with fxad operations), and
  - SciPy's solver, running on concrete values inside a pure_callback, gets fast compiled
    NumPy programs for the value, gradient, Jacobian, Hessian and Hessian-vector product.

A function fxad cannot stage (Python control flow on values) still works when nothing is
traced: `EagerFns` differentiates it eagerly, call by call.
"""
from __future__ import annotations

import math

import numpy as np

from ... import numpy as fnp
from ...api import grad, hessian, hvp, jacfwd, value_and_grad
from ...api.common import _leaf
from ...core import ShapedArray, Tracer, get_aval, trace_stack
from ...errors import FxadTypeError
from ...ir.codegen import compiled_for
from ...ir.intern import intern
from ...ir.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from ...ir.staging import stage
from ...tree_util import tree_flatten, tree_unflatten
from .._sparse_jacobian import UserPattern, sparse_hessian_plan, sparse_jac_of_x, sparse_plan


def as_args(args):
    return tuple(args) if isinstance(args, (tuple, list)) else (args,)


def traced(*trees):
    """Does anything here carry a transformation (or is one active)?"""
    return bool(trace_stack()) or any(isinstance(x, Tracer) for t in trees
                                      for x in tree_flatten(t)[0])


class Staged:
    """fun(x, *args) as a jaxpr (x, *params) -> outputs; `params` are the leaves of args
    followed by the values fun closes over. `pick` selects what the solver differentiates
    from fun's result (e.g. the value when fun returns (value, gradient))."""

    def __init__(self, fun, x_aval, args, name, pick=None):
        leaves, self.arg_tree = tree_flatten(as_args(args))
        leaves = [_leaf(v) for v in leaves]
        self.n_args = len(leaves)
        self.name = name

        def flat(x, *a):
            out = fun(x, *tree_unflatten(self.arg_tree, list(a)))
            out = pick(out) if pick is not None else out
            if isinstance(out, (list, tuple)):  # SciPy accepts sequences of numbers
                out = fnp.stack([fnp.asarray(o) for o in out]) if out else fnp.zeros(0)
            return [fnp.asarray(out)]
        avals = [x_aval] + [ShapedArray(get_aval(v).shape, get_aval(v).dtype) for v in leaves]
        closed = stage(flat, avals, name=f"{name} function")
        j = closed.jaxpr
        self.jaxpr = intern(ClosedJaxpr(Jaxpr([], j.invars + j.constvars, j.eqns, j.outvars),
                                        []))
        self.params = leaves + list(closed.consts)
        self.out_aval = self.jaxpr.out_avals[0]

    def __call__(self, x, params):
        """fun at (x, params), with fxad operations (differentiable)."""
        return eval_jaxpr(self.jaxpr.jaxpr, [], x, *params)[0]

    def user_args(self, params):
        """The args pytree, for the user's own callables (jac=..., hess=...)."""
        return tree_unflatten(self.arg_tree, list(params[:self.n_args]))

    def program(self, kind):
        """A compiled NumPy function of (x, [v,] *params) (cached by the interned jaxpr)."""
        key = ("optimize", kind)
        hit = self.jaxpr.cache.get(key)
        if hit is None:
            f = self.jaxpr
            x_aval = f.in_avals[0]

            def value(x, *p):
                return eval_jaxpr(f.jaxpr, [], x, *p)[0]
            if kind == "value":
                fn, avals = (lambda x, *p: [value(x, *p)]), f.in_avals
            elif kind == "value_and_grad":
                fn, avals = (lambda x, *p: list(value_and_grad(value)(x, *p))), f.in_avals
            elif kind == "hvp":
                fn = lambda x, v, *p: [hvp(lambda y: value(y, *p), (x,), (v,))[0]]  # noqa
                avals = [x_aval, x_aval] + f.in_avals[1:]
            elif kind == "hess":
                fn, avals = (lambda x, *p: [hessian(value)(x, *p)]), f.in_avals
            elif kind == "jac":
                fn, avals = (lambda x, *p: [jacfwd(value)(x, *p)]), f.in_avals
            else:  # pragma: no cover
                raise ValueError(kind)
            hit = self.jaxpr.cache[key] = compiled_for(stage(fn, avals, name=f"{self.name} "
                                                             f"{kind}"))
        return hit


def numpy_fns(staged, params):
    """The value and derivatives as NumPy callables of concrete x, for SciPy."""
    def call(kind):
        prog = staged.program(kind)

        def f(x, *v):
            outs = prog(np.asarray(x, np.float64), *[np.asarray(a, np.float64) for a in v],
                        *params)
            res = [np.array(o, dtype=np.float64) for o in outs]
            return res[0] if len(res) == 1 else tuple(float(r) if r.ndim == 0 else r
                                                      for r in res)
        return f

    def sparse_jac(user_pattern=None):
        """x -> the Jacobian as a scipy.sparse matrix, when its pattern (detected, or the
        user's) makes that cheaper than the dense one; else None."""
        user = None if user_pattern is None else UserPattern(
            user_pattern, (staged.out_aval.size, staged.jaxpr.in_avals[0].size))
        plan = sparse_plan(staged.jaxpr, user)
        return None if plan is None else sparse_jac_of_x(plan, compiled_for(plan[1]), params)
    def sparse_hess():
        """x -> the Hessian as a scipy.sparse matrix when its pattern is sparse; else
        None."""
        plan = sparse_hessian_plan(staged.jaxpr)
        return None if plan is None else sparse_jac_of_x(plan, compiled_for(plan[1]), params)
    call.sparse_jac, call.sparse_hess = sparse_jac, sparse_hess
    return call


class EagerFns:
    """The same NumPy callables for a function fxad could not stage: differentiated eagerly
    (fxad's tracers take Python control flow on concrete values)."""

    def __init__(self, fun, args, pick=None):
        self.fun = lambda x: (pick(fun(x, *args)) if pick is not None else fun(x, *args))

    def __call__(self, kind):
        f = self.fun
        if kind == "value":
            return lambda x: np.asarray(f(x), dtype=np.float64)
        if kind == "value_and_grad":
            def vg(x):
                v, g = value_and_grad(f)(np.asarray(x, np.float64))
                return float(v), np.asarray(g, dtype=np.float64)
            return vg
        if kind == "hvp":
            return lambda x, v: np.asarray(hvp(f, (np.asarray(x, np.float64),),
                                               (np.asarray(v, np.float64),))[0])
        if kind == "hess":
            return lambda x: np.asarray(hessian(f)(np.asarray(x, np.float64)))
        if kind == "jac":
            return lambda x: np.asarray(jacfwd(f)(np.asarray(x, np.float64)))
        raise ValueError(kind)  # pragma: no cover


def gradient_of(staged, params):
    """x -> ∇f(x, params), with fxad operations (for optimality conditions)."""
    return lambda x: grad(lambda y: staged(y, params))(x)


def check_scalar(name, staged):
    if staged.out_aval.shape != ():
        raise FxadTypeError(f"{name}: the objective must return a scalar, got shape "
                            f"{staged.out_aval.shape}")


def dense_solve(g, y):
    """tangent_solve for the implicit function theorem: the linear map's matrix, then a
    dense solve (linear in y, so reverse mode transposes it)."""
    y = fnp.asarray(y)
    if y.ndim == 0:
        return y / jacfwd(g)(y)
    n = math.prod(map(int, y.shape))
    jac = fnp.reshape(jacfwd(g)(y), (n, n))
    return fnp.reshape(fnp.linalg.solve(jac, fnp.ravel(y)), y.shape)

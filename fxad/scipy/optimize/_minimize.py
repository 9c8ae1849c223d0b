"""scipy.optimize.minimize with fxad's derivatives: SciPy's methods, fed the exact gradient
(and Hessian or Hessian-vector products where the method uses them) by fxad, and a solution
differentiable in `args` (and what `fun` closes over) by the implicit function theorem on
∇f(x*, θ) = 0, or with bounds on x* = clip(x* - ∇f(x*, θ), lb, ub)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.optimize

from ... import numpy as fnp
from ...api import value_and_grad
from ...core import ShapedArray
from ...errors import ConcretizationError, FxadValueError, TracerArrayConversionError
from ._implicit import counters_of, message, result, solve_implicitly
from ._objective import EagerFns, Staged, as_args, check_scalar, gradient_of, numpy_fns, \
    traced

GRADIENT_FREE = ("nelder-mead", "powell", "cobyla", "cobyqa")
USES_HESSP = ("newton-cg", "trust-ncg", "trust-krylov", "trust-constr")
NEEDS_HESS = ("dogleg", "trust-exact")
SPARSE_HESS = ("newton-cg", "trust-constr")  # take a scipy.sparse Hessian


def _bounds(bounds, n):
    """(lb, ub) as arrays of n (±inf where unbounded), or None."""
    if bounds is None:
        return None
    if isinstance(bounds, scipy.optimize.Bounds):
        lo, hi = bounds.lb, bounds.ub
    else:
        pairs = list(bounds)
        if len(pairs) != n:
            raise FxadValueError(f"minimize: bounds has {len(pairs)} (min, max) pairs for "
                                 f"{n} variables")
        lo = fnp.stack([fnp.asarray(-np.inf if p[0] is None else p[0], dtype=np.float64)
                        for p in pairs])
        hi = fnp.stack([fnp.asarray(np.inf if p[1] is None else p[1], dtype=np.float64)
                        for p in pairs])
    lo = fnp.broadcast_to(fnp.asarray(lo, dtype=np.float64), (n,))
    hi = fnp.broadcast_to(fnp.asarray(hi, dtype=np.float64), (n,))
    return lo, hi


def _ignore_args(f, k=1):
    """f of its first k arguments (SciPy passes args to every callable; fxad's own
    derivative programs already have them)."""
    return lambda *a: f(*a[:k])


def scipy_kwargs(fns, method, jac, hess, hessp):
    """fun/jac/hess/hessp for SciPy: fxad's where the user gave none (jac=None), the user's
    (SciPy's options) otherwise. `fns(kind)` gives NumPy callables of x."""
    m = (method or "").lower() if isinstance(method, str) else ""
    kw = {}
    if jac is None:
        if m in GRADIENT_FREE:
            kw["fun"] = _ignore_args(fns("value"))
        else:
            kw["fun"], kw["jac"] = _ignore_args(fns("value_and_grad")), True
    else:
        kw["fun"], kw["jac"] = None, jac  # the caller puts the user's fun in
    if hess is None and hessp is None:
        sparse = getattr(fns, "sparse_hess", None) if m in SPARSE_HESS else None
        h = sparse() if sparse is not None else None
        if h is not None:
            kw["hess"] = _ignore_args(h)
        elif m in USES_HESSP:
            kw["hessp"] = _ignore_args(fns("hvp"), 2)
        elif m in NEEDS_HESS:
            kw["hess"] = _ignore_args(fns("hess"))
    else:
        kw["hess"], kw["hessp"] = hess, hessp
    return kw


def minimize(fun: Callable, x0: Any, args: Any = (), method: Any = None, jac: Any = None,
             hess: Any = None, hessp: Any = None, bounds: Any = None, constraints: Any = (),
             tol: float | None = None, callback: Callable | None = None,
             options: dict | None = None) -> scipy.optimize.OptimizeResult:
    """scipy.optimize.minimize. With jac=None (the default) fxad supplies the exact gradient
    (and hessp or hess for the methods that use them; for Newton-CG and trust-constr a
    scipy.sparse Hessian, one Hessian-vector product per color of a star coloring, when
    fxad.sparse finds its pattern sparse); SciPy's own options (True, a
    callable, '2-point', ...) are honoured. When x0 or args carry a transformation (grad,
    jvp, vmap, jit), the solution is differentiable in args by the implicit function
    theorem; constraints are then not supported."""
    name = "minimize"
    args = as_args(args)
    x0 = fnp.atleast_1d(fnp.asarray(x0)).astype(np.float64)
    if x0.ndim != 1:
        raise FxadValueError("minimize: 'x0' must only have one dimension.")
    pick = (lambda out: out[0]) if jac is True else None
    box = _bounds(bounds, x0.shape[0])
    common = dict(method=method, bounds=bounds, constraints=constraints, tol=tol,
                  callback=callback, options=options)
    if not traced(x0, args, box):
        try:
            st = Staged(fun, ShapedArray(x0.shape, np.float64), args, name, pick)
            fns = numpy_fns(st, st.params)
        except (ConcretizationError, TracerArrayConversionError):
            fns = EagerFns(fun, args, pick)
        kw = scipy_kwargs(fns, method, jac, hess, hessp)
        if kw["fun"] is None:
            kw["fun"] = fun
        return scipy.optimize.minimize(x0=np.asarray(x0), args=args, **kw, **common)
    if constraints:
        raise FxadValueError("minimize: differentiating a solution under constraints is not "
                             "supported (it needs the constraints' multipliers); use bounds, "
                             "or a reparameterization that removes the constraints")
    staged = Staged(fun, ShapedArray(x0.shape, np.float64), args, name, pick)
    check_scalar(name, staged)
    params = staged.params
    grad_f = gradient_of(staged, params)
    F = grad_f if box is None else (lambda x: x - fnp.clip(x - grad_f(x), box[0], box[1]))
    note = {}
    n_p = len(params)

    def run(guess, *cb):
        p = cb[:n_p]
        kw = scipy_kwargs(numpy_fns(staged, p), method, jac, hess, hessp)
        if kw["fun"] is None:
            kw["fun"] = fun
        c = dict(common)
        if box is not None:
            c["bounds"] = scipy.optimize.Bounds(cb[n_p], cb[n_p + 1])
        res = scipy.optimize.minimize(x0=guess, args=staged.user_args(p), **kw, **c)
        note["message"] = res.message
        return res.x, res.success, res.status, counters_of(res)
    x, (success, status, counters) = solve_implicitly(
        name, F, x0, run, [], list(params) + ([] if box is None else list(box)), note)
    fval, g = value_and_grad(lambda y: staged(y, params))(x)
    return result(dict(x=x, fun=fval, jac=g, success=success, status=status,
                       message=message(note, x, "see status and success")), counters)

"""scipy.optimize.least_squares with fxad's exact Jacobian, and a solution differentiable in
`args` by the implicit function theorem on the first-order condition ∇C(x*, θ) = 0, where
C = ½ Σ f_scale² ρ((fᵢ/f_scale)²) is the cost (Jᵀr = 0 for the linear loss), or with bounds
x* = clip(x* - ∇C(x*, θ), lb, ub)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.optimize

from ... import numpy as fnp
from ...api import grad, jacfwd
from ...api.callback import ShapeDtypeStruct
from ...core import ShapedArray
from ...errors import ConcretizationError, FxadValueError, TracerArrayConversionError
from ._implicit import counters_of, message, result, solve_implicitly
from ._objective import EagerFns, Staged, as_args, numpy_fns, traced


def _huber(z):
    return fnp.where(z <= 1, z, 2 * fnp.sqrt(fnp.where(z <= 1, 1.0, z)) - 1)


LOSSES = {  # SciPy's ρ(z), z = (f / f_scale)²
    "linear": lambda z: z,
    "soft_l1": lambda z: 2 * (fnp.sqrt(1 + z) - 1),
    "huber": _huber,
    "cauchy": lambda z: fnp.log1p(z),
    "arctan": lambda z: fnp.arctan(z),
}


def _cost(loss, f_scale):
    rho = LOSSES[loss]
    return lambda r: 0.5 * f_scale ** 2 * fnp.sum(rho((r / f_scale) ** 2))


def _with_kwargs(fun, kwargs):
    """fun(x, *args, **kwargs) as a function of (x, *args, *kwarg values)."""
    if not kwargs:
        return fun, ()
    keys = sorted(kwargs)
    n = len(keys)

    def f(x, *a):
        return fun(x, *a[:len(a) - n], **dict(zip(keys, a[len(a) - n:])))
    return f, tuple(kwargs[k] for k in keys)


def least_squares(fun: Callable, x0: Any, jac: Any = None, bounds: Any = (-np.inf, np.inf),
                  method: str = "trf", ftol: float | None = 1e-08,
                  xtol: float | None = 1e-08, gtol: float | None = 1e-08,
                  x_scale: Any = None, loss: Any = "linear", f_scale: float = 1.0,
                  diff_step: Any = None, tr_solver: Any = None, tr_options: Any = None,
                  jac_sparsity: Any = None, max_nfev: int | None = None, verbose: int = 0,
                  args: Any = (), kwargs: dict | None = None, callback: Any = None,
                  workers: Any = None) -> scipy.optimize.OptimizeResult:
    """scipy.optimize.least_squares. With jac=None (the default here; SciPy's is '2-point')
    fxad supplies the exact Jacobian: a scipy.sparse matrix (one JVP per color) when its
    pattern — detected by fxad.sparse, or your `jac_sparsity`, then trusted to contain every
    nonzero — is sparse and the method is 'trf' or 'dogbox' (SciPy then uses LSMR), else
    dense. SciPy's options are honoured. When x0 or args carry a transformation, the
    solution is differentiable in args (for the built-in losses)."""
    name = "least_squares"
    fun2, extra = _with_kwargs(fun, kwargs or {})
    args = as_args(args) + extra
    x0 = fnp.atleast_1d(fnp.asarray(x0)).astype(np.float64)
    if x0.ndim != 1:
        raise FxadValueError("least_squares: `x0` must have at most 1 dimension.")
    x_aval = ShapedArray(x0.shape, np.float64)
    opts = dict(method=method, ftol=ftol, xtol=xtol, gtol=gtol, loss=loss, f_scale=f_scale,
                diff_step=diff_step, tr_solver=tr_solver, tr_options=tr_options or {},
                jac_sparsity=jac_sparsity, max_nfev=max_nfev, verbose=verbose)
    for k, v in (("x_scale", x_scale), ("callback", callback), ("workers", workers)):
        if v is not None:  # (newer SciPy's arguments: passed only when given)
            opts[k] = v

    if jac is None:  # fxad's Jacobian, sparse in this pattern where that pays
        opts.pop("jac_sparsity")

    def fxad_jacobian(fns):
        sparse = getattr(fns, "sparse_jac", None)
        if sparse is not None and method != "lm":
            got = sparse(jac_sparsity)
            if got is not None:
                return got
        return fns("jac")

    def scipy_run(fns, user_args, lo, hi, guess):
        value, jacobian = fns("value"), (fxad_jacobian(fns) if jac is None else None)
        j = (lambda x, *_: jacobian(x)) if jac is None else jac
        f = (lambda x, *_: value(x)) if jac is None or not callable(jac) else fun2
        return scipy.optimize.least_squares(f, guess, jac=j, bounds=(lo, hi), args=user_args,
                                            **opts)
    lo, hi = (bounds.lb, bounds.ub) if isinstance(bounds, scipy.optimize.Bounds) else bounds
    if not traced(x0, args, lo, hi):
        try:
            st = Staged(fun2, x_aval, args, name)
            fns = numpy_fns(st, st.params)
        except (ConcretizationError, TracerArrayConversionError):
            fns = EagerFns(fun2, args)
        return scipy_run(fns, args, lo, hi, np.asarray(x0))
    if callable(loss) or loss not in LOSSES:
        raise FxadValueError(f"least_squares: differentiating the solution needs one of the "
                             f"built-in losses {sorted(LOSSES)}, got {loss!r}")
    staged = Staged(fun2, x_aval, args, name)
    if staged.out_aval.ndim != 1:
        raise FxadValueError(f"least_squares: fun must return a 1-D array of residuals, got "
                             f"shape {staged.out_aval.shape}")
    params, note, n_p = staged.params, {}, len(staged.params)
    cost = _cost(loss, float(f_scale))
    lo = fnp.broadcast_to(fnp.asarray(lo, dtype=np.float64), x0.shape)
    hi = fnp.broadcast_to(fnp.asarray(hi, dtype=np.float64), x0.shape)

    def grad_c(x):
        return grad(lambda y: cost(staged(y, params)))(x)

    def F(x):  # the (projected) first-order condition
        return x - fnp.clip(x - grad_c(x), lo, hi)

    def run(guess, *cb):
        p = cb[:n_p]
        res = scipy_run(numpy_fns(staged, p), staged.user_args(p), cb[n_p], cb[n_p + 1],
                        guess)
        note["message"] = res.message
        return res.x, res.success, res.status, counters_of(res), res.optimality, \
            res.active_mask.astype(np.int64)
    x, (success, status, counters, optimality, active) = solve_implicitly(
        name, F, x0, run, [ShapeDtypeStruct((), np.float64),
                           ShapeDtypeStruct(x0.shape, np.int64)],
        list(params) + [lo, hi], note)
    r = staged(x, params)
    J = jacfwd(lambda y: staged(y, params))(x)
    return result(dict(x=x, cost=cost(r), fun=r, jac=J, grad=grad_c(x), optimality=optimality,
                       active_mask=active, status=status, success=success,
                       message=message(note, x, "see status and success")), counters)

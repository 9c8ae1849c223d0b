"""scipy.optimize's root finders with SciPy's signatures: root, root_scalar, the bracketing
scalar solvers (brentq, brenth, ridder, bisect) and fixed_point. SciPy finds the root on
concrete values; the root is differentiable in `args` (and what the function closes over) by
the implicit function theorem on f(x, θ) = 0, or g(x, θ) - x = 0 for fixed_point. fxad
supplies the Jacobian (root: hybr, lm) or derivatives (root_scalar: newton, halley)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.optimize

from ... import numpy as fnp
from ...api import grad
from ...core import ShapedArray
from ...errors import ConcretizationError, FxadTypeError, TracerArrayConversionError
from ...ir.codegen import compiled_for
from ...ir.jaxpr import eval_jaxpr
from ...ir.staging import stage
from ._implicit import counters_of, message, result, solve_implicitly
from ._objective import EagerFns, Staged, as_args, numpy_fns, traced

USES_JAC = ("hybr", "lm")


def _fns(fun, x_aval, args, name, pick):
    try:
        st = Staged(fun, x_aval, args, name, pick)
        return numpy_fns(st, st.params)
    except (ConcretizationError, TracerArrayConversionError):
        return EagerFns(fun, args, pick)


def _root_kwargs(fns, method, jac):
    if jac is None:
        value = fns("value")
        if str(method).lower() in USES_JAC:
            jacobian = fns("jac")
            return dict(fun=lambda x, *_: value(x), jac=lambda x, *_: jacobian(x))
        return dict(fun=lambda x, *_: value(x))
    return dict(fun=None, jac=jac)


def root(fun: Callable, x0: Any, args: Any = (), method: str = "hybr", jac: Any = None,
         tol: float | None = None, callback: Callable | None = None,
         options: dict | None = None) -> scipy.optimize.OptimizeResult:
    """scipy.optimize.root. With jac=None fxad supplies the exact Jacobian (hybr, lm). When
    x0 or args carry a transformation, the root is differentiable in args."""
    name = "root"
    args = as_args(args)
    x0 = fnp.ravel(fnp.asarray(x0)).astype(np.float64)
    x_aval = ShapedArray(x0.shape, np.float64)
    pick = (lambda out: out[0]) if jac is True else None
    common = dict(method=method, tol=tol, callback=callback, options=options)
    if not traced(x0, args):
        kw = _root_kwargs(_fns(fun, x_aval, args, name, pick), method, jac)
        kw["fun"] = kw["fun"] or fun
        return scipy.optimize.root(x0=np.asarray(x0), args=args, **kw, **common)
    staged = Staged(fun, x_aval, args, name, pick)
    if staged.out_aval.shape != x0.shape:
        raise FxadTypeError(f"root: fun returns shape {staged.out_aval.shape} for x of shape "
                            f"{x0.shape}; a root needs as many equations as unknowns")
    params, note = staged.params, {}

    def run(guess, *p):
        kw = _root_kwargs(numpy_fns(staged, p), method, jac)
        kw["fun"] = kw["fun"] or fun
        res = scipy.optimize.root(x0=guess, args=staged.user_args(p), **kw, **common)
        note["message"] = res.message
        return res.x, res.success, res.get("status", 0 if res.success else 1), counters_of(res)
    x, (success, status, counters) = solve_implicitly(
        name, lambda x: staged(x, params), x0, run, [], list(params), note)
    return result(dict(x=x, fun=staged(x, params), success=success, status=status,
                       message=message(note, x, "see status and success")), counters)


class _Scalar:
    """f(x, *args) of a scalar x, with fxad's derivatives for newton/halley."""

    def __init__(self, f, args, name):
        self.staged = Staged(f, ShapedArray((), np.float64), args, name)
        if self.staged.out_aval.shape != ():
            raise FxadTypeError(f"{name}: f must return a scalar, got shape "
                                f"{self.staged.out_aval.shape}")

    def numpy(self, params):
        fns = numpy_fns(self.staged, params)
        value, vg = fns("value"), fns("value_and_grad")
        d2 = _second_derivative(self.staged)
        return (lambda x, *_: float(value(x)), lambda x, *_: vg(x)[1],
                lambda x, *_: float(d2(np.float64(x), *params)[0]))


def _second_derivative(staged):
    key = ("optimize", "d2")
    hit = staged.jaxpr.cache.get(key)
    if hit is None:
        j = staged.jaxpr

        def value(x, *p):
            return eval_jaxpr(j.jaxpr, [], x, *p)[0]
        hit = staged.jaxpr.cache[key] = compiled_for(stage(
            lambda x, *p: [grad(grad(value))(x, *p)], j.in_avals, name="root_scalar f''"))
    return hit


def _root_results(x, iterations, calls, converged, flag, method):
    res = scipy.optimize.RootResults(root=0.0, iterations=0, function_calls=0, flag=0,
                                     method=method)
    res.update(root=x, iterations=iterations, function_calls=calls, converged=converged,
               flag=flag)
    return res


def root_scalar(f: Callable, args: Any = (), method: str | None = None, bracket: Any = None,
                fprime: Any = None, fprime2: Any = None, x0: Any = None, x1: Any = None,
                xtol: float | None = None, rtol: float | None = None,
                maxiter: int | None = None, options: dict | None = None
                ) -> scipy.optimize.RootResults:
    """scipy.optimize.root_scalar. For method 'newton' / 'halley' without fprime /
    fprime2, fxad supplies the exact derivatives. When args (or the bracket or starting
    points) carry a transformation, the root is differentiable in args."""
    name = "root_scalar"
    args = as_args(args)
    m = None if method is None else str(method).lower()
    auto1 = fprime is None and m in ("newton", "halley")
    auto2 = fprime2 is None and m == "halley"
    points = [v for v in (bracket[0] if bracket is not None else None,
                          bracket[1] if bracket is not None else None, x0, x1)]
    given = [v is not None for v in points]
    common = dict(method=method, xtol=xtol, rtol=rtol, maxiter=maxiter, options=options)

    def solve_np(fn, d1, d2, user_args, pts):
        it = iter(pts)
        vals = [float(next(it)) if g else None for g in given]
        br = None if vals[0] is None else (vals[0], vals[1])
        return scipy.optimize.root_scalar(
            fn, args=user_args, bracket=br, x0=vals[2], x1=vals[3],
            fprime=d1 if auto1 else fprime, fprime2=d2 if auto2 else fprime2, **common)
    if not traced(args, [p for p in points if p is not None]):
        try:
            sc = _Scalar(f, args, name)
            fn, d1, d2 = sc.numpy(sc.staged.params)
            return solve_np(fn, d1, d2, args, [p for p in points if p is not None])
        except (ConcretizationError, TracerArrayConversionError):
            if auto1 or auto2:
                ef = EagerFns(f, args)
                vg = ef("value_and_grad")
                d1 = lambda x, *_: vg(x)[1]  # noqa: E731
                d2 = lambda x, *_: float(grad(grad(lambda y: f(y, *args)))(float(x)))  # noqa
                return solve_np(f, d1, d2, args, [p for p in points if p is not None])
            return solve_np(f, None, None, args, [p for p in points if p is not None])
    sc = _Scalar(f, args, name)
    params, note = sc.staged.params, {}
    n_p = len(params)
    guess = next(fnp.asarray(p, dtype=np.float64) for p in points if p is not None) \
        if any(given) else fnp.asarray(0.0)

    def run(_, *cb):
        p = cb[:n_p]
        fn, d1, d2 = sc.numpy(p)
        res = solve_np(fn, d1, d2, sc.staged.user_args(p), cb[n_p:])
        note["message"] = res.flag
        return res.root, res.converged, 0 if res.converged else 1, \
            np.array([res.iterations, res.function_calls, -1, -1])
    x, (success, _, counters) = solve_implicitly(
        name, lambda x: sc.staged(x, params), fnp.asarray(guess, dtype=np.float64), run, [],
        list(params) + [fnp.asarray(p, dtype=np.float64) for p in points if p is not None],
        note)
    return _root_results(x, counters[0], counters[1], success,
                         message(note, x, "see converged"), m or "")


def _bracketing(method):
    def solver(f: Callable, a: Any, b: Any, args: Any = (), xtol: float = 2e-12,
               rtol: float = 8.881784197001252e-16, maxiter: int = 100,
               full_output: bool = False, disp: bool = True) -> Any:
        name = method
        args = as_args(args)
        run_scipy = getattr(scipy.optimize, method)
        if not traced(args, a, b):
            try:
                sc = _Scalar(f, args, name)
                fn = sc.numpy(sc.staged.params)[0]
            except (ConcretizationError, TracerArrayConversionError):
                fn = f
                return run_scipy(fn, a, b, args=args, xtol=xtol, rtol=rtol, maxiter=maxiter,
                                 full_output=full_output, disp=disp)
            return run_scipy(fn, a, b, xtol=xtol, rtol=rtol, maxiter=maxiter,
                             full_output=full_output, disp=disp)
        sc = _Scalar(f, args, name)
        params, note = sc.staged.params, {}
        n_p = len(params)

        def run(_, *cb):
            fn = sc.numpy(cb[:n_p])[0]
            x, r = run_scipy(fn, float(cb[n_p]), float(cb[n_p + 1]), xtol=xtol, rtol=rtol,
                             maxiter=maxiter, full_output=True, disp=disp)
            note["message"] = r.flag
            return x, r.converged, 0 if r.converged else 1, \
                np.array([r.iterations, r.function_calls, -1, -1])
        a_, b_ = fnp.asarray(a, dtype=np.float64), fnp.asarray(b, dtype=np.float64)
        x, (success, _, counters) = solve_implicitly(
            name, lambda x: sc.staged(x, params), (a_ + b_) / 2, run, [],
            list(params) + [a_, b_], note)
        if not full_output:
            return x
        return x, _root_results(x, counters[0], counters[1], success,
                                message(note, x, "see converged"), method)
    solver.__name__ = method
    solver.__doc__ = (f"scipy.optimize.{method}: a root of f in [a, b], differentiable in "
                      "args by the implicit function theorem (a and b get no derivative). "
                      "With disp=True, failing to converge raises RuntimeError, as in SciPy.")
    return solver


brentq = _bracketing("brentq")
brenth = _bracketing("brenth")
ridder = _bracketing("ridder")
bisect = _bracketing("bisect")


def fixed_point(func: Callable, x0: Any, args: Any = (), xtol: float = 1e-08,
                maxiter: int = 500, method: str = "del2") -> Any:
    """scipy.optimize.fixed_point: x with func(x, *args) = x, differentiable in args by the
    implicit function theorem on func(x, θ) - x = 0. Failing to converge raises
    RuntimeError, as in SciPy."""
    name = "fixed_point"
    args = as_args(args)
    x0 = fnp.asarray(x0).astype(np.float64)
    x_aval = ShapedArray(x0.shape, np.float64)
    if not traced(x0, args):
        try:
            st = Staged(func, x_aval, args, name)
            fn = numpy_fns(st, st.params)("value")
            use_args = ()
        except (ConcretizationError, TracerArrayConversionError):
            fn, use_args = func, args
        return scipy.optimize.fixed_point(fn, np.asarray(x0), args=use_args, xtol=xtol,
                                          maxiter=maxiter, method=method)
    staged = Staged(func, x_aval, args, name)
    if staged.out_aval.shape != x0.shape:
        raise FxadTypeError(f"fixed_point: func returns shape {staged.out_aval.shape} for x "
                            f"of shape {x0.shape}")
    params = staged.params

    def run(guess, *p):
        fn = numpy_fns(staged, p)("value")
        x = scipy.optimize.fixed_point(fn, guess, xtol=xtol, maxiter=maxiter, method=method)
        return x, True, 0, np.array([-1, -1, -1, -1])
    x, _ = solve_implicitly(name, lambda x: staged(x, params) - x, x0, run, [], list(params),
                            {})
    return x

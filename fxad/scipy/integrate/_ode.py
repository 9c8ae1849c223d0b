"""scipy.integrate.odeint and solve_ivp with SciPy's signatures, differentiable in y0, the
evaluation times and everything passed through `args` or closed over by the right-hand side
(fxad/scipy/integrate/_odecore.py says how)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.integrate

from ... import numpy as fnp
from ...api.common import _leaf
from ...core import ShapedArray, Tracer, get_aval, trace_stack
from ...errors import ConcretizationError, FxadTypeError, FxadValueError, \
    TracerArrayConversionError
from ...ir.intern import intern
from ...ir.jaxpr import ClosedJaxpr, Jaxpr
from ...ir.staging import stage
from ...tree_util import tree_flatten, tree_unflatten
from .._sparse_jacobian import UserPattern
from ._events import differentiable_events, refuse_dense_output, solve_eagerly
from ._odecore import Config, solve

IVP_METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")


def _as_args(args):
    """SciPy wants a tuple; a single value is taken as the one extra argument."""
    return tuple(args) if isinstance(args, (tuple, list)) else (args,)


def _state(y0, name):
    y0 = fnp.asarray(y0)
    if get_aval(y0).dtype.kind == "c":
        raise FxadTypeError(f"{name}: complex states are not supported; integrate the real "
                            "and imaginary parts as a real system of twice the size")
    y0 = fnp.atleast_1d(y0).astype(np.float64)
    if y0.ndim != 1:
        raise FxadValueError(f"{name}: the initial state must be one-dimensional (as in "
                             f"SciPy), got shape {y0.shape}; ravel it and reshape inside the "
                             "right-hand side")
    return y0


def _stage_rhs(func, n, arg_leaves, arg_tree, ytfirst, name):
    """func as a jaxpr (y, t, *args, *closed-over values) -> [dy] with nothing closed over,
    and the closed-over values (the extra params)."""
    def flat(y, t, *a):
        args = tree_unflatten(arg_tree, list(a))
        out = func(y, t, *args) if ytfirst else func(t, y, *args)
        out = fnp.ravel(fnp.asarray(out))
        if out.shape != (n,):
            raise FxadValueError(f"{name}: the right-hand side returned {out.shape[0]} values "
                                 f"for a state of {n}")
        return [out.astype(np.float64)]
    avals = [ShapedArray((n,), np.float64), ShapedArray((), np.float64)] + \
        [ShapedArray(get_aval(x).shape, get_aval(x).dtype) for x in arg_leaves]
    closed = stage(flat, avals, name=f"{name} right-hand side")
    j = closed.jaxpr
    hoisted = intern(ClosedJaxpr(Jaxpr([], j.invars + j.constvars, j.eqns, j.outvars), []))
    return hoisted, list(closed.consts)


def _traced(*trees):
    return bool(trace_stack()) or any(isinstance(x, Tracer) for t in trees
                                      for x in tree_flatten(t)[0])


def _run(func, y0, t, args, cfg, ytfirst, name, plain):
    """Y (len(t), n) and SciPy's counters; `plain()` runs SciPy directly, for a right-hand
    side fxad cannot stage (Python control flow on values) when nothing is traced."""
    y0 = _state(y0, name)
    ts = fnp.asarray(t).astype(np.float64)
    if ts.ndim != 1:
        raise FxadValueError(f"{name}: the times must be a 1-D array, got shape {ts.shape}")
    leaves, tree = tree_flatten(_as_args(args))
    leaves = [_leaf(x) for x in leaves]
    try:
        rhs, consts = _stage_rhs(func, y0.shape[0], leaves, tree, ytfirst, name)
    except (ConcretizationError, TracerArrayConversionError) as e:
        if _traced(y0, ts, leaves):
            raise type(e)(f"{name}: fxad could not stage the right-hand side to differentiate "
                          f"it (write it with fxad.numpy, and fxad.numpy.where or "
                          f"fxad.lax.cond for branches on values): {e}") from None
        return plain()
    return solve(rhs, cfg, y0, ts, leaves + consts)


def odeint(func: Callable, y0: Any, t: Any, args: Any = (), Dfun: Callable | None = None,
           col_deriv: int = 0, full_output: int = 0, ml: int | None = None,
           mu: int | None = None, rtol: Any = None, atol: Any = None, tcrit: Any = None,
           h0: float = 0.0, hmax: float = 0.0, hmin: float = 0.0, ixpr: int = 0,
           mxstep: int = 0, mxhnil: int = 0, mxordn: int = 12, mxords: int = 5,
           printmessg: int = 0, tfirst: bool = False) -> Any:
    """scipy.integrate.odeint (LSODA), differentiable in y0, t and args by forward
    sensitivities (jvp) and the adjoint method (grad). `func(y, t, *args)` must be written
    with fxad.numpy. fxad supplies the exact Jacobian, so Dfun, col_deriv, ml and mu are
    not used. A failed integration raises FxadValueError."""
    name = "odeint"
    if full_output:
        raise FxadValueError("odeint: full_output is not supported (its diagnostics are not "
                             "differentiable values); call scipy.integrate.odeint directly "
                             "for them")
    options = dict(tcrit=None if tcrit is None else tuple(np.ravel(tcrit).tolist()), h0=h0,
                   hmax=hmax, hmin=hmin, ixpr=ixpr, mxstep=mxstep, mxhnil=mxhnil,
                   mxordn=mxordn, mxords=mxords, printmessg=printmessg)
    cfg = Config("odeint", None if rtol is None else float(rtol), _atol(atol),
                 tuple(sorted((k, v) for k, v in options.items()
                              if v is not None and not (k == "tcrit" and v is None))))

    def plain():
        return scipy.integrate.odeint(func, np.asarray(y0, np.float64), np.asarray(t),
                                      _as_args(args), Dfun, col_deriv, 0, ml, mu, rtol, atol,
                                      tcrit, h0, hmax, hmin, ixpr, mxstep, mxhnil, mxordn,
                                      mxords, printmessg, tfirst)
    got = _run(func, y0, t, args, cfg, not tfirst, name, plain)
    return got if isinstance(got, np.ndarray) else got[0]


def _atol(atol):
    if atol is None:
        return None
    a = np.asarray(atol, dtype=np.float64)
    return float(a) if a.ndim == 0 else tuple(a.tolist())


class OdeResult(dict):
    """solve_ivp's result (SciPy's fields): t, y, sol, t_events, y_events, nfev, njev, nlu,
    status, message, success."""
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    __setattr__ = dict.__setitem__

    def __repr__(self):
        return "\n".join(f"{k:>9}: {v!r}" for k, v in self.items())


def solve_ivp(fun: Callable, t_span: Any, y0: Any, method: str = "RK45", t_eval: Any = None,
              dense_output: bool = False, events: Any = None, vectorized: bool = False,
              args: Any = None, **options: Any) -> OdeResult:
    """scipy.integrate.solve_ivp, differentiable in y0, t_span / t_eval and args by forward
    sensitivities (jvp) and the adjoint method (grad). `fun(t, y, *args)` must be written
    with fxad.numpy. The solution is reported at t_eval, or at t_span's two ends when
    t_eval is None (SciPy: at the steps its solver chose, which are not known before
    solving and not differentiable). A failed integration raises FxadValueError.

    The implicit methods (BDF, Radau, LSODA) get fxad's exact Jacobian (`jac` is not used):
    sparse when its pattern is (detected by fxad.sparse once per right-hand side, or your
    `jac_sparsity`, which is then trusted to contain every nonzero), one JVP per color of a
    column coloring; BDF and Radau receive a scipy.sparse matrix, LSODA a dense one.

    `events` and `dense_output` work as in SciPy (its event location and interpolant, on
    fxad's compiled right-hand side and Jacobian; `t`/`y` still at t_eval or t_span's ends,
    up to a terminal event). Event times and the states there are differentiable under
    grad, jvp, jacfwd and hessian (implicit function theorem on the event function); under
    jit or vmap events raise FxadValueError, and so does dense_output under any
    transformation (pass the times as t_eval instead)."""
    name = "solve_ivp"
    if not isinstance(method, str) or method not in IVP_METHODS:
        raise FxadValueError(f"solve_ivp: method must be one of {', '.join(IVP_METHODS)}, got "
                             f"{method!r} (a solver class is not supported)")
    if len(t_span) != 2:
        raise FxadValueError(f"solve_ivp: t_span must be (t0, tf), got {t_span!r}")
    t0 = fnp.asarray(t_span[0], dtype=np.float64)
    if t_eval is None:
        t_out = fnp.stack([t0, fnp.asarray(t_span[1], dtype=np.float64)])
    else:
        t_out = fnp.asarray(t_eval).astype(np.float64)
        if t_out.ndim != 1:
            raise FxadValueError(f"solve_ivp: t_eval must be 1-D, got shape {t_out.shape}")
        if not _traced(t_span, t_out) and t_out.size and not \
                (min(t_span) <= min(t_out[0], t_out[-1]) and
                 max(t_out[0], t_out[-1]) <= max(t_span)):
            raise FxadValueError("solve_ivp: values in `t_eval` are not within `t_span`")
    options.pop("jac", None)  # fxad supplies the exact Jacobian to the implicit methods
    user_pattern = options.pop("jac_sparsity", None)
    for k in ("lband", "uband"):
        options.pop(k, None)
    rtol, atol = options.pop("rtol", 1e-3), options.pop("atol", 1e-6)
    cfg = Config(method, float(rtol), _atol(atol), tuple(sorted(options.items())),
                 jac_sparsity=None if user_pattern is None else
                 UserPattern(user_pattern, (np.size(y0), np.size(y0))))
    args = () if args is None else args

    def plain():
        extra = {} if user_pattern is None else {"jac_sparsity": user_pattern}
        return scipy.integrate.solve_ivp(fun, t_span, y0, method=method, t_eval=t_eval,
                                         vectorized=vectorized, args=_as_args(args), rtol=rtol,
                                         atol=atol, **options, **extra)
    if dense_output or events is not None:
        def eager(span, y, ts, a):
            return solve_eagerly(fun, span, y, method, ts, dense_output, events, a, cfg,
                                 _stage_rhs, plain, options)
        if not _traced(y0, t_span, t_eval, args):
            return OdeResult(eager(t_span, y0, t_eval, _as_args(args)))
        if dense_output:
            refuse_dense_output()

        def solve_plain(span, ts):
            return solve_ivp(fun, span, y0, method=method, t_eval=ts, args=args, rtol=rtol,
                             atol=atol, **options, **({} if user_pattern is None else
                                                      {"jac_sparsity": user_pattern}))
        return OdeResult(differentiable_events(events, t_span, y0, t_eval, _as_args(args),
                                               eager, solve_plain))
    # the solve starts at t_span[0], where y0 is given (a repeated time costs nothing)
    got = _run(fun, y0, fnp.concatenate([t0[None], t_out]), args, cfg, False, name, plain)
    if isinstance(got, dict):  # SciPy's own result (the plain path)
        return OdeResult(got)
    Y, stats = got
    counters = {k: (int(v) if not isinstance(v, Tracer) else v.astype(np.int64))
                for k, v in zip(("nfev", "njev", "nlu"), stats)}
    return OdeResult(t=t_out, y=fnp.transpose(Y[1:]), sol=None, t_events=None, y_events=None,
                     **counters, status=0,
                     message="The solver successfully reached the end of the integration "
                             "interval.", success=True)

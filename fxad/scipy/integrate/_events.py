"""solve_ivp with `events` or `dense_output`: SciPy's own event location and interpolant,
fed fxad's compiled right-hand side and exact (sparse where it pays) Jacobian. Event times
(and the states there) are differentiable under grad / jvp by the implicit function theorem;
the interpolant is not, and neither works under jit or vmap: those raise an error that says
what to use instead."""
from __future__ import annotations

import numpy as np
import scipy.integrate

from ... import numpy as fnp
from ...api.common import _leaf
from ...core import Tracer
from ...errors import ConcretizationError, FxadValueError, TracerArrayConversionError
from ...tree_util import tree_flatten, tree_unflatten
from ._odecore import IMPLICIT, _numpy_jac, _numpy_rhs

UNDER_TRANSFORMATION = (
    "solve_ivp: {what} under a transformation (grad, jvp, vmap, jit) is not supported: "
    "{why}. Call solve_ivp outside the transformation for it, or {instead}.")


def refuse_dense_output():
    raise FxadValueError(UNDER_TRANSFORMATION.format(
        what="dense_output", why="the interpolant is SciPy's OdeSolution, a Python object "
        "fxad cannot differentiate", instead="pass the times you need as t_eval (those "
        "values are differentiable)"))


def _event(ev, args):
    """A user's event function as SciPy calls it (t, y) -> float, keeping terminal and
    direction."""
    def g(t, y):
        return float(np.asarray(ev(t, y, *args)))
    for k in ("terminal", "direction"):
        if hasattr(ev, k):
            setattr(g, k, getattr(ev, k))
    return g


def solve_eagerly(fun, t_span, y0, method, t_eval, dense_output, events, args, cfg, stage_rhs,
                  plain, options):
    """SciPy's solve_ivp result (t, y, sol, t_events, y_events, ...) for concrete inputs."""
    y0 = np.atleast_1d(np.asarray(y0, np.float64))
    leaves, tree = tree_flatten(args)
    leaves = [_leaf(x) for x in leaves]
    try:
        rhs, consts = stage_rhs(fun, y0.shape[0], leaves, tree, False, "solve_ivp")
    except (ConcretizationError, TracerArrayConversionError):
        return plain()
    params = leaves + consts
    opts = dict(options)
    if method in IMPLICIT:
        opts["jac"] = _numpy_jac(rhs, params, cfg)
        band = getattr(opts["jac"], "band", None)  # LSODA's packed band
        if band is not None:
            opts["lband"], opts["uband"] = band
    tol = {k: v for k, v in (("rtol", cfg.rtol), ("atol", cfg.atol)) if v is not None}
    if isinstance(tol.get("atol"), tuple):
        tol["atol"] = np.array(tol["atol"])
    evs = events if isinstance(events, (list, tuple)) else ([] if events is None else [events])
    t0, tf = float(t_span[0]), float(t_span[1])
    sol = scipy.integrate.solve_ivp(
        _numpy_rhs(rhs, params, ""), (t0, tf), y0, method=method,
        t_eval=np.array([t0, tf]) if t_eval is None else np.asarray(t_eval, np.float64),
        dense_output=dense_output,
        events=None if events is None else [_event(e, tuple(args)) for e in evs],
        **tol, **opts)
    if sol.status < 0:
        raise FxadValueError(f"solve_ivp ({method}) failed: {sol.message} Try other "
                             "tolerances or another method (e.g. 'BDF' or 'LSODA' for stiff "
                             "problems), or check the model for blow-up.")
    return sol


def _concrete(tree, what):
    leaves, t = tree_flatten(tree)
    return tree_unflatten(t, [x.concrete_value(what) if isinstance(x, Tracer) else x
                              for x in leaves])


def differentiable_events(events, t_span, y0, t_eval, args, eager, solve_plain):
    """solve_ivp's result with event times differentiable by the implicit function theorem:
    each time t_k SciPy locates is the root of h(t) = event(t, y(t), *args), y(t) fxad's
    differentiable solution, so dt_k = -(∂h/∂θ dθ) / h'(t_k) (lax.custom_root around the
    located time; every order, as custom_root's rule is differentiable). Needs the concrete
    values behind the inputs (grad, jvp, jacfwd, hessian: yes; jit, vmap: no)."""
    from ...lax import custom_root
    what = "solve_ivp with events (locating the events)"
    try:
        c_span, c_y0, c_eval, c_args = _concrete((tuple(t_span), y0, t_eval, tuple(args)),
                                                 what)
    except ConcretizationError:
        raise FxadValueError(UNDER_TRANSFORMATION.format(
            what="events", why="the number of events depends on values, which jit and vmap do "
            "not know (grad, jvp, jacfwd and hessian are supported)",
            instead="locate the event eagerly and pass its time in t_eval or t_span"))
    sol = eager(c_span, c_y0, c_eval, c_args)
    evs = events if isinstance(events, (list, tuple)) else [events]
    t0 = fnp.asarray(t_span[0], dtype=np.float64)

    def state(t):
        return solve_plain((t0, t), fnp.stack([t]))["y"][:, 0]
    t_events, y_events, t_stop = [], [], None
    for ev, located in zip(evs, sol.t_events):
        ts, ys = [], []
        for tk in np.asarray(located, np.float64):
            t_star = custom_root(lambda t, ev=ev: fnp.asarray(ev(t, state(t), *args)),
                                 np.float64(tk), lambda f, g, tk=tk: np.float64(tk),
                                 lambda g, y: y / g(1.0))
            ts.append(t_star)
            ys.append(state(t_star))
            if getattr(ev, "terminal", False):
                t_stop = t_star
        n = np.size(c_y0)
        t_events.append(fnp.stack(ts) if ts else np.zeros(0))
        y_events.append(fnp.stack(ys) if ys else np.zeros((0, n)))
    c_t0, c_tf = float(c_span[0]), float(c_span[1])
    times = np.array([c_t0, c_tf]) if t_eval is None else np.asarray(c_eval, np.float64)
    t_out = fnp.stack([t0, fnp.asarray(t_span[1], np.float64)]) if t_eval is None else \
        fnp.asarray(t_eval, dtype=np.float64)
    if t_stop is not None:  # SciPy reports the t_eval points reached before the stop
        c_stop = float(np.asarray(sol.t_events[[getattr(e, "terminal", False)
                                                for e in evs].index(True)][-1]))
        sign = 1.0 if c_tf >= c_t0 else -1.0
        reached = sign * (times - c_stop) <= 0
        t_out = t_out[np.flatnonzero(reached)]
    end = t_stop if t_stop is not None else fnp.asarray(t_span[1], np.float64)
    out = solve_plain((t0, end), t_out)
    out.update(t=t_out, t_events=t_events, y_events=y_events,
               status=1 if t_stop is not None else 0,
               message=sol.message, success=True)
    return out

"""solve_ivp with `events` or `dense_output`: SciPy's own event location and interpolant,
fed fxad's compiled right-hand side and exact (sparse where it pays) Jacobian. Values only:
event times and the interpolant are not differentiable here, so under a transformation
these options raise an error that says what to use instead."""
from __future__ import annotations

import numpy as np
import scipy.integrate

from ...api.common import _leaf
from ...errors import ConcretizationError, FxadValueError, TracerArrayConversionError
from ...tree_util import tree_flatten
from ._odecore import IMPLICIT, _numpy_jac, _numpy_rhs

UNDER_TRANSFORMATION = (
    "solve_ivp: {what} under a transformation (grad, jvp, vmap, jit) is not supported: "
    "{why}. Call solve_ivp outside the transformation for it, or {instead}.")


def refuse_under_transformation(dense_output, events):
    if dense_output:
        raise FxadValueError(UNDER_TRANSFORMATION.format(
            what="dense_output", why="the interpolant is SciPy's OdeSolution, a Python object "
            "fxad cannot differentiate", instead="pass the times you need as t_eval (those "
            "values are differentiable)"))
    raise FxadValueError(UNDER_TRANSFORMATION.format(
        what="events", why="event times are not differentiated in this version",
        instead="locate the event eagerly and pass its time in t_eval or t_span (the state "
        "there is differentiable)"))


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

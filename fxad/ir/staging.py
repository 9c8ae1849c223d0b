"""The staging trace: records every primitive applied to its tracers as a jaxpr equation.

Only values that depend on the staged inputs are tracers here; anything else is an ordinary
value that is computed now and enters the program as a constant. `linearize` relies on this:
its tangent inputs are staging tracers, so the primal side runs eagerly (the "known" part of
partial evaluation) and only tangent work is recorded (the "unknown", linear part).
"""
from __future__ import annotations

from ..core import Trace, Tracer, _state, get_aval, missing_rule, new_trace
from .jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var

_PY_SCALARS = (bool, int, float, complex)


class StagingTracer(Tracer):
    # `_var`, not `var`: a tracer must keep ndarray's method names free (x.var() is NumPy's
    # variance, installed on Tracer by fxad.numpy)
    __slots__ = ("_var",)

    def __init__(self, trace, var):
        self._trace = trace
        self._var = var

    @property
    def aval(self):
        return self._var.aval


class StagingTrace(Trace):
    kind = "make_jaxpr"

    def __init__(self, level, name=None):
        super().__init__(level, name)
        self.invars = []
        self.eqns = []
        self.constvars = []
        self.consts = []
        self._const_ids = {}

    def new_arg(self, aval):
        v = Var(aval)
        self.invars.append(v)
        return StagingTracer(self, v)

    def getvar(self, x):
        if type(x) is StagingTracer and x._trace is self:
            return x._var
        if type(x) in _PY_SCALARS:
            return Literal(x, get_aval(x))
        v = self._const_ids.get(id(x))
        if v is None:  # a constant (or a lower trace's tracer): closed over as a constvar
            v = self._const_ids[id(x)] = Var(get_aval(x))
            self.constvars.append(v)
            self.consts.append(x)  # also keeps id(x) from being reused while we trace
        return v

    def process_primitive(self, prim, args, params):
        invars = [a._var if type(a) is StagingTracer and a._trace is self else self.getvar(a)
                  for a in args]
        if prim.abstract_eval is None:
            raise missing_rule("Shape", prim)
        out = prim.abstract_eval(*[v.aval for v in invars], **params)
        if prim.multiple_results:
            outvars = [Var(a) for a in out]
            self.eqns.append(Eqn(prim, invars, outvars, params, _state.source))
            return [StagingTracer(self, v) for v in outvars]
        v = Var(out)
        self.eqns.append(Eqn(prim, invars, [v], params, _state.source))
        return StagingTracer(self, v)

    def to_jaxpr(self, outs) -> ClosedJaxpr:
        outvars = [self.getvar(x) for x in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, self.eqns, outvars)
        return ClosedJaxpr(jaxpr, self.consts)


def stage(fun, in_avals, name="make_jaxpr"):
    """Trace a function of flat arguments into a ClosedJaxpr. Returns (jaxpr, flat outputs
    as traced), the latter so callers can tell which outputs were inputs or constants."""
    with new_trace(StagingTrace, name) as trace:
        args = [trace.new_arg(a) for a in in_avals]
        outs = fun(*args)
        return trace.to_jaxpr(outs)


def lift_tracer_consts(closed):
    """Constants of a staged program that are tracers of an enclosing transformation become
    its leading inputs: returns (program, those tracers). A Python function kept in a
    recorded equation must not hold such a tracer (it is dead when the equation runs); the
    program with the tracers passed in does not."""
    j = closed.jaxpr
    lift = [i for i, c in enumerate(closed.consts) if isinstance(c, Tracer)]
    if not lift:
        return closed, []
    keep = [i for i in range(len(j.constvars)) if i not in lift]
    new = Jaxpr([j.constvars[i] for i in keep], [j.constvars[i] for i in lift] + j.invars,
                j.eqns, j.outvars)
    return (ClosedJaxpr(new, [closed.consts[i] for i in keep]),
            [closed.consts[i] for i in lift])

"""Forward mode: tracers carry (primal, tangent); each primitive's JVP rule maps both.

Symbolic zeros: a tangent known to be zero is `Zero(aval)` and is never materialized. A value
whose tangent is zero is not boxed at all, so code that does not touch the differentiated
inputs runs on the eager fast path.
"""
from __future__ import annotations

import numpy as np

from ..core import ShapedArray, Trace, Tracer, get_aval, missing_rule, new_trace


class Zero:
    """A symbolic zero tangent/cotangent of the given abstract value."""
    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"

    @staticmethod
    def like(x):
        return Zero(get_aval(x))


def instantiate(t, aval=None):
    """A real array for a possibly symbolic zero."""
    if type(t) is Zero:
        return np.zeros(t.aval.shape, t.aval.dtype)
    return t


class PrimalTracer(Tracer):
    """A tracer carrying a primal value and derivative data about it (JVP's tangent, a jet's
    series, collapsed Taylor mode's coefficients): its type and concrete value are the
    primal's."""
    __slots__ = ("primal", "_aval")

    @property
    def aval(self):
        a = self._aval
        if a is None:
            a = self._aval = get_aval(self.primal)
        return a

    def concrete_value(self, op):
        p = self.primal
        return p.concrete_value(op) if isinstance(p, Tracer) else p


class JVPTracer(PrimalTracer):
    __slots__ = ("tangent",)

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self._aval = None


class JVPTrace(Trace):
    kind = "jvp"
    differentiates = True

    def unbox(self, x):
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        return x, Zero(get_aval(x))

    def box(self, primal, tangent):
        # Invariant: a JVPTracer never holds a symbolic zero.
        return primal if type(tangent) is Zero else JVPTracer(self, primal, tangent)

    def process_primitive(self, prim, args, params):
        primals, tangents = [], []
        for a in args:  # unbox, inlined: this runs for every primitive under jvp and grad
            if type(a) is JVPTracer and a._trace is self:
                primals.append(a.primal)
                tangents.append(a.tangent)
            else:
                primals.append(a)
                tangents.append(Zero(get_aval(a)))
        rule = prim.jvp
        if rule is None:
            raise missing_rule("Differentiation", prim)
        out, t_out = rule(primals, tangents, **params)
        if prim.multiple_results:
            return [self.box(p, t) for p, t in zip(out, t_out)]
        return out if type(t_out) is Zero else JVPTracer(self, out, t_out)  # box, inlined


def jvp_flat(fun, primals, tangents, name="jvp"):
    """Push a JVP trace, run `fun` on boxed inputs, and unbox its outputs."""
    with new_trace(JVPTrace, name) as trace:
        args = [trace.box(p, t) for p, t in zip(primals, tangents)]
        outs = fun(*args)
        pairs = [trace.unbox(o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]


def jvp_jaxpr(closed, nonzero, instantiate=False):
    """The JVP of a closed jaxpr as a jaxpr: inputs (primals, tangents of the `nonzero`
    inputs), outputs (primal outputs, tangents). Returns (jaxpr, out_nonzero). `instantiate`
    (a bool, or one per output) materializes symbolic-zero output tangents."""
    inst = [instantiate] * len(closed.out_avals) if isinstance(instantiate, bool) \
        else list(instantiate)
    from ..ir.jaxpr import eval_jaxpr
    from ..ir.staging import stage
    n = len(closed.in_avals)
    avals = closed.in_avals + [a for a, nz in zip(closed.in_avals, nonzero) if nz]
    out_nz = []

    def fun(*args):
        tans = iter(args[n:])
        tangents = [next(tans) if nz else Zero(a) for a, nz in zip(closed.in_avals, nonzero)]
        outs, touts = jvp_flat(lambda *p: eval_jaxpr(closed.jaxpr, closed.consts, *p),
                               list(args[:n]), tangents, name="jvp of a jaxpr")
        touts = [instantiate_like(t, o) if i else t for t, o, i in zip(touts, outs, inst)]
        out_nz[:] = [type(t) is not Zero for t in touts]
        return outs + [t for t in touts if type(t) is not Zero]
    jaxpr = stage(fun, avals, name="jvp of a jaxpr")
    return jaxpr, out_nz


def instantiate_like(t, primal):
    """A materialized tangent (zeros for a symbolic zero) with the primal's dtype."""
    if type(t) is Zero:
        a = get_aval(primal)
        return np.zeros(a.shape, a.dtype)
    return t

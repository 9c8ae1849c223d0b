"""Transposition: run a linear jaxpr backwards, accumulating cotangents.

A transpose rule gets the output cotangent and the equation's inputs, where the linear inputs
are `UndefinedPrimal(aval)` and the others are values (residuals, literals). It returns one
cotangent per input (None for non-linear ones). Absent cotangents are symbolic zeros: an
equation none of whose outputs received a cotangent is skipped.
"""
from __future__ import annotations

from ..core import missing_rule
from ..errors import FxadTypeError
from ..ir.jaxpr import Literal
from .jvp import Zero
from .. import lax  # resolved at call time (lax imports the rule files)


class UndefinedPrimal:
    """Marks a linear input of an equation being transposed."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x):
    return type(x) is UndefinedPrimal


def backward_pass(jaxpr, consts, cts_out, args=None):
    """Cotangents of `jaxpr.invars` (Zero where none flows) given cotangents of its outputs
    (None or Zero for none). All inputs are linear, unless `args` gives a value for some
    (the others being UndefinedPrimal). Equations that do not depend on the linear inputs
    are evaluated first."""
    env = dict(zip(jaxpr.constvars, consts))
    if args is None:
        linear = set(jaxpr.invars)
    else:
        linear = {v for v, a in zip(jaxpr.invars, args) if is_undefined(a)}
        env.update((v, a) for v, a in zip(jaxpr.invars, args) if not is_undefined(a))
    linear_eqns = []
    for eqn in jaxpr.eqns:  # forward: evaluate the non-linear part, collect the linear one
        if any(type(v) is not Literal and v in linear for v in eqn.invars):
            linear_eqns.append(eqn)
            linear.update(eqn.outvars)
        else:
            out = eqn.primitive.bind(*[_read(env, v) for v in eqn.invars], **eqn.params)
            env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))

    cts = {}

    def add_ct(v, ct):
        if ct is None or type(ct) is Zero or type(v) is Literal or v not in linear:
            return
        prev = cts.get(v)
        cts[v] = ct if prev is None else lax.add(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        add_ct(v, ct)
    for eqn in reversed(linear_eqns):
        outs = [cts.pop(v, None) for v in eqn.outvars]
        if all(ct is None for ct in outs):
            continue
        prim = eqn.primitive
        if prim.transpose is None:
            if eqn.source is not None:
                raise FxadTypeError(
                    f"the custom_jvp rule of '{eqn.source}' is not linear in its tangents: it "
                    f"applies '{prim.name}' to a tangent, so reverse mode cannot transpose it. "
                    "A JVP rule must compute tangent_out as a linear function of the tangents "
                    "(multiply them by values computed from the primals).")
            raise missing_rule("Transpose", prim)
        args = [UndefinedPrimal(v.aval) if type(v) is not Literal and v in linear
                else _read(env, v) for v in eqn.invars]
        if prim.multiple_results:
            ct_arg = [Zero(v.aval) if ct is None else ct for v, ct in zip(eqn.outvars, outs)]
        else:
            ct_arg = outs[0]
        cts_in = prim.transpose(ct_arg, *args, **eqn.params)
        for v, ct in zip(eqn.invars, cts_in):
            add_ct(v, ct)
    return [cts.get(v, Zero(v.aval)) for v in jaxpr.invars]


def _read(env, v):
    return v.val if type(v) is Literal else env[v]

"""Transposition: run a linear jaxpr backwards, accumulating cotangents.

A transpose rule gets the output cotangent and the equation's inputs, where the linear inputs
are `UndefinedPrimal(aval)` and the others are values (residuals, literals). It returns one
cotangent per input (None for non-linear ones). Absent cotangents are symbolic zeros: an
equation none of whose outputs received a cotangent is skipped.
"""
from __future__ import annotations

import numpy as np

from ..core import Primitive, get_aval, missing_rule
from ..errors import FxadTypeError
from ..ir.jaxpr import Literal
from .jvp import Zero
from .partial_eval import linearize_flat

# Cotangents flowing into one variable are summed with a primitive of their own (JAX's
# add_any): operands of one shape and dtype, no broadcasting, so it is linear and its
# transpose is trivial. Declared here, where the backward pass binds it; its rules are a
# block in fxad/rules/elementwise/arithmetic.py.
add_any_p = Primitive("add_any", memory="fresh")


class UndefinedPrimal:
    """Marks a linear input of an equation being transposed."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x):
    return type(x) is UndefinedPrimal


def aval_of(x):
    """The abstract value of a transpose rule's operand: a linear one's own, or a value's."""
    return x.aval if type(x) is UndefinedPrimal else get_aval(x)


def backward_pass(jaxpr, consts, cts_out, args=None):
    """Cotangents of `jaxpr.invars` (Zero where none flows) given cotangents of its outputs
    (None or Zero for none). All inputs are linear, unless `args` gives a value for some
    (the others being UndefinedPrimal). Equations that do not depend on the linear inputs
    are evaluated first. (This loop runs once per equation of every eager `grad`, so it is
    written flat; Literals are never in `linear`, so membership tests need no type check.)"""
    env = dict(zip(jaxpr.constvars, consts))
    if args is None:
        linear = set(jaxpr.invars)
    else:
        linear = {v for v, a in zip(jaxpr.invars, args) if is_undefined(a)}
        env.update((v, a) for v, a in zip(jaxpr.invars, args) if not is_undefined(a))
    linear_eqns = []
    for eqn in jaxpr.eqns:  # forward: evaluate the non-linear part, collect the linear one
        if not linear.isdisjoint(eqn.invars):
            linear_eqns.append(eqn)
            linear.update(eqn.outvars)
        else:
            out = eqn.primitive.bind(*[_read(env, v) for v in eqn.invars], **eqn.params)
            env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))

    cts = {}
    _accumulate(cts, linear, jaxpr.outvars, cts_out)
    pop = cts.pop
    for eqn in reversed(linear_eqns):
        prim = eqn.primitive
        if prim.multiple_results:
            outs = [pop(v, None) for v in eqn.outvars]
            if all(ct is None for ct in outs):
                continue
            ct_arg = [Zero(v.aval) if ct is None else ct for v, ct in zip(eqn.outvars, outs)]
        else:
            ct_arg = pop(eqn.outvars[0], None)
            if ct_arg is None:
                continue
        if prim.transpose is None:
            _no_transpose(eqn)
        args = [UndefinedPrimal(v.aval) if v in linear else
                (v.val if type(v) is Literal else env[v]) for v in eqn.invars]
        _accumulate(cts, linear, eqn.invars, prim.transpose(ct_arg, *args, **eqn.params))
    return [Zero(v.aval) if (ct := cts.get(v)) is None else ct for v in jaxpr.invars]


def _accumulate(cts, linear, vars_, new):
    """Add cotangents to those of linear variables (None and symbolic zeros add nothing)."""
    for v, ct in zip(vars_, new):
        if ct is None or type(ct) is Zero or v not in linear:
            continue
        prev = cts.get(v)
        cts[v] = ct if prev is None else add_any_p.bind(prev, ct)


def _no_transpose(eqn):
    if eqn.source is not None:
        raise FxadTypeError(
            f"the custom_jvp rule of '{eqn.source}' is not linear in its tangents: it "
            f"applies '{eqn.primitive.name}' to a tangent, so reverse mode cannot transpose it. "
            "A JVP rule must compute tangent_out as a linear function of the tangents "
            "(multiply them by values computed from the primals).")
    raise missing_rule("Transpose", eqn.primitive)


def _read(env, v):
    return v.val if type(v) is Literal else env[v]


def vjp_flat(fun, primals, name="vjp"):
    """Reverse mode of a flat function: linearize, then transpose. Returns (outputs, pullback,
    Linearized), where pullback(output cotangents, None or Zero for none) gives one cotangent
    per input (zeros for inputs that cannot carry one)."""
    outs, lin = linearize_flat(fun, primals, name)

    def pullback(cts_out):
        cts = [ct for ct, m in zip(cts_out, lin.out_mask) if m]
        cts_in = iter(backward_pass(lin.jaxpr.jaxpr, lin.jaxpr.consts, cts))
        return [_instantiate(next(cts_in), a) if m else np.zeros(a.shape, a.dtype)
                for a, m in zip(lin.in_avals, lin.in_mask)]
    return outs, pullback, lin


def _instantiate(ct, aval):
    return np.zeros(aval.shape, aval.dtype) if type(ct) is Zero else ct

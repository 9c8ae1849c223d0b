"""Simplification passes over closed jaxprs. Each is a small pure function
ClosedJaxpr -> ClosedJaxpr; `simplify` runs them in order. The passes name no primitive:
those that take part register rules on themselves (`Primitive.def_simplify(pass, rule)`),
and call primitives say how to inline them (`def_inline`).

Algebraic identities and NaN/inf: `x*1 -> x`, `x/1 -> x`, `x+0 -> x`, `x-0 -> x` are dropped
only when the output has exactly x's shape and dtype (no broadcasting, no promotion). They
hold for NaN and inf as well. The one difference is the sign of zero: -0.0 + 0 is +0.0, so
dropping `x + 0` can keep a -0.0; no fxad result depends on the sign of a zero. `x*0` is
NEVER folded to 0: inf*0 and NaN*0 are NaN, and a derivative program must propagate them.
"""
from __future__ import annotations

import numpy as np

from ..core import ShapedArray
from .jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, has_effects


# --- helpers ----------------------------------------------------------------------------------

def _rename(jaxpr: Jaxpr, mapping):
    """Replace uses of variables by `mapping` (a var -> var/literal dict), transitively."""
    def r(v):
        while type(v) is not Literal and v in mapping:
            v = mapping[v]
        return v
    eqns = [Eqn(e.primitive, [r(v) for v in e.invars], e.outvars, e.params) for e in jaxpr.eqns]
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, [r(v) for v in jaxpr.outvars])


def _const_values(closed):
    return dict(zip(closed.jaxpr.constvars, closed.consts))


# --- passes -----------------------------------------------------------------------------------

def inline_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Inline nested call primitives (jit), so later passes see across their boundaries."""
    jaxpr = closed.jaxpr
    if not any(e.primitive.inline is not None for e in jaxpr.eqns):
        return closed
    constvars, consts = list(jaxpr.constvars), list(closed.consts)
    eqns, mapping = [], {}
    for e in jaxpr.eqns:
        if e.primitive.inline is None:
            eqns.append(e)
            continue
        inner = inline_calls(e.primitive.inline(e.params))
        sub = dict(zip(inner.jaxpr.invars, e.invars))
        for v, c in zip(inner.jaxpr.constvars, inner.consts):
            nv = Var(v.aval)
            constvars.append(nv)
            consts.append(c)
            sub[v] = nv
        for ie in inner.jaxpr.eqns:  # fresh outputs: the same body may be inlined twice
            outs = [Var(v.aval) for v in ie.outvars]
            eqns.append(Eqn(ie.primitive, [sub.get(v, v) if type(v) is not Literal else v
                                           for v in ie.invars], outs, ie.params, ie.source))
            sub.update(zip(ie.outvars, outs))
        for ov, iv in zip(e.outvars, inner.jaxpr.outvars):
            mapping[ov] = sub.get(iv, iv) if type(iv) is not Literal else iv
    out = _rename(Jaxpr(constvars, jaxpr.invars, eqns, jaxpr.outvars), mapping)
    return ClosedJaxpr(out, consts)


def is_all(x, value):
    """Is x (a literal or constant, else None) an array whose every element is `value`?"""
    if x is None:
        return False
    a = np.asarray(x)
    return a.dtype != object and a.size > 0 and bool(np.all(a == value))


def _known(v, consts):
    """The value of a literal or constvar, else None."""
    if type(v) is Literal:
        return v.val
    return consts.get(v)


def forward_noops(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drop equations that return an input unchanged. A primitive says when it does with a
    "forward" rule, `rule(eqn, known) -> the input var or None`, where `known(v)` is the
    value of a literal or constant (else None): same-shape reshape, identity transpose,
    x*1, x+0, ..."""
    consts = _const_values(closed)
    known = lambda v: _known(v, consts)  # noqa: E731
    keep, mapping = [], {}
    for e in closed.jaxpr.eqns:
        rule = e.primitive.simplify.get("forward")
        src = rule(e, known) if rule is not None else None
        if src is not None and type(src) is not Literal:
            mapping[e.outvars[0]] = src
        else:
            keep.append(e)
    jaxpr = closed.jaxpr
    return ClosedJaxpr(_rename(Jaxpr(jaxpr.constvars, jaxpr.invars, keep, jaxpr.outvars),
                               mapping), closed.consts)


def fold_constants(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Evaluate equations whose inputs are all literals or constants, once, now."""
    consts = _const_values(closed)
    constvars, values = list(closed.jaxpr.constvars), list(closed.consts)
    keep = []
    for e in closed.jaxpr.eqns:
        if e.invars and all(type(v) is Literal or v in consts for v in e.invars) and \
                e.primitive.inline is None and not has_effects(e):
            out = e.primitive.impl(*[_known(v, consts) for v in e.invars], **e.params)
            outs = out if e.primitive.multiple_results else [out]
            for v, val in zip(e.outvars, outs):
                consts[v] = val
                constvars.append(v)
                values.append(val)
        else:
            keep.append(e)
    jaxpr = closed.jaxpr
    return ClosedJaxpr(Jaxpr(constvars, jaxpr.invars, keep, jaxpr.outvars), values)


def _param_key(params):
    try:
        key = tuple(sorted(params.items()))
        hash(key)
        return key
    except TypeError:
        return None


def cse(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Common-subexpression elimination: one equation per (primitive, params, inputs)."""
    seen, keep, mapping = {}, [], {}

    def ident(v):
        while type(v) is not Literal and v in mapping:
            v = mapping[v]
        # repr, not value: 0.0 == -0.0 but they are different literals (1/x differs)
        return ("lit", type(v.val), repr(v.val)) if type(v) is Literal else id(v)
    for e in closed.jaxpr.eqns:
        pk = _param_key(e.params) if not has_effects(e) else None
        key = None if pk is None else (e.primitive, pk, tuple(ident(v) for v in e.invars))
        if key is not None and key in seen:
            for a, b in zip(e.outvars, seen[key]):
                mapping[a] = b
            continue
        if key is not None:
            seen[key] = e.outvars
        keep.append(e)
    jaxpr = closed.jaxpr
    return ClosedJaxpr(_rename(Jaxpr(jaxpr.constvars, jaxpr.invars, keep, jaxpr.outvars),
                               mapping), closed.consts)


def live_eqns(eqns, outs):
    """The equations needed to compute `outs` (and every effectful one), in order."""
    live = {v for v in outs if type(v) is not Literal}
    keep = []
    for e in reversed(eqns):
        if any(v in live for v in e.outvars) or has_effects(e):
            keep.append(e)
            live.update(v for v in e.invars if type(v) is not Literal)
    keep.reverse()
    return keep


def dce(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Dead-code elimination (of pure equations); unused constants are dropped too."""
    jaxpr = closed.jaxpr
    keep = live_eqns(jaxpr.eqns, jaxpr.outvars)
    live = {v for e in keep for v in e.invars} | set(jaxpr.outvars)
    pairs = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if v in live]
    return ClosedJaxpr(Jaxpr([v for v, _ in pairs], jaxpr.invars, keep, jaxpr.outvars),
                       [c for _, c in pairs])


class DiagonalContext:
    """State of the `diagonal` pass, handed to the primitives' "diagonal" rules:
    `diag` maps a variable known to equal eye(n) * v to v; `known(v)` is a literal's or
    constant's value; `emit(prim, invars, shape, dtype, **params)` appends an equation and
    returns its output var; `replace(var, new)` makes later uses of var read new;
    `producer(v)` is the equation that made v (None for inputs, constants, literals)."""

    def __init__(self, consts):
        self.consts = consts
        self.diag = {}
        self.eqns = []
        self.mapping = {}
        self.made_by = {}

    def producer(self, v):
        return None if type(v) is Literal else self.made_by.get(v)

    def known(self, v):
        return _known(v, self.consts)

    def diagonal(self, v):
        return None if type(v) is Literal else self.diag.get(v)

    def is_identity(self, v, n):
        x = self.known(v)
        if x is None:
            return False
        a = np.asarray(x)
        return a.shape == (n, n) and a.dtype != object and bool(np.array_equal(a, np.eye(n)))

    def emit(self, prim, invars, shape, dtype, **params):
        v = Var(ShapedArray(shape, dtype))
        self.eqns.append(Eqn(prim, invars, [v], params))
        self.made_by[v] = self.eqns[-1]
        return v

    def replace(self, var, new):
        self.mapping[var] = new


def diagonal_products(closed: ClosedJaxpr) -> ClosedJaxpr:
    """`eye(n) * v` is how the identity basis of jacfwd/jacrev meets elementwise work. Such
    a diagonal matrix is tracked as its vector v (by the "diagonal" rules of the primitives
    that make or consume one: mul, dot_general), so a matrix product with it becomes a
    scaling of rows or columns, O(n^2) instead of O(n^3). And the diagonal taken from a
    matrix product (getitem's rule) is computed alone, without the product. The original
    equations stay for any other use (dce drops them when unused)."""
    ctx = DiagonalContext(_const_values(closed))
    for e in closed.jaxpr.eqns:
        ctx.eqns.append(e)
        ctx.made_by.update((v, e) for v in e.outvars)
        rule = e.primitive.simplify.get("diagonal")
        if rule is not None:
            rule(e, ctx)
    if not ctx.mapping:
        return closed
    jaxpr = closed.jaxpr
    return ClosedJaxpr(_rename(Jaxpr(jaxpr.constvars, jaxpr.invars, ctx.eqns, jaxpr.outvars),
                               ctx.mapping), closed.consts)


PASSES = (inline_calls, fold_constants, forward_noops, diagonal_products, cse, dce)


def simplify(closed: ClosedJaxpr) -> ClosedJaxpr:
    for p in PASSES:
        closed = p(closed)
    return closed

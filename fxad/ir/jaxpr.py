"""The jaxpr IR: variables, literals, equations, programs; a type checker and an evaluator."""
from __future__ import annotations

import numpy as np

from ..core import BoundedCache, Primitive, primitives
from ..errors import FxadValueError, JaxprTypeError
from .vars import Literal, Var  # noqa: F401  (part of the IR's vocabulary, re-exported)


class Eqn:
    """`outvars = primitive[params] invars`. `source` names the custom rule (if any) whose
    code staged this equation, for error messages."""
    __slots__ = ("primitive", "invars", "outvars", "params", "source")

    def __init__(self, primitive, invars, outvars, params, source=None):
        self.primitive = primitive
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.params = params
        self.source = source

    def __repr__(self):
        return f"Eqn({self.primitive.name}, {self.invars} -> {self.outvars})"


def has_effects(eqn) -> bool:
    """Must this equation run exactly where and as often as the program says? Yes if its
    primitive is effectful (a callback), or a program among its parameters (a loop or
    branch body, a jit call) holds such an equation: simplification and loop hoisting
    leave those alone."""
    if eqn.primitive.effectful:
        return True
    for p in eqn.params.values():
        for j in (p if type(p) is tuple else (p,)):
            if type(j) is ClosedJaxpr and _body_effects(j):
                return True
    return False


def _body_effects(closed):
    hit = closed.cache.get("has_effects")
    if hit is None:
        hit = closed.cache["has_effects"] = any(has_effects(e) for e in closed.jaxpr.eqns)
    return hit


class Jaxpr:
    """A program: equations over variables, with its inputs and its outputs. Printed as
    `{ lambda constvars ; invars . let eqns in outvars }`; outvars may be Literals."""
    __slots__ = ("constvars", "invars", "eqns", "outvars")

    def __init__(self, constvars, invars, eqns, outvars):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.eqns = list(eqns)
        self.outvars = list(outvars)

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def __str__(self):
        from .printer import pp_jaxpr
        return pp_jaxpr(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars. `cache` keeps programs derived
    from it (compiled code, JVP and batched versions), so they are built once."""
    __slots__ = ("jaxpr", "consts", "cache")

    def __init__(self, jaxpr: Jaxpr, consts):
        self.jaxpr = jaxpr
        self.consts = list(consts)
        self.cache = BoundedCache(64)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)

    def __call__(self, *args):
        return eval_jaxpr(self.jaxpr, self.consts, *args)

    def snapshot(self) -> "ClosedJaxpr":
        """This program with private copies of its array constants. A program that outlives
        the call that built it (jit's cache, make_jaxpr, vjp's and linearize's functions)
        keeps the values its constants had when it was traced, as JAX does: a later
        `W[:] = 0` on a closed-over W, or an update of a returned array that is also a
        residual, changes nothing."""
        if not any(type(c) is np.ndarray for c in self.consts):
            return self
        return ClosedJaxpr(self.jaxpr, [np.array(c, copy=True) if type(c) is np.ndarray else c
                                        for c in self.consts])

    def __str__(self):
        from .printer import pp_jaxpr
        return pp_jaxpr(self.jaxpr, self.consts)

    __repr__ = __str__

    def to_dot(self):
        from .graphviz import to_dot
        return to_dot(self)


def holds_user_functions(closed) -> bool:
    """Does a program (or a tuple of them) hold a user's function in some equation's
    parameters (a custom rule, a callback), directly or in an inner program? Global caches
    must not key on such a program: they would keep the user's closures (and what they
    capture) alive. Cached on the program."""
    if type(closed) is tuple:
        return any(_holds(x) for x in closed)
    hit = closed.cache.get("holds_user_functions")
    if hit is None:
        hit = any(_holds(v) for e in closed.jaxpr.eqns for v in e.params.values())
        closed.cache["holds_user_functions"] = hit
    return hit


def _holds(x):
    if isinstance(x, ClosedJaxpr):
        return holds_user_functions(x)
    if isinstance(x, (tuple, list)):
        return any(_holds(y) for y in x)
    return callable(x) and not isinstance(x, type)


def eval_jaxpr(jaxpr: Jaxpr, consts, *args):
    """Run a jaxpr by binding each primitive, so evaluation is itself transformable."""
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    if len(args) != len(jaxpr.invars):
        raise JaxprTypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(v):
        return v.val if type(v) is Literal else env[v]

    for eqn in jaxpr.eqns:
        out = eqn.primitive.bind(*[read(v) for v in eqn.invars], **eqn.params)
        if eqn.primitive.multiple_results:
            for v, x in zip(eqn.outvars, out):
                env[v] = x
        else:
            env[eqn.outvars[0]] = out
    return [read(v) for v in jaxpr.outvars]


def check_jaxpr(jaxpr: Jaxpr):
    """Every variable is defined once before use, and every equation's output types are what
    its primitive's shape rule says. Raises JaxprTypeError naming the equation."""
    from .printer import pp_eqn, Namer
    defined = set()
    namer = Namer()

    def define(v):
        if v in defined:
            raise JaxprTypeError(f"variable {namer(v)} is defined twice")
        defined.add(v)

    for v in jaxpr.constvars + jaxpr.invars:
        define(v)
    for eqn in jaxpr.eqns:
        for v in eqn.invars:
            if type(v) is not Literal and v not in defined:
                raise JaxprTypeError(f"{namer(v)} used before definition in:\n  "
                                     f"{pp_eqn(eqn, namer)}")
        rule = eqn.primitive.abstract_eval
        out = rule(*[v.aval for v in eqn.invars], **eqn.params)
        out = list(out) if eqn.primitive.multiple_results else [out]
        got = [v.aval for v in eqn.outvars]
        if out != got:
            raise JaxprTypeError(
                f"equation output types {[a.str_short() for a in got]} differ from the shape "
                f"rule's {[a.str_short() for a in out]} in:\n  {pp_eqn(eqn, namer)}")
        for v in eqn.outvars:
            define(v)
    for v in jaxpr.outvars:
        if type(v) is not Literal and v not in defined:
            raise JaxprTypeError(f"output {namer(v)} is never defined")
    return True


# --- pickling: programs sent to other processes (Dask workers) --------------------------------

def _primitive_named(name, module):
    """The primitive a pickle names: primitives are singletons, so a program sent to another
    process refers to that process's own (with their rules)."""
    import importlib
    if module:
        importlib.import_module(module)
    for p in primitives():
        if p.name == name and p.module == module:
            return p
    raise FxadValueError(f"cannot unpickle primitive {name!r}: no primitive of that name is "
                         f"defined by {module!r} in this process")


Primitive.__reduce__ = lambda self: (_primitive_named, (self.name, self.module))
# a cache travels empty (a pickled program's compiled code is rebuilt where it runs)
BoundedCache.__reduce__ = lambda self: (BoundedCache, (self.size,))

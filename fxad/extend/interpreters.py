"""Interpreting programs: run a jaxpr over values of your own kind (intervals, dependency
sets, costs, shapes with units, ...), with one handler per primitive and a default for the
rest.

    counter = Interpreter(default=lambda interp, eqn, ins: [None] * len(eqn.outvars))
    @counter.def_rule(fxad.extend.core.primitive("mul"))
    def _(interp, eqn, ins): ...
    outs = counter.run(fxad.make_jaxpr(f)(x), *inputs)

This is `eval_jaxpr` with the primitive's `bind` replaced by your handler: no tracing, no
transformation is involved, and what the handlers compute is up to them. To interpret a
program *while it runs* (composing with grad, vmap and jit), write a trace instead
(fxad.extend.trace).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..core import Primitive, missing_rule
from ..errors import JaxprTypeError
from ..ir.jaxpr import ClosedJaxpr, Jaxpr, Literal

__all__ = ["Interpreter"]


class Interpreter:
    """Runs jaxprs over arbitrary values with per-primitive handlers.

    A handler is `rule(interp, eqn, invals) -> outvals`: `eqn` is the equation (its
    `primitive`, `params`, and `invars` / `outvars` with their `.aval`), `invals` the values
    of its inputs, and it returns one value per output variable (a list or tuple, also for a
    single-result primitive). Inner programs (a jit call's body, cond's branches, loop bodies:
    `fxad.extend.core.subjaxprs(eqn)`) are run with `interp.run(closed, *values)`.

    `default` handles primitives without a rule (none: an error naming the primitive).
    `constant(value, aval)` turns a program's constants and literals into your values (the
    default keeps them as they are); pass a function or override the method."""

    def __init__(self, rules: dict | None = None, default: Callable | None = None,
                 constant: Callable | None = None, name: str = "interpreter"):
        self.rules = dict(rules or {})
        self.default = default
        self.name = name
        if constant is not None:
            self.constant = constant

    def def_rule(self, *prims: Primitive) -> Callable:
        """Decorator: register the handler for these primitives."""
        def register(rule):
            for p in prims:
                self.rules[p] = rule
            return rule
        return register

    def rule_for(self, prim: Primitive) -> Callable:
        rule = self.rules.get(prim, self.default)
        if rule is None:
            raise missing_rule(self.name.capitalize(), prim)
        return rule

    def constant(self, value: Any, aval) -> Any:
        return value

    def run(self, closed: ClosedJaxpr, *args: Any) -> list:
        """The outputs of a closed program for input values `args` (your kind)."""
        return self.run_jaxpr(closed.jaxpr, closed.consts, args)

    def run_jaxpr(self, jaxpr: Jaxpr, consts: Sequence, args: Sequence) -> list:
        """The same for an open jaxpr and the values of its constants (as they are given to
        `constant`)."""
        if len(args) != len(jaxpr.invars):
            raise JaxprTypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
        constant = self.constant
        env = {v: constant(c, v.aval) for v, c in zip(jaxpr.constvars, consts)}
        env.update(zip(jaxpr.invars, args))

        def read(v):
            return constant(v.val, v.aval) if type(v) is Literal else env[v]
        rules, default = self.rules, self.default
        for eqn in jaxpr.eqns:
            rule = rules.get(eqn.primitive, default)
            if rule is None:
                rule = self.rule_for(eqn.primitive)
            outs = rule(self, eqn, [read(v) for v in eqn.invars])
            if len(outs) != len(eqn.outvars):
                raise JaxprTypeError(f"{self.name}: the rule for '{eqn.primitive.name}' "
                                     f"returned {len(outs)} values for {len(eqn.outvars)} "
                                     "outputs")
            env.update(zip(eqn.outvars, outs))
        return [read(v) for v in jaxpr.outvars]

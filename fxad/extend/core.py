"""The vocabulary of fxad's programs, for code that builds on fxad: primitives, abstract
values and jaxprs (JAX's `jax.extend.core` names where JAX has them).

Everything in `__all__` is public and stable. These are fxad's own classes, not copies: a
`Primitive` made here is a primitive like `sin` or `dot_general`, and a `ClosedJaxpr` from
`stage` is the program `jit` compiles.
"""
from __future__ import annotations

from typing import Callable, Sequence

from ..core import Primitive, ShapedArray, get_aval, is_float, primitives as _all_primitives
from ..errors import FxadValueError
from ..ir.jaxpr import ClosedJaxpr, Eqn as JaxprEqn, Jaxpr, Literal, Var, check_jaxpr, eval_jaxpr
from ..ir.staging import stage as _stage

__all__ = ["Primitive", "ShapedArray", "get_aval", "is_float", "Jaxpr", "ClosedJaxpr",
           "JaxprEqn", "Var", "Literal", "check_jaxpr", "eval_jaxpr", "jaxpr_as_fun", "stage",
           "primitives", "primitive", "subjaxprs"]


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable:
    """The program as a function of its inputs returning the list of its outputs. Calling
    it binds every primitive, so it is transformable (grad, vmap, jit, your own traces)."""
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)


def stage(fun: Callable, in_avals: Sequence[ShapedArray], name: str = "stage") -> ClosedJaxpr:
    """Trace `fun` (flat arrays in, a list or tuple of arrays out) at the abstract values
    `in_avals` into a ClosedJaxpr. Unlike `fxad.make_jaxpr` it takes no pytrees and no
    concrete arguments, and it may be called under any transformation: values `fun` closes
    over (a lower transformation's tracers included) become constants of the program."""
    def flat(*args):
        out = fun(*args)
        if not isinstance(out, (list, tuple)):
            raise FxadValueError(f"stage: the function must return a list or tuple of "
                                 f"arrays, got {type(out).__name__}")
        return list(out)
    return _stage(flat, [a if isinstance(a, ShapedArray) else ShapedArray(a.shape, a.dtype)
                         for a in in_avals], name=name)


def primitives() -> list:
    """Every primitive defined so far (fxad's and any made with `Primitive`), in the order
    they were defined."""
    return _all_primitives()


def primitive(name: str) -> Primitive:
    """The primitive called `name` (the first defined with that name), or FxadValueError."""
    for p in _all_primitives():
        if p.name == name:
            return p
    raise FxadValueError(f"no primitive is called {name!r}; fxad.extend.core.primitives() "
                         "lists them")


def subjaxprs(eqn: JaxprEqn) -> list:
    """The programs an equation runs (a jit call's body, cond's branches, a loop's body and
    condition, ...), found among its parameters, as ClosedJaxprs in parameter order."""
    out = []
    for k in sorted(eqn.params):
        v = eqn.params[k]
        for x in (v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(x, ClosedJaxpr):
                out.append(x)
    return out

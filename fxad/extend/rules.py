"""Defining a primitive and its rules: the conventions every rule follows, and the helpers
fxad's own rule blocks use (notes/02_rules.md shows the idiom).

A primitive's whole story, in this order (each rule optional except impl and shape):

    p = Primitive("name")                       # or elementwise_primitive("name", ufunc)
    p.def_impl(fn)                              # fn(*arrays, **params) -> array (NumPy)
    p.def_abstract_eval(fn)                     # fn(*avals, **params) -> ShapedArray
    p.def_jvp(fn)                               # see below (or defjvp / defderiv / ...)
    p.def_transpose(fn)                         # linear primitives only
    p.def_batch(fn)                             # vmap (or defbatch_elementwise)
    def_jet(p, fn)                              # Taylor mode, where fxad has it
    p.def_lowering(fn, backend="numpy")         # jit's generated code (else it calls impl)

Conventions (the same as fxad's own rules):

- JVP: `rule(primals, tangents, **params) -> (out, tangent_out)`; a tangent may be a
  symbolic `Zero(aval)` (never materialized: skip its contribution) and `tangent_out` may be
  one. The tangent output must be computed with primitives (fxad.numpy, fxad.lax) and be
  linear in the tangents: reverse mode is the transpose of the staged tangent program.
- transpose: `rule(cotangent, *args, **params) -> list`, one cotangent per operand (None for
  a non-linear one); linear operands arrive as `UndefinedPrimal(aval)`.
- batching: `rule(values, dims, **params) -> (out, out_dim)`; a dim is the batch axis of
  that value, or None for an unbatched one.
- multiple results: `Primitive(name, multiple_results=True)`; impl, shape and rules then
  take and return lists.
"""
from __future__ import annotations

import sys
from typing import Callable

from ..core import Primitive
from ..errors import FxadTypeError
from ..interpreters.jvp import Zero, instantiate
from ..interpreters.transpose import UndefinedPrimal, is_undefined
from ..rules.helpers import (defbatch_elementwise, defbilinear, defderiv, defjvp, defjvp_zero,
                             deflinear, moveaxis)
from ..rules.helpers import elementwise as _elementwise

__all__ = ["Primitive", "Zero", "UndefinedPrimal", "is_undefined_primal", "instantiate_zeros",
           "elementwise_primitive", "defjvp", "defderiv", "defjvp_zero", "deflinear",
           "defbilinear", "defbatch_elementwise", "moveaxis", "def_jet", "has_jet"]


def is_undefined_primal(x) -> bool:
    """Is this transpose-rule operand a linear input (an `UndefinedPrimal`)?"""
    return is_undefined(x)


def instantiate_zeros(t):
    """A tangent as an array: zeros of its shape and dtype for a symbolic `Zero`."""
    return instantiate(t)


def elementwise_primitive(name: str, impl: Callable, memory: str = "fresh") -> Primitive:
    """A NumPy-broadcasting primitive with impl `impl` (a NumPy ufunc or any function of
    arrays that broadcasts): its shape rule (broadcast shapes, the dtype NumPy gives), its
    batching rule, and for a ufunc its lowerings, as fxad's `sin` or `add` have them. Marked
    `elementwise`, which analyses (fxad.sparse) use. Add the JVP with `defjvp` or
    `defderiv`."""
    p = _elementwise(name, impl, memory)
    p.module = sys._getframe(1).f_globals.get("__name__")  # the caller's, not this module's
    return p


def def_jet(prim: Primitive, rule: Callable) -> Callable:
    """Register the Taylor-mode (jet) rule of `prim`, where this build of fxad has Taylor
    mode (`fxad.jet`); otherwise FxadTypeError. `has_jet()` says which."""
    if not has_jet():
        raise FxadTypeError("this build of fxad has no Taylor mode (fxad.jet), so a jet rule "
                            f"for '{prim.name}' cannot be registered")
    return prim.def_jet(rule)


def has_jet() -> bool:
    """Does this build of fxad have Taylor mode (primitives take jet rules)?"""
    return hasattr(Primitive, "def_jet")

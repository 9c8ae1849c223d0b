"""fxad.extend: the public, stable API for research on fxad.

- `fxad.extend.core`: primitives, abstract values, jaxprs (`Primitive`, `ShapedArray`,
  `ClosedJaxpr`, `stage`, `primitives()`, ...);
- `fxad.extend.rules`: defining a primitive's rules (JVP, transpose, batching, jet) with
  the helpers fxad's own rules use;
- `fxad.extend.interpreters`: `Interpreter`, running jaxprs over values of your own kind
  with a handler per primitive;
- `fxad.extend.trace`: `Trace`, `Tracer`, `new_trace`, for transformations that run with
  the program and compose with grad, vmap and jit.

Everything named in these modules' `__all__` (and re-exported here) is public: documented,
tested, kept stable. Anything else reachable through them is internal. fxad.sparse is
written on this API alone (notes/15_sparse_and_extend.md).
"""
from . import core, interpreters, rules, trace  # noqa: F401
from .core import (ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Primitive, ShapedArray, Var,  # noqa: F401
                   check_jaxpr, eval_jaxpr, get_aval, is_float, jaxpr_as_fun, primitive,
                   primitives, stage, subjaxprs)
from .interpreters import Interpreter  # noqa: F401
from .rules import (UndefinedPrimal, Zero, def_jet, defbatch_elementwise, defbilinear,  # noqa: F401
                    defderiv, defjvp, defjvp_zero, deflinear, elementwise_primitive, has_jet,
                    instantiate_zeros, is_undefined_primal, moveaxis)
from .trace import Trace, Tracer, inline_call, is_traced, new_trace, trace_stack  # noqa: F401

__all__ = (["core", "interpreters", "rules", "trace"] + core.__all__ + interpreters.__all__
           + [n for n in rules.__all__ if n != "Primitive"] + trace.__all__)

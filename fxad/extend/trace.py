"""Trace-level transformations: interpret a program while it runs, composing with grad,
vmap, jit and each other.

A transformation is a `Trace` subclass (what to do with each primitive) and a `Tracer`
subclass (the value it carries), entered with `new_trace`:

    class CountTrace(Trace):
        def __init__(self, level, name, counts):
            super().__init__(level, name)
            self.counts = counts

        def process_primitive(self, prim, args, params):
            self.counts[prim.name] = self.counts.get(prim.name, 0) + 1
            out = prim.bind(*[self.unbox(a) for a in args], **params)
            return [self.box(o) for o in out] if prim.multiple_results else self.box(out)

        def box(self, x):
            return CountTracer(self, x)

        def unbox(self, x):
            return x.val if isinstance(x, CountTracer) and x._trace is self else x

    class CountTracer(Tracer):
        def __init__(self, trace, val):
            self._trace, self.val = trace, val
        aval = property(lambda self: get_aval(self.val))

    def count(f):
        def wrapped(*args):
            counts = {}
            with new_trace(CountTrace, "count", counts=counts) as trace:
                out = f(*[trace.box(a) for a in args])
                return trace.unbox(out), counts
        return wrapped

How it composes. Active traces form a per-thread stack; `Primitive.bind` hands a primitive
to the highest trace among its arguments' tracers, whose `process_primitive` does its work
by binding primitives on the values inside, which lower traces (or plain NumPy) then
process. A value from another trace, or a constant, is simply not one of yours: treat it as
a constant (the `unbox` above passes it through). So `grad(count(f))`, `count(grad(f))`,
`vmap`, `jit` and your own traces nest in any order. Tracers get NumPy's operators and
methods (`x + y`, `x[i]`, `x.sum()`) from fxad.numpy, as fxad's own do.

Higher-order primitives (`jit`, `cond`, `while_loop`, `scan`, `custom_jvp_call`, ...) reach
`process_primitive` too, with their programs in `params`: bind them on your unboxed values
to treat them as opaque, or use `inline_call` to run a `jit` body primitive by primitive.

`new_trace` is exception-safe (the stack is restored on any exit) and per thread; a tracer
used after its `with` block ends raises `fxad.errors.EscapedTracerError`.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..core import Trace, Tracer, new_trace, trace_stack
from ..errors import FxadTypeError
from ..ir.jaxpr import eval_jaxpr

__all__ = ["Trace", "Tracer", "new_trace", "trace_stack", "is_traced", "inline_call"]


def is_traced(*values: Any) -> bool:
    """Is a transformation active in this thread, or is any of `values` a tracer? (Code that
    returns different kinds of results eagerly and under a transformation asks this.)"""
    return bool(trace_stack()) or any(isinstance(v, Tracer) for v in values)


def inline_call(prim, args: Sequence, params: dict) -> list:
    """Run a call primitive's body (a `jit` call's program) on `args` primitive by primitive,
    so the current traces see its equations instead of one opaque call. FxadTypeError for a
    primitive that is not a call."""
    if prim.inline is None:
        raise FxadTypeError(f"'{prim.name}' is not a call primitive: it has no body to inline")
    closed = prim.inline(params)
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)

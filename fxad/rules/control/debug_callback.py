"""`debug_callback`: calls a Python function on concrete values when the program runs.

debug_callback(*args; callback) -> no outputs. Effectful, so simplification never folds,
merges or drops it, and jit's generated code calls it where it was staged.
  impl       callback(*args)
  JVP        the callback on the primals; no tangent work (it has no outputs)
  batching   one call per example, in order (JAX's semantics for vmap of debug.print)
"""
from __future__ import annotations

from ...core import Primitive
from ..helpers import shape_of
from .. import ops


def _impl(*args, callback):
    callback(*args)
    return []


def _jvp(primals, tangents, callback):
    debug_callback_p.bind(*primals, callback=callback)
    return [], []


def _batch(vals, dims, callback):
    n = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not None)
    for i in range(n):
        debug_callback_p.bind(*[v if d is None else ops.getitem(v, (slice(None),) * d + (i,))
                                for v, d in zip(vals, dims)], callback=callback)
    return [], []


debug_callback_p = Primitive("debug_callback", multiple_results=True, memory="fresh",
                             effectful=True)
debug_callback_p.def_impl(_impl)
debug_callback_p.def_abstract_eval(lambda *avals, callback: [])
debug_callback_p.def_jvp(_jvp)
debug_callback_p.def_batch(_batch)
def debug_callback(*args, callback): return debug_callback_p.bind(*args, callback=callback)

"""`pure_callback`: opaque NumPy/SciPy code inside fxad programs (JAX's API; the user's
side, pytrees and ShapeDtypeStruct, is fxad/api/callback.py).

pure_callback(*args; callback, result_avals, vmap_method)
  impl       callback(*args) on NumPy arrays (read-only views), its results checked against
             the declared shapes and dtypes (a mismatch is an error naming the leaf)
  shape      the declaration
  JVP        an error: the callback is opaque to fxad. Wrap it in custom_jvp/custom_vjp (JAX
             does the same); fxad.scipy's solvers are built that way
  batching   by vmap_method, as JAX: "sequential" a scan calling it once per example,
             "sequential_unrolled" a Python loop, "expand_dims" / "broadcast_all" one call
             with batch axes in front (unbatched arguments get an axis of 1 / of the batch
             size); None (the default) refuses under vmap, naming the choices (JAX 0.10)
  effectful  simplification never folds, merges or drops it, and scan never hoists it out
             of a loop body: a callback runs exactly where and as often as the program says.
             JAX allows eliding or merging pure callbacks; fxad is stricter on purpose, so
             a callback that logs, counts or times itself sees every call (and a pure one
             loses nothing but the saving from merging two identical calls).

Inside `jit` (or `make_jaxpr`) a callback whose arguments are all constants is still staged
into the program (see `pure_callback` below): the generated code calls it on every run
instead of baking in a value computed once while tracing.
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray, Tracer, get_aval, trace_stack
from ...errors import FxadTypeError, FxadValueError, OpaqueFunctionError
from ...ir.staging import StagingTrace, stage
from ..helpers import bdim_to_front
from .scan import bind_scan
from .. import ops

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all")


def _read_only(a):
    a = np.asarray(a)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False  # the callback must not change fxad's or the user's arrays
    return a


def _checked(i, out, aval, vmap_method):
    if isinstance(out, (bool, int, float, complex)) and aval.shape == () and \
            np.can_cast(np.asarray(out).dtype, aval.dtype, "same_kind"):
        return np.asarray(out, aval.dtype)  # a Python number where a scalar is declared
    arr = np.asarray(out)
    hint = (f" (with vmap_method={vmap_method!r} under vmap, the callback gets and returns "
            "arrays with the batch axis first)") if vmap_method in VMAP_METHODS[2:] else ""
    if arr.shape != aval.shape:
        raise FxadTypeError(f"pure_callback: the callback's result leaf {i} has shape "
                            f"{arr.shape}, but result_shape_dtypes declares {aval.shape}{hint}")
    if arr.dtype != aval.dtype:
        raise FxadTypeError(f"pure_callback: the callback's result leaf {i} has dtype "
                            f"{arr.dtype}, but result_shape_dtypes declares {aval.dtype}; "
                            f"convert it in the callback (e.g. .astype(np.{aval.dtype.name}))"
                            " or declare the dtype it returns")
    return np.array(arr, copy=True)  # fresh: nothing returned aliases what the callback keeps


def _impl(*args, callback, result_avals, vmap_method):
    outs = callback(*[_read_only(a) for a in args])
    if not isinstance(outs, (list, tuple)) or len(outs) != len(result_avals):
        got = len(outs) if isinstance(outs, (list, tuple)) else type(outs).__name__
        raise FxadTypeError(f"pure_callback: the callback returned {got} results, but "
                            f"{len(result_avals)} are declared")
    return [_checked(i, o, a, vmap_method) for i, (o, a) in enumerate(zip(outs, result_avals))]


def _jvp(primals, tangents, callback, result_avals, vmap_method):
    raise OpaqueFunctionError(
        "pure_callback cannot be differentiated: fxad cannot see inside the callback. Wrap "
        "the function that calls it in fxad.custom_jvp or fxad.custom_vjp and give its "
        "derivative there (fxad.scipy's solvers do this); to treat the result as a "
        "constant, apply fxad.stop_gradient to the callback's arguments.")


def _batch(vals, dims, callback, result_avals, vmap_method):
    n = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    batched_avals = tuple(ShapedArray((n,) + a.shape, a.dtype) for a in result_avals)
    vals = [v if d is None else bdim_to_front(v, d) for v, d in zip(vals, dims)]
    if vmap_method in ("expand_dims", "broadcast_all"):
        size = n if vmap_method == "broadcast_all" else 1
        args = [v if d is not None else
                ops.broadcast_to(ops.reshape(v, (1,) + get_aval(v).shape),
                                 (size,) + get_aval(v).shape) for v, d in zip(vals, dims)]
        outs = pure_callback(callback, batched_avals, vmap_method, *args)
        return outs, [0] * len(outs)
    if vmap_method == "sequential_unrolled":
        rows = [pure_callback(callback, result_avals, vmap_method,
                              *[v if d is None else ops.getitem(v, (i,))
                                for v, d in zip(vals, dims)]) for i in range(n)]
        outs = [ops.concatenate([ops.reshape(r[k], (1,) + a.shape) for r in rows], 0)
                for k, a in enumerate(result_avals)]
        return outs, [0] * len(outs)
    if vmap_method == "sequential":  # a scan over the batch: one call per example
        shared = [v for v, d in zip(vals, dims) if d is None]
        mapped = [v for v, d in zip(vals, dims) if d is not None]

        def step(*a):
            it_s, it_m = iter(a[:len(shared)]), iter(a[len(shared):])
            return pure_callback(callback, result_avals, vmap_method,
                                 *[next(it_s) if d is None else next(it_m) for d in dims])
        avals = [get_aval(v) for v in shared] + \
            [ShapedArray(get_aval(v).shape[1:], get_aval(v).dtype) for v in mapped]
        body = stage(step, avals, name="pure_callback sequential")
        outs = bind_scan(shared, [], mapped, body, n, False)
        return outs, [0] * len(outs)
    raise FxadValueError(
        "vmap of pure_callback needs to know how the callback handles a batch: pass "
        "vmap_method='sequential' (one call per example), 'sequential_unrolled', "
        "'expand_dims' (one call; batched arguments have the batch axis first, unbatched "
        "ones an axis of size 1) or 'broadcast_all' (one call; every argument batched)")


pure_callback_p = Primitive("pure_callback", multiple_results=True, memory="fresh",
                            effectful=True)
pure_callback_p.def_impl(_impl)
pure_callback_p.def_abstract_eval(lambda *avals, result_avals, **_: list(result_avals))
pure_callback_p.def_jvp(_jvp)
pure_callback_p.def_batch(_batch)
# no lowering: jit's generated code calls the impl


_PROGRAMS = ("jit", "make_jaxpr")  # staging traces whose programs run later, again and again


def pure_callback(callback, result_avals, vmap_method, *args):
    """Bind pure_callback. With no traced argument inside a program being staged (jit,
    make_jaxpr), it is staged into that program rather than run now: the program calls it
    each time it runs (a linearize's tangent program is not such a program)."""
    params = dict(callback=callback, result_avals=tuple(result_avals), vmap_method=vmap_method)
    if not any(isinstance(a, Tracer) for a in args):
        for trace in reversed(trace_stack()):
            if type(trace) is StagingTrace and trace.name in _PROGRAMS:
                return trace.process_primitive(pure_callback_p, args, params)
    return pure_callback_p.bind(*args, **params)

"""`jit`: the call primitive. Its parameter is a closed jaxpr (the staged function); every
transformation understands it by transforming that program:

  impl       run the compiled program (its results alias nothing fxad keeps, nor the inputs)
  JVP        the JVP of the body, split by partial evaluation into a known program (primal
             outputs and residuals, run now as a jit call) and a linear one (tangents)
  transpose  the backward pass of the (linear) body
  batching   the vmap of the body, staged once per batching pattern and run as a jit call
  jet        a jit call of the body's jet (coefficients interleaved with the values)
  lowering   a call of the body's own compiled code (simplification inlines it first)

`backend` ("numpy" or "numba", see fxad/jit.py) says how the impl compiles the body; the
programs derived by the JVP and batching rules keep it.
"""
from __future__ import annotations

from ...core import Primitive, ShapedArray, get_aval
from ...interpreters.batching import batch_jaxpr
from ...interpreters.jet import deinterleave, interleave, jet_jaxpr, series_nonzero
from ...interpreters.jvp import Zero
from ...interpreters.partial_eval import linearize_jaxpr
from ...interpreters.transpose import backward_pass, is_undefined
from ...interpreters.named_axes import batching_key
from ...ir.codegen import compiled_for


def _jit_jvp(primals, tangents, jaxpr, name, backend="numpy"):
    nonzero = tuple(type(t) is not Zero for t in tangents)
    key = ("jvp", nonzero)
    split = jaxpr.cache.get(key)
    if split is None:
        split = jaxpr.cache[key] = linearize_jaxpr(jaxpr, nonzero)
    known, linear, out_nz, n_res = split
    res = jit_p.bind(*primals, jaxpr=known, name=name, backend=backend)
    n_out = len(res) - n_res
    outs, residuals = res[:n_out], res[n_out:]
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    touts = iter(jit_p.bind(*residuals, *nz_tangents, jaxpr=linear, name=name + "_lin",
                            backend=backend)
                 if linear.jaxpr.outvars else [])
    return outs, [next(touts) if nz else Zero(get_aval(o)) for o, nz in zip(outs, out_nz)]


def _jit_transpose(cts, *args, jaxpr, name, backend="numpy"):
    cts_in = backward_pass(jaxpr.jaxpr, jaxpr.consts, cts, args=list(args))
    return [ct if is_undefined(a) else None for ct, a in zip(cts_in, args)]


def _jit_batch(vals, dims, jaxpr, name, backend="numpy"):
    n = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    key = ("vmap", tuple(dims), n, batching_key())
    hit = jaxpr.cache.get(key)
    if hit is None:
        hit = jaxpr.cache[key] = batch_jaxpr(jaxpr, list(dims), n)
    batched, out_dims = hit
    return jit_p.bind(*vals, jaxpr=batched, name=name, backend=backend), out_dims


def _jit_jet(primals, series, jaxpr, name, backend="numpy"):
    order = len(series[0])
    nz = series_nonzero(series)
    body, out_nz = jet_jaxpr(jaxpr, order, nz)
    flat = jit_p.bind(*interleave(primals, series, nz, order), jaxpr=body, name=name + "_jet",
                      backend=backend)
    return deinterleave(flat, out_nz, order)


def _jit_lowering(ctx, args, jaxpr, name, backend="numpy"):
    return f"{ctx.name(compiled_for(jaxpr), 'jit')}({', '.join(args)})"


jit_p = Primitive("jit", multiple_results=True)
jit_p.def_impl(lambda *args, jaxpr, name, backend="numpy": list(
    compiled_for(jaxpr, boundary=True, backend=backend)(*args)))
jit_p.def_abstract_eval(lambda *avals, jaxpr, name, backend="numpy": [
    ShapedArray(a.shape, a.dtype) for a in jaxpr.out_avals])
jit_p.def_jvp(_jit_jvp)
jit_p.def_transpose(_jit_transpose)  # linear in what a linear program passes it
jit_p.def_batch(_jit_batch)
jit_p.def_jet(_jit_jet)
jit_p.def_lowering(_jit_lowering)
jit_p.def_inline(lambda params: params["jaxpr"])

"""Softmax over one axis as a primitive, with its tangent map as a second one (used by
`nn.dot_product_attention`).

softmax(x) = exp(x - m) / s with m the max over the axis (0 where it is not finite, so a row
of -inf gives zeros rather than NaN) and s the sum (1 where it is not positive). Its Jacobian
diag(p) - p pᵀ is symmetric, so the tangent map t -> p * (t - sum(t * p)) is its own
transpose: the backward pass is one equation, four passes over the array, and both impls
write their temporaries in place (one array allocated each instead of three; on the
attention block's [B, K, G, T, S] logits a fresh array is most of an elementwise pass).
Being primitives, eager grad derives and caches their pullbacks like any other rule (a
custom_vjp would take the staged path on every call).
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ...errors import FxadTypeError
from ...interpreters.jvp import Zero
from ...interpreters.transpose import is_undefined
from ..helpers import broadcast_batched, defbatch_unary_axes, shape_of
from .. import ops
from ...ir.staging import stage
from .reduce import reduce_max, reduce_sum


def _softmax_impl(x, axis):
    m = np.maximum.reduce(x, axis, keepdims=True)
    m = np.where(np.isfinite(m), m, np.zeros((), m.dtype))
    p = np.subtract(x, m)
    np.exp(p, out=p)
    s = np.add.reduce(p, axis, keepdims=True)
    p /= np.where(s > 0, s, np.ones((), s.dtype))
    return p


def _softmax_jvp(primals, tangents, axis):
    (x,), (t,) = primals, tangents
    p = softmax(x, axis)
    return p, (Zero.like(p) if type(t) is Zero else softmax_tangent(p, t, axis))


def _softmax_composite(x, axis):
    """The impl as lax operations, in the impl's order (the numba backend inlines it)."""
    m = reduce_max(x, (axis,), True)
    e = ops.exp(ops.sub(x, ops.select(ops.isfinite(m), m, 0.0)))
    s = reduce_sum(e, (axis,), True)
    return ops.div(e, ops.select(ops.gt(s, 0), s, 1.0))


def _inlined(composite):
    """A numba lowering: the composite staged at the equation's types and inlined into the
    compiled program, where its elementwise steps fuse (None: the equation runs on NumPy)."""
    def rule(ctx, args, axis):
        closed = stage(lambda *xs: [composite(*xs, axis)], list(ctx.in_avals),
                       name=f"{composite.__name__} (numba)")
        outs = ctx.inline(closed, args)
        return None if outs is None else outs[0]
    return rule


softmax_p = Primitive("softmax", memory="fresh")
softmax_p.def_impl(_softmax_impl)
softmax_p.def_abstract_eval(lambda x, axis: ShapedArray(x.shape, x.dtype))
softmax_p.def_jvp(_softmax_jvp)
defbatch_unary_axes(softmax_p, "axis")
softmax_p.def_lowering(_inlined(_softmax_composite), backend="numba")


def softmax(x, axis=-1):
    """Softmax of a float array over `axis` (see the module docstring for the guards)."""
    nd = len(shape_of(x))
    return softmax_p.bind(x, axis=int(axis) % nd if nd else 0)


# --- the tangent map p * (t - sum(t * p)) ----------------------------------------------------

def _tangent_impl(p, t, axis):
    out = np.multiply(t, p)
    s = np.add.reduce(out, axis, keepdims=True)
    np.subtract(t, s, out=out)
    out *= p
    return out


def _tangent_jvp(primals, tangents, axis):
    """d[p (t - S(t p))] = dp (t - S(t p)) + p (dt - S(dt p)) - p S(t dp), S the sum over
    the axis kept as a size-1 axis."""
    (p, t), (dp, dt) = primals, tangents
    out = softmax_tangent(p, t, axis)
    terms = []
    if type(dt) is not Zero:
        terms.append(softmax_tangent(p, dt, axis))
    if type(dp) is not Zero:
        terms.append(ops.mul(dp, ops.sub(t, reduce_sum(ops.mul(t, p), (axis,), True))))
        terms.append(ops.neg(ops.mul(p, reduce_sum(ops.mul(t, dp), (axis,), True))))
    if not terms:
        return out, Zero.like(out)
    d = terms[0]
    for term in terms[1:]:
        d = ops.add(d, term)
    return out, d


def _tangent_transpose(ct, p, t, axis):
    """Linear in t; the map is symmetric, so its transpose is itself."""
    if is_undefined(p) or not is_undefined(t):
        raise FxadTypeError("cannot transpose 'softmax_tangent': it is linear in its "
                            "tangent operand only")
    return [None, None if type(ct) is Zero else softmax_tangent(p, ct, axis)]


def _tangent_batch(vals, dims, axis):
    n = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not None)
    p, t = [broadcast_batched(v, d, n) for v, d in zip(vals, dims)]
    return softmax_tangent(p, t, axis + 1), 0


def _tangent_composite(p, t, axis):
    return ops.mul(ops.sub(t, reduce_sum(ops.mul(t, p), (axis,), True)), p)


softmax_tangent_p = Primitive("softmax_tangent", memory="fresh")
softmax_tangent_p.def_impl(_tangent_impl)
softmax_tangent_p.def_abstract_eval(lambda p, t, axis: ShapedArray(
    t.shape, np.result_type(p.dtype, t.dtype)))
softmax_tangent_p.def_jvp(_tangent_jvp)
softmax_tangent_p.def_transpose(_tangent_transpose)
softmax_tangent_p.def_batch(_tangent_batch)
softmax_tangent_p.def_lowering(_inlined(_tangent_composite), backend="numba")


def softmax_tangent(p, t, axis):
    """p * (t - sum(t * p, axis)): the softmax's tangent (and cotangent) map at output p."""
    return softmax_tangent_p.bind(p, t, axis=int(axis))


__all__ = ["softmax", "softmax_tangent"]

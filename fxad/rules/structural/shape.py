"""Structural primitives: they move data without arithmetic, so all are linear."""
from __future__ import annotations

import math

import numpy as np

from ...core import Primitive, ShapedArray
from ...errors import FxadValueError
from ..helpers import (bdim_to_front, batch_size, broadcast_batched,
                                     defbatch_unary_axes)
from ...interpreters.transpose import aval_of, is_undefined
from ..helpers import deflinear, forward_if_same_type, norm_axes, shape_of, unbroadcast
from .. import ops
from ...ir.numba_backend.lowering import fusible


def _same_size(old, new, what):
    if math.prod(map(int, old)) != math.prod(map(int, new)):
        raise FxadValueError(f"cannot {what} an array of shape {old} into shape {new}")


reshape_p = Primitive("reshape", memory="views")
reshape_p.def_impl(lambda x, new_shape: np.reshape(x, new_shape))
def _reshape_shape(x, new_shape):
    _same_size(x.shape, new_shape, "reshape")
    return ShapedArray(new_shape, x.dtype)
reshape_p.def_abstract_eval(_reshape_shape)
deflinear(reshape_p, lambda ct, x, new_shape: [reshape(ct, x.aval.shape)])
reshape_p.def_batch(lambda vals, dims, new_shape: (
    reshape(bdim_to_front(vals[0], dims[0]), (shape_of(vals[0])[dims[0]],) + new_shape), 0))
reshape_p.def_lowering(lambda ctx, args, new_shape: f"_np.reshape({args[0]}, {new_shape!r})")
def _reshape_numba(ctx, args, new_shape):  # Numba reshapes contiguous arrays only
    x = args[0]
    if not ctx.in_avals[0].shape:
        return f"_np.full({new_shape!r}, {x})"
    if not new_shape:
        return f"_np.ascontiguousarray({x}).ravel()[0]"
    return f"_np.ascontiguousarray({x}).reshape({new_shape!r})"
reshape_p.def_lowering(_reshape_numba, backend="numba")
reshape_p.def_simplify("forward", forward_if_same_type)
def reshape(x, new_shape):
    """x with the same elements in `new_shape` (C order; one -1 is inferred); differentiable to
    any order in forward and reverse mode."""
    new_shape = tuple(int(d) for d in new_shape)
    if shape_of(x) == new_shape:
        return x
    return reshape_p.bind(x, new_shape=new_shape)


transpose_p = Primitive("transpose", memory="views")
transpose_p.def_impl(lambda x, perm: np.transpose(x, perm))
transpose_p.def_abstract_eval(
    lambda x, perm: ShapedArray(tuple(x.shape[p] for p in perm), x.dtype))
deflinear(transpose_p, lambda ct, x, perm: [transpose(ct, tuple(np.argsort(perm)))])
transpose_p.def_batch(lambda vals, dims, perm: (
    transpose(bdim_to_front(vals[0], dims[0]), (0,) + tuple(p + 1 for p in perm)), 0))
transpose_p.def_lowering(lambda ctx, args, perm: f"_np.transpose({args[0]}, {perm!r})")
def _transpose_numba(ctx, args, perm):  # a view; Numba's own transpose(axes) takes seconds
    x, shape = args[0], ctx.in_avals[0].shape  # to compile, as_strided a fraction of one
    if perm == (1, 0):
        return f"{x}.T"
    strides = ", ".join(f"{x}.strides[{p}]" for p in perm)
    return f"_np.lib.stride_tricks.as_strided({x}, {tuple(shape[p] for p in perm)!r}, ({strides},))"
transpose_p.def_lowering(_transpose_numba, backend="numba")
transpose_p.def_simplify("forward", lambda e, known: e.invars[0] if e.params["perm"] == tuple(
    range(len(e.params["perm"]))) else None)
def transpose(x, perm):
    """x with its axes permuted by `perm`; differentiable to any order in forward and reverse
    mode."""
    perm = norm_axes(x, perm, "transpose")
    if perm == tuple(range(len(perm))):
        return x
    return transpose_p.bind(x, perm=perm)


broadcast_to_p = Primitive("broadcast_to", memory="views")  # NumPy semantics: new axes on the left
broadcast_to_p.def_impl(lambda x, shape: np.broadcast_to(x, shape))
def _broadcast_to_shape(x, shape):
    try:
        np.broadcast_shapes(x.shape, shape)
    except ValueError:
        raise FxadValueError(f"cannot broadcast shape {x.shape} to {shape}") from None
    if np.broadcast_shapes(x.shape, shape) != shape:
        raise FxadValueError(f"cannot broadcast shape {x.shape} to {shape}")
    return ShapedArray(shape, x.dtype)
broadcast_to_p.def_abstract_eval(_broadcast_to_shape)
deflinear(broadcast_to_p, lambda ct, x, shape: [unbroadcast(ct, x.aval)])
def _broadcast_to_batch(vals, dims, shape):
    (x,), (d,) = vals, dims
    x = bdim_to_front(x, d)
    xs = shape_of(x)
    x = reshape(x, xs[:1] + (1,) * (len(shape) - len(xs) + 1) + xs[1:])
    return broadcast_to(x, xs[:1] + shape), 0
broadcast_to_p.def_batch(_broadcast_to_batch)
def _broadcast_scalar(x, shape, strides):
    """np.broadcast_to(x, shape) of a 0-d array, made directly: a read-only view of its one
    element (np.broadcast_to checks its arguments for ~3 µs a call, and the cotangents of
    sums and means are such broadcasts)."""
    if type(x) is not np.ndarray:
        return np.broadcast_to(x, shape)
    view = np.ndarray(shape, x.dtype, x, 0, strides)
    view.flags.writeable = False
    return view
def _broadcast_to_lowering(ctx, args, shape):
    if not ctx.in_avals[0].shape:
        fn = ctx.name(_broadcast_scalar, "broadcast_scalar")
        return f"{fn}({args[0]}, {shape!r}, {(0,) * len(shape)!r})"
    return f"_np.broadcast_to({args[0]}, {shape!r})"
broadcast_to_p.def_lowering(_broadcast_to_lowering)
def _broadcast_to_numba(ctx, args, shape):  # a zero-stride view: Numba's own broadcast_to
    x, xs = args[0], ctx.in_avals[0].shape  # takes ~0.6 s to compile, as_strided a fraction
    if not xs:
        return f"_np.broadcast_to({x}, {shape!r})"
    lead = len(shape) - len(xs)
    strides = ["0"] * lead + ["0" if d == 1 and shape[lead + i] != 1 else f"{x}.strides[{i}]"
                              for i, d in enumerate(xs)]
    return f"_np.lib.stride_tricks.as_strided({x}, {shape!r}, ({', '.join(strides)},))"
# Read only by elementwise equations of its shape, it joins their loop: its operand is read
# with broadcasting indices (the emitter chooses this form, emit.py).
_broadcast_to_numba.fused = fusible(lambda fz, args, shape: args[0])
broadcast_to_p.def_lowering(_broadcast_to_numba, backend="numba")
broadcast_to_p.def_simplify("forward", forward_if_same_type)
def broadcast_to(x, shape):
    """x broadcast to `shape` (NumPy's rules); differentiable to any order in forward and reverse
    mode (the transpose sums over the broadcast axes)."""
    shape = tuple(int(d) for d in shape)
    if shape_of(x) == shape:
        return x
    return broadcast_to_p.bind(x, shape=shape)


concatenate_p = Primitive("concatenate", memory="fresh")
concatenate_p.def_impl(lambda *xs, axis: np.concatenate(xs, axis))
def _concatenate_shape(*xs, axis):
    s0 = xs[0].shape
    for x in xs:
        if len(x.shape) != len(s0) or any(a != b for i, (a, b) in enumerate(zip(x.shape, s0))
                                          if i != axis):
            raise FxadValueError(f"concatenate: shapes {[x.shape for x in xs]} differ "
                                 f"outside axis {axis}")
    shape = list(s0)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return ShapedArray(shape, np.result_type(*[x.dtype for x in xs]))
concatenate_p.def_abstract_eval(_concatenate_shape)
def _concatenate_transpose(ct, *xs, axis):
    out, start = [], 0
    for x in xs:
        n = aval_of(x).shape[axis]
        if is_undefined(x):
            idx = (slice(None),) * axis + (slice(start, start + n),)
            out.append(unbroadcast(ops.getitem(ct, idx), x.aval))  # back to x's dtype
        else:
            out.append(None)
        start += n
    return out
deflinear(concatenate_p, _concatenate_transpose)
def _concatenate_batch(vals, dims, axis):
    n = batch_size(vals, dims)
    return concatenate([broadcast_batched(v, d, n) for v, d in zip(vals, dims)], axis + 1), 0
concatenate_p.def_batch(_concatenate_batch)
concatenate_p.def_lowering(lambda ctx, args, axis: None if any(  # Numba joins equal dtypes
    a.dtype != ctx.out_avals[0].dtype or not a.shape for a in ctx.in_avals) else
    f"_np.concatenate(({', '.join(args)},), {axis})", backend="numba")
def concatenate(xs, axis):
    """The arrays of `xs` joined along `axis`; differentiable to any order in forward and reverse
    mode in each."""
    return concatenate_p.bind(*xs, axis=norm_axes(xs[0], (axis,), "concatenate")[0])


flip_p = Primitive("flip", memory="views")
flip_p.def_impl(lambda x, axes: np.flip(x, axes))
flip_p.def_abstract_eval(lambda x, axes: ShapedArray(x.shape, x.dtype))
deflinear(flip_p, lambda ct, x, axes: [flip(ct, axes)])
defbatch_unary_axes(flip_p)
flip_p.def_lowering(lambda ctx, args, axes: "{}[{}]".format(args[0], ", ".join(
    "::-1" if i in axes else ":" for i in range(len(ctx.in_avals[0].shape))))
    if ctx.in_avals[0].shape else args[0], backend="numba")
def flip(x, axes):
    """x with the order of its elements reversed along each axis of `axes`; differentiable to any
    order in forward and reverse mode."""
    return flip_p.bind(x, axes=norm_axes(x, axes, "flip"))


# the bind wrappers fxad.lax exports (through rules/ops.py)
__all__ = ["broadcast_to", "concatenate", "flip", "reshape", "transpose"]

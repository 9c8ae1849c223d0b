"""Indexing: `getitem` (gather) and its transpose `scatter_add`.

An index is a static `spec` (a hashable tuple) plus dynamic integer-array operands:
  ('s', start, stop, step)  a slice        ('i', n)  an integer
  ('a', k)                  the k-th index-array operand
  None / Ellipsis           as in NumPy
Both primitives are linear in their array operands and never in the index arrays.
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray, Tracer
from ...errors import ConcretizationError, FxadTypeError
from ..helpers import bdim_to_front, broadcast_batched, moveaxis, ndim_of
from ...interpreters.jvp import Zero
from ...interpreters.transpose import is_undefined
from ..helpers import dtype_of, shape_of, unbroadcast
from .. import ops
from ..taylor import linear_jet


def _static_int(b):
    if b is None:
        return None
    if isinstance(b, Tracer):
        try:
            return b.__index__()  # concretizes where the value is known (eager jvp, grad)
        except ConcretizationError:
            raise ConcretizationError(
                "a slice whose bounds are traced has a size that depends on values, which "
                "cannot be staged. For a slice of static length n at a traced start i "
                "(x[i:i + n]), use fxad.lax.dynamic_slice_in_dim(x, i, n, axis) or "
                "fxad.lax.dynamic_slice(x, starts, sizes); or make the bounds static "
                "(static_argnums in jit).") from None
    return int(b)


def parse_index(idx):
    """A NumPy index -> (spec, index arrays)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    spec, arrays = [], []
    for e in idx:
        if e is None or e is Ellipsis:
            spec.append(e)
        elif isinstance(e, slice):
            spec.append(("s", _static_int(e.start), _static_int(e.stop), _static_int(e.step)))
        elif isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_)):
            spec.append(("i", int(e)))
        else:
            dt = dtype_of(e) if isinstance(e, Tracer) else np.asarray(e).dtype
            if dt == np.bool_:
                if isinstance(e, Tracer):
                    raise FxadTypeError(
                        "indexing with a traced boolean mask has a data-dependent shape and "
                        "cannot be traced; use fxad.numpy.where(mask, x, 0) instead")
                for a in np.nonzero(np.asarray(e)):
                    spec.append(("a", len(arrays)))
                    arrays.append(a)
                continue
            if not np.issubdtype(dt, np.integer):
                raise FxadTypeError(f"arrays used as indices must be integers, got {dt}")
            spec.append(("a", len(arrays)))
            arrays.append(e if isinstance(e, Tracer) else np.asarray(e))
    return tuple(spec), arrays


def build_index(spec, arrays):
    out = []
    for e in spec:
        if type(e) is tuple:
            out.append(slice(*e[1:]) if e[0] == "s" else e[1] if e[0] == "i" else arrays[e[1]])
        else:
            out.append(e)
    return tuple(out)


def _indexed_shape(x_shape, spec, array_shapes):
    # Zero-strided stand-ins: the shape of the result, with no copy of x and valid indices.
    dummy = np.broadcast_to(np.zeros((), bool), x_shape)
    return dummy[build_index(spec, [np.zeros(s, np.intp) for s in array_shapes])].shape


def _layout(spec, ndim):
    """None for an index without arrays; else (adjacent, k). NumPy keeps adjacent advanced
    indices (integers count too) in place, their dims starting at result position k, and
    moves non-adjacent ones to the front of the result."""
    if not any(type(e) is tuple and e[0] == "a" for e in spec):
        return None
    consumed = sum(1 for e in spec if type(e) is tuple)
    pos, r = [], 0
    for i, e in enumerate(spec):
        if e is None:
            r += 1
        elif e is Ellipsis:
            r += ndim - consumed
        elif e[0] == "s":
            r += 1
        else:
            pos.append((i, r))
    adjacent = all(b[0] == a[0] + 1 for a, b in zip(pos, pos[1:]))
    return adjacent, (pos[0][1] if adjacent else 0)


getitem_p = Primitive("getitem", memory="views")
getitem_p.def_impl(lambda x, *arrays, spec: np.asarray(x)[build_index(spec, arrays)])
getitem_p.def_abstract_eval(lambda x, *arrays, spec: ShapedArray(
    _indexed_shape(x.shape, spec, [a.shape for a in arrays]), x.dtype))
def _getitem_jvp(primals, tangents, spec):
    x, *arrays = primals
    ans = getitem_p.bind(x, *arrays, spec=spec)
    t = tangents[0]
    return ans, (Zero.like(ans) if type(t) is Zero else getitem_p.bind(t, *arrays, spec=spec))
getitem_p.def_jvp(_getitem_jvp)
getitem_p.def_transpose(lambda ct, x, *arrays, spec: [
    scatter_add(np.zeros(x.aval.shape, dtype_of(ct)), arrays, ct, spec)] + [None] * len(arrays))


def _batch_with_iota(x, arrays, adims, spec, n):
    """Spec and operands that index a batched-at-0 `x` per example with (possibly batched)
    index arrays: an iota over the batch joins the advanced indices. Returns (spec, arrays,
    perm) where `perm` reorders the iota layout (B, adv, basic) into (B, per-example)."""
    m = max([ndim_of(a) - (d is not None) for a, d in zip(arrays, adims)] + [0])
    new_arrays = [np.arange(n).reshape((n,) + (1,) * m)]
    for a, d in zip(arrays, adims):
        if d is not None:
            a = bdim_to_front(a, d)
            r = ndim_of(a) - 1
            a = ops.reshape(a, (n,) + (1,) * (m - r) + tuple(shape_of(a)[1:]))
        new_arrays.append(a)
    new_spec = (("a", 0),) + tuple(("a", e[1] + 1) if type(e) is tuple and e[0] == "a" else e
                                   for e in spec)
    k = _layout(spec, ndim_of(x) - 1)[1]
    out_nd = 1 + len(_indexed_shape(shape_of(x)[1:], spec,
                                    [_drop(shape_of(a), d)
                                     for a, d in zip(arrays, adims)]))
    # iota layout: (B, adv(m), basic...); per-example with adjacent block at k: basic[:k] first
    perm = (0,) + tuple(range(1 + m, 1 + m + k)) + tuple(range(1, 1 + m)) + \
        tuple(range(1 + m + k, out_nd))
    return new_spec, new_arrays, perm


def _getitem_batch(vals, dims, spec):
    x, *arrays = vals
    xd, *adims = dims
    if all(d is None for d in adims):  # only x is batched: one more leading slice
        x = bdim_to_front(x, xd)
        out = getitem_p.bind(x, *arrays, spec=(("s", None, None, None),) + spec)
        return out, (_adv_ndim(arrays) if _moves_adv_first(spec, ndim_of(x) - 1) else 0)
    n = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not None)
    x = broadcast_batched(x, xd, n)
    new_spec, new_arrays, perm = _batch_with_iota(x, arrays, adims, spec, n)
    return ops.transpose(getitem_p.bind(x, *new_arrays, spec=new_spec), perm), 0
getitem_p.def_batch(_getitem_batch)
getitem_p.def_jet(linear_jet(getitem_p, linear_args=(0,)))  # each coefficient indexed
def _getitem_numba(ctx, args, spec):
    """Basic indexing (slices, integers, None, ...) as Numba views; index arrays fall back.
    Shapes are static, so an out-of-range integer was already refused when staging."""
    if len(args) != 1 or not ctx.in_avals[0].shape:
        return None
    parts = []
    for e in spec:
        if e is None or e is Ellipsis:
            parts.append("None" if e is None else "...")
        elif e[0] == "i":
            parts.append(str(e[1]))
        elif e[0] == "s":
            parts.append(":".join("" if b is None else str(b) for b in e[1:]))
        else:
            return None
    if parts == ["..."]:  # x[...] is x (and Numba has no lowering for it)
        parts = []
    if "None" not in parts:
        return f"{args[0]}[{', '.join(parts)}]" if parts else args[0]
    # Older Numba cannot index with None: index without it, then insert the new length-1
    # axes as stride-0 dimensions of the same view
    kept = [p for p in parts if p != "None"]
    view = f"{args[0]}[{', '.join(kept)}]" if kept and kept != ["..."] else args[0]
    shape = _indexed_shape(ctx.in_avals[0].shape, spec, [])
    if len(shape) == sum(p == "None" for p in parts):  # only new axes remain: one element
        return f"_np.full({shape!r}, {view})"
    strides, j = [], 0
    for axis in _new_axis_positions(spec, len(ctx.in_avals[0].shape), len(shape)):
        if axis:
            strides.append("0")
        else:
            strides.append(f"{view}.strides[{j}]")
            j += 1
    return (f"_np.lib.stride_tricks.as_strided({view}, {shape!r}, "
            f"({', '.join(strides)},))")
def _new_axis_positions(spec, ndim, out_ndim):
    """For each result axis of a basic index, whether it is a new (None) axis."""
    consumed = sum(1 for e in spec if type(e) is tuple)
    flags = []
    for e in spec:
        if e is None:
            flags.append(True)
        elif e is Ellipsis:
            flags += [False] * (ndim - consumed)
        elif e[0] == "s":
            flags.append(False)
    if Ellipsis not in spec:  # axes not named by the index follow, as with a trailing ...
        flags += [False] * (out_ndim - len(flags))
    return flags
getitem_p.def_lowering(_getitem_numba, backend="numba")


def _getitem_diagonal(e, ctx):
    """x[..., arange(n), arange(n)] of a matrix product, x = A @ B.T (a dot_general
    contracting A's last axis with one of a matrix B's; maybe seen through a transpose of
    the last two axes, or reshapes and whole slices that give x's shape back), is
    sum(A * B_rows, -1): n dot products instead of n x n. trace(hessian(f)) of an MLP takes
    the diagonal of such a product (the first layer's weights against a batch of tangents)."""
    x, arrays, spec = e.invars[0], e.invars[1:], e.params["spec"]
    shape = x.aval.shape
    nd = len(shape)
    if len(arrays) != 2 or nd < 2 or shape[-1] != shape[-2] or spec[-2:] != (("a", 0), ("a", 1)):
        return
    n = shape[-1]
    for a in arrays:
        k = ctx.known(a)
        if k is None or np.shape(k) != (n,) or not np.array_equal(k, np.arange(n)):
            return
    head = spec[:-2]
    if Ellipsis not in head and len(head) != nd - 2 or not all(
            h is Ellipsis or _whole_slice(h) for h in head) or \
            e.outvars[0].aval.shape != shape[:-1]:  # (a slice's stop may cut its axis)
        return
    p = _product_under(x, ctx, shape)
    if p is None:
        return
    a, b = p.invars
    (lc, rc), _ = p.params["dimension_numbers"]
    ra = len(a.aval.shape)
    if lc != (ra - 1,) or len(b.aval.shape) != 2 or rc not in ((0,), (1,)) or \
            not a.aval.dtype == b.aval.dtype == x.aval.dtype or a.aval.shape[:-1] != shape[:-1]:
        return
    dt = x.aval.dtype
    if rc == (0,):
        b = ctx.emit(ops.transpose_p, [b], b.aval.shape[::-1], dt, perm=(1, 0))
    m = ctx.emit(ops.mul_p, [a, b], a.aval.shape, dt)
    ctx.replace(e.outvars[0], ctx.emit(ops.reduce_sum_p, [m], shape[:-1], dt,
                                       axes=(ra - 1,), keepdims=False))


def _whole_slice(h):
    """A slice spec from the start of its axis, in order (its stop: checked by shapes)."""
    return type(h) is tuple and h[0] == "s" and h[1] in (None, 0) and h[3] in (None, 1)


def _same_elements(e):
    """Does e give its input's elements in the same C order (a reshape, or slices keeping
    every element: the output's shape is the input's)?"""
    if e.primitive is ops.reshape_p:
        return True
    return e.primitive is getitem_p and len(e.invars) == 1 and \
        e.outvars[0].aval.shape == e.invars[0].aval.shape and \
        all(h is Ellipsis or _whole_slice(h) for h in e.params["spec"])


def _product_under(v, ctx, shape):
    """The dot_general equation whose output equals v, up to swapping the last two axes."""
    nd = len(shape)
    swap = tuple(range(nd - 2)) + (nd - 1, nd - 2)
    for _ in range(64):
        p = ctx.producer(v)
        if p is None:
            return None
        if p.primitive is ops.dot_general_p:
            return p if p.outvars[0].aval.shape == shape else None
        if p.primitive is ops.transpose_p and p.params["perm"] == swap:
            v = p.invars[0]
            continue
        if not _same_elements(p):
            return None
        u = p.invars[0]  # back through views to the nearest value of this shape
        while u.aval.shape != shape:
            q = ctx.producer(u)
            if q is None or not _same_elements(q):
                return None
            u = q.invars[0]
        v = u
    return None


getitem_p.def_simplify("diagonal", _getitem_diagonal)


def _moves_adv_first(spec, ndim):
    """With a batch slice prepended, does NumPy put the advanced dims before the batch axis?
    Exactly when the original advanced indices were not adjacent."""
    lay = _layout(spec, ndim)
    return lay is not None and not lay[0]


def _drop(shape, d):
    """A batched value's per-example shape (its batch axis d removed)."""
    shape = tuple(shape)
    return shape if d is None else shape[:d] + shape[d + 1:]


def _adv_ndim(arrays):
    return len(np.broadcast_shapes(*[shape_of(a) for a in arrays]))


def getitem(x, idx):
    """x[idx] with NumPy's indexing (integers, slices, None, Ellipsis, integer and boolean arrays;
    a boolean mask must be concrete); differentiable to any order in forward and reverse mode
    in x (the transpose scatters and adds)."""
    spec, arrays = parse_index(idx)
    return getitem_p.bind(x, *arrays, spec=spec)


def _scatter_add_impl(x, *rest, spec):
    *arrays, upd = rest
    out = np.array(x, copy=True)
    idx = build_index(spec, arrays)
    if arrays:
        np.add.at(out, idx, upd)  # accumulates repeated indices
    else:
        out[idx] += upd
    return out


scatter_add_p = Primitive("scatter_add", memory="fresh")  # scatter_add(x, *arrays, updates): x + S @ updates
scatter_add_p.def_impl(_scatter_add_impl)
scatter_add_p.def_abstract_eval(lambda x, *rest, spec: ShapedArray(x.shape, x.dtype))
def _scatter_add_jvp(primals, tangents, spec):
    x, *arrays, upd = primals
    tx, tu = tangents[0], tangents[-1]
    ans = scatter_add_p.bind(*primals, spec=spec)
    if type(tx) is Zero and type(tu) is Zero:
        return ans, Zero.like(ans)
    tx = np.zeros(tx.aval.shape, tx.aval.dtype) if type(tx) is Zero else tx
    if type(tu) is Zero:
        return ans, ops.convert_element_type(tx, dtype_of(ans))
    return ans, scatter_add_p.bind(tx, *arrays, tu, spec=spec)
scatter_add_p.def_jvp(_scatter_add_jvp)
def _scatter_add_transpose(ct, x, *rest, spec):
    *arrays, upd = rest
    ct_x = unbroadcast(ct, x.aval) if is_undefined(x) else None
    ct_u = (unbroadcast(getitem_p.bind(ct, *arrays, spec=spec), upd.aval)
            if is_undefined(upd) else None)
    return [ct_x] + [None] * len(arrays) + [ct_u]
scatter_add_p.def_transpose(_scatter_add_transpose)
def _scatter_add_batch(vals, dims, spec):
    x, *arrays, upd = vals
    xd, *adims, ud = dims
    n = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not None)
    x = broadcast_batched(x, xd, n)
    per_ex = _indexed_shape(shape_of(x)[1:], spec,
                            [_drop(shape_of(a), d)
                             for a, d in zip(arrays, adims)])
    upd = broadcast_batched(upd, ud, n)
    us = tuple(shape_of(upd)[1:])
    upd = ops.broadcast_to(ops.reshape(upd, (n,) + (1,) * (len(per_ex) - len(us)) + us),
                           (n,) + per_ex)
    if all(d is None for d in adims):
        new_spec = (("s", None, None, None),) + spec
        if _moves_adv_first(spec, len(shape_of(x)) - 1):
            upd = moveaxis(upd, 0, _adv_ndim(arrays))
        return scatter_add_p.bind(x, *arrays, upd, spec=new_spec), 0
    new_spec, new_arrays, perm = _batch_with_iota(x, arrays, adims, spec, n)
    upd = ops.transpose(upd, tuple(np.argsort(perm)))
    return scatter_add_p.bind(x, *new_arrays, upd, spec=new_spec), 0
scatter_add_p.def_batch(_scatter_add_batch)
scatter_add_p.def_jet(lambda primals, series, spec: linear_jet(  # in x and updates
    scatter_add_p, linear_args=(0, len(primals) - 1))(primals, series, spec=spec))
def scatter_add(x, arrays, updates, spec):
    """x with updates added at the positions the index expression selects (`spec` its static part,
    `arrays` its integer arrays; duplicate positions accumulate): what `x.at[idx].add(updates)`
    does; differentiable to any order in forward and reverse mode in x and updates."""
    return scatter_add_p.bind(x, *arrays, updates, spec=spec)


# the bind wrappers fxad.lax exports (through rules/ops.py)
__all__ = ["getitem", "scatter_add"]

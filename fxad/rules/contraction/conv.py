"""`conv_general_dilated`: the one convolution primitive (JAX's semantics) behind lax.conv,
conv_with_general_padding, conv_transpose and the CNN layers.

Parameters are normalized by the bind wrapper's callers (fxad/lax/convolution.py turns
'SAME', layout strings and defaults into these): `window_strides`, `lhs_dilation`,
`rhs_dilation` tuples of ints, `padding` a tuple of (lo, hi) pairs, `dimension_numbers` a
tuple of three int tuples (lhs, rhs, out: batch/out-feature dim, feature/in-feature dim,
spatial dims...; fxad.lax's ConvDimensionNumbers is such a tuple), the group counts, and
`preferred_element_type` (a dtype or None).

out[n, o, p] = sum_{c, k} xp[n, g(o)*Cg + c, p*stride + k*rhs_dil] * w[o, c, k], where xp is
the lhs dilated by lhs_dilation and padded. It is bilinear, and both transposes are
convolutions again (so every derivative order and vmap of them is one more convolution):

- lhs: the cotangent, dilated by the strides (as lhs_dilation), convolved with the kernel
  flipped in space and with its in/out feature roles swapped, sampled with stride
  lhs_dilation, padded so the result has the input's size: a transposed convolution;
- rhs: the input correlated with the cotangent used as the kernel: the input's batch dim is
  the contracted "feature" dim, its feature dim the "batch" dim, and the forward strides
  become the kernel dilation.

Feature groups become batch groups in the rhs transpose and vice versa. Batching folds the
vmapped axis into the batch (lhs), into the output features (rhs), or into the groups (both),
so a vmapped convolution is still one convolution.
"""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ...errors import FxadTypeError, FxadValueError
from ..helpers import (bdim_to_front, defbilinear, moveaxis, preferred_dtype, shape_of,
                       unbroadcast)
from .._support.window_kernels import conv_nsc, dilated, window_out_size
from .. import ops


def out_dtype(lhs_dtype, rhs_dtype, preferred):
    """NumPy's promotion of the operands, or `preferred_element_type` (JAX's rule for which
    types it may be: helpers.preferred_dtype)."""
    dt = np.result_type(lhs_dtype, rhs_dtype)
    if dt.kind not in "iufc":
        raise FxadTypeError(f"conv_general_dilated: operands of dtype {dt} are not supported; "
                            "convert them to a number type (e.g. .astype(float))")
    if preferred is None:
        return dt
    return preferred_dtype(dt, preferred, "conv_general_dilated")


def _spatial(spec):
    return spec[2:]


def _conv_shape_of(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count,
                   preferred_element_type):
    ls, rs, os_ = dimension_numbers
    nd = len(lhs.shape)
    if len(rhs.shape) != nd or nd < 2:
        raise FxadValueError(f"conv_general_dilated: lhs and rhs must have the same rank >= 2; "
                             f"got shapes {lhs.shape} and {rhs.shape}")
    if not all(sorted(s) == list(range(nd)) for s in (ls, rs, os_)):
        raise FxadValueError(f"conv_general_dilated: dimension_numbers {dimension_numbers} must "
                             f"each be a permutation of range({nd})")
    d = nd - 2
    if not (len(window_strides) == len(padding) == len(lhs_dilation) == len(rhs_dilation) == d):
        raise FxadValueError(f"conv_general_dilated: window_strides, padding and the dilations "
                             f"need one entry per spatial dimension ({d})")
    if min(window_strides + lhs_dilation + rhs_dilation, default=1) < 1:
        raise FxadValueError("conv_general_dilated: strides and dilations must be >= 1")
    fgc, bgc = feature_group_count, batch_group_count
    if fgc < 1 or bgc < 1 or (fgc > 1 and bgc > 1):
        raise FxadValueError("conv_general_dilated: feature_group_count and batch_group_count "
                             "must be >= 1, and at most one of them > 1")
    n, c = lhs.shape[ls[0]], lhs.shape[ls[1]]
    o, i = rhs.shape[rs[0]], rhs.shape[rs[1]]
    if c != i * fgc:
        raise FxadValueError(
            f"conv_general_dilated: the lhs has {c} features but the rhs expects {i} x "
            f"feature_group_count {fgc} = {i * fgc}; check dimension_numbers and the group count")
    if o % (fgc * bgc):
        raise FxadValueError(f"conv_general_dilated: the rhs's {o} output features are not "
                             f"divisible by the group count {fgc * bgc}")
    if n % bgc:
        raise FxadValueError(f"conv_general_dilated: the batch size {n} is not divisible by "
                             f"batch_group_count {bgc}")
    sizes = []
    for ax_l, ax_r, (lo, hi), a, b, s in zip(_spatial(ls), _spatial(rs), padding, lhs_dilation,
                                            rhs_dilation, window_strides):
        if dilated(lhs.shape[ax_l], a) + lo + hi < 0:
            raise FxadValueError(f"conv_general_dilated: padding ({lo}, {hi}) crops more than "
                                 f"the {lhs.shape[ax_l]} input positions")
        sizes.append(window_out_size(lhs.shape[ax_l], (lo, hi), a, rhs.shape[ax_r], b, s))
    shape = [0] * nd
    shape[os_[0]], shape[os_[1]] = n // bgc, o
    for ax, m in zip(_spatial(os_), sizes):
        shape[ax] = m
    return ShapedArray(tuple(shape), out_dtype(lhs.dtype, rhs.dtype, preferred_element_type))


_shape_memo = {}


def _conv_shape(lhs, rhs, **params):
    key = (lhs.shape, lhs.dtype, rhs.shape, rhs.dtype, tuple(params.values()))
    out = _shape_memo.get(key)
    if out is None:
        out = _conv_shape_of(lhs, rhs, **params)
        if len(_shape_memo) < 4096:
            _shape_memo[key] = out
    return out


def _conv_impl(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
               feature_group_count, batch_group_count, preferred_element_type):
    """To the canonical layout (views), one im2col-matmul or FFT convolution, back to the
    requested output layout."""
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    dt = _conv_shape(ShapedArray(lhs.shape, lhs.dtype), ShapedArray(rhs.shape, rhs.dtype),
                     window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
                     rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
                     feature_group_count=feature_group_count,
                     batch_group_count=batch_group_count,
                     preferred_element_type=preferred_element_type).dtype  # validates too
    ls, rs, os_ = dimension_numbers
    d = lhs.ndim - 2
    x = lhs.transpose((ls[0],) + _spatial(ls) + (ls[1],)).astype(dt, copy=False)
    w = rhs.transpose(_spatial(rs) + (rs[1], rs[0])).astype(dt, copy=False)
    y = conv_nsc(x, w, window_strides, padding, lhs_dilation, rhs_dilation,
                 feature_group_count, batch_group_count, dt)
    perm = [0] * (d + 2)  # y is (N, spatial..., O): the output axis each of out's dims takes
    perm[os_[0]], perm[os_[1]] = 0, d + 1
    for i, ax in enumerate(_spatial(os_)):
        perm[ax] = i + 1
    perm = tuple(perm)
    return y if perm == tuple(range(d + 2)) else np.ascontiguousarray(y.transpose(perm))


def _regroup(x, src, dst, g):
    """Split axis `src` into (g, rest), g-major, and merge the g block into axis `dst` as its
    major part (the rank is unchanged): moves a group index from one role to another."""
    shape = shape_of(x)
    nd = len(shape)
    perm = (src, dst) + tuple(a for a in range(nd) if a not in (src, dst))
    y = ops.transpose(x, perm)
    s, t = shape[src], shape[dst]
    rest = tuple(shape[a] for a in perm[2:])
    y = ops.reshape(y, (g, s // g, t) + rest)
    y = ops.transpose(y, (1, 0, 2) + tuple(range(3, 3 + len(rest))))
    y = ops.reshape(y, (s // g, g * t) + rest)
    return ops.transpose(y, tuple(int(np.argsort(perm)[a]) for a in range(nd)))


def _zeros(aval):
    return np.zeros(aval.shape, aval.dtype)


def _ct_lhs(ct, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
            dimension_numbers, feature_group_count, batch_group_count, preferred_element_type):
    ls, rs, os_ = dimension_numbers
    fgc, bgc = feature_group_count, batch_group_count
    ct_shape, rhs_shape = shape_of(ct), shape_of(rhs)
    if 0 in ct_shape:
        return _zeros(lhs)
    w = rhs
    if fgc * bgc > 1:  # the group block of the out features moves to the (new out) in-features
        w = _regroup(w, rs[0], rs[1], fgc * bgc)
    w = ops.flip(w, _spatial(rs))
    pads = []
    for ax_l, ax_r, ax_o, (lo, _), a, b, s in zip(_spatial(ls), _spatial(rs), _spatial(os_),
                                                 padding, lhs_dilation, rhs_dilation,
                                                 window_strides):
        kd = dilated(rhs_shape[ax_r], b)
        lo_t = kd - 1 - lo
        pads.append((lo_t, dilated(lhs.shape[ax_l], a) + kd - 1 - dilated(ct_shape[ax_o], s)
                     - lo_t))
    dn = (os_, (rs[1], rs[0]) + _spatial(rs), ls)
    out = conv_general_dilated(ct, w, lhs_dilation, tuple(pads), window_strides, rhs_dilation,
                               dn, fgc * bgc, 1, None)
    if bgc > 1:  # the batch groups were computed as feature blocks: back into the batch
        out = _regroup(out, ls[1], ls[0], bgc)
    return unbroadcast(out, lhs)


def _ct_rhs(ct, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
            dimension_numbers, feature_group_count, batch_group_count, preferred_element_type):
    ls, rs, os_ = dimension_numbers
    ct_shape, lhs_shape = shape_of(ct), shape_of(lhs)
    if 0 in ct_shape:
        return _zeros(rhs)
    pads = []
    for ax_l, ax_r, ax_o, (lo, _), a, b, s in zip(_spatial(ls), _spatial(rs), _spatial(os_),
                                                 padding, lhs_dilation, rhs_dilation,
                                                 window_strides):
        kd = dilated(rhs.shape[ax_r], b)
        pads.append((lo, kd + dilated(ct_shape[ax_o], s) - 1 - dilated(lhs_shape[ax_l], a) - lo))
    swap = lambda spec: (spec[1], spec[0]) + _spatial(spec)
    dn = (swap(ls), swap(os_), swap(rs))
    out = conv_general_dilated(lhs, ct, rhs_dilation, tuple(pads), lhs_dilation, window_strides,
                               dn, batch_group_count, feature_group_count, None)
    return unbroadcast(out, rhs)


def _fold(x, dst, groups):
    """x's batch axis (at 0) folded into axis `dst` of the unbatched value, inside each of
    `groups` blocks: dst's index becomes (group, batch, rest)."""
    shape = shape_of(x)
    size, rest = shape[1 + dst], shape[1:]
    split = rest[:dst] + (groups, size // groups) + rest[dst + 1:]
    x = moveaxis(ops.reshape(x, (shape[0],) + split), 0, dst + 1)
    return ops.reshape(x, rest[:dst] + (groups * shape[0] * (size // groups),) + rest[dst + 1:])


def _unfold(y, src, groups, v):
    """The inverse of _fold on an output: axis `src` = (group, batch v, rest) -> batch at 0."""
    shape = shape_of(y)
    rest = shape[src] // (groups * v)
    y = ops.reshape(y, shape[:src] + (groups, v, rest) + shape[src + 1:])
    y = moveaxis(y, src + 1, 0)
    return ops.reshape(y, (v,) + shape[:src] + (groups * rest,) + shape[src + 1:])


def _conv_batch(vals, dims, **params):
    (lhs, rhs), (ld, rd) = vals, dims
    ls, rs, os_ = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    if ld is not None and rd is not None:  # one more group per batch element
        lhs, rhs = bdim_to_front(lhs, ld), bdim_to_front(rhs, rd)
        v = shape_of(lhs)[0]
        if bgc > 1:
            lhs, rhs = _fold(lhs, ls[0], 1), _fold(rhs, rs[0], 1)
            params = dict(params, batch_group_count=v * bgc)
        else:
            lhs, rhs = _fold(lhs, ls[1], 1), _fold(rhs, rs[0], 1)
            params = dict(params, feature_group_count=v * fgc)
        return _unfold(conv_general_dilated_p.bind(lhs, rhs, **params), os_[1], 1, v), 0
    if ld is not None:  # more examples (inside each batch group)
        lhs = bdim_to_front(lhs, ld)
        v = shape_of(lhs)[0]
        out = conv_general_dilated_p.bind(_fold(lhs, ls[0], bgc), rhs, **params)
        return _unfold(out, os_[0], 1, v), 0
    rhs = bdim_to_front(rhs, rd)  # more output features (inside each group)
    v = shape_of(rhs)[0]
    out = conv_general_dilated_p.bind(lhs, _fold(rhs, rs[0], fgc * bgc), **params)
    return _unfold(out, os_[1], fgc * bgc, v), 0


conv_general_dilated_p = Primitive("conv_general_dilated", memory="fresh")
conv_general_dilated_p.def_impl(_conv_impl)
conv_general_dilated_p.def_abstract_eval(_conv_shape)
defbilinear(conv_general_dilated_p, _ct_lhs, _ct_rhs)
conv_general_dilated_p.def_batch(_conv_batch)
def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                         dimension_numbers, feature_group_count=1, batch_group_count=1,
                         preferred_element_type=None):
    """Normalized parameters only (see the module docstring); fxad.lax.conv_general_dilated
    is the public form."""
    ls, rs, os_ = dimension_numbers
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=tuple(map(int, window_strides)),
        padding=tuple((int(lo), int(hi)) for lo, hi in padding),
        lhs_dilation=tuple(map(int, lhs_dilation)), rhs_dilation=tuple(map(int, rhs_dilation)),
        dimension_numbers=(tuple(map(int, ls)), tuple(map(int, rs)), tuple(map(int, os_))),
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
        preferred_element_type=None if preferred_element_type is None
        else np.dtype(preferred_element_type))

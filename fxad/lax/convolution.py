"""fxad.lax's convolutions, with JAX's names, signatures and semantics: the user-facing forms
of the one `conv_general_dilated` primitive (fxad/rules/contraction/conv.py), which takes normalized
parameters. Here padding strings, layout strings and defaults become those parameters.

`precision` is checked and ignored, as on JAX's CPU backend: fxad computes in the operands'
own precision (float32 in single precision through BLAS, float64 in double);
`preferred_element_type` is honoured (fxad/lax/products.py says how).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..core import get_aval
from ..errors import FxadTypeError, FxadValueError
from ..rules import ops
from ..rules._support.window_kernels import dilated, window_out_size
from ..rules.contraction.conv import conv_general_dilated as _conv_p
from .products import canonicalize_precision

__all__ = ["ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_dilated_local", "conv_general_dilated_patches",
           "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple",
           "conv_transpose", "conv_transpose_shape_tuple", "conv_with_general_padding",
           "padtype_to_pads"]


class ConvDimensionNumbers(NamedTuple):
    """Where each role lives: lhs_spec = (batch dim, feature dim, spatial dims...), rhs_spec
    = (out-feature dim, in-feature dim, spatial dims...), out_spec like lhs_spec."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def _ints(seq, n, name, default=1):
    if seq is None:
        return (default,) * n
    try:
        out = tuple(int(v) for v in seq)
    except TypeError:
        raise FxadTypeError(f"{name} must be a sequence of {n} integers, got {seq!r}") from None
    if len(out) != n:
        raise FxadValueError(f"{name} needs {n} entries (one per spatial dimension), got "
                             f"{len(out)}: {seq!r}")
    return out


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """(lo, hi) pairs for 'VALID' (none), 'SAME' (output size ceil(in / stride), the odd
    extra element padded at the end) or 'SAME_LOWER' (the odd extra at the start)."""
    if not isinstance(padding, str) or padding.upper() not in ("VALID", "SAME", "SAME_LOWER"):
        raise FxadValueError(f"padding must be 'VALID', 'SAME', 'SAME_LOWER' or a sequence of "
                             f"(low, high) pairs, got {padding!r}")
    kind = padding.upper()
    if any(int(s) < 1 for s in window_strides):
        raise FxadValueError(f"window strides must be >= 1, got {tuple(window_strides)}")
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)  # ceil(n / s) outputs need this much
        half = total // 2
        pads.append((half, total - half) if kind == "SAME" else (total - half, half))
    return pads


def _explicit_pads(padding, n, name="padding"):
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise FxadValueError(f"{name} must be 'VALID', 'SAME', 'SAME_LOWER' or a sequence of "
                             f"(low, high) pairs, got {padding!r}") from None
    if len(pads) != n:
        raise FxadValueError(f"{name} needs {n} (low, high) pairs, got {len(pads)}")
    return pads


def conv_general_permutations(dimension_numbers):
    """Layout strings -> the (batch, feature, spatial...) positions of lhs, rhs and output.
    Spatial letters are matched across the three strings; their order is the rhs string's
    (so window_strides[0] goes with the first spatial letter of the rhs spec)."""
    specs = tuple(dimension_numbers)
    roles = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (spec, (a, b)) in enumerate(zip(specs, roles)):
        if not isinstance(spec, str) or spec.count(a) != 1 or spec.count(b) != 1 or \
                len(set(spec)) != len(spec):
            raise FxadTypeError(f"dimension_numbers[{i}] = {spec!r} must be a string holding "
                                f"'{a}' and '{b}' exactly once and no repeated letter")
    spatial = [set(s) - set(r) for s, r in zip(specs, roles)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise FxadTypeError(f"dimension_numbers {specs} must share the same spatial letters")
    rhs_order = [c for c in specs[1] if c not in "OI"]
    return tuple((s.index(a), s.index(b)) + tuple(s.index(c) for c in rhs_order)
                 for s, (a, b) in zip(specs, roles))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """None (NCHW / OIHW / NCHW order for any rank), three layout strings, or
    ConvDimensionNumbers (of int tuples) -> ConvDimensionNumbers."""
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise FxadTypeError(f"convolution needs lhs and rhs of the same rank, got {nd} and "
                            f"{len(rhs_shape)}")
    if dimension_numbers is None:
        iota = tuple(range(nd))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3:
        raise FxadTypeError("dimension_numbers must be None, three layout strings such as "
                            "('NHWC', 'HWIO', 'NHWC'), or ConvDimensionNumbers; got "
                            f"{dimension_numbers!r}")
    if all(isinstance(s, str) for s in dimension_numbers):
        for i, s in enumerate(dimension_numbers):
            if len(s) != nd:
                raise FxadTypeError(f"dimension_numbers[{i}] = {s!r} has {len(s)} letters for "
                                    f"operands of rank {nd}")
        return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
    try:  # ConvDimensionNumbers (fxad's or JAX's) or three int sequences
        specs = [tuple(int(a) for a in s) for s in dimension_numbers]
    except (TypeError, ValueError):
        raise FxadTypeError(f"dimension_numbers {dimension_numbers!r} must be three layout "
                            "strings or three sequences of axis numbers") from None
    return ConvDimensionNumbers(*specs)


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """General dilated convolution, JAX's `lax.conv_general_dilated` (see its docs)."""
    canonicalize_precision(precision, "conv_general_dilated")
    ls, rs = get_aval(lhs).shape, get_aval(rhs).shape
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    d = len(ls) - 2
    strides = _ints(window_strides, d, "window_strides")
    lhs_dil = _ints(lhs_dilation, d, "lhs_dilation")
    rhs_dil = _ints(rhs_dilation, d, "rhs_dilation")
    if isinstance(padding, str):
        if any(a != 1 for a in lhs_dil):
            raise FxadValueError("string padding is not defined for a convolution with "
                                 "lhs_dilation; give explicit (low, high) pairs or use "
                                 "lax.conv_transpose")
        pads = padtype_to_pads([ls[a] for a in dn.lhs_spec[2:]],
                               [dilated(rs[a], b) for a, b in zip(dn.rhs_spec[2:], rhs_dil)],
                               strides, padding)
    else:
        pads = _explicit_pads(padding, d)
    return _conv_p(lhs, rhs, strides, pads, lhs_dil, rhs_dil, dn, feature_group_count,
                   batch_group_count, preferred_element_type)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """NCHW / OIHW convolution without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """NCHW / OIHW convolution with dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _transpose_pads(k, s, padding):
    """Padding of the fractionally strided convolution that undoes a forward convolution
    with kernel span k, stride s and this padding ('SAME', 'VALID' or a (lo, hi) pair)."""
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
        return lo, total - lo
    if padding == "VALID":
        return k - 1, k + s - 2 + max(k - s, 0) - (k - 1)
    lo, hi = padding
    return k - 1 - lo, k - 1 - hi


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """A fractionally strided convolution (JAX's `lax.conv_transpose`): the input dilated by
    `strides`, TensorFlow layouts by default. 'SAME'/'VALID' (and, with
    `use_consistent_padding`, explicit pairs) name the padding of the forward convolution
    being undone; otherwise explicit pairs pad the transposed convolution itself.
    `transpose_kernel` flips the kernel in space and swaps its in/out features, which makes
    this the gradient of the forward convolution with the same kernel."""
    canonicalize_precision(precision, "conv_transpose")
    ls, rs = get_aval(lhs).shape, get_aval(rhs).shape
    nd = len(ls)
    if dimension_numbers is None:
        if nd not in _TRANSPOSE_LAYOUTS:
            raise FxadValueError(f"conv_transpose has no default layout for rank {nd}; pass "
                                 "dimension_numbers")
        dimension_numbers = _TRANSPOSE_LAYOUTS[nd]
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    d = nd - 2
    strides = _ints(strides, d, "strides")
    rhs_dil = _ints(rhs_dilation, d, "rhs_dilation")
    spans = [dilated(rs[a], b) for a, b in zip(dn.rhs_spec[2:], rhs_dil)]
    if isinstance(padding, str):
        kind = padding.upper()
        if kind not in ("SAME", "VALID"):
            raise FxadValueError(f"conv_transpose padding must be 'SAME', 'VALID' or (low, "
                                 f"high) pairs, got {padding!r}")
        pads = [_transpose_pads(k, s, kind) for k, s in zip(spans, strides)]
    elif use_consistent_padding:
        pads = [_transpose_pads(k, s, p) for k, s, p in
                zip(spans, strides, _explicit_pads(padding, d))]
    else:
        pads = _explicit_pads(padding, d)
    if transpose_kernel:
        rhs = ops.flip(rhs, dn.rhs_spec[2:])
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = ops.transpose(rhs, tuple(perm))
    return _conv_p(lhs, rhs, (1,) * d, pads, strides, rhs_dil, dn, 1, 1,
                   preferred_element_type)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with a `filter_shape` kernel would see, as output features
    (feature index = input feature * prod(filter_shape) + flat offset in the window): a
    grouped convolution with an identity kernel, so its derivatives are convolutions too."""
    aval = get_aval(lhs)
    filter_shape = tuple(int(k) for k in filter_shape)
    d = len(aval.shape) - 2
    if len(filter_shape) != d:
        raise FxadValueError(f"filter_shape needs {d} entries, got {filter_shape}")
    dn = conv_dimension_numbers(aval.shape, (1, 1) + filter_shape, dimension_numbers)
    c = aval.shape[dn.lhs_spec[1]]
    size = math.prod(map(int, filter_shape))
    eye = np.eye(size, dtype=aval.dtype).reshape((size, 1) + filter_shape)
    kernel = np.tile(eye, (c,) + (1,) * (d + 1))  # (C * size, 1, *filter), channel-major
    iota = tuple(range(d + 2))
    spec = ConvDimensionNumbers(dn.lhs_spec, iota, dn.out_spec)
    return conv_general_dilated(lhs, kernel, window_strides, padding, lhs_dilation,
                                rhs_dilation, spec, feature_group_count=c, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """An unshared convolution: a different kernel at every output position. rhs holds
    (out features, input features * prod(filter_shape), output spatial...) in its layout."""
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers,
                                           precision)
    ls, rs = get_aval(lhs).shape, get_aval(rhs).shape
    dn = conv_dimension_numbers(ls, rs, dimension_numbers)
    d = len(ls) - 2
    # patches: out layout; to (spatial..., N, I) and rhs to (spatial..., I, O): one batched
    # contraction over I per output position
    p = ops.transpose(patches, dn.out_spec[2:] + (dn.out_spec[0], dn.out_spec[1]))
    w = ops.transpose(rhs, dn.rhs_spec[2:] + (dn.rhs_spec[1], dn.rhs_spec[0]))
    if get_aval(p).shape[:d] != get_aval(w).shape[:d] or \
            get_aval(p).shape[-1] != get_aval(w).shape[-2]:
        raise FxadValueError(f"conv_general_dilated_local: rhs of shape {rs} does not fit "
                             f"patches of shape {get_aval(patches).shape} in layout {dn}")
    batch = tuple(range(d))
    y = ops.dot_general(p, w, (((d + 1,), (d,)), (batch, batch)))  # (spatial..., N, O)
    perm = [0] * (d + 2)
    perm[dn.out_spec[0]], perm[dn.out_spec[1]] = d, d + 1
    for i, ax in enumerate(dn.out_spec[2:]):
        perm[ax] = i
    return ops.transpose(y, tuple(perm))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """Output shape of an NCHW / OIHW convolution."""
    d = len(lhs_shape) - 2
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    pads = _explicit_pads(pads, d, "pads")
    for n, (lo, hi) in zip(lhs_shape[2:], pads):
        if n + lo + hi < 0:
            raise FxadValueError(f"padding {pads} crops more than the input shape "
                                 f"{tuple(lhs_shape[2:])}")
    space = tuple(window_out_size(n, p, 1, k, 1, s) for n, p, k, s in
                  zip(lhs_shape[2:], pads, rhs_shape[2:], strides))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + space


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """Output shape of conv_general_dilated without dilation, in the output's layout."""
    lp, rp, op = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple([lhs_shape[a] for a in lp], [rhs_shape[a] for a in rp],
                           window_strides, padding)
    return tuple(out[i] for i in np.argsort(op))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """Output shape of conv_transpose (without rhs dilation), in the output's layout."""
    lp, rp, op = conv_general_permutations(dimension_numbers)
    lt, rt = [lhs_shape[a] for a in lp], [rhs_shape[a] for a in rp]
    if isinstance(padding, str):
        padding = [_transpose_pads(k, s, padding.upper()) for k, s in
                   zip(rt[2:], window_strides)]
    space = [(n - 1) * s - k + 2 + lo + hi for n, k, s, (lo, hi) in
             zip(lt[2:], rt[2:], window_strides, padding)]
    out = (lt[0], rt[0]) + tuple(space)
    return tuple(out[i] for i in np.argsort(op))

"""Makers: the neural-network operations: convolutions, pooling and windowed reductions,
jax.nn's activations, dot_product_attention. Kinks and ties stay at least MARGIN away at
every stencil point."""
from __future__ import annotations

import numpy as np

from ..generator import away, guard
from ..program import MARGIN, MAX_SIZE, _arr, _f
from ..registry import maker


def _out_size(n, k, s, pad, lhs_dil=1, rhs_dil=1):
    span = (n - 1) * lhs_dil + 1 + pad[0] + pad[1]
    kd = (k - 1) * rhs_dil + 1
    return 0 if span < kd else (span - kd) // s + 1


@maker(weight=3)
def mk_conv(g):
    """conv_general_dilated of a value (channels last or first) with a constant kernel or
    another value (the bilinear case), random strides, padding, dilations, groups."""
    i = g.pick(lambda n: len(n.shape) in (3, 4) and n.shape[-1] <= 4)
    shape = g.shape(i)
    d = len(shape) - 2
    channels_last = g.coin(0.7)
    c = shape[-1] if channels_last else shape[1]
    spatial = shape[1:-1] if channels_last else shape[2:]
    groups = c if c > 1 and g.coin(0.25) else 1
    o = groups * g.int(1, 2)
    ksize = tuple(g.int(1, min(3, n + 1)) for n in spatial)
    strides = tuple(g.int(1, 2) for _ in spatial)
    rhs_dil = tuple(g.int(1, 2) if g.coin(0.3) else 1 for _ in spatial)
    lhs_dil = tuple(g.int(1, 2) if g.coin(0.2) else 1 for _ in spatial)
    if any(a > 1 for a in lhs_dil) or g.coin(0.4):
        padding = tuple((g.int(-1, 2), g.int(-1, 2)) for _ in spatial)
        pads = padding
    else:
        padding = g.choice(["VALID", "SAME", "SAME_LOWER"])
        pads = [(0, 0)] * d if padding == "VALID" else \
            [(1, 1)] * d  # only for the size guard below (an upper bound)
    outs = [_out_size(n, k, s, p, a, b) for n, k, s, p, a, b in
            zip(spatial, ksize, strides, pads, lhs_dil, rhs_dil)]
    guard(all(m >= 1 for m in outs) and shape[0] * o * int(np.prod(outs)) <= MAX_SIZE)
    letters = "HW"[-d:] if d <= 2 else None
    guard(letters is not None)
    dn = (f"N{letters}C", f"{letters}IO", f"N{letters}C") if channels_last else \
        (f"NC{letters}", f"OI{letters}", f"NC{letters}")
    kshape = (ksize + (c // groups, o)) if channels_last else ((o, c // groups) + ksize)
    args = [i]
    j = g.pick(lambda n: n.shape == kshape) if g.coin(0.3) and \
        any(n.shape == kshape for n in g.nodes) else None
    if j is not None:
        kernel = "@1"
        args.append(j)
    else:
        kernel = g.const_array(kshape, -1.0, 1.0)
    kw = f", lhs_dilation={lhs_dil}" if any(a > 1 for a in lhs_dil) else ""
    kw += f", rhs_dilation={rhs_dil}" if any(b > 1 for b in rhs_dil) else ""
    kw += f", feature_group_count={groups}" if groups > 1 else ""
    return "conv", (f"lax.conv_general_dilated(@0, {kernel}, {strides}, {padding!r}, "
                    f"dimension_numbers={dn}{kw})"), args


@maker(weight=1)
def mk_conv_transpose(g):
    i = g.pick(lambda n: len(n.shape) == 3 and n.shape[-1] <= 3)
    n, w, c = g.shape(i)
    k, s, o = g.int(1, 3), g.int(1, 2), g.int(1, 2)
    padding = g.choice(["SAME", "VALID"])
    guard(n * o * (w * s + k) <= MAX_SIZE)
    kernel = g.const_array((k, c, o), -1.0, 1.0)
    return "conv_transpose", f"lax.conv_transpose(@0, {kernel}, ({s},), {padding!r})", [i]


def _windows(vals, window, strides, pads, fill):
    """Every window's values (per point of the value batch), on a trailing axis."""
    v = np.pad(vals, [(0, 0)] + [tuple(p) for p in pads], constant_values=fill)
    w = np.lib.stride_tricks.sliding_window_view(v, window, axis=tuple(range(1, v.ndim)))
    w = w[(slice(None),) + tuple(slice(None, None, s) for s in strides)]
    return w.reshape(w.shape[:v.ndim] + (-1,))


@maker(weight=2)
def mk_pool(g):
    """max / min / avg pooling (flax's NHWC signatures) and reduce_window sum / max; the
    maximum (minimum) of every window is at least MARGIN from the runner-up."""
    i = g.pick(lambda n: 2 <= len(n.shape) <= 4)
    shape = g.shape(i)
    lead = 1 if len(shape) == 4 or (len(shape) == 3 and g.coin()) else 0  # a batch axis?
    spatial = shape[lead:-1]
    guard(all(m >= 2 for m in spatial))
    window = tuple(g.int(1, min(3, n)) for n in spatial)
    guard(np.prod(window) > 1)
    strides = tuple(g.int(1, 2) for _ in window)
    padding = g.choice(["VALID", "SAME"])
    kind = g.choice(["max_pool", "min_pool", "avg_pool", "reduce_window_max",
                     "reduce_window_sum"])
    full_w = (1,) * lead + window + (1,)
    full_s = (1,) * lead + strides + (1,)
    pads = [(0, 0)] * lead
    for n, k, s in zip(spatial, window, strides):
        total = max((-(-n // s) - 1) * s + k - n, 0) if padding == "SAME" else 0
        pads.append((total // 2, total - total // 2))
    pads.append((0, 0))
    if "max" in kind or "min" in kind:
        fill = -np.inf if "max" in kind else np.inf
        w = _windows(g.vals(i), full_w, full_s, pads, fill)
        guard(w.shape[-1] >= 2 and all(n >= 1 for n in w.shape[1:-1]))
        w = np.sort(w, axis=-1)
        top = w[..., -2:] if "max" in kind else w[..., :2]
        gap = np.abs(top[..., 1] - top[..., 0])
        guard(np.all(np.isfinite(top[..., 0] + top[..., 1])) and np.all(gap >= MARGIN))
    if kind.startswith("reduce_window"):
        init = "-np.inf" if kind.endswith("max") else "0.0"
        op = "lax.max" if kind.endswith("max") else "np.add"
        return kind, (f"lax.reduce_window(@0, {init}, {op}, {full_w}, {full_s}, "
                      f"{padding!r})"), [i]
    extra = ", count_include_pad=False" if kind == "avg_pool" and g.coin(0.3) else ""
    return kind, f"nn.{kind}(@0, {window}, {strides}, {padding!r}{extra})", [i]


# name -> kinks (first or second derivative jumps there)
ACTIVATIONS = {"relu": (0.0,), "relu6": (0.0, 6.0), "hard_tanh": (-1.0, 1.0),
               "hard_sigmoid": (-3.0, 3.0), "hard_silu": (-3.0, 3.0), "leaky_relu": (0.0,),
               "elu": (0.0,), "celu": (0.0,), "selu": (0.0,), "sparse_plus": (-1.0, 1.0),
               "sparse_sigmoid": (-1.0, 1.0), "soft_sign": (0.0,), "squareplus": (),
               "mish": (), "log_sigmoid": (), "identity": ()}


@maker(weight=3)
def mk_activation(g):
    i = g.pick()
    name = g.choice(sorted(ACTIVATIONS) + ["log1mexp", "glu", "standardize", "logmeanexp"])
    v = g.vals(i)
    if name == "log1mexp":
        return name, f"nn.log1mexp({g.at_least(0, i, 0.2)})", [i]
    if name == "glu":
        guard(len(g.shape(i)) >= 1 and g.shape(i)[-1] % 2 == 0)
        return name, "nn.glu(@0)", [i]
    if name == "standardize":
        guard(len(g.shape(i)) >= 1 and g.shape(i)[-1] >= 2)
        guard(np.min(np.var(v, axis=-1)) >= 0.05)
        return name, "nn.standardize(@0)", [i]
    if name == "logmeanexp":
        nd = len(g.shape(i))
        axis = g.int(0, nd - 1) if nd and g.coin(0.7) else None
        return name, f"nn.logmeanexp(@0, axis={axis})", [i]
    guard(away(v, ACTIVATIONS[name]))
    return name, f"nn.{name}(@0)", [i]


@maker(weight=2)
def mk_attention(g):
    """dot_product_attention of values shaped [B, T, N, H] or [T, N, H] (queries, keys and
    values from the same or equally shaped nodes; grouped heads when N allows), with a
    constant bias or mask, causal or not."""
    i = g.pick(lambda n: len(n.shape) in (3, 4) and n.shape[-3] >= 1)
    shape = g.shape(i)
    same = [j for j, n in enumerate(g.nodes) if n.shape == shape]
    k = g.choice(same)
    v = g.choice(same)
    t, n_heads = shape[-3], shape[-2]
    extra = ""
    if g.coin(0.3):
        extra += ", is_causal=True"
    if g.coin(0.3):
        extra += f", bias={g.const_array((1, n_heads, t, t), -1.0, 1.0)}"
    elif g.coin(0.2):
        mask = g.rng.random((1, 1, t, t)) < 0.7
        extra += f", mask={_arr(mask)}"
    if g.coin(0.2):
        extra += f", scale={_f(g.choice([0.5, 1.0, 0.25]))}"
    return "attention", f"nn.dot_product_attention(@0, @1, @2{extra})", [i, k, v]

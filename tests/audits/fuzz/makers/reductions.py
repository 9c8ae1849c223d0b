"""Makers: reductions (also with where= and initial=), cumulative sums and products and sort
along an axis, softmax and layer_norm."""
from __future__ import annotations

import numpy as np

from ..generator import extreme_gap_ok, gap_ok, guard
from ..program import _arr, _f
from ..registry import maker


def _axes_arg(g, ndim):
    """(text for axis=..., the reduced axes)."""
    if ndim == 0 or g.coin(0.25):
        return "None", tuple(range(ndim))
    if ndim >= 2 and g.coin(0.25):
        a, b = sorted(g.perm(range(ndim))[:2])
        return f"({a}, {b - ndim if g.coin(0.3) else b})", (a, b)
    a = g.axis(ndim)
    return str(a), (a % ndim,)


@maker(weight=8)
def mk_reduction(g):
    i = g.pick()
    nd = len(g.shape(i))
    ax, red = _axes_arg(g, nd)
    kd = g.coin(0.3)
    kind = g.choice(["sum", "mean", "prod", "max", "min", "var", "std", "logsumexp",
                     "amax", "method_sum", "method_mean", "var_ddof", "norm"])
    size = int(np.prod([g.shape(i)[a] for a in red])) if red else 1
    v = g.vals(i)
    kdt = ", keepdims=True" if kd else ""
    if kind in ("max", "min", "amax"):
        guard(gap_ok(v, red, "min" if kind == "min" else "max"))
    if kind == "prod":
        guard(size <= 6)
    if kind in ("std", "var_ddof"):
        guard(size >= 2)
    if kind == "std":
        guard(np.min(np.var(v, axis=tuple(a + 1 for a in red))) >= 0.01)
    if kind == "norm":
        guard(np.min(np.sqrt(np.sum(v * v, axis=tuple(a + 1 for a in red)))) >= 0.1)
        return kind, f"fnp.linalg.norm(@0, axis={ax}{kdt})" if ax != "None" or nd <= 1 else \
            f"fnp.linalg.norm(fnp.ravel(@0){kdt})", [i]
    expr = {"sum": f"fnp.sum(@0, axis={ax}{kdt})", "mean": f"fnp.mean(@0, axis={ax}{kdt})",
            "prod": f"fnp.prod(@0, axis={ax}{kdt})", "max": f"fnp.max(@0, axis={ax}{kdt})",
            "min": f"fnp.min(@0, axis={ax}{kdt})", "var": f"fnp.var(@0, axis={ax}{kdt})",
            "std": f"fnp.std(@0, axis={ax}{kdt})", "amax": f"fnp.amax(@0, axis={ax}{kdt})",
            "logsumexp": f"nn.logsumexp(@0, axis={ax}{kdt})",
            "method_sum": f"@0.sum(axis={ax}{kdt})", "method_mean": f"@0.mean(axis={ax}{kdt})",
            "var_ddof": f"fnp.var(@0, axis={ax}, ddof=1{kdt})"}[kind]
    return kind, expr, [i]


@maker(weight=2)
def mk_softmax(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    a = g.axis(len(g.shape(i)))
    kind = g.choice(["softmax", "log_softmax"])
    return kind, f"nn.{kind}(@0, axis={a})", [i]


@maker(weight=1)
def mk_layer_norm(g):
    i = g.pick(lambda n: len(n.shape) >= 1 and n.shape[-1] >= 2)
    guard(np.min(np.var(g.vals(i), axis=-1)) >= 0.05)
    return "layer_norm", "nn.layer_norm(@0)", [i]


@maker(weight=3)
def mk_cumulative(g):
    i = g.pick()
    nd = len(g.shape(i))
    kind = g.choice(["cumsum", "cumprod", "sort", "cumsum_flat"])
    if kind == "cumsum_flat":
        return "cumsum", "fnp.cumsum(@0)", [i]
    a = g.axis(nd)
    if kind == "sort":
        guard(gap_ok(g.vals(i), (a % nd,)))
        return kind, f"fnp.sort(@0, axis={a})", [i]
    return kind, f"fnp.{kind}(@0, axis={a})", [i]


def _reduce_where(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s, v = g.shape(i), g.vals(i)
    nd = len(s)
    ax, red = _axes_arg(g, nd)
    kd = ", keepdims=True" if g.coin(0.3) else ""
    fn = g.choice(["sum", "prod", "max", "min", "mean"])
    if fn == "mean" or g.coin(0.75):
        mask = np.asarray(g.rng.random(s[g.int(0, nd - 1):]) < 0.7)
        keep, wt = np.broadcast_to(mask, s), f", where={_arr(mask)}"
    else:
        keep, wt = np.ones(s, bool), ""
    count = np.sum(keep, axis=red)
    guard(np.max(count) >= 1)
    # max's initial mostly below the values, min's above (else the result is the constant)
    c = g.const(nonzero=True) if fn not in ("max", "min") else \
        g.choice([-3.0, -1.5, -0.5, 0.5]) * (1 if fn == "max" else -1)
    it = f", initial={_f(c)}"
    if fn == "mean":
        guard(np.min(count) >= 1)
        return "mean_where", f"fnp.mean(@0, axis={ax}{wt}{kd})", [i]
    if fn in ("max", "min"):
        guard(extreme_gap_ok(v, red, keep, fn, c))
    elif fn == "prod":
        guard(np.max(count) <= 6)
    if fn in ("sum", "prod") and wt and g.coin(0.4):
        it = ""
    return f"{fn}_where", f"fnp.{fn}(@0, axis={ax}{wt}{it}{kd})", [i]

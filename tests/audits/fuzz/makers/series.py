"""Makers: NumPy's sequence functions (diff, gradient, trapezoid, polyval, vander, interp with
constant knots off the values, convolve / correlate)."""
from __future__ import annotations

import numpy as np

from ..generator import away, guard, _size
from ..program import _arr, _f
from ..registry import maker


def _vec(g, k, i):
    """Slot k (node i) as a 1-d value."""
    return f"@{k}" if len(g.shape(i)) == 1 else f"fnp.ravel(@{k})"


@maker(weight=2)
def mk_sequences(g):
    """diff, gradient, trapezoid, polyval, vander, interp (constant knots), convolve and
    correlate."""
    kind = g.choice(["diff", "gradient", "trapezoid", "polyval", "vander", "interp",
                     "convolve", "correlate"])
    if kind in ("convolve", "correlate"):
        i = g.pick(lambda n: _size(n.shape) <= 12)
        a, args = _vec(g, 0, i), [i]
        if g.coin(0.3):
            v = g.const_array((g.int(1, 4),))
        else:
            j = g.pick(lambda n: _size(n.shape) <= 6)
            v, args = _vec(g, 1, j), [i, j]
        mode = g.choice(["", ", mode='full'", ", mode='same'", ", mode='valid'", ", 'same'"])
        if g.coin(0.3):
            a, v = v, a
        return kind, f"fnp.{kind}({a}, {v}{mode})", args
    if kind == "polyval":
        i = g.pick()
        x = g.bounded(0, i, 1.5)
        if g.coin(0.5):
            p = repr([g.const(nonzero=True)] + [g.const() for _ in range(g.int(1, 3))])
            return kind, f"fnp.polyval({p}, {x})", [i]
        j = g.pick(lambda n: 1 <= _size(n.shape) <= 4)
        return kind, f"fnp.polyval({_vec(g, 1, j)}, {x})", [i, j]
    if kind == "vander":
        i = g.pick(lambda n: 2 <= _size(n.shape) <= 6)
        x = g.bounded(0, i, 1.5)
        x = x if len(g.shape(i)) == 1 else f"fnp.ravel({x})"
        n = g.choice(["", ", 2", ", 3", ", N=4"])
        inc = ", increasing=True" if g.coin(0.4) else ""
        return kind, f"fnp.vander({x}{n}{inc})", [i]
    if kind == "interp":
        i = g.pick()
        vec = [j for j, n in enumerate(g.nodes) if len(n.shape) == 1 and 2 <= n.shape[0] <= 6]
        if vec and g.coin(0.6):
            j = g.choice(vec)
            m, fp, args = g.shape(j)[0], "@1", [i, j]
        else:
            m = g.int(2, 5)
            fp, args = g.const_array((m,)), [i]
        # knots spanning the values, off the grids of the inputs (0.001) and of the constants
        lo, hi = float(np.min(g.vals(i))), float(np.max(g.vals(i)))
        steps = np.concatenate([[g.rng.uniform(lo - 0.6, lo + 0.2)],
                                g.rng.uniform(0.3, max(0.4, (hi - lo + 0.8) / (m - 1)), m - 1)])
        xp = np.round(np.round(np.cumsum(steps), 2) + 0.0037, 4)
        guard(away(g.vals(i), xp))
        lr = f", left={_f(g.const())}, right={_f(g.const())}" if g.coin(0.3) else ""
        return kind, f"fnp.interp(@0, {_arr(xp)}, {fp}{lr})", args
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    nd = len(s)
    if kind == "diff":
        a = g.axis(nd)
        n = g.int(1, 2)
        pre, extra = g.choice(["", "scalar", "array"]), 0
        if pre == "scalar":
            pre, extra = f", prepend={_f(g.const())}", 1
        elif pre == "array":
            ps = list(s)
            ps[a] = 1
            pre, extra = f", prepend={g.const_array(tuple(ps))}", 1
        guard(s[a] + extra - n >= 1)
        nt = f", n={n}" if n > 1 or g.coin(0.3) else ""
        return kind, f"fnp.diff(@0{nt}, axis={a}{pre})", [i]
    if kind == "trapezoid":
        a = g.axis(nd)
        guard(s[a] >= 2)
        xs = g.choice(["", "dx", "x"])
        if xs == "dx":
            xs = f", dx={_f(g.const(positive=True))}"
        elif xs == "x":
            xs = f", {_arr(np.round(np.cumsum(g.rng.uniform(0.2, 1.0, s[a])), 2))}"
        return kind, f"fnp.trapezoid(@0{xs}, axis={a})", [i]
    # gradient: one array per axis (a list when several)
    e = g.choice([1, 2])
    form = g.choice(["all", "one", "pair"]) if nd >= 2 else g.choice(["all", "one"])
    if form == "all":
        axes, at = list(range(nd)), ""
    elif form == "one":
        a = g.axis(nd)
        axes, at = [a % nd], f", axis={a}"
    else:
        a, b = g.perm(range(nd))[:2]
        axes, at = [a, b], f", axis=({a}, {b})"
    guard(all(s[a] >= e + 1 for a in axes))
    hs = [g.choice([1.0, 0.5, 2.0, 0.25]) for _ in axes]
    sp = g.choice(["", "one", "each"])
    sp = "" if not sp else f", {_f(hs[0])}" if sp == "one" or len(axes) == 1 else \
        ", " + ", ".join(_f(h) for h in hs)
    eo = f", edge_order={e}" if e == 2 or g.coin(0.3) else ""
    call = f"fnp.gradient(@0{sp}{at}{eo})"
    if len(axes) == 1:
        return kind, call, [i]
    expr = g.choice([f"{call}[{g.int(0, len(axes) - 1)}]", f"fnp.stack({call}, {g.int(0, nd)})",
                     f"(lambda d: d[0] * d[-1])({call})"])
    return kind, expr, [i]

"""Makers: windowed minima (lax.reduce_window_min) over one or two trailing axes, with strides
and padding, every window's two smallest values MARGIN apart (a tie is a kink; a padded
window's +inf never wins: windows are at least one element inside)."""
from __future__ import annotations

import numpy as np

from ..generator import gap_ok, guard
from ..registry import maker


@maker(weight=1)
def mk_window_min(g):
    i = g.pick(lambda n: len(n.shape) >= 1 and n.shape[-1] >= 2)
    s = g.shape(i)
    w = g.int(2, s[-1])
    st = g.int(1, 2)
    win, strides = (1,) * (len(s) - 1) + (w,), (1,) * (len(s) - 1) + (st,)
    v = g.vals(i)
    pad = g.choice(["VALID", "SAME"])
    lo = (w - 1) // 2 if pad == "SAME" else 0
    vp = np.pad(v, [(0, 0)] * (v.ndim - 1) + [(lo, w - 1 - lo if pad == "SAME" else 0)],
                constant_values=np.inf)
    with np.errstate(invalid="ignore"):  # inf - inf between padding cells: not compared
        for k in range(0, vp.shape[-1] - w + 1, st):
            guard(gap_ok(vp[..., k:k + w], (len(s) - 1,), "min"))
    return "reduce_window_min", (f"lax.reduce_window_min(@0, {win}, {strides}, {pad!r}) * "
                                 f"{g.choice(['1.0', '-0.5', '2.0'])}"), [i]

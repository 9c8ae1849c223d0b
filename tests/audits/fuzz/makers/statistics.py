"""Makers: NumPy's statistics at points where they are smooth: quantiles (no ties among the
order statistics read), ptp, NaN-ignoring reductions over NaNs put in by a mask, cov and
corrcoef."""
from __future__ import annotations

import numpy as np

from ..generator import extreme_gap_ok, gap_ok, guard, quantile_gaps_ok, _size
from ..program import B, N_POINTS, _arr
from ..registry import maker
from .reductions import _axes_arg


QUANTILES = [0.5, 0.25, 0.8, 0.1, 0.9, 0.3, [0.2, 0.7], [0.9, 0.05, 0.5]]


@maker(weight=2)
def mk_order_stats(g):
    """Quantiles (median / quantile / percentile, methods linear and midpoint), ptp, the
    NaN-ignoring reductions of a value with NaNs put in by a constant mask, cov / corrcoef."""
    kind = g.choice(["median", "quantile", "percentile", "ptp", "nanmax", "nanmin", "nanvar",
                     "nanstd", "nanprod", "nanmean", "nansum", "cov", "corrcoef", "corrcoef"])
    if kind in ("cov", "corrcoef"):
        return _cov(g, kind)
    i = g.pick(lambda n: len(n.shape) >= 1)
    s, v = g.shape(i), g.vals(i)
    ax, red = _axes_arg(g, len(s))
    kd = ", keepdims=True" if g.coin(0.3) else ""
    if kind in ("median", "quantile", "percentile"):
        q = 0.5 if kind == "median" else g.choice(QUANTILES)
        guard(quantile_gaps_ok(v, red, q))
        if kind == "median":
            return kind, f"fnp.median(@0, axis={ax}{kd})", [i]
        method = g.choice(["", ", method='linear'", ", method='midpoint'"])
        qt = repr(q) if kind == "quantile" else repr(np.round(np.multiply(q, 100), 6).tolist())
        return kind, f"fnp.{kind}(@0, {qt}, axis={ax}{method}{kd})", [i]
    if kind == "ptp":
        guard(_size([s[a] for a in red]) >= 2)
        guard(gap_ok(v, red, "max") and gap_ok(v, red, "min"))
        return kind, f"fnp.ptp(@0, axis={ax}{kd})", [i]
    mask = np.asarray(g.rng.random(s) < 0.35)
    guard(mask.any())
    count = np.sum(~mask, axis=red)
    guard(np.min(count) >= 1)
    x = f"fnp.where({_arr(mask)}, np.nan, @0)"
    if kind in ("nanmax", "nanmin"):
        guard(extreme_gap_ok(v, red, ~mask, kind[3:]))
    if kind == "nanprod":
        guard(np.max(count) <= 6)
    ddof = ""
    if kind in ("nanvar", "nanstd"):
        d = g.int(0, 1)
        guard(np.min(count) >= d + 1)
        ddof = f", ddof={d}" if d or g.coin(0.3) else ""
        if kind == "nanstd":
            var = np.nanvar(np.where(mask, np.nan, v), axis=tuple(a + 1 for a in red), ddof=d)
            guard(np.min(var) >= 0.01)
    return kind, f"fnp.{kind}({x}, axis={ax}{ddof}{kd})", [i]


def _cov(g, kind):
    """cov / corrcoef of a 1-d or 2-d value (and maybe a second one), >= 3 observations; the
    correlations kept away from +-1 (corrcoef clips there) and the variances from 0."""
    i = g.pick(lambda n: 1 <= len(n.shape) <= 2 and max(n.shape) >= 3)
    s = g.shape(i)
    # variables in rows (rowvar) or columns, with >= 3 observations
    rowvar = g.choice([r for r, obs in ((True, s[-1]), (False, s[0])) if obs >= 3])
    args, opts = [i], "" if rowvar else ", rowvar=False"
    nvar = 1 if len(s) == 1 else s[0] if rowvar else s[1]
    if g.coin(0.25) or (kind == "corrcoef" and nvar == 1):
        args.append(g.partner(i, same=True))
    with np.errstate(all="ignore"):
        xs = [g.vals(a) for a in args]
        if len(s) == 2 and not rowvar:
            xs = [np.swapaxes(x, -1, -2) for x in xs]
        rows = np.concatenate([x.reshape(N_POINTS, -1, x.shape[-1]) for x in xs], 1)
        guard(np.min(np.var(rows, axis=-1)) >= 0.01)
        nvar = rows.shape[1]
        if kind == "corrcoef":
            guard(nvar >= 2)
            # the clip at +-1 matters where derivatives are compared with differences: at
            # the point and on the stencils (the batch examples only compare transformations)
            r = np.stack([np.corrcoef(rows[k]) for k in [0] + list(range(B, N_POINTS))])
            guard(np.max(np.abs(r[:, ~np.eye(nvar, dtype=bool)])) <= 0.98)
    y = ", @1" if len(args) == 2 else ""
    if kind == "cov":
        opts += g.choice(["", "", ", bias=True", ", ddof=0", ", ddof=2"])
    return kind, f"fnp.{kind}(@0{y}{opts})", args

"""Makers: the JAX surface (each keeps its values in safe domains, or raises Reject): dynamic slices
at static and traced starts, `.at[]` updates with repeated and traced indices and modes,
running max/min/logsumexp, top_k, multi-key sort, lax.pad with negative and interior padding,
clamp, associative_scan, map, the new keyword arguments of fxad.numpy, a few new NumPy
names, checkpoint policies and debug callbacks."""
from __future__ import annotations

import numpy as np

from ..generator import away, gap_ok, guard
from ..program import _arr, _f
from ..registry import maker


def _traced_start(g, n, size):
    """A traced start in [0, n - size] (argmax of a node whose top two values are apart),
    or a static one (possibly negative or past the end: dynamic_slice clamps)."""
    if g.coin(0.5):
        j = g.pick(lambda m: 2 <= int(np.prod(m.shape)) <= n - size + 1 and len(m.shape) == 1)
        guard(gap_ok(g.vals(j), (0,), "max"))
        return "fnp.argmax(@1)", [j]
    return str(g.int(-n - 1, n + 1)), []


@maker(weight=3)
def mk_dynamic_slice(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    a = g.int(0, len(s) - 1)
    size = g.int(1, s[a])
    start, extra = _traced_start(g, s[a], size)
    if g.coin(0.5):
        return "dynamic_slice_in_dim", (f"lax.dynamic_slice_in_dim(@0, {start}, {size}, "
                                        f"axis={a})"), [i] + extra
    starts = [str(g.int(-n, n)) for n in s]
    starts[a] = start
    sizes = [g.int(1, n) for n in s]
    sizes[a] = size
    return "dynamic_slice", (f"lax.dynamic_slice(@0, ({', '.join(starts)},), "
                             f"{tuple(sizes)})"), [i] + extra


@maker(weight=2)
def mk_dynamic_update_slice(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    usize = tuple(g.int(1, n) for n in s)
    a = g.int(0, len(s) - 1)
    start, extra = _traced_start(g, s[a], usize[a])
    starts = [str(g.int(-n, n)) for n in s]
    starts[a] = start
    upd = f"fnp.sin(@0[{', '.join(f'0:{n}' for n in usize)}]) * 0.5"
    cands = [j for j, n in enumerate(g.nodes) if n.shape == usize]
    if cands and g.coin(0.5):
        k = len(extra) + 1
        return "dynamic_update_slice", (f"lax.dynamic_update_slice(@0, @{k}, "
                                        f"({', '.join(starts)},))"), [i] + extra + [
            g.choice(cands)]
    return "dynamic_update_slice", (f"lax.dynamic_update_slice(@0, {upd}, "
                                    f"({', '.join(starts)},))"), [i] + extra


@maker(weight=3)
def mk_at_repeated(g):
    """.at[] with repeated (and negative) indices; min/max keep distinct indices and a
    margin between the old and new values (a tie is a kink)."""
    i = g.pick(lambda n: len(n.shape) == 1)
    n = g.shape(i)[0]
    method = g.choice(["set", "multiply", "divide", "add", "subtract", "min", "max"])
    k = g.int(1, 4)
    if method in ("min", "max"):
        idx = g.rng.permutation(n)[:min(k, n)]
    else:
        idx = g.rng.integers(-n, n, k)
    val = g.choice(["0.75", "-1.25", "fnp.cos(@0[:1]) + 2.0"])
    if method == "divide":
        val = g.choice(["1.5", "-2.0", "(fnp.cos(@0[:1]) + 2.0)"])
    if method in ("min", "max"):
        cands = g.evaluate(f"fnp.broadcast_to({val}, ({len(idx)},))", [i])
        guard(away(g.vals(i)[:, idx] - cands, [0.0]))
    mode = g.choice(["", "", ", mode='clip'", ", mode='drop'"])
    if mode:
        idx = g.rng.integers(-n - 2, n + 2, k) if method not in ("min", "max") else idx
    return f"at_{method}", f"at(@0)[{_arr(idx)}].{method}({val}{mode})", [i]


@maker(weight=2)
def mk_running(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    a = g.axis(len(s))
    kind = g.choice(["cummax", "cummin", "cumlogsumexp", "cumsum"])
    rev = g.coin(0.4)
    if kind in ("cummax", "cummin"):
        guard(gap_ok(g.vals(i), (a % len(s),)))
    return kind, f"lax.{kind}(@0, axis={a}{', reverse=True' if rev else ''})", [i]


@maker(weight=1)
def mk_top_k(g):
    i = g.pick(lambda n: len(n.shape) >= 1 and n.shape[-1] >= 2)
    s = g.shape(i)
    guard(gap_ok(g.vals(i), (len(s) - 1,)))
    return "top_k", f"lax.top_k(@0, {g.int(1, s[-1])})[0]", [i]


@maker(weight=1)
def mk_sort_keys(g):
    i = g.pick(lambda n: len(n.shape) == 1 and n.shape[0] >= 2)
    n = g.shape(i)[0]
    j = g.partner(i, same=True)
    guard(gap_ok(g.vals(i), (0,)))
    if g.coin(0.5):
        keys = _arr(g.rng.integers(0, 2, n))
        return "sort_keys2", f"lax.sort(({keys}, @0, @1), num_keys=2)[2]", [i, j]
    return "sort_key_val", "lax.sort_key_val(@0, @1)[1]", [i, j]


@maker(weight=1)
def mk_lax_pad(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    config = []
    for n in g.shape(i):
        inner = g.int(0, 2)
        grown = n + max(n - 1, 0) * inner
        lo, hi = g.int(-1, 2), g.int(-1, 2)
        guard(grown + lo + hi >= 1)
        config.append((lo, hi, inner))
    return "lax_pad", f"lax.pad(@0, {_f(g.const())}, {config})", [i]


@maker(weight=1)
def mk_clamp(g):
    i = g.pick()
    lo, hi = sorted(g.choice([(-0.5, 0.5), (-1.0, 0.25), (0.0, 1.5)]))
    guard(away(g.vals(i), [lo, hi]))
    return "clamp", f"lax.clamp({_f(lo)}, @0, {_f(hi)})", [i]


@maker(weight=1)
def mk_assoc_scan(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    a = g.axis(len(g.shape(i)), allow_neg=False)
    fn = g.choice(["lambda p, q: p + q", "lambda p, q: p * q",
                   "lambda p, q: p * 0.5 + q"])
    rev = ", reverse=True" if g.coin(0.3) else ""
    return "associative_scan", f"lax.associative_scan({fn}, @0, axis={a}{rev})", [i]


@maker(weight=1)
def mk_lax_map(g):
    i = g.pick(lambda n: len(n.shape) >= 1 and n.shape[0] >= 1)
    bodies = ["fnp.sin(v) * 2.0", "fnp.sum(v * v)"]
    if len(g.shape(i)) >= 2:
        bodies.append("fnp.tanh(v[::-1])")
    body = g.choice(bodies)
    bs = g.choice(["", ", batch_size=2", ", batch_size=1"])
    return "lax_map", f"lax.map(lambda v: {body}, @0{bs})", [i]


@maker(weight=2)
def mk_numpy_kwargs(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    a = g.axis(len(s))
    kind = g.choice(["var_where", "std_correction", "take_wrap", "pad_ramp", "pad_stat",
                     "sort_desc", "cumulative_sum", "sum_out"])
    if kind == "var_where":
        mask = g.rng.integers(0, 2, s).astype(bool)
        mask.flat[0] = True
        return kind, f"fnp.var(@0, where={_arr(mask)})", [i]
    if kind == "std_correction":
        guard(s[a % len(s)] >= 2)
        return kind, f"fnp.var(@0, axis={a}, correction=1) + 0.5 * fnp.mean(@0)", [i]
    if kind == "take_wrap":
        idx = g.rng.integers(-2 * s[a], 2 * s[a], g.int(1, 4))
        return kind, f"fnp.take(@0, {_arr(idx)}, axis={a}, mode='wrap')", [i]
    if kind == "pad_ramp":
        return kind, (f"fnp.pad(@0, {g.int(1, 2)}, mode='linear_ramp', "
                      f"end_values={_f(g.const())})"), [i]
    if kind == "pad_stat":
        mode = g.choice(["mean", "maximum", "minimum"])
        if mode != "mean":
            guard(all(gap_ok(g.vals(i), (ax,), "max" if mode == "maximum" else "min")
                      for ax in range(len(s))))
        return kind, f"fnp.pad(@0, 1, mode='{mode}')", [i]
    if kind == "sort_desc":
        guard(gap_ok(g.vals(i), (a % len(s),)))
        return kind, f"fnp.sort(@0, axis={a}, descending=True, stable=True)", [i]
    if kind == "cumulative_sum":
        return kind, f"fnp.cumulative_sum(@0, axis={a}, include_initial=True)", [i]
    return kind, f"fnp.sum(@0, axis={a}, keepdims=True, out=None)", [i]


@maker(weight=2)
def mk_numpy_names(g):
    kind = g.choice(["i0", "rollaxis", "polymul", "fill_diagonal", "vectorize",
                     "apply_along_axis", "piecewise"])
    if kind == "i0":
        i = g.pick()
        return kind, f"fnp.i0({g.bounded(0, i, 3.0)})", [i]
    if kind == "rollaxis":
        i = g.pick(lambda n: len(n.shape) >= 2)
        nd = len(g.shape(i))
        return kind, f"fnp.rollaxis(@0, {g.int(0, nd - 1)}, {g.int(0, nd)})", [i]
    if kind == "polymul":
        i = g.pick(lambda n: len(n.shape) == 1)
        j = g.pick(lambda n: len(n.shape) == 1)
        return kind, "fnp.polymul(@0, @1)", [i, j]
    if kind == "fill_diagonal":
        i = g.pick(lambda n: len(n.shape) == 2)
        return kind, f"fnp.fill_diagonal(@0, {_f(g.const())}, wrap={g.coin()})", [i]
    if kind == "vectorize":
        i = g.pick()
        return kind, "fnp.vectorize(lambda v: fnp.sin(v) * v)(@0)", [i]
    if kind == "apply_along_axis":
        i = g.pick(lambda n: len(n.shape) >= 1)
        a = g.axis(len(g.shape(i)))
        return kind, f"fnp.apply_along_axis(lambda r: fnp.sum(r * r[::-1]), {a}, @0)", [i]
    i = g.pick()
    c = float(np.round(np.median(g.vals(i)), 2))
    guard(away(g.vals(i), [c]))
    return kind, (f"fnp.piecewise(@0, [@0 < {_f(c)}], [lambda v: v * v, "
                  f"lambda v: fnp.sin(v)])"), [i]


@maker(weight=1)
def mk_checkpoint_policy(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    n = g.shape(i)[-1]
    m = g.const_array((n, n), -0.5, 0.5)
    pol = g.choice(["dots_saveable", "everything_saveable", "nothing_saveable",
                    "save_only_these_names('h')"])
    return "checkpoint_policy", (
        f"fxad.checkpoint(lambda v: fnp.tanh(fxad.checkpoint_name(v @ {m}, 'h')) * v, "
        f"policy=fxad.checkpoint_policies.{pol})(@0)"), [i]


@maker(weight=1)
def mk_debug_callback(g):
    i = g.pick()
    return "debug_callback", "(fxad.debug.callback(lambda *a: None, @0), fnp.sin(@0))[1]", [i]

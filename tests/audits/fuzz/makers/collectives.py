"""Makers: collectives over named axes. Under fxad.pmap a program value's leading axis is the
mapped one and the body is staged once (an `spmd` equation whose body holds psum, pmax,
all_gather, ppermute, ...), closing over other program values or taking them unmapped
(in_axes=None); under fxad.vmap(axis_name=...) the same collectives are batching rules.
pmax / pmin keep their operands' top two MARGIN apart along the mapped axis.

`axis_index` is never an equation of a staged program, by design: pmap's body gets the index
as an input, and vmap replaces it with an iota. It runs here (its bind and batching rule) but
cannot show in a jaxpr."""
from __future__ import annotations

from ..generator import gap_ok, guard, _size
from ..program import MAX_SIZE
from ..registry import maker


def _body(g, n, inner):
    """A collective over axis 'i' (size n) of v, the per-index value of shape `inner`:
    its kind and an expression of v. psum_scatter and all_to_all split a leading axis of
    size n (tiled: a multiple of n), made by stacking n multiples of v."""
    kind = g.choice(["psum", "pmean", "pmax", "pmin", "all_gather", "ppermute", "axis_index",
                     "psum_scatter", "psum_scatter_tiled", "all_to_all"])
    guard(n * n * _size(inner) <= 2 * MAX_SIZE)
    stacked = f"(fnp.tanh(v) * np.arange(1.0, {n + 1}.0).reshape(({n},) + (1,) * v.ndim))"
    if kind in ("psum", "pmean"):
        return kind, f"lax.{kind}(fnp.sin(v), 'i') * v"
    if kind in ("pmax", "pmin"):
        return kind, f"lax.{kind}(v, 'i') + fnp.sin(v)"
    if kind == "all_gather":
        return kind, f"fnp.sum(fnp.tanh(lax.all_gather(v, 'i')) * {stacked}, 0) + v"
    if kind == "ppermute":
        shift = g.int(1, max(n - 1, 1))
        perm = [(k, (k + shift) % n) for k in range(n)]
        return kind, f"lax.ppermute(v, 'i', {perm}) * fnp.cos(v)"
    if kind == "axis_index":
        return kind, "v * (lax.convert_element_type(lax.axis_index('i'), v.dtype) + 0.5)"
    if kind == "psum_scatter":
        return kind, f"lax.psum_scatter({stacked} * v, 'i') + v"
    if kind == "psum_scatter_tiled":  # (n * d0, ...) scattered in blocks of d0
        guard(len(inner) >= 1)
        return kind, (f"fnp.tile(lax.psum_scatter(fnp.concatenate([fnp.sin(v)] * {n}, 0) * "
                      f"fnp.cos(v[:1]), 'i', tiled=True), (1,) * v.ndim) * v")
    return kind, f"fnp.sum(lax.all_to_all({stacked} * v, 'i', 0, 0) * fnp.cos(v), 0)"


@maker(weight=2)
def mk_pmap_collective(g):
    i = g.pick(lambda n: len(n.shape) >= 1 and 2 <= n.shape[0] <= 4)
    s = g.shape(i)
    n, inner = s[0], s[1:]
    kind, body = _body(g, n, inner)
    if kind in ("pmax", "pmin"):
        guard(gap_ok(g.vals(i), (0,), "max" if kind == "pmax" else "min"))
    mapper = g.choice(["pmap", "pmap", "vmap"])
    closed = [j for j, nd in enumerate(g.nodes) if nd.shape == inner]
    if closed and kind in ("psum", "pmean", "ppermute", "axis_index") and g.coin(0.5):
        j = g.choice(closed)
        if g.coin(0.5):  # the other value passed unmapped
            return f"{mapper}_{kind}_unmapped", (
                f"fxad.{mapper}(lambda v, w: ({body}) * fnp.tanh(w), axis_name='i', "
                f"in_axes=(0, None))(@0, @1)"), [i, j]
        return f"{mapper}_{kind}_closure", (f"fxad.{mapper}(lambda v: ({body}) + @1 * v, "
                                            f"axis_name='i')(@0)"), [i, j]
    return f"{mapper}_{kind}", f"fxad.{mapper}(lambda v: {body}, axis_name='i')(@0)", [i]


@maker(weight=1)
def mk_pmap_nested(g):
    """A collective over an outer pmap axis inside an inner vmap (the inner batching rule
    passes the outer collective through), or the other way around."""
    i = g.pick(lambda n: len(n.shape) >= 2 and 2 <= n.shape[0] <= 4 and n.shape[1] <= 4)
    outer, innerm = g.choice([("pmap", "vmap"), ("vmap", "pmap")])
    coll = g.choice(["psum", "pmean"])
    axis = g.choice(["i", "j"])
    return f"{outer}_{innerm}_{coll}_{axis}", (
        f"fxad.{outer}(lambda v: fxad.{innerm}(lambda u: lax.{coll}(fnp.sin(u), '{axis}') * u, "
        f"axis_name='j')(v), axis_name='i')(@0)"), [i]

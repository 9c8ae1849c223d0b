"""Makers: integer, bit-level and piecewise-constant operations, as the non-differentiable parts
of a program (an index, a mask, a factor constant near the point): searchsorted, signbit,
modf, copysign, ranks, the mode, discrete quantiles, and the bit primitives.

fxad.numpy and fxad.lax give bitwise operations on booleans only; integer shift_left,
bitwise_and / bitwise_not / bitwise_xor and the threefry2x32 hash (fxad.random's) are reached
through the public `fxad.extend.core.primitive(name).bind`, on integers made from program
values (x * 0, so the same at every point: traced, hence staged, never folded away). Every
mask and index is guarded to stay the same on the stencils."""
from __future__ import annotations

import numpy as np

from ..generator import away, gap_ok, guard, split_point
from ..program import _arr, _f
from ..registry import maker
from .scipy_stats_special import _positive, _unit


def _prim(name):
    return f"fxad.extend.core.primitive({name!r}).bind"


def _ints(g, shape, hi, dtype="np.int32"):
    """Integers in [0, hi) of `shape`, traced through slot 0 (its sum times 0)."""
    c = _arr(g.rng.integers(0, hi, shape).astype(np.int64))
    return f"(lax.convert_element_type(fnp.sum(@0) * 0.0, {dtype}) + np.asarray({c}, {dtype}))"


@maker(weight=1)
def mk_bit_ops(g):
    """A mask or an index made by an integer bit primitive, choosing between values."""
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    n = s[-1]
    kind = g.choice(["bitwise_and", "bitwise_xor", "bitwise_not", "shift_left", "threefry"])
    other = "fnp.sin(@0) * 2.0"
    if kind == "bitwise_and":
        bit = f"{_prim('bitwise_and')}({_ints(g, s, 8)}, np.full({s!r}, {g.int(1, 4)}, np.int32))"
        return kind, f"fnp.where({bit} == 0, @0, {other})", [i]
    if kind == "bitwise_xor":
        x = f"{_prim('bitwise_xor')}({_ints(g, s, 16)}, {_ints(g, s, 16)})"
        return kind, f"fnp.where(fnp.remainder({x}, 3) == 1, {other}, @0 * 0.5)", [i]
    if kind == "bitwise_not":  # ~k = -k - 1: indices -1 .. -n, from the end
        idx = f"{_prim('bitwise_not')}({_ints(g, (n,), n)})"
        return kind, f"fnp.take(@0, {idx}, axis=-1, mode='wrap')", [i]
    if kind == "shift_left":
        sh = f"{_prim('shift_left')}({_ints(g, (n,), 4)}, np.full(({n},), 1, np.int32))"
        return kind, f"fnp.take(@0, fnp.remainder({sh}, {n}), axis=-1) * fnp.cos(@0)", [i]
    u = "np.uint32"
    k0, k1 = _ints(g, s, 2**16, u), _ints(g, s, 2**16, u)
    bits = f"{_prim('threefry2x32')}({k0}, {k1}, {_ints(g, s, 2**16, u)}, np.zeros({s!r}, {u}))"
    return "threefry2x32", (f"fnp.where(fnp.remainder({bits}[{g.int(0, 1)}], np.uint32(3)) == "
                            f"np.uint32(0), @0, {other})"), [i]


@maker(weight=1)
def mk_piecewise_constant(g):
    """signbit and searchsorted as masks / indices, modf, trunc and copysign away from
    their jumps and kinks."""
    kind = g.choice(["signbit", "searchsorted", "searchsorted_traced", "modf", "trunc",
                     "copysign"])
    if kind == "signbit":
        i = g.pick()
        j = g.partner(i)
        c = split_point(g, g.vals(j))
        return kind, f"fnp.where(fnp.signbit(@1 - {_f(c)}), @0, fnp.tanh(@0))", [i, j]
    if kind in ("modf", "trunc"):
        i = g.pick()
        v = g.vals(i) * 2.0  # the integer part jumps at integers
        guard(np.min(np.abs(v - np.round(v))) >= 0.05)
        if kind == "trunc":
            return kind, "fnp.trunc(@0 * 2.0) * fnp.sin(@0)", [i]
        return kind, "(lambda fr, it: fr * 1.5 + it)(*fnp.modf(@0 * 2.0))", [i]
    if kind == "copysign":
        i = g.pick()
        j = g.partner(i)
        guard(away(g.vals(i), [0.0]) and away(g.vals(j), [0.0]))
        return kind, "fnp.copysign(@0, @1)", [i, j]
    i = g.pick(lambda n: len(n.shape) >= 1)
    n = g.shape(i)[-1]
    j = g.pick()
    if kind == "searchsorted":  # fixed knots, traced queries
        knots = np.round(np.sort(g.rng.uniform(-2, 2, g.int(1, 4))), 2)
        guard(away(g.vals(j), knots))
        idx = f"fnp.searchsorted({_arr(knots)}, @1, side={g.choice(['left', 'right'])!r})"
        return kind, f"fnp.take(@0, fnp.remainder({idx}, {n}), axis=-1) * 0.5", [i, j]
    k = g.pick(lambda nd: len(nd.shape) == 1 and 2 <= nd.shape[0] <= 5)  # traced knots
    guard(gap_ok(g.vals(k), (0,)))
    kv = np.sort(g.vals(k), axis=-1)
    v = g.vals(j).reshape(g.vals(j).shape[0], -1)
    guard(np.min(np.abs(v[:, :, None] - kv[:, None, :])) >= 0.05)
    return kind, (f"fnp.take(@0, fnp.remainder(lax.searchsorted(fnp.sort(@2), @1), {n}), "
                  f"axis=-1) + fnp.sort(@2)[0]"), [i, j, k]


@maker(weight=1)
def mk_ranks_and_quantiles(g):
    """Ranks (no ties), the mode (of values with one repeated), and quantiles of discrete
    distributions at a probability and a parameter that move with the program (the quantile
    the same on every stencil point)."""
    kind = g.choice(["rankdata", "rankdata_index", "mode", "discrete_ppf"])
    if kind.startswith("rankdata"):
        i = g.pick(lambda n: len(n.shape) >= 1 and n.shape[-1] >= 2)
        guard(gap_ok(g.vals(i), (len(g.shape(i)) - 1,)))
        r = "fxad.scipy.stats.rankdata(@0, axis=-1)"
        if kind == "rankdata":
            return kind, f"@0 * {r}", [i]
        return kind, (f"fnp.take_along_axis(@0, lax.convert_element_type({r}, np.int32) - 1, "
                      f"axis=-1) * fnp.cos(@0)"), [i]
    if kind == "mode":
        i = g.pick(lambda n: len(n.shape) >= 1 and n.shape[-1] >= 2)
        guard(gap_ok(g.vals(i), (len(g.shape(i)) - 1,)))
        return kind, ("fxad.scipy.stats.mode(fnp.concatenate([@0, @0[..., :1]], axis=-1), "
                      "axis=-1).mode"), [i]
    i = g.pick()
    j = g.partner(i)
    dist = g.choice(["poisson", "binom"])
    q, p = _unit(g, 0, i), _positive(g, 1, j, 0.5)
    ppf = (f"fxad.scipy.stats.poisson.ppf({q}, {p})" if dist == "poisson" else
           f"fxad.scipy.stats.binom.ppf({q}, 6, lax.logistic(@1) * 0.8 + 0.1)")
    vals = g.evaluate(ppf, [i, j])
    guard(np.all(vals[5:] == vals[5]))  # the same quantile on every stencil point
    return f"{dist}.ppf", f"@0 * {ppf} + @1", [i, j]

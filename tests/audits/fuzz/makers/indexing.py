"""Makers: basic and advanced indexing, take / take_along_axis, at[].add/set/multiply, and
indices computed from values (argmax, argsort): batched index arrays under vmap."""
from __future__ import annotations

import numpy as np

from ..generator import _bcast_to, gap_ok, guard, _size
from ..program import _arr, _f
from ..registry import maker


def _basic_index(g, s):
    parts = []
    for n in s:
        c = g.choice(["all", "int", "slice", "slice", "step"])
        if c == "all":
            parts.append(":")
        elif c == "int":
            parts.append(str(g.int(-n, n - 1)))
        elif c == "slice":
            a = g.int(0, n - 1)
            b = g.int(a + 1, n)
            parts.append(f"{a}:{b}" if b < n else f"{a}:")
        else:
            step = g.choice([2, -1, -2])
            parts.append(f"::{step}")
    # the ellipsis first: it keeps trailing parts, which must still be one per trailing axis
    # (after a None is inserted they no longer are: '@0[..., -2]' on a last axis of size 1)
    if len(parts) > 1 and g.coin(0.2):
        parts = ["..."] + parts[g.int(1, len(parts) - 1):]
    if len(parts) and g.coin(0.2):
        parts.insert(g.int(0, len(parts)), "None")
    while parts and parts[-1] == ":" and len(parts) > 1:
        parts.pop()
    return ", ".join(parts) if parts else "..."


def _advanced_index(g, s):
    nd = len(s)
    a = g.int(0, nd - 1)
    kind = g.choice(["int", "int", "bool", "two"])
    parts = [":"] * nd
    if kind == "bool":
        mask = g.rng.integers(0, 2, s[a]).astype(bool)
        mask[g.rng.integers(0, s[a])] = True
        parts[a] = _arr(mask)
    elif kind == "two" and nd >= 2:
        b = g.int(0, nd - 1)
        guard(b != a)
        k = int(g.int(1, 3))
        parts[a] = _arr(g.rng.integers(-s[a], s[a], k))
        parts[b] = _arr(g.rng.integers(-s[b], s[b], (k,) if g.coin(0.5) else (1,)))
    else:
        k = int(g.int(1, 4))
        shape = (k,) if g.coin(0.7) else (2, k)
        parts[a] = _arr(g.rng.integers(-s[a], s[a], shape))
    while len(parts) > 1 and parts[-1] == ":":
        parts.pop()
    return ", ".join(parts)


@maker(weight=6)
def mk_getitem(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    idx = _advanced_index(g, s) if g.coin(0.35) else _basic_index(g, s)
    return "getitem", f"@0[{idx}]", [i]


@maker(weight=2)
def mk_take(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    a = g.axis(len(s))
    if g.coin(0.5):
        idx = g.rng.integers(0, s[a], int(g.int(1, 4)))
        return "take", f"fnp.take(@0, {_arr(idx)}, axis={a})", [i]
    ishape = list(s)
    ishape[a] = int(g.int(1, 3))
    idx = g.rng.integers(0, s[a], ishape)
    return "take_along_axis", f"fnp.take_along_axis(@0, {_arr(idx)}, {a})", [i]


@maker(weight=3)
def mk_at(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    adv = g.coin(0.4)
    method = g.choice(["add", "set", "multiply"])
    idx = _advanced_index(g, s) if adv else _basic_index(g, s)
    sub = np.zeros(s)[eval(f"np.s_[{idx}]", {"np": np})].shape
    if method != "add" and adv:
        flat = np.arange(int(np.prod(s))).reshape(s)[eval(f"np.s_[{idx}]", {"np": np})].ravel()
        guard(len(np.unique(flat)) == len(flat))  # .set/.multiply need distinct indices
    c = g.choice(["node", "self", "const"])
    if c == "node":
        cands = [j for j, n in enumerate(g.nodes)
                 if len(n.shape) <= len(sub) and _bcast_to(n.shape, sub)]
        guard(cands)
        j = cands[-1] if g.coin(0.5) else g.choice(cands)
        return f"at_{method}", f"at(@0)[{idx}].{method}(@1)", [i, j]
    if c == "self":
        return f"at_{method}", f"at(@0)[{idx}].{method}(fnp.sin(@0[{idx}]))", [i]
    return f"at_{method}", f"at(@0)[{idx}].{method}({_f(g.const(nonzero=True))})", [i]


@maker(weight=2)
def mk_traced_index(g):
    """Indices computed from values (argmax, argsort): batched index arrays under vmap."""
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    if g.coin(0.5):
        j = g.pick(lambda n: 2 <= _size(n.shape) <= s[0])
        fn = g.choice(["argmax", "argmin"])
        guard(gap_ok(g.vals(j), tuple(range(len(g.shape(j)))), fn[3:]))
        # (@0 may be a plain ndarray -- e.g. unbatched under vmap -- which NumPy cannot
        # index with a traced value: fxad.numpy.take / lax.getitem are the spellings)
        form = g.choice([f"fnp.take(@0, fnp.{fn}(@1), axis=0)", f"lax.getitem(@0, fnp.{fn}(@1))"])
        return "traced_index", form, [i, j]
    j = g.partner(i, same=True)
    a = g.axis(len(s))
    guard(gap_ok(g.vals(j), (a % len(s),)))
    return "sort_by_key", f"fnp.take_along_axis(@0, fnp.argsort(@1, axis={a}), axis={a})", [i, j]

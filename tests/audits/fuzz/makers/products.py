"""Makers: contractions (matmul / dot, einsum, tensordot, dot_general, outer, inner, vdot,
kron)."""
from __future__ import annotations

import numpy as np

from ..generator import guard, _size
from ..program import MAX_NDIM, MAX_SIZE
from ..registry import maker


@maker(weight=5)
def mk_matmul(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    sa = g.shape(i)

    def ok(n):
        sb = n.shape
        if not sb:
            return False
        k = sb[-2] if len(sb) >= 2 else sb[0]
        if k != sa[-1]:
            return False
        try:
            out = np.matmul(np.zeros(sa), np.zeros(sb)).shape
        except ValueError:
            return False
        return _size(out) <= MAX_SIZE and len(out) <= MAX_NDIM
    cands = [j for j, n in enumerate(g.nodes) if ok(n)]
    form = g.choice(["fnp.matmul(@0, {b})", "@0 @ {b}", "fnp.dot(@0, {b})"])
    if cands and g.coin(0.7):
        j = cands[-1] if g.coin(0.5) else g.choice(cands)
        if form.startswith("fnp.dot") and len(g.shape(j)) > 2:
            form = "fnp.matmul(@0, {b})"
        if form.startswith("fnp.dot") and len(sa) > 2:
            form = "fnp.matmul(@0, {b})"
        return "matmul", form.format(b="@1"), [i, j]
    if len(sa) >= 2 and g.coin(0.6):
        guard(_size(sa[:-1] + sa[-2:-1]) <= MAX_SIZE)
        return "matmul_gram", "fnp.matmul(@0, fnp.swapaxes(@0, -1, -2))", [i]
    k = int(g.int(1, 3))
    guard(_size(sa[:-1]) * k <= MAX_SIZE)
    return "matmul_const", f"@0 @ {g.const_array((sa[-1], k))}", [i]


LETTERS = "abcdefgh"


@maker(weight=4)
def mk_einsum(g):
    i = g.pick()
    two = g.coin(0.7)
    j = g.pick() if two else None
    sa = g.shape(i)
    la = LETTERS[:len(sa)]
    sizes = dict(zip(la, sa))
    operands = [la]
    if two:
        sb = g.shape(j)
        lb, fresh = [], iter(LETTERS[len(sa):])
        for n in sb:
            share = [c for c in la if sizes[c] == n and c not in lb]
            if share and g.coin(0.6):
                lb.append(g.choice(share))
            else:
                c = next(fresh)
                sizes[c] = n
                lb.append(c)
        operands.append("".join(lb))
    labels = sorted(set("".join(operands)))
    if g.coin(0.2):  # implicit output: the labels that appear once, in alphabetical order
        spec = ",".join(operands)
        out_shape = [sizes[c] for c in labels if "".join(operands).count(c) == 1]
    else:
        out = [c for c in g.perm(labels) if g.coin(0.6)]
        spec = ",".join(operands) + "->" + "".join(out)
        out_shape = [sizes[c] for c in out]
    guard(_size(out_shape) <= MAX_SIZE)
    args = [i] + ([j] if two else [])
    if g.coin(0.25):  # NumPy's interleaved form: integer sublists (a..h -> 0..7, same order)
        ins, _, out = spec.partition("->")
        subs = [[LETTERS.index(c) for c in s] for s in ins.split(",")]
        parts = [f"@{k}, {sub}" for k, sub in enumerate(subs)]
        if "->" in spec:
            parts.append(str([LETTERS.index(c) for c in out]))
        return "einsum_sublists", f"fnp.einsum({', '.join(parts)})", args
    return "einsum", f"fnp.einsum({spec!r}, @0{', @1' if two else ''})", args


@maker(weight=3)
def mk_tensordot(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    j = g.pick(lambda n: len(n.shape) >= 1)
    sa, sb = g.shape(i), g.shape(j)
    pairs, used_b = [], set()
    for a in g.perm(range(len(sa))):
        bs = [b for b in range(len(sb)) if sb[b] == sa[a] and b not in used_b]
        if bs and g.coin(0.6):
            b = g.choice(bs)
            pairs.append((a, b))
            used_b.add(b)
    kind = g.choice(["tensordot", "dot_general"])
    if kind == "tensordot":
        out = [n for a, n in enumerate(sa) if a not in {p[0] for p in pairs}] + \
              [n for b, n in enumerate(sb) if b not in used_b]
        guard(_size(out) <= MAX_SIZE and len(out) <= MAX_NDIM)
        axes = ([p[0] for p in pairs], [p[1] for p in pairs])
        return kind, f"fnp.tensordot(@0, @1, axes={axes})", [i, j]
    # dot_general: some of the pairs are batch dimensions, the rest contracted
    nb = g.int(0, len(pairs))
    batch, contract = pairs[:nb], pairs[nb:]
    la = [a for a in range(len(sa)) if a not in {p[0] for p in pairs}]
    lb = [b for b in range(len(sb)) if b not in used_b]
    out = [sa[p[0]] for p in batch] + [sa[a] for a in la] + [sb[b] for b in lb]
    guard(_size(out) <= MAX_SIZE and len(out) <= MAX_NDIM)
    dn = ((tuple(p[0] for p in contract), tuple(p[1] for p in contract)),
          (tuple(p[0] for p in batch), tuple(p[1] for p in batch)))
    return kind, f"lax.dot_general(@0, @1, {dn})", [i, j]


@maker(weight=2)
def mk_products(g):
    kind = g.choice(["outer", "inner", "vdot", "kron"])
    i = g.pick(lambda n: len(n.shape) >= 1)
    sa = g.shape(i)
    if kind == "outer":
        j = g.pick(lambda n: _size(n.shape) * _size(sa) <= MAX_SIZE)
        return kind, "fnp.outer(@0, @1)", [i, j]
    if kind == "inner":
        j = g.pick(lambda n: len(n.shape) >= 1 and n.shape[-1] == sa[-1]
                   and len(sa) + len(n.shape) - 2 <= MAX_NDIM
                   and _size(sa[:-1]) * _size(n.shape[:-1]) <= MAX_SIZE)
        return kind, "fnp.inner(@0, @1)", [i, j]
    if kind == "vdot":
        j = g.pick(lambda n: _size(n.shape) == _size(sa))
        return kind, "fnp.vdot(@0, @1)", [i, j]
    j = g.pick(lambda n: len(n.shape) == len(sa) and _size(n.shape) * _size(sa) <= MAX_SIZE)
    return kind, "fnp.kron(@0, @1)", [i, j]

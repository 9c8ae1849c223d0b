"""Makers: structural operations (reshape, transpose, broadcast, squeeze, flip, roll, tile,
pad and its modes, rot90, meshgrid, diag / trace / tril), joining and splitting."""
from __future__ import annotations

import numpy as np

from ..generator import guard, _size
from ..program import MAX_NDIM, MAX_SIZE, _f
from ..registry import maker


def _factorizations(size, k, rng):
    primes, n, p = [], size, 2
    while n > 1:
        while n % p == 0:
            primes.append(p)
            n //= p
        p += 1
    dims = [1] * k
    for q in primes:
        dims[rng.integers(0, k)] *= q
    return tuple(dims)


@maker(weight=4)
def mk_reshape(g):
    i = g.pick()
    size = int(np.prod(g.shape(i)))
    k = g.int(1 if size > 1 else 0, MAX_NDIM)
    shape = _factorizations(size, k, g.rng) if k else ()
    txt = list(map(str, shape))
    if shape and g.coin(0.3):
        txt[g.int(0, len(shape) - 1)] = "-1"
    tup = "(" + ", ".join(txt) + ("," if len(txt) == 1 else "") + ")"
    form = g.choice(["fnp.reshape(@0, {s})", "@0.reshape({s})", "lax.reshape(@0, {s})"]) \
        if "-1" not in txt else g.choice(["fnp.reshape(@0, {s})", "@0.reshape({s})"])
    return "reshape", form.format(s=tup), [i]


@maker(weight=1)
def mk_ravel(g):
    return "ravel", g.choice(["fnp.ravel(@0)", "@0.ravel()", "@0.flatten()"]), [g.pick()]


@maker(weight=4)
def mk_transpose(g):
    i = g.pick(lambda n: len(n.shape) >= 2)
    nd = len(g.shape(i))
    kind = g.choice(["perm", "T", "swapaxes", "moveaxis", "default"])
    if kind == "perm":
        p = tuple(g.perm(range(nd)))
        return "transpose", f"fnp.transpose(@0, {p})", [i]
    if kind == "T":
        return "transpose", "@0.T", [i]
    if kind == "default":
        return "transpose", "fnp.transpose(@0)", [i]
    a, b = g.axis(nd), g.axis(nd)
    return kind, f"fnp.{kind}(@0, {a}, {b})", [i]


@maker(weight=3)
def mk_expand_squeeze(g):
    i = g.pick()
    s = g.shape(i)
    ones = [a for a, n in enumerate(s) if n == 1]
    if ones and g.coin(0.5):
        if g.coin(0.3):
            return "squeeze", "fnp.squeeze(@0)", [i]
        return "squeeze", f"fnp.squeeze(@0, {g.choice(ones)})", [i]
    guard(len(s) < MAX_NDIM)
    a = g.int(-(len(s) + 1), len(s))
    form = g.choice([f"fnp.expand_dims(@0, {a})", "@0[None]", "@0[..., None]"])
    return "expand_dims", form, [i]


@maker(weight=3)
def mk_broadcast_to(g):
    i = g.pick()
    s = list(g.shape(i))
    new = [n if n != 1 or g.coin(0.5) else int(g.int(2, 4)) for n in s]
    lead = g.int(0, max(0, MAX_NDIM - len(s)))
    new = [int(g.int(1, 3)) for _ in range(min(lead, 2))] + new
    guard(new != s and int(np.prod(new)) <= MAX_SIZE)
    return "broadcast_to", f"fnp.broadcast_to(@0, {tuple(new)})", [i]


@maker(weight=2)
def mk_flip_roll(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    nd = len(g.shape(i))
    kind = g.choice(["flip", "flip_all", "roll", "roll_flat"])
    if kind == "flip":
        return kind, f"fnp.flip(@0, {g.axis(nd)})", [i]
    if kind == "flip_all":
        return kind, "fnp.flip(@0)", [i]
    sh = g.int(-3, 3)
    if kind == "roll":
        return kind, f"fnp.roll(@0, {sh}, axis={g.axis(nd)})", [i]
    return kind, f"fnp.roll(@0, {sh})", [i]


@maker(weight=2)
def mk_tile_repeat_pad(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    nd = len(s)
    kind = g.choice(["tile", "repeat", "pad"])
    if kind == "tile":
        reps = tuple(int(g.int(1, 2)) for _ in range(nd))
        return kind, f"fnp.tile(@0, {reps})", [i]
    if kind == "repeat":
        return kind, f"fnp.repeat(@0, 2, axis={g.axis(nd)})", [i]
    widths = tuple((int(g.int(0, 1)), int(g.int(0, 1))) for _ in range(nd))
    return kind, f"fnp.pad(@0, {widths}, constant_values={_f(g.const())})", [i]


@maker(weight=2)
def mk_matrix_structure(g):
    i = g.pick(lambda n: 1 <= len(n.shape) <= 2)
    s = g.shape(i)
    if len(s) == 1:
        guard(s[0] <= 5)
        return "diag", f"fnp.diag(@0, {g.int(-1, 1)})", [i]
    kind = g.choice(["diag", "diagonal", "trace", "tril", "triu"])
    m, n = s
    if kind == "diag":
        return kind, "fnp.diag(@0)", [i]
    if kind == "diagonal":
        off = g.int(-(m - 1), n - 1)
        return kind, f"fnp.diagonal(@0, {off})", [i]
    if kind == "trace":
        return kind, "fnp.trace(@0)", [i]
    return kind, f"fnp.{kind}(@0, {g.int(-1, 1)})", [i]


@maker(weight=3)
def mk_concatenate(g):
    i = g.pick()
    s = g.shape(i)
    if len(s) == 0 or g.coin(0.15):
        j = g.pick(lambda n: _size(n.shape) + _size(s) <= MAX_SIZE)
        return "concatenate", "fnp.concatenate([@0, @1], axis=None)", [i, j]
    a = g.axis(len(s))
    ap = a % len(s)

    def ok(n):
        return len(n.shape) == len(s) and all(x == y for k, (x, y) in enumerate(zip(n.shape, s))
                                              if k != ap)
    j = g.pick(ok)
    parts = g.choice([["@0", "@1"], ["@1", "@0", "@1"], ["@0", "@0"], ["@0", "@1", "@0"]])
    total = sum(g.shape(j)[ap] if p == "@1" else s[ap] for p in parts)
    guard(_size(s) // s[ap] * total <= MAX_SIZE)
    form = g.choice(["fnp.concatenate", "lax.concatenate"]) if a >= 0 else "fnp.concatenate"
    if form == "lax.concatenate":
        return "concatenate", f"lax.concatenate([{', '.join(parts)}], {a})", [i, j]
    return "concatenate", f"fnp.concatenate([{', '.join(parts)}], axis={a})", [i, j]


@maker(weight=2)
def mk_stack(g):
    i = g.pick()
    s = g.shape(i)
    guard(len(s) < MAX_NDIM and 2 * _size(s) <= MAX_SIZE)
    j = g.partner(i, same=True)
    a = g.int(-(len(s) + 1), len(s))
    kind = g.choice(["stack", "hstack", "vstack"])
    if kind != "stack":
        return kind, f"fnp.{kind}([@0, @1])", [i, j]
    return kind, f"fnp.stack([@0, @1], axis={a})", [i, j]


@maker(weight=2)
def mk_split(g):
    i = g.pick(lambda n: len(n.shape) >= 1 and max(n.shape) >= 2)
    s = g.shape(i)
    a = g.choice([k for k, n in enumerate(s) if n >= 2])
    if g.coin(0.5):
        cut = g.int(1, s[a] - 1)
        return "split", f"fnp.split(@0, [{cut}], axis={a})[{g.int(0, 1)}]", [i]
    m = g.choice([k for k in (2, 3, 4) if s[a] % k == 0] or [1])
    return "array_split", f"fnp.array_split(@0, {m}, axis={a})[{g.int(0, m - 1)}]", [i]


PAD_MODES = ["edge", "reflect", "symmetric", "wrap"]


@maker(weight=1)
def mk_pad_rotate(g):
    """pad's edge / reflect / symmetric / wrap modes, rot90, fliplr / flipud, meshgrid."""
    kind = g.choice(["pad", "pad", "rot90", "fliplr", "flipud", "meshgrid"])
    if kind == "meshgrid":
        i = g.pick(lambda n: _size(n.shape) <= 6)
        j = g.pick(lambda n: _size(n.shape) * _size(g.shape(i)) <= MAX_SIZE)
        opts = g.choice(["", ", indexing='ij'", ", indexing='xy'"]) + \
            (", sparse=True" if g.coin(0.3) else "")
        if g.coin(0.25):
            k = g.pick(lambda n: _size(n.shape) * _size(g.shape(i)) * _size(g.shape(j)) <= MAX_SIZE)
            call = f"fnp.meshgrid(@0, @1, @2{opts})"
            return kind, g.choice([f"{call}[2]", f"(lambda a, b, c: a * b + fnp.sin(c))(*{call})"]), \
                [i, j, k]
        call = f"fnp.meshgrid(@0, @1{opts})"
        return kind, g.choice([f"{call}[0]", f"{call}[1]", f"(lambda a, b: a * fnp.sin(b))(*{call})",
                               f"(lambda a, b: a - b)(*{call})"]), [i, j]
    if kind == "fliplr":
        i = g.pick(lambda n: len(n.shape) >= 2)
        return kind, "fnp.fliplr(@0)", [i]
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    nd = len(s)
    if kind == "flipud":
        return kind, "fnp.flipud(@0)", [i]
    if kind == "rot90":
        guard(nd >= 2)
        k = g.int(-1, 3)
        if g.coin(0.3):
            return kind, f"fnp.rot90(@0, {k})", [i]
        a, b = g.perm(range(nd))[:2]
        a, b = (a - nd if g.coin(0.3) else a), (b - nd if g.coin(0.3) else b)
        return kind, f"fnp.rot90(@0, {k}, axes=({a}, {b}))", [i]
    mode = g.choice(PAD_MODES)
    form = g.choice(["axes", "axes", "int", "pair"])
    if form == "int":
        w = str(g.int(1, 2))
    elif form == "pair":
        w = str((g.int(0, 2), g.int(0, 2)))
    else:
        w = str(tuple((g.int(0, 2), g.int(0, 1)) for _ in range(nd)))
    return "pad_" + mode, g.choice([f"fnp.pad(@0, {w}, mode={mode!r})", f"fnp.pad(@0, {w}, {mode!r})"]), [i]

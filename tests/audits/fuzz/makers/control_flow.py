"""Makers: control flow (cond, fori_loop, while_loop, scan, bodies closing over program
values), functions with custom rules, and transformations inside the program (grad / jvp /
vmap / jacfwd / jacrev closing over other, possibly traced, nodes: the outer transformations
must keep their perturbations apart from the inner ones)."""
from __future__ import annotations

import numpy as np

from ..generator import _bcast_to, guard, _size, split_point
from ..program import MAX_NDIM, MAX_SIZE, _f
from ..registry import maker


COND_BRANCHES = ["fnp.sin(x) * y", "fnp.tanh(x) + y", "x * y - 1.0", "fnp.cos(y) * x",
                 "x + y * y"]


@maker(weight=1)
def mk_cond(g):
    i = g.pick()
    j = g.partner(i)
    k = g.pick()
    s = g.evaluate("fnp.sum(@0)", [k])
    c = split_point(g, s)
    t, f = g.choice(COND_BRANCHES), g.choice(COND_BRANCHES)
    op = g.choice([">", "<"])
    out_shape = np.broadcast_shapes(g.shape(i), g.shape(j))
    closed = [m for m, n in enumerate(g.nodes) if _bcast_to(n.shape, out_shape)]
    extra = []
    if closed and g.coin(0.4):  # a branch closes over another value of the program
        t = f"({t}) * fnp.tanh(@3)"
        extra = [g.choice(closed)]
    return "cond", (f"lax.cond(fnp.sum(@2) {op} {_f(c)}, lambda x, y: {t}, lambda x, y: {f}, "
                    f"@0, @1)"), [i, j, k] + extra


@maker(weight=1)
def mk_fori(g):
    i = g.pick()
    s = g.shape(i)
    j = g.pick(lambda n: _bcast_to(n.shape, s))
    body = g.choice(["fnp.tanh(c) * 0.5 + @1", "fnp.sin(c) * @1", "c * 0.5 + @1 * @1",
                     "lax.logistic(c + @1)"])
    n = g.int(1, 3)
    return "fori_loop", f"lax.fori_loop(0, {n}, lambda i, c: {body}, @0)", [i, j]


@maker(weight=1)
def mk_while(g):
    """A while_loop with a fixed trip count. Reverse mode through while_loop needs the trip
    count, so it works eagerly but not under jit (documented): programs with one skip the
    jit-over-reverse-mode checks, and the op is never wrapped in jit."""
    i = g.pick()
    s = g.shape(i)
    j = g.pick(lambda n: _bcast_to(n.shape, s))
    body = g.choice(["fnp.sin(c[0]) * @1 + 0.5", "fnp.tanh(c[0] + @1)", "c[0] * 0.5 + @1 * @1"])
    n = g.int(1, 3)
    return "while_loop", (f"lax.while_loop(lambda c: c[1] < {n}, lambda c: ({body}, c[1] + 1), "
                          f"(@0, 0))[0]"), [i, j]


@maker(weight=1)
def mk_scan(g):
    xs = g.pick(lambda n: len(n.shape) >= 1 and n.shape[0] <= 4)
    cs = g.shape(xs)[1:]
    cands = [j for j, n in enumerate(g.nodes) if n.shape == cs]
    if cands and g.coin(0.8):
        init, args = "@1", [xs, g.choice(cands)]
    else:
        init, args = "fnp.zeros_like(@0[0])", [xs]
    body = g.choice(["(fnp.tanh(c) * 0.5 + fnp.sin(x), c * x)",
                     "(c * x + 0.5, fnp.cos(c) + x)",
                     "(lax.logistic(c - x), c + x * x)"])
    closed = [j for j, n in enumerate(g.nodes) if _bcast_to(n.shape, cs)]
    if closed and g.coin(0.4):  # the body closes over another value of the program
        body = "(fnp.tanh(c) * @{k} + fnp.sin(x), c * x - @{k})".format(k=len(args))
        args = args + [g.choice(closed)]
    out = g.int(0, 1)
    rev = ", reverse=True" if g.coin(0.3) else ""
    return "scan", f"lax.scan(lambda c, x: {body}, {init}, @0{rev})[{out}]", args


@maker(weight=2)
def mk_custom(g):
    i = g.pick()
    if g.coin(0.5):
        return "custom_jvp", "cj_xtanh(@0)", [i]
    j = g.partner(i, same=True)
    return "custom_vjp", "cv_mulsin(@0, @1)", [i, j]


INNER_BODIES = ["fnp.sum(fnp.sin(a * @1) ** 2)", "fnp.sum(fnp.tanh(a) * @1)",
                "fnp.sum(a * a * @1)", "fnp.sum(lax.logistic(a + @1) * a)"]


@maker(weight=3)
def mk_inner(g):
    i = g.pick()
    s = g.shape(i)
    kind = g.choice(["inner_grad", "inner_jvp", "inner_vmap", "inner_jacfwd", "inner_jacrev"])
    if kind == "inner_vmap":
        guard(len(s) >= 1)
        j = g.pick(lambda n: _bcast_to(n.shape, s[1:]))
        body = g.choice(INNER_BODIES)
        return kind, f"fxad.vmap(lambda a: {body})(@0)", [i, j]
    j = g.pick(lambda n: _bcast_to(n.shape, s))
    if kind == "inner_grad":
        return kind, f"fxad.grad(lambda a: {g.choice(INNER_BODIES)})(@0)", [i, j]
    elem = g.choice(["fnp.sin(a) * @1", "fnp.tanh(a * @1)", "a * a * @1", "fnp.exp(fnp.sin(a)) + @1"])
    if kind == "inner_jvp":
        k = g.pick(lambda n: n.shape == s)
        return kind, f"fxad.jvp(lambda a: {elem}, (@0,), (@2,))[1]", [i, j, k]
    guard(_size(s) ** 2 <= MAX_SIZE and 2 * len(s) <= MAX_NDIM)
    return kind, f"fxad.{kind[6:]}(lambda a: {elem})(@0)", [i, j]

"""Fuzz makers for fxad.random: program values as the parameters of samplers drawn with fixed
keys (location/scale transforms, uniform ranges, truncated normals, positive parameters of
lognormal / rayleigh / weibull / pareto, multivariate normal means, dropout), and keys that
are themselves traced (made from a program value, split, folded). At a fixed key every one
of these is a smooth function of the program values, so the fuzzer's derivative, jit and
vmap checks apply unchanged. (Gamma-family samplers are not here: their derivative is the
implicit one, which finite differences at a fixed key do not see; see notes/11_random.md.)"""
from __future__ import annotations

import numpy as np

from ..generator import Reject
from ..registry import maker


def _f(x):
    return repr(float(x))


def _key(g):
    return f"fxad.random.PRNGKey({g.int(0, 99)})"


LOC_SCALE = ["normal", "laplace", "logistic", "gumbel", "exponential", "cauchy"]


@maker(weight=3)
def mk_random_loc_scale(g):
    """x + c * sample, or x * sample: a sample of x's shape and dtype at a fixed key."""
    i = g.pick()
    dist = g.choice(LOC_SCALE)
    draw = f"fxad.random.{dist}({_key(g)}, {g.shape(i)!r}, @0.dtype)"
    if g.coin():
        return f"random_{dist}", f"@0 + {_f(g.choice([0.5, -0.25, 1.5]))} * {draw}", [i]
    return f"random_{dist}", f"@0 * {draw}", [i]


@maker(weight=2)
def mk_random_uniform_range(g):
    """uniform on [lo, hi) with program values as the bounds (the fused multiply-add path)."""
    i = g.pick()
    if g.coin():
        width = g.choice([0.5, 1.0, 3.0])  # 1.0: the exact-product path
        return "random_uniform", (f"fxad.random.uniform({_key(g)}, {g.shape(i)!r}, @0.dtype, "
                                  f"@0, @0 + {_f(width)})"), [i]
    j = g.partner(i, same=True)
    if not np.all(g.vals(j) - g.vals(i) >= 0.1):
        raise Reject
    return "random_uniform", (f"fxad.random.uniform({_key(g)}, {g.shape(i)!r}, @0.dtype, @0, "
                              "@1)"), [i, j]


@maker(weight=1)
def mk_random_truncated_normal(g):
    """A truncated normal whose bounds move with a program value (kept in [-1.5, 1.5], where
    erf has digits to spare)."""
    i = g.pick()
    b = g.bounded(0, i, 1.5)
    lo, hi = g.choice([(1.0, 1.5), (0.5, 0.25), (2.0, 2.0)])
    return "random_truncated_normal", (f"fxad.random.truncated_normal({_key(g)}, {b} - "
                                       f"{_f(lo)}, {b} + {_f(hi)}, None, @0.dtype)"), [i]


POSITIVE_PARAM = [  # (kind, format with {p} a positive parameter and {k} the key)
    ("random_lognormal", "fxad.random.lognormal({k}, lax.logistic(@0) * 0.8 + 0.2, None, "
                         "@0.dtype)"),
    ("random_rayleigh", "fxad.random.rayleigh({k}, lax.logistic(@0) + 0.5, None, @0.dtype)"),
    ("random_weibull", "fxad.random.weibull_min({k}, lax.logistic(@0) + 0.5, "
                       "lax.logistic(@0) + 1.0, {s}, @0.dtype)"),
    ("random_pareto", "fxad.random.pareto({k}, lax.logistic(@0) * 2.0 + 2.0, None, @0.dtype)"),
]


@maker(weight=2)
def mk_random_positive_param(g):
    i = g.pick()
    kind, form = g.choice(POSITIVE_PARAM)
    return kind, form.format(k=_key(g), s=repr(g.shape(i))), [i]


@maker(weight=1)
def mk_random_mvn(g):
    """multivariate_normal with a program value as the mean (last axis: the dimension)."""
    i = g.pick(lambda n: 1 <= len(n.shape) and 1 <= n.shape[-1] <= 4)
    n = g.shape(i)[-1]
    a = np.round(g.rng.uniform(-1, 1, (n, n)), 2)
    cov = (a @ a.T + np.eye(n)).tolist()
    return "random_mvn", (f"fxad.random.multivariate_normal({_key(g)}, @0, np.array({cov!r}), "
                          "None, @0.dtype)"), [i]


@maker(weight=1)
def mk_random_dropout(g):
    i = g.pick()
    return "dropout", f"nn.dropout({_key(g)}, @0, {_f(g.choice([0.2, 0.5]))})", [i]


@maker(weight=2)
def mk_random_traced_key(g):
    """Keys that are traced values: made from a program value (x * 0, so the same key at
    every point), split and folded; under vmap a batch of keys."""
    i = g.pick()
    seed = "lax.convert_element_type(fnp.sum(@0) * 0.0, np.int64)"
    key = g.choice([f"fxad.random.PRNGKey({seed})",
                    f"fxad.random.split(fxad.random.PRNGKey({seed}), 3)[{g.int(0, 2)}]",
                    f"fxad.random.fold_in(fxad.random.PRNGKey({seed}), {g.int(0, 9)})"])
    dist = g.choice(["normal", "uniform"])
    return "random_traced_key", f"@0 * fxad.random.{dist}({key}, {g.shape(i)!r}, @0.dtype)", [i]

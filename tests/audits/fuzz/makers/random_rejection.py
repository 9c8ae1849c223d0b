"""Makers: the samplers fxad.random builds by rejection (gamma, poisson, binomial) and the gamma
sampler's implicit derivative in alpha (random_gamma_grad). At a fixed key their samples are
not smooth functions of their parameters (rejection steps switch), and gamma's derivative is
the implicit one, which differencing at a fixed key does not see: so the parameters are
constants, and the key is traced (made from a program value times 0, the same key at every
point) so the sampler is staged. The sample (or the derivative, a constant too) scales or
shifts a program value. At most 6 elements (the samplers loop per element)."""
from __future__ import annotations

import numpy as np

from ..generator import _size
from ..program import _arr
from ..registry import maker


@maker(weight=1)
def mk_random_rejection(g):
    i = g.pick(lambda n: _size(n.shape) <= 6)
    s = g.shape(i)
    key = "fxad.random.PRNGKey(lax.convert_element_type(fnp.sum(@0) * 0.0, np.int64))"
    if g.coin(0.3):
        key = f"fxad.random.split({key}, 2)[{g.int(0, 1)}]"
    kind = g.choice(["gamma", "gamma_grad", "poisson", "binomial"])
    alpha = _arr(np.round(g.rng.uniform(0.5, 3.0, s), 2)) if s else "1.5"
    if kind == "gamma":
        return "random_gamma", f"@0 * fxad.random.gamma({key}, np.asarray({alpha}), {s!r})", [i]
    if kind == "gamma_grad":
        return "random_gamma_grad", (
            f"@0 * fxad.grad(lambda a: fnp.sum(fxad.random.gamma({key}, a, {s!r})))"
            f"(np.asarray({alpha}, float))"), [i]
    if kind == "poisson":
        draw = f"fxad.random.poisson({key}, {g.choice([0.5, 3.0, 12.0])}, {s!r})"
    else:
        draw = f"fxad.random.binomial({key}, {g.choice([5.0, 20.0])}, 0.3, {s!r})"
    return f"random_{kind}", f"@0 + 0.25 * {draw}", [i]

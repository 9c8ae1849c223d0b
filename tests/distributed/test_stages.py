"""How a body is split for a distributed executor (no cluster needed): independent
collectives run in one round between two stages, dependent ones in order; and the tasks'
collectives give the same numbers however the shards are grouped."""
import numpy as np
import pytest

import fxad
from fxad import lax
from fxad.distributed.stages import Exchange, plan
from fxad.distributed.tasks import CollectiveInfo, Result, collective, values_of
from fxad.rules.collective.reductions import psum_p


def _body(fun, *args):
    j = fxad.make_jaxpr(lambda *a: fxad.pmap(fun, "i", in_axes=(None, 0))(*a))(*args)
    return j.eqns[0].params["body"]


def _shape(p):
    return ["x" if type(s) is Exchange else len(s.program.jaxpr.eqns) for s in p.steps]


def test_independent_collectives_share_a_round():
    ws = [np.ones((3, 3))] * 3

    def step(ws, x):  # a pmean per gradient: three psums, then three divisions
        return lax.pmean(fxad.grad(lambda ws: sum(((x @ w) ** 2).sum() for w in ws))(ws), "i")
    shape = _shape(plan(_body(step, ws, np.ones((2, 4, 3))), "i", "pmap"))
    assert shape[1:] == ["x", "x", "x", 3]


def test_dependent_collectives_stay_in_order():
    def chain(w, x):
        s = lax.psum(np.sin(x) * w, "i")
        return lax.all_gather(np.cos(s), "i").sum(0) + s
    p = plan(_body(chain, 2.0, np.ones((2, 3))), "i", "pmap")
    assert [type(s).__name__ for s in p.steps] == ["Stage", "Exchange", "Stage", "Exchange",
                                                    "Stage"]


@pytest.mark.parametrize("groups", [[4], [2, 2], [1, 3], [1, 1, 1, 1]])
def test_a_collective_does_not_depend_on_the_grouping(groups):
    """psum's pairwise tree over the shards in order, read by groups of any sizes."""
    xs = [np.random.default_rng(i).normal(size=5) * 10.0 ** i for i in range(4)]
    info = CollectiveInfo(psum_p, {"axis_name": ("i",), "axis_index_groups": None}, "i", 4,
                          "psum", np.dtype(np.float64))
    want = collective(info, xs)
    deps, items, lo = [], [], 0
    for n in groups:
        deps.append(Result((xs[lo:lo + n],), 0.0))
        items.append((("out", len(deps) - 1, 0), n))
        lo += n
    lo = 0
    for n in groups:
        got = values_of(("coll", info, items, lo), deps, n)
        for a, b in zip(got, want[lo:lo + n]):
            np.testing.assert_array_equal(a, b)
        lo += n
    np.testing.assert_allclose(want[0], np.sum(xs, axis=0), rtol=1e-14)

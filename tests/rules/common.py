"""Shared machinery for the rule tables: each row is (name, function, argument shapes,
value strategy, kwargs for check_grads). `run_row` draws values with hypothesis and checks
the JVP against finite differences and the VJP by the transpose identity, to order 2."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fxad
from fxad.test_util import check_grads

SHAPES_UNARY = [(), (3,), (2, 3)]
SHAPES_BINARY = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)),
                 ((), (2, 3))]


def floats(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def away_from_zero(lo, hi):
    """|x| in [lo, hi], either sign (e.g. abs, division)."""
    return st.one_of(floats(lo, hi), floats(-hi, -lo))


def grid(lo, hi, step=0.01):
    """Values on a grid: with unique=True they are at least `step` apart (no ties for
    max/min/argmax, whose derivatives jump at ties)."""
    return st.integers(int(round(lo / step)), int(round(hi / step))).map(lambda k: k * step)


def arrays_for(shapes, elements, unique=False):
    return st.tuples(*[hnp.arrays(np.float64, s, elements=elements, unique=unique)
                       for s in shapes])


def run_row(fn, shapes, elements, order=2, assume=None, unique=False, **kw):
    @settings(max_examples=6, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(arrays_for(shapes, elements, unique))
    def check(args):
        if assume is not None:
            from hypothesis import assume as hyp_assume
            hyp_assume(assume(*args))
        check_grads(fn, args, order=order, modes=("fwd", "rev"), **kw)
    check()


def check_vmap_matches_loop(fn, shapes, rng, size=3):
    """vmap(fn) over `size` examples equals the stacked results of a Python loop."""
    args = [rng.uniform(-2, 2, (size,) + s) for s in shapes]
    got = fxad.vmap(fn)(*args)
    want = np.stack([np.asarray(fn(*[a[i] for a in args])) for i in range(size)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def primitives_used(fn, shapes):
    """Names of the primitives a row's function binds (found by staging it)."""
    args = [np.full(s, 0.5) for s in shapes]
    jaxpr = fxad.make_jaxpr(fn)(*args)
    return {e.primitive.name for e in jaxpr.eqns}

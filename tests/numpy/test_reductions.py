"""Rule table: fxad.numpy.reductions beyond the reduction primitives (var / std with ddof and
keepdims, average, nansum / nanmean, where= and initial=, count_nonzero / any / all): values
against NumPy, derivatives to second order in both modes, vmap against a loop."""
import numpy as np
import pytest

import fxad.numpy as fnp

from ..rules.common import M, MASK, check_values_match_numpy, check_vmap_matches_loop, grid, run_row

R = np.random.default_rng(7)

# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("counts", lambda m, x: [m.count_nonzero(x > 0, axis=0), m.any(x > 2, axis=1),
                             m.all(x > -3), m.flatnonzero(x > 0), m.argwhere(x > 1)],
     [(M[0],)], [{}]),
    ("reductions-where", lambda m, x: [
        m.sum(x, 1, where=x > 0), m.prod(x, where=x > 0, initial=2.0),
        m.max(x, 0, initial=1.5), m.min(x, 1, where=x < 0, initial=0.0),
        m.mean(x, 0, where=x > -1)], [(M[0],)], [{}]),
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


TABLE = [
    ("var-ddof", lambda x: fnp.var(x, axis=0, ddof=1), [(3, 2)]),
    ("std-keepdims", lambda x: fnp.std(x, axis=1, keepdims=True), [(2, 3)]),
    ("average", lambda x, w: fnp.average(x, axis=1, weights=w * w + 1.0), [(2, 3), (3,)]),
    ("nansum", lambda x: fnp.nansum(x * x), [(2, 3)]),
    ("nanmean", lambda x: fnp.nanmean(x * x, axis=0), [(2, 3)]),
    ("reductions-where", lambda x: fnp.sum(x, 1, where=MASK) + fnp.prod(x, where=MASK, initial=2.0)
     + fnp.max(x, 0, initial=0.505).sum() + fnp.mean(x, where=MASK), [(2, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_reductions(name, fn, shapes):
    run_row(fn, shapes, grid(-2, 2), unique=True)


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_vmap_matches_loop(name, fn, shapes):
    check_vmap_matches_loop(fn, shapes, R)

"""Shared machinery for the rule tables (tests/rules/ and the fxad.numpy tables in tests/numpy/):
each row is (name, function, argument shapes, value strategy, kwargs for check_grads). `run_row`
draws values with hypothesis and checks the JVP against finite differences and the VJP by the
transpose identity, to order 2; `check_values_match_numpy` compares a function's values, shapes
and dtypes with NumPy's on the shared arguments (V7, V3, M, ...)."""
from __future__ import annotations

import warnings

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


# --- values against NumPy: the checker and the arguments the numpy-level tables share -----------

_R = np.random.default_rng(11)
V7, V3, M = _R.standard_normal(7), _R.standard_normal(3), _R.standard_normal((3, 4, 5))
NANS = np.where(M[0] > 1, np.nan, M[0])
XP = np.array([-2.5, -1.005, 0.003, 1.373, 2.5])  # interp nodes off the value grid
MASK = np.array([[True, False, False], [False, False, True]])

# NumPy 2.1 added np.unstack and np.clip(x, min=, max=). fxad has both on every supported NumPy;
# on NumPy 2.0 the reference values come from the definitions NumPy 2.1 gives them.
NUMPY_2_1 = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


def _unstack(m, x, axis):
    if m is np and not NUMPY_2_1:
        return tuple(np.moveaxis(x, axis, 0))
    return m.unstack(x, axis=axis)


def _clip(m, x, lo, hi):
    if m is np and not NUMPY_2_1:
        return np.clip(x, lo, hi)
    return m.clip(x, min=lo, max=hi)


def _leaves(v):
    return [np.asarray(t) for t in v] if isinstance(v, (list, tuple)) else [np.asarray(v)]


def check_values_match_numpy(f, argsets, kws):
    """f(np, *args, **kw) == f(fxad.numpy, *args, **kw) for every argument tuple and keyword
    set: the same number of results, each with NumPy's shape, dtype and values."""
    import fxad.numpy as fnp
    for args in argsets:
        for k in kws:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices, x / 0
                want, got = _leaves(f(np, *args, **k)), _leaves(f(fnp, *args, **k))
            assert len(want) == len(got), (k, len(want), len(got))
            for w, g in zip(want, got):
                assert (w.shape, w.dtype) == (g.shape, g.dtype), (k, w.shape, w.dtype, g.shape,
                                                                  g.dtype)
                tol = 1e-5 if w.dtype in (np.float32, np.complex64) else 1e-12
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True,
                                           err_msg=str(k))

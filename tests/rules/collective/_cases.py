"""The collectives' table (one case per use: the per-index function over axis 'i', its NumPy
reference on the stacked inputs, one index's input shape, the axis size) and the checks every
case gets: values against the loop, jit inside and around; the whole map against central
differences; JVP and transpose rules applied inside the map against the derivative of the
whole map; batching under further vmaps."""
import numpy as np
import pytest

import fxad
from fxad import jit, lax, vmap
from fxad.test_util import check_grads

N = 3
PERM = ((0, 1), (1, 2), (2, 0))
PART = ((0, 1), (2, 3))  # axis_index_groups over an axis of 4


def _bcast(v, X):
    return np.broadcast_to(v, X.shape).copy()


# (name, per-index function over axis 'i', NumPy reference on the stacked inputs, shape of
# one index's input, axis size)
CASES = [
    ("psum", lambda x: lax.psum(x, "i"), lambda X: _bcast(X.sum(0), X), (2,), N),
    ("pmean", lambda x: lax.pmean(x, "i"), lambda X: _bcast(X.mean(0), X), (2,), N),
    ("pmax", lambda x: lax.pmax(x, "i"), lambda X: _bcast(X.max(0), X), (2,), N),
    ("pmin", lambda x: lax.pmin(x, "i"), lambda X: _bcast(X.min(0), X), (2,), N),
    ("psum_tree", lambda x: lax.psum({"a": x, "b": 2 * x}, "i")["b"],
     lambda X: _bcast(2 * X.sum(0), X), (2,), N),
    ("psum_groups", lambda x: lax.psum(x, "i", axis_index_groups=PART),
     lambda X: np.concatenate([_bcast(X[:2].sum(0), X[:2]), _bcast(X[2:].sum(0), X[2:])]),
     (2,), 4),
    ("pmax_groups", lambda x: lax.pmax(x, "i", axis_index_groups=PART),
     lambda X: np.concatenate([_bcast(X[:2].max(0), X[:2]), _bcast(X[2:].max(0), X[2:])]),
     (2,), 4),
    ("all_gather", lambda x: lax.all_gather(x, "i"),
     lambda X: np.stack([X] * len(X)), (2,), N),
    ("all_gather_axis1", lambda x: lax.all_gather(x, "i", axis=1),
     lambda X: np.stack([X.transpose(1, 0, 2)] * len(X)), (2, 2), N),
    ("all_gather_tiled", lambda x: lax.all_gather(x, "i", tiled=True),
     lambda X: np.stack([X.reshape(-1)] * len(X)), (2,), N),
    ("all_gather_groups", lambda x: lax.all_gather(x, "i", axis_index_groups=PART),
     lambda X: np.stack([X[:2], X[:2], X[2:], X[2:]]), (2,), 4),
    ("psum_scatter", lambda x: lax.psum_scatter(x, "i"),
     lambda X: X.sum(0), (N, 2), N),
    ("psum_scatter_tiled", lambda x: lax.psum_scatter(x, "i", tiled=True),
     lambda X: X.sum(0).reshape(N, 2), (2 * N,), N),
    ("all_to_all", lambda x: lax.all_to_all(x, "i", 0, 0),
     lambda X: X.transpose(1, 0, 2), (N, 2), N),
    ("all_to_all_1_0", lambda x: lax.all_to_all(x, "i", 1, 0),
     lambda X: X.transpose(2, 0, 1), (2, N), N),
    ("all_to_all_tiled", lambda x: lax.all_to_all(x, "i", 0, 0, tiled=True),
     lambda X: X.reshape(N, N, 2).transpose(1, 0, 2).reshape(N, 2 * N), (2 * N,), N),
    ("ppermute", lambda x: lax.ppermute(x, "i", PERM),
     lambda X: X[[2, 0, 1]], (2,), N),
    ("ppermute_partial", lambda x: lax.ppermute(x, "i", ((0, 1),)),
     lambda X: np.stack([np.zeros_like(X[0]), X[0], np.zeros_like(X[0])]), (2,), N),
    ("pshuffle", lambda x: lax.pshuffle(x, "i", (1, 2, 0)), lambda X: X[[1, 2, 0]], (2,), N),
    ("pswapaxes", lambda x: lax.pswapaxes(x, "i", 0),
     lambda X: X.transpose(1, 0, 2), (N, 2), N),
    ("axis_index", lambda x: x * lax.axis_index("i"),
     lambda X: X * np.arange(len(X)).reshape(-1, 1), (2,), N),
    ("axis_size", lambda x: x * lax.axis_size("i") + lax.psum(1.0, "i"),
     lambda X: X * len(X) + len(X), (2,), N),
    ("mixed", lambda x: x * lax.pmean(x ** 2, "i") + lax.ppermute(np.sin(x), "i", PERM),
     lambda X: X * (X ** 2).mean(0) + np.sin(X)[[2, 0, 1]], (2,), N),
]
IDS = [c[0] for c in CASES]
REDUCTIONS = ("psum", "pmean", "pmax", "pmin", "psum_tree", "psum_groups", "pmax_groups",
              "axis_index", "axis_size", "mixed")  # test_reductions.py's (the rest: test_exchange.py)


def _inputs(shape, n, seed=0):
    return np.random.default_rng(seed).normal(size=(n,) + shape)


def check_value(f, ref, shape, n):
    X = _inputs(shape, n)
    np.testing.assert_allclose(vmap(f, axis_name="i")(X), ref(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jit(vmap(f, axis_name="i"))(X), ref(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(vmap(jit(f), axis_name="i")(X), ref(X), rtol=1e-12, atol=1e-12)


def check_derivatives(f, ref, shape, n):
    """The whole map against central differences, to order 2 (batching rules first)."""
    check_grads(vmap(f, axis_name="i"), (_inputs(shape, n),), order=2)


def check_rules_inside(f, ref, shape, n):
    """JVP and transpose rules applied inside the map (jvp/vjp of one index, then batched)
    give the derivative of the whole map: pmap of grad is grad of pmap."""
    X, T = _inputs(shape, n), _inputs(shape, n, 1)
    F = vmap(f, axis_name="i")
    y, dy = fxad.jvp(F, (X,), (T,))
    C = np.random.default_rng(2).normal(size=np.shape(y))
    (want_ct,) = fxad.vjp(F, X)[1](C)
    y_in, dy_in = vmap(lambda x, t: fxad.jvp(f, (x,), (t,)), axis_name="i")(X, T)
    np.testing.assert_allclose(y_in, y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dy_in, dy, rtol=1e-12, atol=1e-12)
    ct_in = vmap(lambda x, c: fxad.vjp(f, x)[1](c)[0], axis_name="i")(X, C)
    np.testing.assert_allclose(ct_in, want_ct, rtol=1e-12, atol=1e-12)
    ct_jit = vmap(jit(lambda x, c: fxad.vjp(f, x)[1](c)[0]), axis_name="i")(X, C)
    np.testing.assert_allclose(ct_jit, want_ct, rtol=1e-12, atol=1e-12)
    # second order: the vjp of the jvp, inside, against the same outside
    g = lambda x, t, c: fxad.vjp(lambda x: fxad.jvp(f, (x,), (t,))[1], x)[1](c)[0]  # noqa: E731
    want2 = fxad.vjp(lambda X: fxad.jvp(F, (X,), (T,))[1], X)[1](C)[0]
    np.testing.assert_allclose(vmap(g, axis_name="i")(X, T, C), want2, rtol=1e-12, atol=1e-12)


def check_batching(f, ref, shape, n):
    """A further vmap outside (unnamed, or named and unused) maps the collective."""
    X3 = _inputs((2, n) + shape, 1)[0]  # (2, n, ...)
    want = np.stack([ref(x) for x in X3])
    np.testing.assert_allclose(vmap(vmap(f, axis_name="i"))(X3), want, rtol=1e-12, atol=1e-12)
    got = vmap(vmap(f, axis_name="i"), axis_name="k")(X3)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # the named axis outside, an unnamed one inside (in_axes=1 of the stacked input)
    got = vmap(vmap(f), in_axes=1, out_axes=1, axis_name="i")(X3)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


CHECKS = {"value": check_value, "derivatives": check_derivatives,
          "rules_inside": check_rules_inside, "batching": check_batching}


def case_tests(cases):
    """The parametrized test of a rule file's cases: every case under every check above."""
    @pytest.mark.parametrize("case,check", [
        pytest.param(case, check, id=f"{case[0]}-{check}") for case in cases for check in CHECKS])
    def test_case(case, check):
        _, f, ref, shape, n = case
        CHECKS[check](f, ref, shape, n)
    return test_case

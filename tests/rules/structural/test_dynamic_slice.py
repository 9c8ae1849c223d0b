"""Rule table: slices at traced positions (fxad.rules.structural.dynamic_slice): dynamic_slice
and dynamic_update_slice, their starts clamped as JAX's; values against JAX's semantics, vmap
over batched starts, and the errors."""
import numpy as np
import pytest
import scipy.special as sc

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.test_util import check_grads

from ..common import grid, Row, row_tests

RNG = np.random.default_rng(0)
TABLE = [
    Row("dynamic_slice", lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)) ** 2, [(3, 4)],
        grid(-2, 2, 0.01), unique=True),
    Row("dynamic_slice-clamped", lambda x: lax.dynamic_slice(x, (5, -1), (2, 3)) * x[0, 0], [(3, 4)],
        grid(-2, 2, 0.01), unique=True),
    Row("dynamic_slice_in_dim", lambda x: lax.dynamic_slice_in_dim(x, 1, 2, axis=1) ** 3, [(2, 4)],
        grid(-2, 2, 0.01), unique=True),
    Row("dynamic_index_in_dim", lambda x: lax.dynamic_index_in_dim(x, -1, 0, False) * x[0], [(3, 2)],
        grid(-2, 2, 0.01), unique=True),
    Row("dynamic_update_slice", lambda x, u: lax.dynamic_update_slice(x, u * u, (1, 0)) ** 2,
        [(3, 3), (2, 2)], grid(-2, 2, 0.01), unique=True),
    Row("dynamic_update_slice-clamped", lambda x, u: lax.dynamic_update_slice(x, fnp.sin(u), (9,)),
        [(5,), (2,)], grid(-2, 2, 0.01), unique=True),
]
test_row = row_tests(TABLE)


X = np.arange(20.0).reshape(4, 5)


@pytest.mark.parametrize("starts,sizes", [((1, 3), (2, 2)), ((0, 0), (4, 5)), ((-1, -2), (2, 2)),
                                          ((9, 9), (1, 3)), ((-9, 2), (3, 1))])
def test_dynamic_slice_values_clamp_like_jax(starts, sizes):
    # JAX 0.10: negative starts count from the end, then the start is clamped so it fits
    norm = [s + d if s < 0 else s for s, d in zip(starts, X.shape)]
    s = [min(max(v, 0), d - n) for v, d, n in zip(norm, X.shape, sizes)]
    want = X[s[0]:s[0] + sizes[0], s[1]:s[1] + sizes[1]]
    np.testing.assert_array_equal(lax.dynamic_slice(X, starts, sizes), want)
    np.testing.assert_array_equal(fxad.jit(lambda x, a, b: lax.dynamic_slice(
        x, (a, b), sizes))(X, *starts), want)
    u = -np.ones(sizes)
    got = fxad.jit(lambda x, a, b: lax.dynamic_update_slice(x, u, (a, b)))(X, *starts)
    want_u = X.copy()
    want_u[s[0]:s[0] + sizes[0], s[1]:s[1] + sizes[1]] = u
    np.testing.assert_array_equal(got, want_u)


def test_dynamic_slices_vmap_over_starts_and_operands_match_a_loop():
    xs = RNG.standard_normal((3, 4, 5))
    starts = np.array([[0, 4], [2, -1], [7, 1]])
    f = lambda x, s: lax.dynamic_slice(x, (s[0], s[1]), (2, 3))
    for in_axes in [(0, 0), (None, 0), (0, None)]:
        args = [xs if in_axes[0] == 0 else xs[0], starts if in_axes[1] == 0 else starts[1]]
        got = fxad.vmap(f, in_axes)(*args)
        want = np.stack([f(args[0][i] if in_axes[0] == 0 else args[0],
                           args[1][i] if in_axes[1] == 0 else args[1]) for i in range(3)])
        np.testing.assert_array_equal(got, want)
    g = lambda x, u, s: lax.dynamic_update_slice(x, u, (s[0], s[1]))
    us = RNG.standard_normal((3, 2, 2))
    for in_axes in [(0, 0, 0), (None, 0, 0), (0, None, 0), (0, 0, None), (None, None, 0)]:
        args = [xs if in_axes[0] == 0 else xs[0], us if in_axes[1] == 0 else us[0],
                starts if in_axes[2] == 0 else starts[1]]
        got = fxad.vmap(g, in_axes)(*args)
        want = np.stack([g(*[a[i] if ax == 0 else a for a, ax in zip(args, in_axes)])
                         for i in range(3)])
        np.testing.assert_array_equal(got, want)


def test_dynamic_slice_derivatives_with_batched_starts():
    starts = np.array([0, 2, 1])
    f = lambda x: fnp.sum(fxad.vmap(lambda s: lax.dynamic_slice_in_dim(x, s, 2) ** 2)(starts))
    check_grads(f, (RNG.standard_normal(4),), order=2)
    g = lambda x, u: fnp.sum(fxad.vmap(lambda s: lax.dynamic_update_slice_in_dim(
        x, u * u, s, 0) ** 2)(starts))
    check_grads(g, (RNG.standard_normal(4), RNG.standard_normal(2)), order=2)


def test_dynamic_slice_bad_arguments_name_the_fix():
    with pytest.raises(ValueError, match="one per dimension"):
        lax.dynamic_slice(X, (1,), (2, 2))
    with pytest.raises(ValueError, match="do not fit"):
        lax.dynamic_slice(X, (0, 0), (5, 1))
    with pytest.raises(TypeError, match="integer scalars"):
        fxad.jit(lambda x, s: lax.dynamic_slice(x, (s, 0), (1, 1)))(X, 1.5)
    with pytest.raises(ValueError, match="rank"):
        lax.dynamic_update_slice(X, np.ones(2), (0, 0))


@pytest.mark.parametrize("name,ours,ref", [
    ("cummax", lambda x: lax.cummax(x, 1), lambda x: np.maximum.accumulate(x, 1)),
    ("cummin", lambda x: lax.cummin(x, 0), lambda x: np.minimum.accumulate(x, 0)),
    ("cumlogsumexp", lambda x: lax.cumlogsumexp(x, 1), lambda x: np.logaddexp.accumulate(x, 1)),
    ("cumsum-reverse", lambda x: lax.cumsum(x, 1, reverse=True),
     lambda x: np.flip(np.cumsum(np.flip(x, 1), 1), 1)),
])
def test_running_reductions_values_vmap_jit(name, ours, ref):
    x = RNG.standard_normal((3, 6))
    np.testing.assert_allclose(ours(x), ref(x), rtol=1e-13)
    np.testing.assert_allclose(fxad.jit(ours)(x), ref(x), rtol=1e-13)
    np.testing.assert_allclose(fxad.vmap(ours, 2, 2)(np.stack([x, 2 * x], -1)),
                               np.stack([ref(x), ref(2 * x)], -1), rtol=1e-13)


def test_running_reductions_at_extreme_values():
    """Ties with -inf, infinities and huge values: finite, exact tangents (each output's
    tangent is a convex combination of the inputs' tangents: ones in, ones out)."""
    x = np.array([-np.inf, -np.inf, 0.0, -1000.0, 1e300, -1e300, np.inf])
    ones = np.ones_like(x)
    for f in (lambda v: lax.cummax(v, 0), lambda v: lax.cumlogsumexp(v, 0),
              lambda v: lax.cummin(v, 0, reverse=True)):
        y, t = fxad.jvp(f, (x,), (ones,))
        np.testing.assert_array_equal(t, ones)
    y = lax.cumlogsumexp(x, 0)
    np.testing.assert_array_equal(y, np.logaddexp.accumulate(x))


def test_cummax_ties_split_the_tangent():
    x = np.array([1.0, 1.0, 0.5, 1.0])
    _, t = fxad.jvp(lambda v: lax.cummax(v, 0), (x,), (np.array([4.0, 0.0, 9.0, 0.0]),))
    assert t[0] == 4.0 and t[2] == t[1] and 0 < t[1] < 4.0 and t[3] < t[1]


def test_top_k_values_order_and_nan():
    x = np.array([[3.0, np.nan, 1.0, 3.0, 7.0], [0.0, -1.0, 2.0, 2.0, -5.0]])
    v, i = lax.top_k(x, 3)
    np.testing.assert_array_equal(i, [[1, 4, 0], [2, 3, 0]])  # NaN largest; ties in order
    np.testing.assert_array_equal(v, np.take_along_axis(x, i, 1))
    v2, i2 = fxad.jit(lambda x: lax.top_k(x, 3))(x)
    np.testing.assert_array_equal(i2, i)
    vv, ii = fxad.vmap(lambda r: lax.top_k(r, 2))(x)
    np.testing.assert_array_equal(ii, i[:, :2])
    with pytest.raises(ValueError, match="k=6"):
        lax.top_k(x, 6)


def test_sort_several_operands_matches_lexsort():
    k1 = RNG.integers(0, 3, 12).astype(float)
    k2 = RNG.integers(0, 3, 12)
    v = RNG.standard_normal(12)
    got = lax.sort((k1, k2, v), num_keys=2)
    order = np.lexsort((k2, k1))
    for g, w in zip(got, (k1, k2, v)):
        np.testing.assert_array_equal(g, w[order])
    np.testing.assert_array_equal(fxad.jit(lambda a, b, c: lax.sort((a, b, c), num_keys=2)[2])(
        k1, k2, v), v[order])
    x = RNG.standard_normal((3, 4))
    np.testing.assert_array_equal(lax.sort(x, dimension=0), np.sort(x, 0))
    np.testing.assert_array_equal(fnp.lexsort((k2, k1)), order)
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort((k1, v), num_keys=3)


def test_i0_values_and_derivatives_against_scipy():
    x = np.array([-30.0, -2.0, -1e-300, 0.0, 0.5, 3.0, 700.0])
    np.testing.assert_allclose(fnp.i0(x), np.i0(x), rtol=1e-14)
    np.testing.assert_allclose(fxad.vmap(fxad.grad(fnp.i0))(x), sc.i1(x), rtol=1e-14)
    np.testing.assert_allclose(fxad.vmap(fxad.grad(fxad.grad(fnp.i0)))(x),
                               0.5 * (sc.i0(x) + sc.iv(2, x)), rtol=1e-13)
    assert fnp.i0(np.float32(1.0)).dtype == np.float32
    np.testing.assert_allclose(fxad.jit(fnp.i0)(x), np.i0(x), rtol=1e-14)


def test_checkpoint_name_is_the_identity_everywhere():
    x = RNG.standard_normal(3)
    f = lambda v: fxad.checkpoint_name(v, "a") * 2
    np.testing.assert_array_equal(f(x), 2 * x)
    np.testing.assert_array_equal(fxad.jit(f)(x), 2 * x)
    np.testing.assert_array_equal(fxad.vmap(f)(x), 2 * x)
    np.testing.assert_array_equal(fxad.grad(lambda v: fnp.sum(f(v)))(x), 2 * np.ones(3))
    assert "checkpoint_name" not in str(fxad.jit(f).lower(x).as_text())  # jit drops it

"""Rule table: the softmax primitive and its tangent map (fxad.rules.reduction.softmax):
values against NumPy (guards included), the same bits as the composite of lax operations
they replace, derivatives to order 2 in both modes, vmap against a loop, jit against eager."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.rules.reduction.softmax import softmax, softmax_tangent
from fxad.test_util import check_grads

from ..common import Row, floats, row_tests

TABLE = [
    Row("softmax-last", lambda x: softmax(x, -1), [(3, 4)], floats(-3, 3)),
    Row("softmax-first", lambda x: softmax(x, 0), [(3, 4)], floats(-3, 3)),
    Row("softmax-middle", lambda x: softmax(x, 1), [(2, 3, 4)], floats(-3, 3)),
    Row("softmax-vector", lambda x: softmax(x, 0), [(5,)], floats(-3, 3)),
    # the tangent map in both operands (its JVP in p is the softmax's second derivative)
    Row("tangent-last", lambda p, t: softmax_tangent(p, t, 1), [(3, 4), (3, 4)],
        floats(-2, 2)),
    Row("tangent-first", lambda p, t: softmax_tangent(p, t, 0), [(3, 4), (3, 4)],
        floats(-2, 2)),
    Row("softmax-of-softmax-tangent", lambda x, t: softmax_tangent(softmax(x, 1), t, 1),
        [(2, 5), (2, 5)], floats(-2, 2)),
]
test_row = row_tests(TABLE)


def _composite(x, axis):
    """The formula the primitive replaces, as lax operations (nn/attention.py before)."""
    m = lax.stop_gradient(fnp.max(x, axis=axis, keepdims=True))
    m = lax.select(lax.isfinite(m), m, 0.0)
    e = lax.exp(lax.sub(x, m))
    s = fnp.sum(e, axis=axis, keepdims=True)
    return lax.div(e, lax.select(lax.gt(s, 0), s, 1.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((4, 7), -1), ((4, 7), 0), ((2, 3, 5), 1),
                                        ((2, 1, 3, 6), 3)])
def test_values_match_numpy_and_the_composite_bit_for_bit(shape, axis, dtype):
    rng = np.random.default_rng(0)
    x = (4 * rng.standard_normal(shape)).astype(dtype)
    ct = rng.standard_normal(shape).astype(dtype)
    e = np.exp(x - x.max(axis, keepdims=True))
    want = e / e.sum(axis, keepdims=True)
    p = softmax(x, axis)
    assert p.dtype == dtype and p.shape == shape
    np.testing.assert_allclose(p, want, rtol=1e-6 if dtype == np.float32 else 1e-14)
    np.testing.assert_array_equal(p, _composite(x, axis))
    np.testing.assert_array_equal(softmax_tangent(p, ct, axis),
                                  p * (ct - (ct * p).sum(axis, keepdims=True)))
    np.testing.assert_array_equal(fxad.jit(lambda x: softmax(x, axis))(x), p)


def test_guards_rows_of_minus_inf_and_huge_logits():
    """A row of -inf gives zeros (and zero gradients), huge logits stay finite, -inf
    entries get weight 0: as the composite."""
    x = np.array([[-np.inf, -np.inf, -np.inf], [1e300, 1e300, -1e300], [0.0, -np.inf, 0.0]])
    p = softmax(x, 1)
    np.testing.assert_array_equal(p, [[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5]])
    np.testing.assert_array_equal(p, _composite(x, 1))
    g = fxad.grad(lambda x: fnp.sum(softmax(x, 1) * np.arange(3.0)))(x)
    assert np.all(np.isfinite(g)) and np.all(g[0] == 0)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gradients_agree_with_the_composite(axis):
    """The same function as the lax composite: first and second derivatives agree (the
    composite differentiates exp / sum / div; the primitive uses p * (t - sum(t * p)))."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    f = lambda f_: lambda x: fnp.sum(fnp.sin(f_(x, axis)) * w)  # noqa: E731
    for d in (fxad.grad, fxad.hessian):
        np.testing.assert_allclose(d(f(softmax))(x), d(f(_composite))(x), rtol=1e-12,
                                   atol=1e-13)
    check_grads(lambda x: softmax(x, axis), (x,), order=2, modes=("fwd", "rev"))


def test_tangent_map_is_its_own_transpose():
    """<u, J v> = <J u, v> for the tangent map J at p, and vjp gives J itself."""
    rng = np.random.default_rng(2)
    p = softmax(rng.standard_normal((3, 5)), 1)
    u, v = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    np.testing.assert_allclose(np.sum(u * softmax_tangent(p, v, 1)),
                               np.sum(softmax_tangent(p, u, 1) * v), rtol=1e-13)
    _, pb = fxad.vjp(lambda t: softmax_tangent(p, t, 1), v)
    np.testing.assert_allclose(pb(u)[0], softmax_tangent(p, u, 1), rtol=1e-14)
    lin = fxad.linear_transpose(lambda t: softmax_tangent(p, t, 1), v)
    np.testing.assert_allclose(lin(u)[0], softmax_tangent(p, u, 1), rtol=1e-14)


@pytest.mark.parametrize("in_axes", [(0, 0), (1, None), (None, 1), (2, 0)])
def test_tangent_map_vmap_matches_a_loop(in_axes):
    rng = np.random.default_rng(3)
    shapes = {0: (4, 3, 5), 1: (3, 4, 5), 2: (3, 5, 4), None: (3, 5)}
    p = rng.random(shapes[in_axes[0]])
    t = rng.standard_normal(shapes[in_axes[1]])
    got = fxad.vmap(lambda p, t: softmax_tangent(p, t, 1), in_axes)(p, t)
    take = lambda a, ax, i: a if ax is None else np.take(a, i, ax)  # noqa: E731
    want = np.stack([softmax_tangent(take(p, in_axes[0], i), take(t, in_axes[1], i), 1)
                     for i in range(4)])
    np.testing.assert_allclose(got, want, rtol=1e-14)

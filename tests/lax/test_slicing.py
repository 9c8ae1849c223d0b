"""fxad.lax's JAX-signature functions (fxad/lax/slicing.py): values against NumPy (or the JAX
semantics written out), derivatives by check_grads, vmap against a loop, jit against eager."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.test_util import check_grads

RNG = np.random.default_rng(3)


def ref_pad(x, v, config):
    """lax.pad written out: interior padding, then edges (negative ones crop)."""
    for ax, (lo, hi, inner) in enumerate(config):
        n = x.shape[ax]
        shape = list(x.shape)
        shape[ax] = n + max(n - 1, 0) * inner
        out = np.full(shape, v, x.dtype)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(0, None, inner + 1)
        out[tuple(idx)] = x
        lo_pad = [(0, 0)] * x.ndim
        lo_pad[ax] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, lo_pad, constant_values=v)
        crop = [slice(None)] * x.ndim
        crop[ax] = slice(-lo if lo < 0 else 0, out.shape[ax] + hi if hi < 0 else None)
        x = out[tuple(crop)]
    return x


@pytest.mark.parametrize("config", [[(1, 2, 0), (0, 0, 0)], [(1, -1, 1), (-2, 3, 2)],
                                    [(0, 0, 3), (2, -3, 0)], [(-1, -1, 0), (1, 1, 1)]])
def test_pad_negative_and_interior(config):
    x = RNG.standard_normal((3, 4))
    want = ref_pad(x, -7.0, config)
    np.testing.assert_array_equal(lax.pad(x, -7.0, config), want)
    np.testing.assert_array_equal(fxad.jit(lambda x, v: lax.pad(x, v, config))(x, -7.0), want)
    check_grads(lambda x, v: lax.pad(x, v, config) ** 2, (x, 0.5), order=2)
    got = fxad.vmap(lambda x: lax.pad(x, 1.0, config))(np.stack([x, -x]))
    np.testing.assert_array_equal(got, np.stack([ref_pad(x, 1.0, config),
                                                 ref_pad(-x, 1.0, config)]))


def test_pad_checks_its_config():
    with pytest.raises(ValueError, match="low, high, interior"):
        lax.pad(np.ones(3), 0.0, [(1, 1)])
    with pytest.raises(ValueError, match="low, high, interior"):
        lax.pad(np.ones(3), 0.0, [(1, 1, -1)])


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_matches_cumulative_ops(n, reverse):
    x = RNG.uniform(0.5, 1.5, (n, 2))
    flip = (lambda a: a[::-1]) if reverse else (lambda a: a)
    got = lax.associative_scan(lambda a, b: a * b, x, reverse=reverse)
    np.testing.assert_allclose(got, flip(np.cumprod(flip(x), 0)), rtol=1e-13)
    got = lax.associative_scan(lambda a, b: a + b, x.T, axis=1, reverse=reverse)
    np.testing.assert_allclose(got, flip(np.cumsum(flip(x), 0)).T, rtol=1e-13)
    check_grads(lambda v: lax.associative_scan(lambda a, b: a * b, v, reverse=reverse), (x,),
                order=2)


def test_associative_scan_on_pytrees_is_a_linear_recurrence():
    """(a, b) ∘ (c, d) = (a c, b c + d) composes y_t = a_t y_{t-1} + b_t."""
    a, b = RNG.uniform(0.5, 1.0, 7), RNG.standard_normal(7)
    def comb(p, q):
        return (p[0] * q[0], p[1] * q[0] + q[1])
    _, ys = lax.associative_scan(comb, (a, b))
    want, y = [], 0.0
    for t in range(7):
        y = a[t] * y + b[t]
        want.append(y)
    np.testing.assert_allclose(ys, want, rtol=1e-13)
    np.testing.assert_allclose(fxad.jit(lambda a, b: lax.associative_scan(comb, (a, b))[1])(a, b),
                               want, rtol=1e-13)
    with pytest.raises(TypeError, match="structure"):
        lax.associative_scan(lambda p, q: p[0], (a, b))


def test_map_with_and_without_batch_size():
    xs = RNG.standard_normal((7, 3))
    f = lambda v: {"s": fnp.sum(v ** 2), "v": fnp.sin(v)}
    want = {"s": np.sum(xs ** 2, 1), "v": np.sin(xs)}
    for bs in (None, 1, 2, 3, 7, 10):
        got = lax.map(f, xs, batch_size=bs)
        np.testing.assert_allclose(got["s"], want["s"], rtol=1e-13)
        np.testing.assert_allclose(got["v"], want["v"], rtol=1e-13)
    check_grads(lambda x: lax.map(lambda v: fnp.prod(v), x, batch_size=3), (xs,), order=2)


def test_clamp_values_and_derivative():
    x = np.array([-2.0, -0.5, 0.3, 0.9, 4.0])
    np.testing.assert_array_equal(lax.clamp(-1.0, x, 1.0), np.clip(x, -1, 1))
    np.testing.assert_array_equal(fxad.vmap(fxad.grad(lambda v: lax.clamp(-1.0, v, 1.0)))(x),
                                  [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(fxad.grad(lambda lo: fnp.sum(lax.clamp(lo, x, 1.0)))(-1.0),
                                  1.0)  # only -2.0 is below


def test_slicing_and_shape_helpers():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(lax.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2)), x[:, 1:3, ::2])
    np.testing.assert_array_equal(lax.slice_in_dim(x, 1, 3, axis=2), x[:, :, 1:3])
    np.testing.assert_array_equal(lax.index_in_dim(x, 2, 1, keepdims=False), x[:, 2])
    np.testing.assert_array_equal(lax.squeeze(x[:, :1], (1,)), x[:, 0])
    np.testing.assert_array_equal(lax.expand_dims(x, (0, 4)), x[None, ..., None])
    np.testing.assert_array_equal(lax.broadcast(x[0, 0], (2,)), np.broadcast_to(x[0, 0], (2, 4)))
    np.testing.assert_array_equal(lax.broadcast_in_dim(np.arange(3.0), (3, 2), (0,)),
                                  np.repeat(np.arange(3.0)[:, None], 2, 1))
    np.testing.assert_array_equal(lax.rev(x, (0, 2)), x[::-1, :, ::-1])
    np.testing.assert_array_equal(lax.collapse(x, 1), x.reshape(2, 12))
    np.testing.assert_array_equal(lax.iota(np.int32, 4), np.arange(4, dtype=np.int32))
    np.testing.assert_array_equal(lax.select_n(np.array([0, 2, 1]), np.zeros(3), np.ones(3),
                                               2 * np.ones(3)), [0, 2, 1])
    np.testing.assert_array_equal(lax.select_n(np.array([True, False]), np.zeros(2),
                                               np.ones(2)), [1, 0])
    np.testing.assert_array_equal(lax.argmax(x, 2, np.int32), np.argmax(x, 2))
    assert lax.argmax(x, 2, np.int32).dtype == np.int32
    np.testing.assert_allclose(lax.batch_matmul(x, np.swapaxes(x, 1, 2)),
                               x @ np.swapaxes(x, 1, 2))
    np.testing.assert_allclose(lax.dot(x[0], x[1].T), x[0] @ x[1].T)
    np.testing.assert_array_equal(lax.full((2,), 3.0), [3.0, 3.0])
    np.testing.assert_array_equal(lax.square(x[0]), x[0] ** 2)


def test_fori_loop_unroll_and_scan_reverse_unroll_are_accepted():
    got = lax.fori_loop(0, 4, lambda i, v: v * 2 + i, 1.0, unroll=2)
    assert got == ((((1 * 2 + 0) * 2 + 1) * 2 + 2) * 2 + 3)
    carry, ys = lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(4.0), reverse=True, unroll=3)
    np.testing.assert_array_equal(ys, [6.0, 5.0, 3.0, 0.0])


def test_traced_slice_bounds_name_dynamic_slice():
    with pytest.raises(fxad.errors.ConcretizationError, match="dynamic_slice"):
        fxad.jit(lambda x, i: x[i:i + 2])(np.arange(5.0), 1)
    f = lambda x, i: lax.dynamic_slice_in_dim(x, i, 2)
    np.testing.assert_array_equal(fxad.jit(f)(np.arange(5.0), 1), [1.0, 2.0])


def test_jax_spellings_and_small_helpers():
    x = np.arange(6.0).reshape(2, 3)
    a, b = lax.split(x, [1, 2], axis=1)
    np.testing.assert_array_equal(b, x[:, 1:])
    with pytest.raises(ValueError, match="add up"):
        lax.split(x, [1, 1], axis=1)
    np.testing.assert_array_equal(lax.stack([x, -x], axis=1), np.stack([x, -x], 1))
    np.testing.assert_array_equal(lax.unstack(x, 1)[2], x[:, 2])
    np.testing.assert_array_equal(lax.tile(x, (2, 2)), np.tile(x, (2, 2)))
    np.testing.assert_array_equal(lax.broadcasted_iota(np.int32, (2, 3), 0), [[0, 0, 0], [1, 1, 1]])
    assert lax.broadcast_to_rank(np.ones(3), 3).shape == (1, 1, 3)
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert bool(lax.reduce_and(x > -1, (0, 1))) and not bool(lax.reduce_or(x > 9, (0, 1)))
    np.testing.assert_allclose(lax.polygamma(1, 2.0), np.pi ** 2 / 6 - 1)
    np.testing.assert_allclose(lax.acos(0.5), np.arccos(0.5))
    np.testing.assert_allclose(lax.exp2(3.0), 8.0)
    check_grads(lambda v: lax.tile(v, (2,)) * lax.split(v, [1, 2])[0], (np.arange(1.0, 4.0),),
                order=2)

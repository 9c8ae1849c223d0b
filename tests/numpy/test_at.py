"""x.at[idx] (fxad/numpy/at.py): JAX's semantics for every update with static, traced and
repeated indices, the modes, exactness, derivatives, and fxad.numpy.at / indexable constants."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.test_util import check_grads

at = fnp.at
RNG = np.random.default_rng(11)
X = np.arange(1.0, 7.0)


def ref_update(x, idx, v, op):
    """The semantics written as a loop: every update applied in index order (set: the last
    one wins)."""
    out = x.copy()
    idx = np.asarray(idx)
    v = np.broadcast_to(v, idx.shape)
    for i, u in zip(idx.ravel(), v.ravel()):
        out[i] = {"set": u, "add": out[i] + u, "multiply": out[i] * u, "divide": out[i] / u,
                  "min": min(out[i], u), "max": max(out[i], u)}[op]
    return out


OPS = ["set", "add", "multiply", "divide", "min", "max"]
IDX = [np.array([0, 3, 5]), np.array([2, 2, 4, 2]), np.array([[1, 1], [0, 1]])]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("idx", IDX, ids=["distinct", "repeated", "2d-repeated"])
def test_updates_match_the_loop_eager_jit_traced_indices(op, idx):
    v = RNG.uniform(0.5, 3.0, idx.shape)
    want = ref_update(X, idx, v, op)
    f = lambda x, i, u: getattr(at(x)[i], op)(u)
    np.testing.assert_allclose(f(X, idx, v), want, rtol=1e-14)
    np.testing.assert_allclose(fxad.jit(f)(X, idx, v), want, rtol=1e-14)  # traced indices
    loop = np.stack([ref_update(X, i, v, op) for i in (idx, idx[::-1])])
    np.testing.assert_allclose(fxad.vmap(f, (None, 0, None))(X, np.stack([idx, idx[::-1]]), v),
                               loop, rtol=1e-14)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("idx", IDX, ids=["distinct", "repeated", "2d-repeated"])
def test_update_derivatives(op, idx):
    v = RNG.uniform(0.5, 3.0, idx.shape)
    check_grads(lambda x, u: getattr(at(x)[idx], op)(u) ** 2, (X + 0.25, v), order=2)
    check_grads(lambda x, u: fxad.jit(lambda x, i, u: getattr(at(x)[i], op)(u))(x, idx, u),
                (X + 0.25, v), order=1)


def test_set_with_a_traced_scalar_index_in_a_loop():
    """The first-hour failure: `.at[i].set` inside fori_loop (i traced even eagerly)."""
    body = lambda i, v: v.at[i].set(v[i - 1] * 2.0)
    got = lax.fori_loop(1, 5, body, fnp.ones(5))
    np.testing.assert_array_equal(got, [1, 2, 4, 8, 16])
    np.testing.assert_array_equal(fxad.jit(lambda v: lax.fori_loop(1, 5, body, v))(np.ones(5)),
                                  [1, 2, 4, 8, 16])
    g = fxad.grad(lambda s: fnp.sum(lax.fori_loop(1, 5, body, fnp.ones(5) * s)))(1.0)
    assert g == 31.0


def test_updates_are_exact():
    """No x + (v - x): a huge or infinite x is replaced exactly."""
    x = np.array([1e16, np.inf, -np.inf, np.nan, 2.0])
    got = at(x)[np.array([0, 1, 2, 3])].set(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(got, [1.0, 2.0, 3.0, 4.0, 2.0])
    got = at(x)[np.array([0, 1])].multiply(1.0)
    np.testing.assert_array_equal(got, x)
    g = fxad.grad(lambda v: fnp.sum(at(x)[0].set(v) * at(x)[0].set(v)))(3.0)
    assert g == 6.0


def test_modes():
    x = np.arange(5.0)
    i = np.array([-1, -7, 9, 2])
    np.testing.assert_array_equal(at(x)[i].get(mode="clip"), [4, 0, 4, 2])
    np.testing.assert_array_equal(at(x)[i].get(mode="fill"), [4, np.nan, np.nan, 2])
    np.testing.assert_array_equal(at(x)[i].get(mode="fill", fill_value=-3), [4, -3, -3, 2])
    np.testing.assert_array_equal(at(x)[i].set(7.0, mode="clip"), [7, 1, 7, 3, 7])
    np.testing.assert_array_equal(at(x)[i].set(7.0, mode="drop"), [0, 1, 7, 3, 7])
    np.testing.assert_array_equal(at(x)[i].add(1.0, mode="fill"), [0, 1, 3, 3, 5])
    np.testing.assert_array_equal(at(np.arange(5))[7].get(mode="fill"), np.iinfo(np.int64).min)
    np.testing.assert_array_equal(at(x)[7].set(1.0, mode="drop"), x)
    f = fxad.jit(lambda x, i: at(x)[i].multiply(2.0, mode="drop"))
    np.testing.assert_array_equal(f(x, i), [0, 1, 4, 3, 8])
    with pytest.raises(IndexError):
        at(x)[9].get()
    with pytest.raises(ValueError, match="mode must be"):
        at(x)[1].get(mode="wrap")


def test_2d_indices_with_slices():
    a = np.arange(12.0).reshape(3, 4)
    i = np.array([2, 0, 2])
    v = np.arange(9.0).reshape(3, 3)
    want = a.copy()
    for r, row in zip(i, v):
        want[r, 1:] = row
    np.testing.assert_array_equal(at(a)[i, 1:].set(v), want)
    np.testing.assert_array_equal(fxad.jit(lambda a, i, v: at(a)[i, 1:].set(v))(a, i, v), want)
    check_grads(lambda a, v: at(a)[i, 1:].multiply(v), (a + 1, v + 1), order=2)


def test_power_and_apply_need_distinct_indices():
    with pytest.raises(TypeError, match="unique_indices=True"):
        at(X)[np.array([1, 1])].power(2.0)
    np.testing.assert_array_equal(at(X)[np.array([1, 3])].power(2.0), [1, 4, 3, 16, 5, 6])
    np.testing.assert_array_equal(at(X)[1:3].apply(np.negative), [1, -2, -3, 4, 5, 6])
    np.testing.assert_array_equal(at(X)[np.array([4, 0])].subtract(1.0), [0, 2, 3, 4, 4, 6])
    check_grads(lambda x: at(x)[1:3].apply(fnp.sin) * x, (X,), order=2)


def test_constants_from_fxad_numpy_take_traced_indices():
    one_hot = fxad.jit(lambda y: fnp.eye(4)[y])
    np.testing.assert_array_equal(one_hot(2), np.eye(4)[2])
    np.testing.assert_array_equal(fxad.vmap(lambda y: fnp.eye(3)[y])(np.array([0, 2])),
                                  np.eye(3)[[0, 2]])
    np.testing.assert_array_equal(fnp.zeros(6).at[2].add(3.0), [0, 0, 3, 0, 0, 0])
    np.testing.assert_array_equal(fxad.jit(lambda i, v: fnp.zeros(4).at[i].add(v))(1, 2.0),
                                  [0, 2, 0, 0])
    table = fnp.asarray(np.array([10.0, 20.0, 30.0]))
    np.testing.assert_array_equal(fxad.jit(lambda i: table[i] * 2)(np.array([2, 0])), [60, 20])
    np.testing.assert_array_equal(fxad.jit(lambda x: fnp.ones((2, 2)).T.dot(x))(np.ones(2)),
                                  [2, 2])
    # NumPy's own operations on them give plain ndarrays; fxad's results are plain too
    z = fnp.zeros(3)
    assert type(z + 1) is np.ndarray and type(np.sin(z)) is np.ndarray
    assert type(fxad.jit(lambda: fnp.ones(2))()) is np.ndarray
    assert repr(fnp.zeros(2)) == "array([0., 0.])"
    import pickle
    assert type(pickle.loads(pickle.dumps(fnp.zeros(2)))) is np.ndarray


def test_at_for_any_array_and_bad_values():
    np.testing.assert_array_equal(at(np.zeros(4))[np.array([1, 1, 3])].add(1.0), [0, 2, 0, 1])
    np.testing.assert_array_equal(at([1.0, 2.0])[0].set(5.0), [5.0, 2.0])
    with pytest.raises(ValueError, match="broadcast"):
        at(X)[np.array([0, 1])].set(np.ones(3))

"""The common jax.numpy functions with their common keyword arguments, as a table: each row
is (name, fxad call, NumPy call, argument shapes, derivative order). Values must equal
NumPy's; derivatives are checked against central differences (check_grads, both modes);
jit must agree with eager. `np_fn` is NumPy's own function with the same arguments, so a row
fails if fxad and NumPy disagree on what an option means."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.test_util import check_grads

RNG = np.random.default_rng(2024)
W = np.array([[True, False, True, True], [True, True, False, True], [False, True, True, True]])

# (name, fxad function, NumPy function, input shapes, derivative order (0: none))
KWARGS_TABLE = [
    ("sum-axis-keepdims", lambda x: fnp.sum(x, axis=1, keepdims=True, out=None),
     lambda x: np.sum(x, axis=1, keepdims=True, out=None), [(3, 4)], 2),
    ("sum-where-initial", lambda x: fnp.sum(x, axis=0, where=W, initial=1.0),
     lambda x: np.sum(x, axis=0, where=W, initial=1.0), [(3, 4)], 2),
    ("sum-dtype", lambda x: fnp.sum(x, dtype=np.float32),
     lambda x: np.sum(x, dtype=np.float32), [(3, 4)], 0),
    ("prod-axis", lambda x: fnp.prod(x, axis=-1, out=None), lambda x: np.prod(x, axis=-1),
     [(3, 4)], 2),
    ("mean-where", lambda x: fnp.mean(x, axis=1, where=W), lambda x: np.mean(x, axis=1, where=W),
     [(3, 4)], 2),
    ("mean-tuple-axis", lambda x: fnp.mean(x, axis=(0, 2), keepdims=True),
     lambda x: np.mean(x, axis=(0, 2), keepdims=True), [(2, 3, 2)], 2),
    ("var-ddof", lambda x: fnp.var(x, axis=0, ddof=1), lambda x: np.var(x, axis=0, ddof=1),
     [(3, 4)], 2),
    ("var-correction", lambda x: fnp.var(x, correction=1), lambda x: np.var(x, correction=1),
     [(3, 4)], 2),
    ("var-where", lambda x: fnp.var(x, axis=1, where=W), lambda x: np.var(x, axis=1, where=W),
     [(3, 4)], 2),
    ("std-where-correction", lambda x: fnp.std(x, axis=1, where=W, correction=1),
     lambda x: np.std(x, axis=1, where=W, correction=1), [(3, 4)], 2),
    ("std-mean", lambda x: fnp.std(x, axis=0, mean=fnp.mean(x, axis=0, keepdims=True)),
     lambda x: np.std(x, axis=0, mean=np.mean(x, axis=0, keepdims=True)), [(3, 4)], 2),
    ("max-initial", lambda x: fnp.max(x, axis=0, initial=-0.5, out=None),
     lambda x: np.max(x, axis=0, initial=-0.5), [(3, 4)], 2),
    ("min-where", lambda x: fnp.min(x, axis=1, where=W, initial=9.0),
     lambda x: np.min(x, axis=1, where=W, initial=9.0), [(3, 4)], 2),
    ("argmax-keepdims", lambda x: fnp.argmax(x, axis=1, keepdims=True, out=None),
     lambda x: np.argmax(x, axis=1, keepdims=True), [(3, 4)], 0),
    ("cumsum-dtype-out", lambda x: fnp.cumsum(x, axis=0, dtype=np.float64, out=None),
     lambda x: np.cumsum(x, axis=0, dtype=np.float64), [(3, 4)], 2),
    ("cumprod-none", lambda x: fnp.cumprod(x, out=None), lambda x: np.cumprod(x), [(2, 3)], 2),
    ("cumulative_sum", lambda x: fnp.cumulative_sum(x, axis=1, include_initial=True),
     lambda x: np.cumulative_sum(x, axis=1, include_initial=True), [(2, 3)], 2),
    ("cumulative_prod", lambda x: fnp.cumulative_prod(x, axis=0),
     lambda x: np.cumulative_prod(x, axis=0), [(3, 2)], 2),
    ("any-all", lambda x: fnp.any(x > 0, axis=0, out=None) & fnp.all(x < 2, axis=0),
     lambda x: np.any(x > 0, axis=0) & np.all(x < 2, axis=0), [(3, 4)], 0),
    ("reshape-shape", lambda x: fnp.reshape(x, shape=(4, 3)), lambda x: np.reshape(x, (4, 3)),
     [(3, 4)], 2),
    ("reshape-minus1", lambda x: fnp.reshape(x, (2, -1), order="C"),
     lambda x: np.reshape(x, (2, -1), order="C"), [(3, 4)], 2),
    ("sort-stable", lambda x: fnp.sort(x, axis=0, stable=True), lambda x: np.sort(x, 0, stable=True),
     [(3, 4)], 2),
    ("sort-kind-none", lambda x: fnp.sort(x, axis=None, kind="mergesort"),
     lambda x: np.sort(x, axis=None, kind="mergesort"), [(3, 4)], 2),
    ("sort-descending", lambda x: fnp.sort(x, axis=1, descending=True),
     lambda x: -np.sort(-x, axis=1), [(3, 4)], 2),
    ("argsort-stable", lambda x: fnp.argsort(np.round(x), axis=1, stable=True),
     lambda x: np.argsort(np.round(x), axis=1, stable=True), [(3, 4)], 0),
    ("take-axis", lambda x: fnp.take(x, np.array([2, 0, 2]), axis=1),
     lambda x: np.take(x, [2, 0, 2], axis=1), [(3, 4)], 2),
    ("take-wrap", lambda x: fnp.take(x, np.array([-5, 7, 1]), mode="wrap"),
     lambda x: np.take(x, [-5, 7, 1], mode="wrap"), [(3, 4)], 2),
    ("take-clip", lambda x: fnp.take(x, np.array([-5, 17, 1]), axis=None, mode="clip"),
     lambda x: np.take(x, [-5, 17, 1], mode="clip"), [(3, 4)], 2),
    ("take_along_axis", lambda x: fnp.take_along_axis(x, np.argsort(x, 1), axis=1),
     lambda x: np.take_along_axis(x, np.argsort(x, 1), axis=1), [(3, 4)], 2),
    ("concatenate-dtype", lambda x, y: fnp.concatenate([x, y], axis=1, dtype=np.float32),
     lambda x, y: np.concatenate([x, y], axis=1, dtype=np.float32), [(3, 4), (3, 2)], 0),
    ("concatenate-none", lambda x, y: fnp.concatenate((x, y), axis=None),
     lambda x, y: np.concatenate((x, y), axis=None), [(3, 4), (2,)], 2),
    ("stack-axis-dtype", lambda x, y: fnp.stack([x, y], axis=-1, dtype=np.float64),
     lambda x, y: np.stack([x, y], axis=-1, dtype=np.float64), [(3, 4), (3, 4)], 2),
    ("pad-constant", lambda x: fnp.pad(x, ((1, 2), (0, 1)), constant_values=-1.0),
     lambda x: np.pad(x, ((1, 2), (0, 1)), constant_values=-1.0), [(3, 4)], 2),
    ("pad-reflect", lambda x: fnp.pad(x, 2, mode="reflect"), lambda x: np.pad(x, 2, mode="reflect"),
     [(3, 4)], 2),
    ("pad-linear_ramp", lambda x: fnp.pad(x, ((2, 1), (1, 3)), mode="linear_ramp", end_values=2.0),
     lambda x: np.pad(x, ((2, 1), (1, 3)), mode="linear_ramp", end_values=2.0), [(3, 4)], 2),
    ("pad-maximum", lambda x: fnp.pad(x, 2, mode="maximum", stat_length=2),
     lambda x: np.pad(x, 2, mode="maximum", stat_length=2), [(3, 4)], 2),
    ("pad-minimum", lambda x: fnp.pad(x, ((1, 0), (2, 1)), mode="minimum"),
     lambda x: np.pad(x, ((1, 0), (2, 1)), mode="minimum"), [(3, 4)], 2),
    ("pad-mean", lambda x: fnp.pad(x, 1, mode="mean", stat_length=((1, 2), (3, 1))),
     lambda x: np.pad(x, 1, mode="mean", stat_length=((1, 2), (3, 1))), [(3, 4)], 2),
    ("pad-median", lambda x: fnp.pad(x, (1, 2), mode="median"),
     lambda x: np.pad(x, (1, 2), mode="median"), [(3, 4)], 2),
    ("clip-min-max", lambda x: fnp.clip(x, min=-0.5, max=0.5),
     lambda x: np.clip(x, min=-0.5, max=0.5), [(3, 4)], 2),
    ("where-xy", lambda x, y: fnp.where(x > y, x, y), lambda x, y: np.where(x > y, x, y),
     [(3, 4), (4,)], 2),
    ("linspace-endpoint", lambda x: fnp.linspace(x[0], x[1], num=5, endpoint=False),
     lambda x: np.linspace(x[0], x[1], num=5, endpoint=False), [(2,)], 2),
    ("diff-prepend", lambda x: fnp.diff(x, n=2, axis=0, prepend=0.0),
     lambda x: np.diff(x, n=2, axis=0, prepend=0.0), [(3, 4)], 2),
    ("roll-axis", lambda x: fnp.roll(x, shift=(1, -1), axis=(0, 1)),
     lambda x: np.roll(x, shift=(1, -1), axis=(0, 1)), [(3, 4)], 2),
    ("moveaxis", lambda x: fnp.moveaxis(x, source=0, destination=-1),
     lambda x: np.moveaxis(x, 0, -1), [(2, 3, 4)], 2),
    ("rollaxis", lambda x: fnp.rollaxis(x, 2, start=1), lambda x: np.rollaxis(x, 2, start=1),
     [(2, 3, 4)], 2),
    ("split-sections", lambda x: fnp.split(x, [1, 3], axis=1)[1],
     lambda x: np.split(x, [1, 3], axis=1)[1], [(3, 4)], 2),
    ("vsplit", lambda x: fnp.vsplit(x, 3)[2], lambda x: np.vsplit(x, 3)[2], [(3, 4)], 2),
    ("hsplit", lambda x: fnp.hsplit(x, [1])[1], lambda x: np.hsplit(x, [1])[1], [(3, 4)], 2),
    ("dsplit", lambda x: fnp.dsplit(x, 2)[0], lambda x: np.dsplit(x, 2)[0], [(2, 2, 4)], 2),
    ("row_stack", lambda x, y: fnp.row_stack([x, y]), lambda x, y: np.vstack([x, y]),
     [(4,), (2, 4)], 2),
    ("cross-axes", lambda x, y: fnp.cross(x, y, axisa=0, axisb=1, axisc=0),
     lambda x, y: np.cross(x, y, axisa=0, axisb=1, axisc=0), [(3, 2), (2, 3)], 2),
    ("cross-2d", lambda x, y: fnp.cross(x, y), lambda x, y: np.cross(x, y), [(4, 2), (4, 3)], 2),
    ("tril_indices", lambda x: x[fnp.tril_indices(3, k=-1, m=4)],
     lambda x: x[np.tril_indices(3, k=-1, m=4)], [(3, 4)], 2),
    ("triu_indices_from", lambda x: x[fnp.triu_indices_from(x, k=1)],
     lambda x: x[np.triu_indices_from(x, k=1)], [(3, 4)], 2),
    ("fill_diagonal", lambda x: fnp.fill_diagonal(x, np.array([7.0, 8.0]), wrap=False,
                                                  inplace=False),
     lambda x: (lambda c: (np.fill_diagonal(c, [7.0, 8.0]), c)[1])(x.copy()), [(3, 4)], 2),
    ("fill_diagonal-wrap", lambda x: fnp.fill_diagonal(x, 0.0, wrap=True),
     lambda x: (lambda c: (np.fill_diagonal(c, 0.0, wrap=True), c)[1])(x.copy()), [(7, 3)], 2),
    ("nonzero-size", lambda x: fnp.nonzero(x > 0, size=8, fill_value=-1)[1],
     lambda x: np.pad(np.nonzero(x > 0)[1], (0, max(0, 8 - np.count_nonzero(x > 0))),
                      constant_values=-1)[:8], [(3, 4)], 0),
    ("unique-size", lambda x: fnp.unique(np.round(x), size=9, fill_value=99.0),
     lambda x: np.pad(np.unique(np.round(x)), (0, 9), constant_values=99.0)[:9], [(3, 4)], 0),
    ("unique-counts", lambda x: fnp.unique(np.round(x), return_counts=True, size=6)[1],
     lambda x: np.pad(np.unique(np.round(x), return_counts=True)[1], (0, 6))[:6], [(3, 4)], 0),
    ("histogram", lambda x: fnp.histogram(x, bins=4, range=(-2, 2))[0],
     lambda x: np.histogram(x, bins=4, range=(-2, 2))[0], [(3, 4)], 0),
    ("histogram-weights", lambda x, w: fnp.histogram(x, bins=3, weights=w, density=True)[0],
     lambda x, w: np.histogram(x, bins=3, weights=w, density=True)[0], [(6,), (6,)], 0),
    ("i0", lambda x: fnp.i0(x), lambda x: np.i0(x), [(3, 4)], 2),
    ("unwrap", lambda x: fnp.unwrap(4 * x, axis=0), lambda x: np.unwrap(4 * x, axis=0),
     [(3, 4)], 2),
    ("unwrap-period", lambda x: fnp.unwrap(3 * x, period=2.0),
     lambda x: np.unwrap(3 * x, period=2.0), [(5,)], 2),
    ("polyadd", lambda x, y: fnp.polyadd(x, y), lambda x, y: np.polyadd(x, y), [(3,), (5,)], 2),
    ("polymul", lambda x, y: fnp.polymul(x, y), lambda x, y: np.polymul(x, y), [(3,), (4,)], 2),
    ("polyder", lambda x: fnp.polyder(x, m=2), lambda x: np.polyder(x, m=2), [(5,)], 2),
    ("polyint", lambda x: fnp.polyint(x, m=2, k=[1.0, 2.0]),
     lambda x: np.polyint(x, m=2, k=[1.0, 2.0]), [(4,)], 2),
    ("piecewise", lambda x: fnp.piecewise(x, [x < -0.5, x > 0.5], [lambda v: v ** 2, 3.0,
                                                                   lambda v: -v]),
     lambda x: np.piecewise(x, [x < -0.5, x > 0.5], [lambda v: v ** 2, 3.0, lambda v: -v]),
     [(3, 4)], 2),
    ("apply_along_axis", lambda x: fnp.apply_along_axis(lambda r: r[0] * fnp.sum(r ** 2), 1, x),
     lambda x: np.apply_along_axis(lambda r: r[0] * np.sum(r ** 2), 1, x), [(3, 4)], 2),
    ("apply_along_axis-vector", lambda x: fnp.apply_along_axis(lambda r: r[::-1] * r[0], 0, x),
     lambda x: np.apply_along_axis(lambda r: r[::-1] * r[0], 0, x), [(3, 4)], 2),
    ("vectorize", lambda x, y: fnp.vectorize(lambda a, b: a * fnp.sin(b))(x, y),
     lambda x, y: np.vectorize(lambda a, b: a * np.sin(b))(x, y), [(3, 4), (4,)], 2),
    ("vectorize-signature", lambda x, y: fnp.vectorize(lambda a, b: fnp.dot(a, b),
                                                       signature="(n),(n)->()")(x, y),
     lambda x, y: np.vectorize(lambda a, b: np.dot(a, b), signature="(n),(n)->()")(x, y),
     [(3, 4), (4,)], 2),
    ("r_", lambda x, y: fnp.r_[x, 0.5, y], lambda x, y: np.r_[x, 0.5, y], [(3,), (2,)], 2),
    ("c_", lambda x, y: fnp.c_[x, y], lambda x, y: np.c_[x, y], [(3,), (3,)], 2),
    ("matrix_norm", lambda x: fnp.linalg.matrix_norm(x, ord=1, keepdims=True),
     lambda x: np.linalg.matrix_norm(x, ord=1, keepdims=True), [(2, 3, 4)], 2),
    ("vector_norm", lambda x: fnp.linalg.vector_norm(x, axis=(0, 1), ord=3),
     lambda x: np.linalg.vector_norm(x, axis=(0, 1), ord=3), [(2, 3, 4)], 2),
    ("linalg.trace", lambda x: fnp.linalg.trace(x, offset=1), lambda x: np.linalg.trace(x, offset=1),
     [(2, 3, 4)], 2),
    ("linalg.diagonal", lambda x: fnp.linalg.diagonal(x, offset=-1),
     lambda x: np.linalg.diagonal(x, offset=-1), [(2, 3, 4)], 2),
    ("linalg.cross", lambda x, y: fnp.linalg.cross(x, y, axis=0),
     lambda x, y: np.linalg.cross(x, y, axis=0), [(3, 2), (3, 2)], 2),
    ("tensorinv", lambda x: fnp.linalg.tensorinv(x + 4 * np.eye(4).reshape(4, 2, 2), ind=1),
     lambda x: np.linalg.tensorinv(x + 4 * np.eye(4).reshape(4, 2, 2), ind=1), [(4, 2, 2)], 2),
    ("tensorsolve", lambda x, b: fnp.linalg.tensorsolve(x + 4 * np.eye(6).reshape(2, 3, 6), b),
     lambda x, b: np.linalg.tensorsolve(x + 4 * np.eye(6).reshape(2, 3, 6), b),
     [(2, 3, 6), (2, 3)], 2),
    ("matvec", lambda x, y: fnp.matvec(x, y), lambda x, y: np.einsum("...ij,...j->...i", x, y),
     [(2, 3, 4), (4,)], 2),
    ("mean-of-list", lambda x, y: fnp.mean([x, y, x], axis=0), lambda x, y: np.mean([x, y, x], 0),
     [(3,), (3,)], 2),
]


def _args(shapes):
    return tuple(RNG.uniform(-1.5, 1.5, s) for s in shapes)


@pytest.mark.parametrize("name,f,np_f,shapes,order", KWARGS_TABLE, ids=[r[0] for r in KWARGS_TABLE])
def test_values_against_numpy_and_derivatives(name, f, np_f, shapes, order):
    args = _args(shapes)
    got, want = f(*args), np_f(*args)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    if np.asarray(want).dtype.kind in "fc":
        assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(fxad.jit(f)(*args), want, rtol=1e-12, atol=1e-12)
    if order:
        check_grads(f, args, order=order, modes=("fwd", "rev"))


def test_out_must_be_none():
    with pytest.raises(ValueError, match="out= must be None"):
        fnp.sum(np.ones(3), out=np.zeros(()))
    with pytest.raises(ValueError, match="ddof or correction"):
        fnp.var(np.ones(3), ddof=1, correction=1)


def test_reductions_take_lists_of_traced_values():
    g = fxad.grad(lambda x: fnp.mean([x, 2 * x, 3.0]))(1.0)
    assert g == 1.0
    np.testing.assert_allclose(fxad.vmap(lambda x: fnp.std([x, x ** 2]))(np.arange(3.0)),
                               [0.0, 0.0, 1.0])

"""vmap: the transformation's own behaviour. Every operation runs under vmap in its rule table's
row (tests/rules/common.py's vmap check: batch axis first and last, each argument unbatched in
turn, the output's batch axis last, against a loop over the examples); here: functions that
are not one operation (pytree outputs, constants, unused arguments), random batch sizes and
axes on the value-sensitive rows, the errors, nesting, and vmap's compositions with the
derivative transformations.
"""
from __future__ import annotations


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fxad
import fxad.numpy as fnp
from fxad.tree_util import tree_flatten, tree_unflatten
from tests.rules.common import Row, assert_tree_close
from tests.rules.test_coverage import TABLES

HSET = settings(max_examples=15, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _stacked(fn, args, in_axes, out_axes, n):
    """fn applied to each example's slices (plain NumPy), stacked leaf-wise at out_axes."""
    outs = [fn(*[a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, in_axes)])
            for b in range(n)]
    flat = [tree_flatten(o) for o in outs]
    return tree_unflatten(flat[0][1], [np.stack([np.asarray(f[0][i]) for f in flat],
                                                axis=out_axes)
                                       for i in range(len(flat[0][0]))])


# functions that are not one operation: vmap's handling of pytrees, constants, unused inputs
NOT_OPS = [
    Row("stop_gradient_api", lambda x: fxad.stop_gradient({"a": x, "b": x * 2}), [(4, 5)]),
    Row("identity", lambda x: x, [(4, 5)]),
    Row("constant_output", lambda x: 2.0, [(4, 5)]),
    Row("unused_second_arg", lambda x, y: fnp.sin(x), [(4, 5), (5,)]),
    Row("tuple_output", lambda x, y: (x * y, fnp.sum(x)), [(4, 5), (4, 5)]),
    Row("dict_output", lambda x: {"s": fnp.sin(x), "m": fnp.max(x, axis=0)}, [(4, 5)]),
]


@pytest.mark.parametrize("row", NOT_OPS, ids=[r.name for r in NOT_OPS])
@pytest.mark.parametrize("in_first,out_axes", [(0, 0), (-1, 0), (None, 0), (0, -1), (1, 0)])
def test_vmap_of_functions_that_are_not_one_operation(row, in_first, out_axes):
    n = 3
    in_axes = (in_first,) + (0,) * (len(row.shapes) - 1)
    if all(a is None for a in in_axes):
        return
    args = row.args(batch=n, axes=list(in_axes))
    want = _stacked(row.fn, args, in_axes, out_axes, n)
    got = fxad.vmap(row.fn, in_axes=in_axes[0] if len(in_axes) == 1 else in_axes,
                    out_axes=out_axes)(*args)
    assert_tree_close(got, want)


# Random batch sizes and axes (hypothesis) on the rows whose values are sensitive: domains,
# ties, indices given as batched arguments, broadcast batch dimensions.
_SPOT = {"log", "sqrt", "arctanh", "abs_ties", "sign_ties", "round_decimals", "max_ties",
         "min_ties", "power_float", "arctan2", "where", "index_arg_pair",
         "index_arg_nonadjacent", "matmul_bcast_batch", "einsum_3_chain", "floor_divide",
         "remainder", "max_axis(0, 2)", "argmax_axisNone", "argmin_axis1", "prod_axis1",
         "std_axis(0, 2)"}
SPOT_ROWS = list({r.name: r for m in TABLES.values() for r in m.TABLE
                  if r.name in _SPOT and r.vmap is True}.values())


def test_spot_rows_are_found():
    assert {r.name for r in SPOT_ROWS} == _SPOT


@pytest.mark.parametrize("row", SPOT_ROWS, ids=[r.name for r in SPOT_ROWS])
@HSET
@given(data=st.data())
def test_vmap_random_batch_sizes_and_axes(row, data):
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    n = data.draw(st.integers(1, 4), label="batch size")
    rng = np.random.default_rng(seed)
    in_axes = [data.draw(st.sampled_from([None] + list(range(-len(s) - 1, len(s) + 1))),
                         label=f"in_axis {i}") for i, s in enumerate(row.shapes)]
    if all(a is None for a in in_axes) or (row.traced_first and in_axes[0] is None):
        in_axes[0] = 0
    args = [d.draw(rng, s) if ax is None else
            np.stack([d.draw(rng, s) for _ in range(n)], axis=ax)
            for s, d, ax in zip(row.shapes, row.domains, in_axes)]
    want = _stacked(row.fn, args, in_axes, 0, n)
    got = fxad.vmap(row.fn, in_axes=in_axes[0] if len(in_axes) == 1 else tuple(in_axes))(*args)
    assert_tree_close(got, want, row.rtol, row.atol)


def test_integer_floor_divide_and_remainder_stay_integer():
    """NumPy: int // int and int % int are ints (and usable as indices); so per slice, and so
    under vmap."""
    i = np.arange(12).reshape(3, 4)
    out = fxad.vmap(lambda v: (v // 3, v % 3, fnp.remainder(v, 2), fnp.floor_divide(v, 2)))(i)
    for got, want in zip(out, (i // 3, i % 3, np.remainder(i, 2), np.floor_divide(i, 2))):
        assert got.dtype == want.dtype, f"{got.dtype} != {want.dtype}"
        np.testing.assert_array_equal(got, want)


def test_mixed_numpy_bool_and_traced_bool_operators():
    """`ndarray & tracer` and `ndarray | tracer` (NumPy bools on the left) behave like
    `tracer & ndarray`: NumPy dispatches np.bitwise_and/np.bitwise_or to the tracer."""
    m = np.array([True, False, True, False])
    t = np.array([[True, True, False, False]] * 3)
    np.testing.assert_array_equal(fxad.vmap(lambda y: m & y)(t), m & t)
    np.testing.assert_array_equal(fxad.vmap(lambda y: m | y)(t), m | t)


# --- error behaviour ----------------------------------------------------------------------------

def test_inconsistent_sizes_raise():
    with pytest.raises(fxad.errors.FxadValueError):
        fxad.vmap(fnp.add)(np.ones((3, 2)), np.ones((4, 2)))


def test_out_axes_none_on_batched_output_raises():
    with pytest.raises(fxad.errors.FxadValueError):
        fxad.vmap(fnp.sin, out_axes=None)(np.ones((3, 2)))


def test_in_axes_out_of_range_raises():
    with pytest.raises(fxad.errors.FxadValueError):
        fxad.vmap(fnp.sin, in_axes=2)(np.ones((3, 2)))


def test_out_axes_none_for_unbatched_output():
    w = np.arange(4.0)
    out = fxad.vmap(lambda x, w: (x * 2, w + 1), in_axes=(0, None), out_axes=(0, None))(
        np.ones((3, 2)), w)
    np.testing.assert_array_equal(out[0], 2 * np.ones((3, 2)))
    np.testing.assert_array_equal(out[1], w + 1)


# --- compositions --------------------------------------------------------------------------------

def f_mix(x, y):
    return fnp.sum(fnp.tanh(x) * y, axis=-1) + fnp.max(x) * fnp.mean(y ** 2)


@HSET
@given(seed=st.integers(0, 2**32 - 1), ax_out=st.sampled_from([0, 1, -1]),
       ax_in=st.sampled_from([0, 1, -1]))
def test_nested_vmap(seed, ax_out, ax_in):
    rng = np.random.default_rng(seed)
    # outer batch 2, inner batch 3, per-example (4,) and (4,)
    x = rng.normal(size=(2, 3, 4))
    y = rng.normal(size=(2, 3, 4))
    xo = np.moveaxis(x, 0, ax_out)  # outer axis placed at ax_out
    yo = y  # y: outer axis 0
    # inner axis of each outer slice moved to ax_in
    inner = fxad.vmap(f_mix, in_axes=(ax_in, 0))
    vv = fxad.vmap(lambda a, b: inner(np.moveaxis(a, 0, ax_in) if not isinstance(a, fxad.Tracer)
                                      else fnp.moveaxis(a, 0, ax_in), b),
                   in_axes=(ax_out, 0))
    out = vv(xo, yo)
    expected = np.array([[f_mix(x[i, j], y[i, j]) for j in range(3)] for i in range(2)])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_nested_vmap_outer_product_style():
    x, y = np.arange(3.0), np.arange(4.0) + 1.0
    out = fxad.vmap(fxad.vmap(lambda a, b: a * b + fnp.sin(a), in_axes=(None, 0)),
                    in_axes=(0, None))(x, y)
    np.testing.assert_allclose(out, x[:, None] * y[None, :] + np.sin(x)[:, None])


def test_nested_vmap_out_axes():
    x = np.random.default_rng(0).normal(size=(2, 3, 4))
    out = fxad.vmap(fxad.vmap(lambda v: v * 2.0, out_axes=1), in_axes=1, out_axes=-1)(x)
    # inner maps axis 0 of the (2, 4) slices, placing it at 1: (4, 2); outer at -1: (4, 2, 3)
    expected = np.stack([(x[:, j, :] * 2.0).T for j in range(3)], axis=-1)
    assert out.shape == expected.shape == (4, 2, 3)
    np.testing.assert_allclose(out, expected)


def test_triple_nested_vmap():
    x = np.random.default_rng(1).normal(size=(2, 3, 4, 5))
    out = fxad.vmap(fxad.vmap(fxad.vmap(fnp.sum)))(x)
    np.testing.assert_allclose(out, x.sum(-1))


def test_pytree_in_axes_dict_with_none():
    rng = np.random.default_rng(2)
    params = {"w": rng.normal(size=(4, 5)), "b": rng.normal(size=(3, 4))}

    def f(p, x):
        return fnp.tanh(p["w"] @ x + p["b"])

    xs = rng.normal(size=(5, 3))  # batch on axis 1
    out = fxad.vmap(f, in_axes=({"w": None, "b": 0}, 1))(params, xs)
    expected = np.stack([np.tanh(params["w"] @ xs[:, i] + params["b"][i]) for i in range(3)])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_pytree_in_axes_tuple_with_none():
    rng = np.random.default_rng(3)
    a, b, c = rng.normal(size=(4,)), rng.normal(size=(4, 3)), rng.normal(size=(3, 4))

    def f(pair, c):
        u, v = pair
        return {"dot": fnp.dot(u, v), "sum": u + c}

    out = fxad.vmap(f, in_axes=((None, 1), 0), out_axes={"dot": 0, "sum": 1})((a, b), c)
    exp_dot = np.array([a @ b[:, i] for i in range(3)])
    exp_sum = np.stack([a + c[i] for i in range(3)], axis=1)
    np.testing.assert_allclose(out["dot"], exp_dot)
    np.testing.assert_allclose(out["sum"], exp_sum)


def test_pytree_in_axes_list_prefix():
    x, y = np.ones((3, 2)), np.arange(2.0)
    out = fxad.vmap(lambda x, y: x + y, in_axes=[0, None])(x, y)
    np.testing.assert_allclose(out, x + y)


def test_axis_size_with_no_batched_input():
    w = np.arange(4.0)
    out = fxad.vmap(lambda w: fnp.sin(w) * 2.0, in_axes=None, axis_size=3)(w)
    np.testing.assert_allclose(out, np.broadcast_to(np.sin(w) * 2.0, (3, 4)))
    out = fxad.vmap(lambda: np.ones(2), axis_size=5)()
    assert out.shape == (5, 2)


def test_axis_size_mismatch_raises():
    with pytest.raises(fxad.errors.FxadValueError):
        fxad.vmap(fnp.sin, axis_size=4)(np.ones((3, 2)))


def test_no_batched_input_without_axis_size_raises():
    with pytest.raises(fxad.errors.FxadValueError):
        fxad.vmap(fnp.sin, in_axes=None)(np.ones((3, 2)))


def g_scalar(x):
    return fnp.sum(fnp.sin(x) * x ** 2) + fnp.prod(fnp.cos(x[:2])) + fnp.max(x)


def g_grad(x):
    """Analytic gradient of g_scalar (x has distinct entries, so max has one winner)."""
    g = np.cos(x) * x ** 2 + 2 * x * np.sin(x)
    c = np.cos(x[:2])
    g[0] += -np.sin(x[0]) * c[1]
    g[1] += -np.sin(x[1]) * c[0]
    g[np.argmax(x)] += 1.0
    return g


@HSET
@given(seed=st.integers(0, 2**32 - 1), axis=st.sampled_from([0, 1, -1]))
def test_vmap_of_grad(seed, axis):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3, 5))
    out = fxad.vmap(fxad.grad(g_scalar), in_axes=axis if axis == 0 else 1, out_axes=axis)(
        X if axis == 0 else X.T)
    expected = np.stack([g_grad(x) for x in X], axis=axis)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)


@HSET
@given(seed=st.integers(0, 2**32 - 1))
def test_grad_of_sum_of_vmap(seed):
    X = np.random.default_rng(seed).normal(size=(3, 5))
    out = fxad.grad(lambda X: fnp.sum(fxad.vmap(g_scalar)(X)))(X)
    np.testing.assert_allclose(out, np.stack([g_grad(x) for x in X]), rtol=1e-10, atol=1e-12)


def test_grad_of_vmap_in_axes_1():
    X = np.random.default_rng(4).normal(size=(5, 3))
    out = fxad.grad(lambda X: fnp.sum(fxad.vmap(g_scalar, in_axes=1)(X) ** 2))(X)
    vals = np.array([g_scalar(X[:, i]) for i in range(3)])
    expected = np.stack([2 * vals[i] * g_grad(X[:, i]) for i in range(3)], axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)


def h_vec(x):
    return fnp.tanh(x) * fnp.sum(x ** 2)


def h_jac(x):
    t = np.tanh(x)
    return np.diag((1 - t ** 2) * np.sum(x ** 2)) + np.outer(t, 2 * x)


@HSET
@given(seed=st.integers(0, 2**32 - 1))
def test_jvp_of_vmap(seed):
    rng = np.random.default_rng(seed)
    X, V_ = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    out, tout = fxad.jvp(fxad.vmap(h_vec), (X,), (V_,))
    np.testing.assert_allclose(out, np.stack([h_vec(x) for x in X]), rtol=1e-12)
    np.testing.assert_allclose(tout, np.stack([h_jac(x) @ v for x, v in zip(X, V_)]),
                               rtol=1e-10, atol=1e-12)


@HSET
@given(seed=st.integers(0, 2**32 - 1))
def test_vmap_of_jvp(seed):
    rng = np.random.default_rng(seed)
    X, V_ = rng.normal(size=(3, 4)), rng.normal(size=(4, 3))  # tangents batched on axis 1
    out, tout = fxad.vmap(lambda x, v: fxad.jvp(h_vec, (x,), (v,)), in_axes=(0, 1))(X, V_)
    np.testing.assert_allclose(out, np.stack([h_vec(x) for x in X]), rtol=1e-12)
    np.testing.assert_allclose(tout, np.stack([h_jac(x) @ V_[:, i] for i, x in enumerate(X)]),
                               rtol=1e-10, atol=1e-12)


def test_vmap_of_jvp_unbatched_primal():
    rng = np.random.default_rng(5)
    x, Vs = rng.normal(size=4), rng.normal(size=(3, 4))
    tout = fxad.vmap(lambda v: fxad.jvp(h_vec, (x,), (v,))[1])(Vs)
    np.testing.assert_allclose(tout, Vs @ h_jac(x).T, rtol=1e-10, atol=1e-12)


@HSET
@given(seed=st.integers(0, 2**32 - 1))
def test_vmap_of_linearized_function(seed):
    rng = np.random.default_rng(seed)
    x, Vs = rng.normal(size=4), rng.normal(size=(3, 4))
    y, f_jvp = fxad.linearize(h_vec, x)
    np.testing.assert_allclose(y, h_vec(x))
    out = fxad.vmap(lambda v: fxad.linearize(h_vec, x)[1](v))(Vs)
    np.testing.assert_allclose(out, Vs @ h_jac(x).T, rtol=1e-10, atol=1e-12)
    out2 = fxad.vmap(f_jvp, in_axes=1, out_axes=1)(Vs.T)
    np.testing.assert_allclose(out2, h_jac(x) @ Vs.T, rtol=1e-10, atol=1e-12)


def test_vmap_of_vjp():
    rng = np.random.default_rng(6)
    x, Cs = rng.normal(size=4), rng.normal(size=(3, 4))
    _, f_vjp = fxad.vjp(h_vec, x)
    out = fxad.vmap(lambda c: f_vjp(c)[0])(Cs)
    np.testing.assert_allclose(out, Cs @ h_jac(x), rtol=1e-10, atol=1e-12)


def logistic_loss(w, x, y):
    z = fnp.dot(x, w)
    return fnp.log1p(fnp.exp(-fnp.abs(z))) + fnp.maximum(z, 0.0) - y * z


@HSET
@given(seed=st.integers(0, 2**32 - 1))
def test_per_example_gradients_logistic_regression(seed):
    rng = np.random.default_rng(seed)
    w, X = rng.normal(size=5), rng.normal(size=(7, 5))
    y = (rng.uniform(size=7) < 0.5).astype(np.float64)
    out = fxad.vmap(fxad.grad(logistic_loss), in_axes=(None, 0, 0))(w, X, y)
    loop = np.stack([fxad.grad(logistic_loss)(w, X[i], y[i]) for i in range(7)])
    analytic = (1.0 / (1.0 + np.exp(-X @ w)) - y)[:, None] * X
    np.testing.assert_allclose(out, loop, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out, analytic, rtol=1e-10, atol=1e-12)


def test_per_example_gradients_batch_axis_1():
    rng = np.random.default_rng(7)
    w, X, y = rng.normal(size=5), rng.normal(size=(5, 6)), (rng.uniform(size=6) < .5) * 1.0
    out = fxad.vmap(fxad.grad(logistic_loss), in_axes=(None, 1, 0), out_axes=1)(w, X, y)
    loop = np.stack([fxad.grad(logistic_loss)(w, X[:, i], y[i]) for i in range(6)], axis=1)
    np.testing.assert_allclose(out, loop, rtol=1e-12, atol=1e-14)


# scatter_add (the transpose of getitem) is reached through grad of an indexing function.

def _index_grad_ref(x_shape, idx_fn, x, w):
    """Gradient of sum(w * x[idx]) by hand: np.add.at of w into zeros."""
    g = np.zeros(x_shape)
    np.add.at(g, idx_fn(), w)
    return g


@pytest.mark.parametrize("index", [
    lambda i: (i,),
    lambda i: (slice(None), i),
    lambda i: (slice(1, None), i, 2),
    lambda i: (i, slice(None), i + 1),  # non-adjacent advanced indices
    lambda i: (Ellipsis, i),
], ids=["rows", "cols", "mixed", "nonadjacent", "ellipsis"])
@pytest.mark.parametrize("x_ax,i_ax", [(0, None), (None, 0), (0, 0), (None, 1), (-1, 1)],
                         ids=["x", "idx", "both", "idx_axis1", "both_axes_last"])
def test_vmap_grad_through_scatter_add(index, x_ax, i_ax):
    rng = np.random.default_rng(8)
    x_shape = (4, 4, 4)
    X = rng.normal(size=(3,) + x_shape)
    I = np.array([[0, 2, 2], [1, 1, 0], [2, 0, 0]])  # repeated indices: add.at accumulates
    W = rng.normal(size=np.zeros(x_shape)[index(I[0])].shape)

    def loss(x, i):
        return fnp.sum(fnp.sin(x[index(i)]) * W)

    xs = X[0] if x_ax is None else np.moveaxis(X, 0, x_ax)
    idx = I[0] if i_ax is None else np.moveaxis(I, 0, i_ax)
    out = fxad.vmap(fxad.grad(loss), in_axes=(x_ax, i_ax))(xs, idx)
    expected = []
    for b in range(3):
        xb = X[0] if x_ax is None else X[b]
        ib = I[0] if i_ax is None else I[b]
        g = np.zeros(x_shape)
        np.add.at(g, index(ib), np.cos(xb[index(ib)]) * W)
        expected.append(g)
    np.testing.assert_allclose(out, np.stack(expected), rtol=1e-12, atol=1e-14)


def test_vmap_grad_scatter_add_batch_axis_last():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(5, 4, 3))  # batch axis last
    I = np.array([[0, 0, 4], [1, 3, 3]]).T  # (3, 2): batch axis 0
    loss = lambda x, i: fnp.sum(x[i] ** 2)
    out = fxad.vmap(fxad.grad(loss), in_axes=(-1, 0), out_axes=-1)(X, I)
    expected = []
    for b in range(3):
        g = np.zeros((5, 4))
        np.add.at(g, I[b], 2 * X[..., b][I[b]])
        expected.append(g)
    np.testing.assert_allclose(out, np.stack(expected, axis=-1), rtol=1e-12)


def test_vmap_of_jacrev_and_hessian():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(3, 4))
    J = fxad.vmap(fxad.jacrev(h_vec))(X)
    np.testing.assert_allclose(J, np.stack([h_jac(x) for x in X]), rtol=1e-10, atol=1e-12)
    J2 = fxad.vmap(fxad.jacfwd(h_vec))(X)
    np.testing.assert_allclose(J2, J, rtol=1e-10, atol=1e-12)
    H = fxad.vmap(fxad.hessian(lambda x: fnp.sum(x ** 3)))(X)
    np.testing.assert_allclose(H, np.stack([np.diag(6 * x) for x in X]), rtol=1e-12)


def test_numpy_array_indexed_by_traced_indices_through_take():
    """take/take_along_axis accept a plain NumPy array with traced (batched) indices."""
    a = np.arange(12.0).reshape(3, 4)
    idx = np.array([0, 2, 1])
    got = fxad.vmap(lambda i: fnp.take(a, i, axis=1))(idx)
    np.testing.assert_array_equal(got, np.stack([a[:, i] for i in idx]))
    got = fxad.vmap(lambda i: fnp.take(a, i))(idx)
    np.testing.assert_array_equal(got, a.ravel()[idx])
    ii = np.array([[[1], [0], [3]], [[2], [2], [0]]])
    got = fxad.vmap(lambda i: fnp.take_along_axis(a, i, 1))(ii)
    np.testing.assert_array_equal(got, np.stack([np.take_along_axis(a, i, 1) for i in ii]))


def test_python_scalars_stay_weak_under_vmap_and_make_jaxpr():
    x32 = np.ones((2, 2), np.float32)
    f = lambda x, s: x * s  # noqa: E731
    assert fxad.vmap(f, in_axes=(0, None))(x32, 2.0).dtype == np.float32
    assert fxad.make_jaxpr(f)(x32, 2.0).out_avals[0].dtype == np.float32
    with pytest.raises(ValueError, match="scalar, which has no axis to map over; use None"):
        fxad.vmap(f, in_axes=(0, 0))(x32, 2.0)

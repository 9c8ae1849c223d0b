"""The fast paths added for the neural-network workloads give exactly what the plain paths
give: the branch-free `select` for large masks, `x @ W` for a stack of rows as one
contraction, the blocked im2col convolution, and max pooling's derivatives by masks (with
infinite cotangents and overlapping windows)."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.rules.elementwise.arithmetic import where
from fxad.rules._support import window_kernels

from ..common import floats, run_row


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int32,
                                   np.int8, np.uint16, np.bool_])
def test_branch_free_where_equals_numpy(dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((80, 70)) * 50).astype(dtype)
    b = (rng.standard_normal((70,)) * 50).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[0, :6] = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-45]
        b[:3] = [np.nan, -0.0, np.inf]
    m = rng.uniform(size=(80, 70)) > 0.5
    wide = (rng.standard_normal((3, 5000)) * 50).astype(dtype)  # a mask broadcast over it
    mw = rng.uniform(size=(1, 5000)) > 0.5
    for args in [(m, a, b), (m, a, 0.0), (m, 1, a), (m, b, a), (m, a, np.float64(2.5)),
                 (m, 3, 4), (m[:1].repeat(80, 0), a, b), (m, 0.0, a), (m, -0.0, a),
                 (m, a, -0.0), (m, 0, a), (m, a, np.zeros((), dtype)), (m, 0, 0),
                 (mw, wide, 0), (mw, 0.0, wide), (m, 0.0, b)]:
        got, want = where(*args), np.where(*args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        if got.dtype.kind == "f":  # the sign of zero survives too
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    src = np.ones((100, 100), a.dtype)
    out = where(rng.uniform(size=(100, 100)) > 0.5, src, a[0, 0])
    out[...] = 0  # a fresh, writeable array: the inputs are untouched
    assert (src == 1).all()


def test_select_uses_it_eagerly_under_jit_and_in_derivatives():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 100))
    f = lambda x: lax.select(lax.gt(x, 0), x * 2.0, -x)
    np.testing.assert_array_equal(f(x), np.where(x > 0, 2 * x, -x))
    np.testing.assert_array_equal(fxad.jit(f)(x), np.where(x > 0, 2 * x, -x))
    np.testing.assert_array_equal(fxad.grad(lambda x: f(x).sum())(x), np.where(x > 0, 2.0, -1.0))


def test_matmul_of_a_stack_of_rows_and_a_matrix():
    rng = np.random.default_rng(2)
    a, w = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((5, 6))
    np.testing.assert_allclose(fnp.matmul(a, w), a @ w, rtol=1e-14)
    prog = fxad.make_jaxpr(lambda a, w: fnp.matmul(a, w))(a, w)
    assert [e.primitive.name for e in prog.eqns] == ["dot_general"]  # no broadcast weight
    run_row(fnp.matmul, [(2, 2, 3), (3, 2)], floats(-2, 2))
    xs = rng.standard_normal((3, 2, 4, 5))
    np.testing.assert_allclose(fxad.vmap(fnp.matmul, (0, None))(xs, w), xs @ w, rtol=1e-14)
    np.testing.assert_allclose(fxad.vmap(fnp.matmul, (None, 0))(a, np.stack([w, 2 * w])),
                               np.stack([a @ w, a @ (2 * w)]), rtol=1e-14)


def test_blocked_im2col_matches_einsum_over_windows():
    """Large enough that the im2col runs in several blocks of examples (and with the
    last block partial); the reference is an einsum over NumPy's sliding windows."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((5, 40, 40, 8)), rng.standard_normal((5, 5, 8, 3))
    row = 36 * 36 * 25 * 8 * 8
    assert row > window_kernels._BLOCK_BYTES  # one example per block
    win = np.lib.stride_tricks.sliding_window_view(x, (5, 5), axis=(1, 2))
    want = np.einsum("npqcij,ijco->npqo", win, w)
    got = lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                   dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    got32 = lax.conv_general_dilated(x32, w32, (1, 1), "VALID",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("window,strides", [((2, 2), (2, 2)), ((3, 3), (1, 1)),
                                            ((2, 3), (2, 1))])
def test_pooling_derivatives_with_infinite_cotangents(window, strides):
    """Multiplying by masks would turn 0 * inf into NaN: infinite cotangents take the
    masked path and still put the infinity only where the maximum is."""
    x = np.random.default_rng(4).permutation(36).reshape(1, 6, 6, 1).astype(float)
    kw = dict(window_dimensions=(1,) + window + (1,), window_strides=(1,) + strides + (1,))
    y, pullback = fxad.vjp(lambda x: lax.reduce_window_max(x, **kw), x)
    ct = np.ones(y.shape)
    finite = pullback(ct)[0]
    ct_inf = ct.copy()
    ct_inf.flat[0] = np.inf
    got = pullback(ct_inf)[0]
    assert not np.isnan(got).any()
    hit = np.zeros_like(ct)
    hit.flat[0] = 1.0
    where_first = pullback(hit)[0] > 0  # the position the first window routes to
    assert np.isinf(got[where_first]).all()
    np.testing.assert_array_equal(got[~where_first], finite[~where_first])
    t = np.random.default_rng(5).standard_normal(x.shape)
    t.flat[int(np.argmax(x))] = np.inf  # the global maximum's tangent is infinite
    tan = fxad.jvp(lambda x: lax.reduce_window_max(x, **kw), (x,), (t,))[1]
    assert not np.isnan(tan).any() and np.isinf(tan).any()


# (forward input NHWC, kernel HWIO, strides, padding, rhs dilation): the filter transpose of
# this convolution, whose examples are the input's features; up to 4 of them take the
# (N, P, C, K) columns, more the (C, K, P, N) ones
FILTER_TRANSPOSES = [((6, 7, 5, 1), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),
                     ((4, 9, 8, 3), (2, 3), (2, 1), ((0, 1), (2, 0)), (1, 2)),
                     ((3, 10, 1), (4,), (3,), ((2, 1),), (2,)),
                     ((4, 6, 6, 5), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),
                     ((5, 9, 7, 6), (3, 2), (2, 3), ((1, 0), (0, 2)), (2, 1)),
                     ((2, 5, 4, 3, 7), (2, 2, 3), (1, 2, 1), ((1, 1), (0, 1), (1, 1)), (1, 1, 2))]


@pytest.mark.parametrize("xshape,ksize,strides,pads,kdil", FILTER_TRANSPOSES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("block", [window_kernels._BLOCK_BYTES, 1])
def test_filter_transpose_columns(monkeypatch, xshape, ksize, strides, pads, kdil, dtype, block):
    """conv_nsc on the filter transpose's operands as the rule makes them (transposed views
    of the forward input and the output cotangent) against the same numbers from
    contiguous copies (the general im2col path); in one block of examples and in blocks
    of one example."""
    monkeypatch.setattr(window_kernels, "_BLOCK_BYTES", block)
    rng = np.random.default_rng(6)
    d = len(ksize)
    out_sp = tuple(window_kernels.window_out_size(n, p, 1, k, b, s) for n, p, k, b, s in
                   zip(xshape[1:-1], pads, ksize, kdil, strides))
    x = rng.standard_normal(xshape).astype(dtype)
    ct = rng.standard_normal(xshape[:1] + out_sp + (2,)).astype(dtype)
    # as _ct_rhs builds them: x's features are the batch, ct is the kernel (its examples
    # the contracted features), the forward strides the kernel dilation
    perm = (d + 1,) + tuple(range(1, d + 1)) + (0,)
    xv, wv = x.transpose(perm), ct.transpose(tuple(range(1, d + 1)) + (0, d + 1))
    assert window_kernels._examples_inner(xv, wv, 1)
    args = (kdil, pads, (1,) * d, strides, 1, 1, dtype)
    got = window_kernels.conv_nsc(xv, wv, *args)
    xc, wc = np.ascontiguousarray(xv), np.ascontiguousarray(wv)
    assert not window_kernels._examples_inner(xc, wv, 1)
    assert not window_kernels._examples_inner(xv, wc, 1)
    assert not window_kernels._examples_inner(xv, wv, 2)  # groups: the general path
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for want in (window_kernels.conv_nsc(xc, wc, *args), window_kernels.conv_nsc(xv, wc, *args),
                 window_kernels.conv_nsc(xc, wv, *args)):
        assert got.dtype == want.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


# (input NHWC, kernel spatial, output features, strides, rhs dilation, padding): the
# forward im2col for up to 4 input features copies its columns as (K..., C, N, P...)
FEW_FEATURES = [((5, 12, 11, 1), (3, 3), 4, (1, 1), (1, 1), "SAME"),
                ((5, 13, 10, 3), (2, 3), 2, (2, 1), (1, 2), ((1, 0), (2, 1))),
                ((5, 9, 4), (3,), 3, (2,), (2,), "VALID"),
                ((5, 10, 9, 5), (3, 3), 2, (1, 2), (1, 1), "SAME")]  # 5: the other order


@pytest.mark.parametrize("xshape,ksize,o,strides,kdil,padding", FEW_FEATURES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_im2col_column_orders_in_blocks(monkeypatch, xshape, ksize, o, strides, kdil, padding,
                                        dtype):
    """Blocks of 2 examples (the last one partial) against an einsum over NumPy's sliding
    windows of the padded input."""
    d = len(ksize)
    rng = np.random.default_rng(8)
    x = rng.standard_normal(xshape)
    w = rng.standard_normal(ksize + (xshape[-1], o))
    layout = {1: ("NWC", "WIO", "NWC"), 2: ("NHWC", "HWIO", "NHWC")}[d]
    want = lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=kdil,
                                    dimension_numbers=layout)
    # the reference: einsum over the windows of the padded input
    pads = (lax.padtype_to_pads(xshape[1:-1], [(k - 1) * b + 1 for k, b in zip(ksize, kdil)],
                                strides, padding) if isinstance(padding, str) else padding)
    xp = np.pad(x, ((0, 0),) + tuple(pads) + ((0, 0),))
    win = np.lib.stride_tricks.sliding_window_view(
        xp, [(k - 1) * b + 1 for k, b in zip(ksize, kdil)], axis=tuple(range(1, d + 1)))
    win = win[(slice(None),) + tuple(slice(None, None, s) for s in strides) + (slice(None),)
              + tuple(slice(None, None, b) for b in kdil)]
    ref = np.einsum(win, [0] + list(range(1, d + 1)) + [9] + list(range(10, 10 + d)),
                    w, list(range(10, 10 + d)) + [9, 20],
                    [0] + list(range(1, d + 1)) + [20])
    np.testing.assert_allclose(want, ref, rtol=1e-12, atol=1e-12)
    pvol, kvol = int(np.prod(ref.shape[1:-1])), int(np.prod(ksize))
    monkeypatch.setattr(window_kernels, "_BLOCK_BYTES", 2 * pvol * kvol * xshape[-1] * 8)
    monkeypatch.setattr(window_kernels, "_MIN_ROWS", 1)
    got = lax.conv_general_dilated(x.astype(dtype), w.astype(dtype), strides, padding,
                                   rhs_dilation=kdil, dimension_numbers=layout)
    assert got.dtype == dtype
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)

"""Rule table and checks for conv_general_dilated (fxad/rules/contraction/conv.py) and the fxad.lax
convolution functions built on it.

One table of configurations (strides, padding modes, lhs/rhs dilation, feature and batch
groups, NCHW / NHWC / mixed layouts, 1-, 2- and 3-d) is run against a direct loop reference
written here, against JAX's own conv_general_dilated (float64), through check_grads to second
order in both modes (finite differences and the transpose identity), through vmap (lhs, rhs or
both batched) against a Python loop, and through jit against eager.
"""
import itertools

import numpy as np
import pytest

import fxad
from fxad import lax
from fxad.errors import FxadTypeError, FxadValueError
from fxad.rules._support import window_kernels

from ..common import check_vmap_matches_loop, floats, Row, row_tests

# name, lhs shape, rhs shape, keyword arguments of lax.conv_general_dilated
CONFIGS = [
    ("2d-valid", (2, 3, 6, 5), (4, 3, 3, 2), dict(window_strides=(1, 1), padding="VALID")),
    ("2d-same-strided", (2, 3, 7, 6), (4, 3, 3, 2), dict(window_strides=(2, 1), padding="SAME")),
    ("2d-same-lower", (1, 2, 6, 6), (3, 2, 2, 3), dict(window_strides=(1, 2),
                                                        padding="SAME_LOWER")),
    ("2d-explicit-negative", (2, 3, 7, 6), (4, 3, 3, 2),
     dict(window_strides=(2, 3), padding=((1, 2), (0, -1)))),
    ("2d-lhs-dilation", (2, 2, 4, 5), (3, 2, 3, 2),
     dict(window_strides=(1, 2), padding=((2, 1), (1, 1)), lhs_dilation=(2, 1))),
    ("2d-rhs-dilation", (1, 2, 8, 7), (3, 2, 3, 2),
     dict(window_strides=(1, 1), padding="SAME", rhs_dilation=(2, 3))),
    ("2d-both-dilations-strided", (2, 2, 5, 6), (2, 2, 2, 3),
     dict(window_strides=(2, 2), padding=((1, 0), (2, 1)), lhs_dilation=(2, 2),
          rhs_dilation=(1, 2))),
    ("2d-feature-groups", (2, 4, 6, 5), (6, 2, 3, 2),
     dict(window_strides=(1, 2), padding="SAME", feature_group_count=2, rhs_dilation=(2, 1))),
    ("2d-depthwise", (2, 3, 5, 5), (6, 1, 3, 3),
     dict(window_strides=(1, 1), padding="SAME", feature_group_count=3)),
    ("2d-batch-groups", (4, 3, 6, 5), (6, 3, 3, 2),
     dict(window_strides=(1, 1), padding=((2, 1), (1, 1)), batch_group_count=2,
          lhs_dilation=(1, 2))),
    ("nhwc-hwio", (2, 5, 6, 3), (3, 3, 3, 4),
     dict(window_strides=(1, 1), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ("nhwc-groups-nchw-out", (2, 5, 6, 4), (3, 2, 2, 6),
     dict(window_strides=(2, 1), padding="VALID", dimension_numbers=("NHWC", "HWIO", "NCHW"),
          feature_group_count=2)),
    # filter transposes of layers with 1 input feature and with 5 (window_kernels.conv_nsc's
    # two column orders for a filter transpose: up to 4 examples, and more)
    ("nhwc-one-feature", (3, 6, 5, 1), (3, 3, 1, 4),
     dict(window_strides=(1, 1), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ("nchw-one-feature-strided-dilated", (2, 1, 7, 6), (3, 1, 3, 2),
     dict(window_strides=(2, 1), padding=((1, 0), (2, 1)), rhs_dilation=(1, 2))),
    ("nhwc-five-features", (2, 5, 4, 5), (2, 3, 5, 2),
     dict(window_strides=(2, 1), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ("spatial-letters-swapped", (2, 5, 6, 4), (2, 3, 4, 6),
     dict(window_strides=(2, 1), padding="VALID", dimension_numbers=("NWHC", "WHIO", "CHWN"))),
    ("1d-dilated", (2, 3, 9), (2, 3, 4),
     dict(window_strides=(2,), padding=((3, 1),), rhs_dilation=(2,))),
    ("1d-nwc-batch-groups", (6, 8, 2), (3, 2, 4),
     dict(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC"),
          batch_group_count=2)),
    ("3d-same", (1, 2, 4, 5, 4), (2, 2, 2, 3, 2), dict(window_strides=(1, 2, 1), padding="SAME")),
    ("3d-ndhwc-dilated", (1, 4, 3, 5, 2), (2, 2, 2, 2, 3),
     dict(window_strides=(1, 1, 2), padding=((1, 1), (0, 1), (1, 0)), lhs_dilation=(1, 2, 1),
          dimension_numbers=("NDHWC", "DHWIO", "NDHWC"))),
]
IDS = [c[0] for c in CONFIGS]


def conv_of(kw):
    return lambda x, w: lax.conv_general_dilated(x, w, **kw)


TABLE = [(name, conv_of(kw), [ls, rs]) for name, ls, rs, kw in CONFIGS] + [
    ("conv-nchw", lambda x, w: lax.conv(x, w, (1, 2), "SAME"), [(2, 2, 4, 5), (3, 2, 2, 2)]),
    ("conv-transpose", lambda x, w: lax.conv_transpose(x, w, (2, 1), "SAME"),
     [(1, 3, 4, 2), (3, 2, 2, 3)]),
]


# --- the reference: loops over output positions, window offsets and features -------------

def conv_reference(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                   dimension_numbers=None, feature_group_count=1, batch_group_count=1):
    dn = lax.conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    x, w = np.transpose(lhs, dn.lhs_spec), np.transpose(rhs, dn.rhs_spec)  # NC..., OI...
    n, c = x.shape[:2]
    o, i_feat = w.shape[:2]
    d = x.ndim - 2
    lhs_dilation = lhs_dilation or (1,) * d
    rhs_dilation = rhs_dilation or (1,) * d
    if isinstance(padding, str):
        spans = [(k - 1) * b + 1 for k, b in zip(w.shape[2:], rhs_dilation)]
        padding = lax.padtype_to_pads(x.shape[2:], spans, window_strides, padding)
    dil = [(s - 1) * a + 1 for s, a in zip(x.shape[2:], lhs_dilation)]
    xd = np.zeros((n, c) + tuple(dil))
    xd[(slice(None), slice(None)) + tuple(slice(None, None, a) for a in lhs_dilation)] = x
    spans = [(k - 1) * b + 1 for k, b in zip(w.shape[2:], rhs_dilation)]
    out_sp = [max((L + lo + hi - k) // s + 1, 0) for L, (lo, hi), k, s in
              zip(dil, padding, spans, window_strides)]
    groups = feature_group_count * batch_group_count
    nb, og = n // batch_group_count, o // groups
    out = np.zeros((nb, o) + tuple(out_sp))
    for b_, oo in itertools.product(range(nb), range(o)):
        g = oo // og
        batch = g * nb + b_ if batch_group_count > 1 else b_
        feats = range(g * i_feat, (g + 1) * i_feat) if feature_group_count > 1 else range(c)
        for p in itertools.product(*[range(m) for m in out_sp]):
            acc = 0.0
            for k in itertools.product(*[range(s) for s in w.shape[2:]]):
                q = [pp * s + kk * b - lo for pp, s, kk, b, (lo, _) in
                     zip(p, window_strides, k, rhs_dilation, padding)]
                if all(0 <= qq < L for qq, L in zip(q, dil)):
                    acc += np.dot(xd[(batch, list(feats)) + tuple(q)], w[(oo, slice(None)) + k])
            out[(b_, oo) + p] = acc
    return np.transpose(out, np.argsort(dn.out_spec))


def _args(ls, rs, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(ls).astype(dtype), rng.standard_normal(rs).astype(dtype)


# --- values ------------------------------------------------------------------------------

@pytest.mark.parametrize("name,ls,rs,kw", CONFIGS, ids=IDS)
def test_values_match_the_loop_reference_eager_and_jit(name, ls, rs, kw):
    x, w = _args(ls, rs)
    want = conv_reference(x, w, **kw)
    got = lax.conv_general_dilated(x, w, **kw)
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fxad.jit(conv_of(kw))(x, w), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,ls,rs,kw", CONFIGS, ids=IDS)
def test_values_and_gradients_match_jax(name, ls, rs, kw):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x, w = _args(ls, rs, seed=1)
    np.testing.assert_allclose(lax.conv_general_dilated(x, w, **kw),
                               jax.lax.conv_general_dilated(x, w, **kw), rtol=1e-12, atol=1e-12)
    c = np.random.default_rng(2).standard_normal(lax.conv_general_dilated(x, w, **kw).shape)
    got = fxad.grad(lambda x, w: (conv_of(kw)(x, w) * c).sum(), (0, 1))(x, w)
    want = jax.grad(lambda x, w: (jax.lax.conv_general_dilated(x, w, **kw) * c).sum(),
                    (0, 1))(x, w)
    for g, h in zip(got, want):
        np.testing.assert_allclose(g, h, rtol=1e-12, atol=1e-12)


# --- derivatives ---------------------------------------------------------------------------

TABLE = [Row(n, f, s, floats(-2, 2)) for n, f, s in TABLE]
test_row = row_tests(TABLE)


def test_transposes_are_convolutions():
    """The backward program of a convolution is made of convolutions (no scatter, no
    dense matrices), as is the second-order one."""
    x, w = _args((2, 3, 6, 5), (4, 3, 3, 2))
    f = lambda x, w: (lax.conv_general_dilated(x, w, (2, 1), "SAME") ** 2).sum()
    for prog in (fxad.make_jaxpr(fxad.grad(f, (0, 1)))(x, w),
                 fxad.make_jaxpr(fxad.grad(lambda x, w: fxad.grad(f)(x, w).sum(), 1))(x, w)):
        names = {e.primitive.name for e in prog.eqns}
        assert "conv_general_dilated" in names
        assert not names & {"scatter_add", "getitem", "dot_general"}, names


def test_conv_transpose_with_transposed_kernel_is_the_gradient_of_conv():
    """conv_transpose(transpose_kernel=True) of a cotangent is the vjp of the forward conv
    with the same kernel, strides and 'SAME' padding (where the sizes line up)."""
    x, w = _args((2, 8, 6, 3), (3, 3, 3, 4))
    dn = ("NHWC", "HWIO", "NHWC")
    fwd = lambda x: lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=dn)
    y, pullback = fxad.vjp(fwd, x)
    ct = np.random.default_rng(3).standard_normal(y.shape)
    want = pullback(ct)[0]
    got = lax.conv_transpose(ct, w, (2, 2), "SAME", dimension_numbers=dn, transpose_kernel=True)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# --- vmap ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name,ls,rs,kw", CONFIGS, ids=IDS)
def test_vmap_matches_a_loop(name, ls, rs, kw):
    rng = np.random.default_rng(4)
    f = conv_of(kw)
    xs, ws = rng.standard_normal((3,) + ls), rng.standard_normal((3,) + rs)
    x, w = xs[0], ws[0]
    check_vmap_matches_loop(f, [ls, rs], rng)  # both batched, axis 0
    moved = fxad.vmap(f, (2, 1), out_axes=1)(np.moveaxis(xs, 0, 2), np.moveaxis(ws, 0, 1))
    for got, want in [
        (fxad.vmap(f, (0, None))(xs, w), [f(v, w) for v in xs]),
        (fxad.vmap(f, (None, 0))(x, ws), [f(x, v) for v in ws]),
        (np.moveaxis(moved, 1, 0), [f(a, b) for a, b in zip(xs, ws)]),
    ]:
        np.testing.assert_allclose(got, np.stack(want), rtol=1e-12, atol=1e-12)


def test_vmap_is_one_convolution():
    """Batching folds the vmapped axis into batch or groups: one conv in the program."""
    x, w = _args((3, 2, 2, 5, 5), (3, 4, 2, 3, 3))
    for axes in ((0, None), (None, 0), (0, 0)):
        prog = fxad.make_jaxpr(fxad.vmap(conv_of(dict(window_strides=(1, 1), padding="SAME")),
                                         axes))(x if axes[0] == 0 else x[0],
                                                w if axes[1] == 0 else w[0])
        assert sum(e.primitive.name == "conv_general_dilated" for e in prog.eqns) == 1


def test_per_example_gradients_match_a_loop():
    x, w = _args((4, 1, 3, 6, 5), (4, 3, 3, 2))
    f = lambda w, x: (lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=1)
                      ** 2).sum()
    got = fxad.vmap(fxad.grad(f), (None, 0))(w, x)
    want = np.stack([fxad.grad(f)(w, xi) for xi in x])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fxad.jit(fxad.vmap(fxad.grad(f), (None, 0)))(w, x), want,
                               rtol=1e-12, atol=1e-12)


# --- the FFT path, dtypes, the other lax functions -------------------------------------------

@pytest.mark.parametrize("name,ls,rs,kw", CONFIGS, ids=IDS)
def test_fft_path_matches_the_reference(name, ls, rs, kw, monkeypatch):
    """Forced onto the FFT path, every configuration agrees with the loop reference to
    FFT accuracy: errors relative to the largest output (FFT errors are normwise)."""
    monkeypatch.setattr(window_kernels, "use_fft", lambda *a: True)
    x, w = _args(ls, rs, seed=5)
    want = conv_reference(x, w, **kw)
    got = lax.conv_general_dilated(x, w, **kw)
    assert np.max(np.abs(got - want)) <= 1e-13 * max(np.max(np.abs(want)), 1.0)


def test_the_path_is_chosen_by_size():
    f64, f32, i64 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64)
    big = dict(nc=8 * 16, cg=16, o=16, g=1, span=(70, 70), ksize=(15, 15),
               rhs_dilation=(1, 1), out_sp=(56, 56))
    small = dict(big, ksize=(3, 3), out_sp=(68, 68))
    assert window_kernels.use_fft(f64, **big) and window_kernels.use_fft(f32, **big)
    assert not window_kernels.use_fft(f64, **small)
    assert not window_kernels.use_fft(i64, **big)  # integers stay exact


def test_dtypes():
    x, w = _args((2, 3, 5, 5), (4, 3, 2, 2), dtype=np.float32)
    y = lax.conv(x, w, (1, 1), "VALID")
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, conv_reference(x.astype(float), w.astype(float),
                                                 (1, 1), "VALID"), rtol=1e-5, atol=1e-5)
    assert fxad.grad(lambda w: lax.conv(x, w, (1, 1), "VALID").sum())(w).dtype == np.float32
    xi, wi = (np.arange(2 * 3 * 16).reshape(2, 3, 4, 4) - 40), np.arange(24).reshape(2, 3, 2, 2)
    yi = lax.conv(xi, wi, (1, 1), "SAME")
    assert yi.dtype == np.int64
    np.testing.assert_array_equal(yi, conv_reference(xi, wi, (1, 1), "SAME").astype(np.int64))
    y64 = lax.conv(x, w, (1, 1), "VALID", preferred_element_type=np.float64)
    assert y64.dtype == np.float64
    np.testing.assert_allclose(y64, conv_reference(x.astype(float), w.astype(float), (1, 1),
                                                   "VALID"), rtol=1e-12)
    xc = x + 1j * x[::-1]
    np.testing.assert_allclose(lax.conv(xc, w, (1, 1), "VALID"),
                               conv_reference(xc.real, w.astype(float), (1, 1), "VALID")
                               + 1j * conv_reference(xc.imag, w.astype(float), (1, 1), "VALID"),
                               rtol=1e-5, atol=1e-5)


def test_convenience_functions_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x, w = _args((2, 4, 7, 6), (3, 4, 3, 2), seed=6)
    close = lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    close(lax.conv(x, w, (2, 1), "SAME"), jax.lax.conv(x, w, (2, 1), "SAME"))
    close(lax.conv_with_general_padding(x, w, (1, 2), ((1, 2), (0, 1)), (2, 1), (1, 2)),
          jax.lax.conv_with_general_padding(x, w, (1, 2), ((1, 2), (0, 1)), (2, 1), (1, 2)))
    xt, wt = _args((2, 5, 4, 3), (3, 2, 3, 4), seed=7)  # NHWC / HWIO
    for pad, kw in [("SAME", {}), ("VALID", {}), (((1, 2), (0, 1)), {}),
                    (((1, 0), (2, 1)), dict(use_consistent_padding=True)),
                    ("SAME", dict(transpose_kernel=True, rhs_dilation=(1, 2)))]:
        k = np.swapaxes(wt, 2, 3) if kw.get("transpose_kernel") else wt  # I and O swap
        close(lax.conv_transpose(xt, k, (2, 3), pad, **kw),
              jax.lax.conv_transpose(xt, k, (2, 3), pad, **kw))
    xn = np.moveaxis(xt, 3, 1)
    close(lax.conv_transpose(xn, np.moveaxis(wt, (2, 3), (1, 0)), (2, 1), "SAME",
                             dimension_numbers=("NCHW", "OIHW", "NCHW")),
          jax.lax.conv_transpose(xn, np.moveaxis(wt, (2, 3), (1, 0)), (2, 1), "SAME",
                                 dimension_numbers=("NCHW", "OIHW", "NCHW")))
    for dn in (None, ("NHWC", "HWIO", "NHWC")):
        xx = x if dn is None else xt
        close(lax.conv_general_dilated_patches(xx, (2, 3), (1, 2), "SAME", dimension_numbers=dn),
              jax.lax.conv_general_dilated_patches(xx, (2, 3), (1, 2), "SAME",
                                                   dimension_numbers=dn))
    wl = np.random.default_rng(8).standard_normal((5, 4 * 6, 7, 3))
    close(lax.conv_general_dilated_local(x, wl, (1, 2), "SAME", (2, 3)),
          jax.lax.conv_general_dilated_local(x, wl, (1, 2), "SAME", (2, 3)))
    for args in [((2, 4, 7, 6), (3, 4, 3, 2), (2, 1), "SAME"),
                 ((2, 4, 7, 6), (3, 4, 3, 2), (1, 3), ((1, 0), (2, -1)))]:
        assert lax.conv_shape_tuple(*args) == tuple(jax.lax.conv_shape_tuple(*args))
    dn = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_shape_tuple((2, 7, 6, 4), (3, 2, 4, 5), (2, 1), "SAME", dn) == \
        tuple(jax.lax.conv_general_shape_tuple((2, 7, 6, 4), (3, 2, 4, 5), (2, 1), "SAME", dn))
    assert lax.conv_transpose_shape_tuple((2, 7, 6, 4), (3, 2, 4, 5), (2, 1), "SAME", dn) == \
        tuple(jax.lax.conv_transpose_shape_tuple((2, 7, 6, 4), (3, 2, 4, 5), (2, 1), "SAME", dn))
    for spec in [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("NWHC", "WHIO", "CHWN")]:
        assert lax.conv_general_permutations(spec) == jax.lax.conv_general_permutations(spec)
        assert tuple(lax.conv_dimension_numbers((1,) * 4, (1,) * 4, spec)) == \
            tuple(jax.lax.conv_dimension_numbers((1,) * 4, (1,) * 4, spec))
    for pad in ("SAME", "SAME_LOWER", "VALID"):
        assert [tuple(p) for p in lax.padtype_to_pads((7, 6, 5), (3, 2, 4), (2, 3, 1), pad)] == \
            [tuple(p) for p in jax.lax.padtype_to_pads((7, 6, 5), (3, 2, 4), (2, 3, 1), pad)]


@pytest.mark.parametrize("call,err,match", [
    (lambda x, w: lax.conv(x, w[:, :2], (1, 1), "SAME"), FxadValueError, "features"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 1)),
     FxadValueError, "lhs_dilation"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME"), FxadValueError, "window_strides"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "FULL"), FxadValueError, "padding"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                           dimension_numbers=("NCHW", "OIHW", "NCXW")),
     FxadTypeError, "spatial"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                           dimension_numbers=("NCHW", "OIH", "NCHW")),
     FxadTypeError, "letters"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2,
                                           batch_group_count=2), FxadValueError, "at most one"),
    (lambda x, w: lax.conv_general_dilated(x, w, (0, 1), "SAME"), FxadValueError, ">= 1"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), ((-9, 0), (0, 0))), FxadValueError,
     "crops"),
    (lambda x, w: lax.conv(x > 0, w > 0, (1, 1), "SAME"), FxadTypeError, "bool"),
    (lambda x, w: lax.conv(x, w[..., 0], (1, 1), "SAME"), FxadTypeError, "rank"),
    (lambda x, w: lax.conv(x, w.astype(np.float32), (1, 1), "SAME",
                           preferred_element_type=np.float32), FxadTypeError, "preferred"),
])
def test_bad_arguments_raise_clear_errors(call, err, match):
    x, w = _args((2, 4, 5, 5), (6, 4, 3, 3))
    for fn in (call, fxad.jit(call)):
        with pytest.raises(err, match=match):
            fn(x, w)

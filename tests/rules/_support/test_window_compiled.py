"""The compiled kernels for windows that tile the operand (fxad/rules/_support/window_compiled.py)
give exactly what the NumPy forms give: max / min / sum pooling, the selected element's
tangent (forward mode) and cotangent (reverse mode), with ties, NaNs and infinities; the
cases just outside the tiling stay on NumPy; derivatives to order 2, vmap and jit through
max pooling run the kernels and agree with the NumPy forms."""
import numpy as np
import pytest

import fxad
from fxad import lax, nn
from fxad.rules._support import window_compiled as wc
from fxad.rules._support.window_kernels import (gather_selected, reduce_windows,
                                                scatter_selected)

from ..common import grid, run_row

pytest.importorskip("numba")

Z = (0, 0)
# (shape, window, strides, pads, base dilation, window dilation) -> the kernels' form or None
FORMS = [
    ((4, 8, 6, 3), (1, 2, 2, 1), (1, 2, 2, 1), (Z,) * 4, (1,) * 4, (1,) * 4, (16, 2, 3, 2, 3)),
    ((2, 3, 8, 6), (1, 1, 2, 2), (1, 1, 2, 2), (Z,) * 4, (1,) * 4, (1,) * 4, (24, 2, 3, 2, 1)),
    ((5, 12, 4), (1, 3, 1), (1, 3, 1), (Z,) * 3, (1,) * 3, (1,) * 3, (20, 3, 1, 1, 4)),
    ((6, 4, 9), (3, 1, 3), (3, 1, 3), (Z,) * 3, (1,) * 3, (1,) * 3, (2, 3, 12, 3, 1)),
    ((2, 4, 4, 4), (1, 2, 2, 2), (1, 2, 2, 2), (Z,) * 4, (1,) * 4, (1,) * 4, None),  # 3 axes
    ((2, 8, 8, 3), (1, 2, 2, 1), (1, 1, 1, 1), (Z,) * 4, (1,) * 4, (1,) * 4, None),  # overlap
    ((2, 8, 8, 3), (1, 2, 2, 1), (1, 3, 3, 1), (Z,) * 4, (1,) * 4, (1,) * 4, None),  # gaps
    ((2, 8, 8, 3), (1, 2, 2, 1), (1, 2, 2, 1), (Z, (0, 2), Z, Z), (1,) * 4, (1,) * 4, None),
    ((2, 7, 8, 3), (1, 2, 2, 1), (1, 2, 2, 1), (Z,) * 4, (1,) * 4, (1,) * 4, None),  # 7 % 2
    ((2, 8, 8, 3), (1, 2, 2, 1), (1, 2, 2, 1), (Z,) * 4, (1, 2, 1, 1), (1,) * 4, None),
    ((2, 8, 8, 3), (1, 2, 2, 1), (1, 2, 2, 1), (Z,) * 4, (1,) * 4, (1, 1, 2, 1), None),
    ((2, 8, 8, 3), (1, 1, 2, 1), (1, 2, 2, 1), (Z,) * 4, (1,) * 4, (1,) * 4, None),  # k 1, s 2
    ((2, 8, 8, 3), (1, 1, 1, 1), (1, 1, 1, 1), (Z,) * 4, (1,) * 4, (1,) * 4, None),  # no window
]


@pytest.mark.parametrize("shape,window,strides,pads,base,wdil,form", FORMS)
def test_tiled_form(shape, window, strides, pads, base, wdil, form):
    assert wc.tiled_shape(shape, window, strides, pads, base, wdil) == form
    if form is not None:
        assert int(np.prod(form)) == int(np.prod(shape))


@pytest.fixture
def small(monkeypatch):
    """Kernels for small operands too (the tests' arrays)."""
    monkeypatch.setattr(wc, "MIN_SIZE", 0)


def _numpy(monkeypatch, fn, *args):
    with monkeypatch.context() as m:
        m.setattr(wc, "enabled", [False])
        return fn(*args)


def _data(shape, dtype, seed, special):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, shape).astype(dtype)  # few values: many ties in each window
    if special:
        flat = x.reshape(-1)
        idx = rng.choice(flat.size, 12, replace=False)
        flat[idx] = [np.nan, np.inf, -np.inf] * 4
    return x


TILED = [f for f in FORMS if f[-1] is not None]


@pytest.mark.parametrize("shape,window,strides,pads,base,wdil,form", TILED)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("special", [False, True])
def test_kernels_equal_the_numpy_forms(small, monkeypatch, shape, window, strides, pads, base,
                                       wdil, form, dtype, special):
    x = _data(shape, dtype, 0, special)
    t = _data(shape, dtype, 1, special)  # tangents: infinities and NaNs move too
    args = (window, strides, pads, base, wdil)
    assert wc.usable(x, *args, t) == form  # the kernels run below
    out_sp = tuple(n // k for n, k in zip(shape, window))
    ct = _data(out_sp, dtype, 2, special)
    for ufunc, fill in [(np.maximum, -np.inf), (np.minimum, np.inf), (np.add, 0)]:
        got = reduce_windows(ufunc, x, *args, fill)
        want = _numpy(monkeypatch, reduce_windows, ufunc, x, *args, fill)
        assert got.dtype == want.dtype == dtype
        np.testing.assert_array_equal(got, want)
    for better, fill in [(np.greater_equal, -np.inf), (np.less_equal, np.inf)]:
        got = gather_selected(t, x, *args, fill, better)
        want = _numpy(monkeypatch, gather_selected, t, x, *args, fill, better)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        got = scatter_selected(ct, x, *args, fill, better)
        want = _numpy(monkeypatch, scatter_selected, ct, x, *args, fill, better)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert {(name, str(np.dtype(dtype))) for name, _, _ in wc.compile_log} >= {
        (name, str(np.dtype(dtype))) for name in ("tiled_reduce", "tiled_gather",
                                                  "tiled_scatter")}


def test_other_dtypes_and_mixed_cotangents_stay_on_numpy(small):
    args = ((1, 2, 2, 1), (1, 2, 2, 1), (Z,) * 4, (1,) * 4, (1,) * 4)
    assert wc.usable(np.zeros((2, 4, 4, 3), np.int64), *args) is None
    assert wc.usable(np.zeros((2, 4, 4, 3), np.complex128), *args) is None
    x = np.zeros((2, 4, 4, 3), np.float32)
    assert wc.usable(x, *args, np.zeros((2, 2, 2, 3))) is None  # float64 cotangent
    assert wc.usable(x, *args) is not None


def test_max_pool_through_the_kernels(small, monkeypatch):
    """Derivatives to order 2 (fwd and rev), vmap against a loop and jit against eager, all
    through the compiled kernels; the same numbers as the NumPy forms."""
    f = lambda x: nn.max_pool(x, (2, 2), (2, 2)) ** 2
    run_row(f, [(2, 4, 6, 3)], grid(-2, 2, 0.01), unique=True)
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((3, 2, 4, 6, 3)).astype(np.float32)
    g = fxad.grad(lambda x: (f(x) * np.arange(1.0, 4.0, dtype=np.float32)).sum())
    want = np.stack([_numpy(monkeypatch, g, x) for x in xs])
    np.testing.assert_array_equal(np.stack([g(x) for x in xs]), want)
    np.testing.assert_array_equal(fxad.vmap(g)(xs), want)
    np.testing.assert_array_equal(fxad.jit(g)(xs[0]), want[0])
    tan = fxad.jvp(lambda x: lax.reduce_window_max(x, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
                   (xs[0],), (xs[1],))[1]
    np.testing.assert_array_equal(tan, _numpy(monkeypatch, lambda: fxad.jvp(
        lambda x: lax.reduce_window_max(x, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"), (xs[0],),
        (xs[1],))[1]))


def test_config_switch(small):
    x = np.zeros((2, 4, 4, 3), np.float32)
    args = ((1, 2, 2, 1), (1, 2, 2, 1), (Z,) * 4, (1,) * 4, (1,) * 4)
    assert fxad.config.eager_kernels and wc.usable(x, *args) is not None
    fxad.config.eager_kernels = False
    try:
        assert wc.usable(x, *args) is None
    finally:
        fxad.config.eager_kernels = True
    assert wc.usable(x, *args) is not None


def test_read_only_and_strided_operands(small, monkeypatch):
    """Views of any layout, read-only ones too, reach the kernels as the one array type
    they are compiled for, with the NumPy forms' values."""
    base = _data((4, 8, 6, 6), np.float64, 3, True)
    x = base[:, :, :, ::2]  # strided
    ro = np.ascontiguousarray(base.transpose(0, 2, 1, 3))
    ro.flags.writeable = False  # C-contiguous: np.ascontiguousarray keeps it read-only
    args = ((1, 2, 2, 1), (1, 2, 2, 1), (Z,) * 4, (1,) * 4, (1,) * 4)
    for a in (x, ro):
        assert wc.usable(a, *args) is not None
        ct = _data(tuple(n // k for n, k in zip(a.shape, args[0])), np.float64, 4, True)
        np.testing.assert_array_equal(
            reduce_windows(np.maximum, a, *args, -np.inf),
            _numpy(monkeypatch, reduce_windows, np.maximum, a, *args, -np.inf))
        np.testing.assert_array_equal(
            scatter_selected(ct, a, *args, -np.inf, np.greater_equal),
            _numpy(monkeypatch, scatter_selected, ct, a, *args, -np.inf, np.greater_equal))
    kernels = wc._module()
    assert all(len(getattr(kernels, k).signatures) <= 2 for k in
               ("tiled_reduce", "tiled_scatter", "tiled_gather"))  # float32 and float64 only

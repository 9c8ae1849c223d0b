"""fxad.scipy.signal: convolve/correlate (n-d, every mode and method), fftconvolve and
oaconvolve (axes= with batch axes and broadcasting),
convolve2d/correlate2d (every boundary), detrend: values against SciPy, derivatives to second
order in both modes, vmap against a loop, jit; the gradient is itself a convolution (no
gathers)."""
import numpy as np
import pytest
import scipy.signal as ss

import fxad
import fxad.numpy as fnp
from fxad.errors import FxadValueError
from fxad.scipy import signal as fsig
from fxad.test_util import check_grads

SHAPES = [((7,), (3,)), ((3,), (7,)), ((6, 5), (3, 2)), ((2, 3), (4, 5)), ((4, 3, 5), (2, 2, 3)),
          ((5,), (5,)), ((1,), (1,))]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_convolve_and_correlate(shapes, mode):
    rng = np.random.default_rng(0)
    a, v = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    for method in ("direct", "fft", "auto"):
        np.testing.assert_allclose(fsig.convolve(a, v, mode, method),
                                   ss.convolve(a, v, mode, method), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fsig.correlate(a, v, mode, method),
                                   ss.correlate(a, v, mode, method), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fsig.fftconvolve(a, v, mode), ss.fftconvolve(a, v, mode),
                               rtol=1e-12, atol=1e-12)
    check_grads(lambda a, v: fsig.correlate(a, v, mode), (a, v), order=2)


@pytest.mark.parametrize("boundary,fill", [("fill", 0), ("fill", 1.5), ("wrap", 0), ("symm", 0)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", [((6, 5), (3, 2)), ((2, 3), (4, 5)), ((4, 4), (3, 3))],
                         ids=str)
def test_convolve2d_and_correlate2d(shapes, mode, boundary, fill):
    rng = np.random.default_rng(1)
    a, v = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    try:
        want = ss.convolve2d(a, v, mode, boundary, fill)
    except ValueError:  # SciPy refuses (valid mode, neither input larger)
        with pytest.raises(FxadValueError):
            fsig.convolve2d(a, v, mode, boundary, fill)
        return
    np.testing.assert_allclose(fsig.convolve2d(a, v, mode, boundary, fill), want, rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(fsig.correlate2d(a, v, mode, boundary, fill),
                               ss.correlate2d(a, v, mode, boundary, fill), rtol=1e-12, atol=1e-12)
    check_grads(lambda a, v: fsig.correlate2d(a, v, mode, boundary, fill), (a, v), order=2)


def test_complex_inputs():
    rng = np.random.default_rng(2)
    z = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    r = rng.standard_normal(4)
    np.testing.assert_allclose(fsig.correlate(z, r), ss.correlate(z, r), atol=1e-12)
    np.testing.assert_allclose(fsig.correlate(r, z, "same"), ss.correlate(r, z, "same"),
                               atol=1e-12)
    check_grads(lambda z, r: fsig.correlate(z, r, "valid"), (z, r), order=2)


def test_vmap_jit_and_the_gradient_is_a_convolution():
    rng = np.random.default_rng(3)
    a, v = rng.standard_normal((4, 50)), rng.standard_normal(7)
    f = lambda a, v: fnp.sum(fsig.convolve(a, v, "same") ** 2)  # noqa: E731
    g = fxad.vmap(fxad.grad(f, argnums=(0, 1)), in_axes=(0, None))(a, v)
    for i in range(4):
        for k in range(2):
            np.testing.assert_allclose(g[k][i], fxad.grad(f, argnums=(0, 1))(a[i], v)[k],
                                       rtol=1e-12)
    np.testing.assert_allclose(fxad.jit(fxad.grad(f))(a[0], v), fxad.grad(f)(a[0], v),
                               rtol=1e-13)
    prims = {e.primitive.name for e in fxad.make_jaxpr(fxad.grad(f, argnums=(0, 1)))(a[0], v).eqns}
    assert "convolve_window" in prims and "getitem" not in prims


AXES = [  # (shape1, shape2, axes): batch axes of equal length or 1 (broadcast), SciPy's
    # 'valid' swap over the axes it convolves, length-1 convolution axes
    ((3, 5), (3, 2), 1), ((3, 5), (3, 2), -1), ((3, 5), (1, 2), 1), ((4, 5), (1, 2), (0, 1)),
    ((1, 5), (3, 2), None), ((2, 6, 5), (2, 3, 1), (1,)), ((2, 6, 5), (2, 3, 4), (1, 2)),
    ((2, 6, 5), (1, 6, 4), (2,)), ((3, 4), (3, 6), 1), ((5, 1), (1, 4), 0),
    ((3, 2, 5), (3, 1, 2), (0, 2)), ((6,), (3,), 0),
]


@pytest.mark.parametrize("fn", ["fftconvolve", "oaconvolve"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("sa,sv,axes", AXES, ids=str)
def test_fftconvolve_axes(sa, sv, axes, mode, fn):
    """Values and shapes against SciPy's for every mode; derivatives in both operands to
    second order, both modes; jit against eager."""
    rng = np.random.default_rng(4)
    a, v = rng.standard_normal(sa), rng.standard_normal(sv)
    f = lambda a, v: getattr(fsig, fn)(a, v, mode, axes)  # noqa: E731
    want = getattr(ss, fn)(a, v, mode, axes)
    got = f(a, v)
    assert np.shape(got) == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fxad.jit(f)(a, v), got, rtol=1e-12, atol=1e-12)
    check_grads(f, (a, v), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 0)])
def test_fftconvolve_axes_vmap_matches_loop(in_axes):
    """vmap of a convolution along one axis with a batch axis of its own: a loop's values,
    and its gradients."""
    rng = np.random.default_rng(5)
    a, v = rng.standard_normal((3, 4, 6)), rng.standard_normal((3, 4, 2))
    if in_axes[0] == 1:
        a = np.swapaxes(a, 0, 1)
    f = lambda a, v: fsig.fftconvolve(a, v, "same", axes=-1)  # noqa: E731
    g = fxad.grad(lambda a, v: fnp.sum(f(a, v) ** 2), argnums=(0, 1))
    args = [x if d is not None else x[0] for x, d in zip((a, v), in_axes)]

    def pick(i):
        return [x if d is None else np.take(x, i, d) for x, d in zip(args, in_axes)]
    np.testing.assert_allclose(fxad.vmap(f, in_axes=in_axes)(*args),
                               np.stack([f(*pick(i)) for i in range(3)]), rtol=1e-12,
                               atol=1e-12)
    got = fxad.vmap(g, in_axes=in_axes)(*args)
    for k in range(2):
        np.testing.assert_allclose(got[k], np.stack([g(*pick(i))[k] for i in range(3)]),
                                   rtol=1e-12, atol=1e-12)


def test_fftconvolve_axes_is_one_primitive():
    """The batch axes stay inside one convolution (no per-row loop in the program), in the
    value and in both cotangents."""
    rng = np.random.default_rng(6)
    a, v = rng.standard_normal((4, 6)), rng.standard_normal((4, 3))
    f = lambda a, v: fnp.sum(fsig.fftconvolve(a, v, "valid", axes=1) ** 2)  # noqa: E731
    eqns = fxad.make_jaxpr(fxad.grad(f, argnums=(0, 1)))(a, v).eqns
    assert sum(e.primitive.name == "convolve_window" for e in eqns) == 3


def test_errors():
    with pytest.raises(FxadValueError, match="dimensionality"):
        fsig.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(FxadValueError, match="mode"):
        fsig.convolve(np.ones(3), np.ones(2), mode="nearest")
    with pytest.raises(FxadValueError, match="method"):
        fsig.convolve(np.ones(3), np.ones(2), method="winograd")
    with pytest.raises(FxadValueError, match="one input must be at least as large"):
        fsig.convolve(np.ones((3, 1)), np.ones((1, 3)), mode="valid")
    with pytest.raises(FxadValueError, match="boundary"):
        fsig.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="reflect")
    for axes, match in [((), "cannot be empty"), ((2,), "exceeds dimensionality"),
                        ((1, -1), "unique")]:
        with pytest.raises(FxadValueError, match=match):
            fsig.fftconvolve(np.ones((3, 3)), np.ones((2, 2)), axes=axes)
    with pytest.raises(FxadValueError, match="incompatible shapes"):
        fsig.fftconvolve(np.ones((3, 3)), np.ones((2, 2)), axes=1)
    with pytest.raises(FxadValueError, match="at least as large"):
        fsig.fftconvolve(np.ones((3, 2, 3)), np.ones((3, 3, 2)), "valid", axes=(1, 2))


DETREND = [({}, (3, 40)), ({"type": "constant"}, (3, 40)), ({"type": "c", "axis": 0}, (5, 4)),
           ({"bp": [10, 25]}, (2, 40)), ({"bp": 17, "axis": 0}, (30, 3)), ({"bp": [0, 39]}, (40,)),
           ({"bp": [1, 2, 3]}, (2, 8)), ({"axis": -2}, (4, 6, 3))]


@pytest.mark.parametrize("kw, shape", DETREND, ids=str)
def test_detrend(kw, shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).cumsum(-1)
    got, want = fsig.detrend(x, **kw), ss.detrend(x, **kw)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for dt in (np.float32, np.int64, np.complex128):
        xd = (x * 10).astype(dt) if dt is not np.complex128 else x + 1j * x[..., ::-1]
        gd, wd = fsig.detrend(xd, **kw), ss.detrend(xd, **kw)
        assert gd.dtype == wd.dtype
        tol = 1e-4 if dt is np.float32 else 1e-11
        np.testing.assert_allclose(gd, wd, rtol=tol, atol=tol * np.abs(wd).max())
    check_grads(lambda x: fsig.detrend(x, **kw), (x,), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(fxad.jit(lambda x: fsig.detrend(x, **kw))(x), want,
                               rtol=1e-12, atol=1e-12)
    stacked = np.stack([x, 2 * x, -x])
    np.testing.assert_allclose(fxad.vmap(lambda x: fsig.detrend(x, **kw))(stacked),
                               np.stack([ss.detrend(s, **kw) for s in stacked]),
                               rtol=1e-12, atol=1e-12)


def test_detrend_errors():
    with pytest.raises(FxadValueError, match="'linear' or 'constant'"):
        fsig.detrend(np.ones(4), type="quadratic")
    with pytest.raises(FxadValueError, match="breakpoints must lie in"):
        fsig.detrend(np.ones(4), bp=[5])

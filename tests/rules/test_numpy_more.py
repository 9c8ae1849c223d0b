"""Rule table for the second round of NumPy breadth: order statistics, NaN reductions,
covariances, Fourier transforms, sequences (diff, gradient, trapezoid, interp, polyval,
convolve/correlate), padding modes, pinv/lstsq/cond/matrix_power/multi_dot, and the
remaining ufuncs. Three
checks: values (dtype, shape, numbers) against NumPy itself; derivatives to second order in
both modes (and vmap against a loop); and the plain-`numpy` spelling under transformations."""
import warnings

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.errors import FxadTypeError, FxadValueError
from fxad.test_util import check_grads

from .common import check_vmap_matches_loop, grid, run_row

R = np.random.default_rng(11)
V7, V3, M = R.standard_normal(7), R.standard_normal(3), R.standard_normal((3, 4, 5))
NANS = np.where(M[0] > 1, np.nan, M[0])
XP = np.array([-2.5, -1.005, 0.003, 1.373, 2.5])  # interp nodes off the value grid

# NumPy 2.1 added np.unstack and np.clip(x, min=, max=). fxad has both on every supported NumPy;
# on NumPy 2.0 the reference values come from the definitions NumPy 2.1 gives them.
NUMPY_2_1 = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


def _unstack(m, x, axis):
    if m is np and not NUMPY_2_1:
        return tuple(np.moveaxis(x, axis, 0))
    return m.unstack(x, axis=axis)


def _clip(m, x, lo, hi):
    if m is np and not NUMPY_2_1:
        return np.clip(x, lo, hi)
    return m.clip(x, min=lo, max=hi)

# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("convolve", lambda m, x, y, **k: m.convolve(x, y, **k), [(V7, V3), (V3, V7)],
     [{}, {"mode": "same"}, {"mode": "valid"}]),
    ("correlate", lambda m, x, y, **k: m.correlate(x, y, **k),
     [(V7, V3), (V3, V7), (V7 + 1j * V7[::-1], V3 - 2j)], [{}, {"mode": "same"}, {"mode": "full"}]),
    ("quantile", lambda m, x, **k: m.quantile(x, [0.1, 0.5, 0.93], **k), [(M,)],
     [{}, {"axis": 1}, {"axis": (0, 2)}, {"axis": 1, "keepdims": True}, {"method": "lower"},
      {"method": "higher"}, {"method": "nearest", "axis": 0}, {"method": "midpoint"}]),
    ("quantile-nan", lambda m, x: m.quantile(x, 0.3, axis=1), [(NANS,)], [{}]),
    ("median", lambda m, x, **k: m.median(x, **k), [(M,), (V7,), (M.astype(np.float32),)],
     [{}, {"axis": -1}, {"axis": 0, "keepdims": True}]),
    ("percentile", lambda m, x, **k: m.percentile(x, 37.5, **k), [(M,)], [{}, {"axis": 2}]),
    ("gradient", lambda m, x, **k: m.gradient(x, **k), [(M,), (V7,)],
     [{}, {"edge_order": 2}, {"axis": -1}]),
    ("gradient-spacing", lambda m, x: m.gradient(x, 0.3), [(V7,)], [{}]),
    ("diff", lambda m, x, **k: m.diff(x, **k), [(M,)],
     [{}, {"n": 2, "axis": 0}, {"prepend": 1.0, "axis": 1}, {"append": np.ones((3, 4, 1))}]),
    ("ediff1d", lambda m, x: m.ediff1d(x, to_begin=[1.0, 2.0], to_end=3.0), [(M[0],)], [{}]),
    ("trapezoid", lambda m, y, **k: m.trapezoid(y, **k), [(M,)],
     [{}, {"dx": 0.5, "axis": 1}, {"x": np.linspace(0, 1, 5) ** 2}]),
    ("interp", lambda m, x: m.interp(x, np.sort(V7), np.cos(V7)),
     [(np.linspace(-3, 3, 13),), (np.sort(V7),)], [{}]),
    ("interp-edges", lambda m, x: m.interp(x, XP, XP ** 2, left=-1.0, right=9.0),
     [(np.linspace(-3, 3, 13),)], [{}]),
    ("polyval", lambda m, x: m.polyval(V3, x), [(V7,)], [{}]),
    ("vander", lambda m, x, **k: m.vander(x, **k), [(V7,), (V7.astype(np.float32),),
                                                   (np.array([np.inf, 2.0]),)],
     [{}, {"N": 3, "increasing": True}, {"N": 0}]),
    ("polyfit", lambda m, x, y: m.polyfit(x, y, 3), [(V7, np.cos(V7)),
                                                     (V7, np.stack([V7, V7 ** 2], 1))], [{}]),
    ("searchsorted", lambda m, x, **k: m.searchsorted(np.sort(V7), x, **k),
     [(V7,), (np.float64(0.3),)], [{}, {"side": "right"}]),
    ("cov", lambda m, x, **k: m.cov(x, **k), [(M[0],)],
     [{}, {"rowvar": False}, {"bias": True}, {"ddof": 0}, {"aweights": np.arange(1, 6.0)},
      {"fweights": np.arange(1, 6)}, {"y": M[1]}]),
    ("cov-1d", lambda m, x: m.cov(x), [(V7,)], [{}]),
    ("corrcoef", lambda m, x, **k: m.corrcoef(x, **k), [(M[0],)], [{}, {"rowvar": False}]),
    ("nan-reductions", lambda m, x: [m.nanmax(x, 1), m.nanmin(x), m.nanprod(x, 0),
                                     m.nanvar(x, 1), m.nanstd(x, ddof=1), m.nanargmax(x, 1),
                                     m.nanargmin(x, 0), m.ptp(M, 0)], [(NANS,)], [{}]),
    ("pad", lambda m, x, **k: m.pad(x, ((1, 2), (3, 0)), **k), [(M[0],)],
     [{"mode": "edge"}, {"mode": "reflect"}, {"mode": "symmetric"}, {"mode": "wrap"}]),
    ("rot90", lambda m, x, **k: m.rot90(x, **k), [(M,)],
     [{}, {"k": 2}, {"k": 3}, {"k": -1, "axes": (1, 2)}]),
    ("flips", lambda m, x: [m.fliplr(x), m.flipud(x)], [(M[0],)], [{}]),
    ("meshgrid", lambda m, x, y, **k: m.meshgrid(x, y, **k), [(V7, V3)],
     [{}, {"indexing": "ij"}, {"sparse": True}]),
    ("broadcast_arrays", lambda m, x, y: m.broadcast_arrays(x, y), [(V7, V3[:, None])], [{}]),
    ("insert", lambda m, x, **k: m.insert(x, **k), [(V7,)],
     [{"obj": 2, "values": 9.0}, {"obj": [1, 3], "values": [7.0, 8.0]},
      {"obj": 1, "values": [5.0, 6.0]}, {"obj": slice(0, 4, 2), "values": 3.0}]),
    ("delete/append", lambda m, x: [m.delete(x, [0, 2]), m.append(x, [1.0, 2.0]),
                                    m.append(M, M, axis=1)], [(V7,)], [{}]),
    ("unique", lambda m, x: m.unique(x, return_index=True, return_inverse=True,
                                     return_counts=True), [(np.round(M[0]),)], [{}]),
    ("matrix_power", lambda m, x, **k: m.linalg.matrix_power(x, **k), [(M[0, :4, :4],)],
     [{"n": 0}, {"n": 1}, {"n": 5}, {"n": -3}]),
    ("multi_dot", lambda m, x, y: m.linalg.multi_dot([x, M[0, :3], M[1].T, y]),
     [(V3, V7[:4]), (np.ones((2, 3)), np.ones((4, 6)))], [{}]),
    ("pinv", lambda m, x, **k: m.linalg.pinv(x, **k), [(M[0],), (M[0].T,), (M[0] + 1j * M[1],)],
     [{}, {"rcond": 0.1}]),
    ("eig", lambda m, x: [np.asarray(r, complex) for r in m.linalg.eig(x)]
     + [np.asarray(m.linalg.eigvals(x), complex)], [(M[0, :4, :4],), (M[1, :4, :4] + 1j,),
                                                    (M[0, :4, :4] + M[0, :4, :4].T,)], [{}]),
    ("lstsq", lambda m, x, y: m.linalg.lstsq(x, y)[:3], [(M[0].T, V7[:5]), (M[0].T, M[1].T)],
     [{}]),
    ("matrix_rank", lambda m, x: m.linalg.matrix_rank(x), [(M[0],), (np.outer(V7, V3),)], [{}]),
    ("cond", lambda m, x, **k: m.linalg.cond(x, **k), [(M[0, :, :3],)], [{}, {"p": -2}]),
    ("cond-square", lambda m, x, **k: m.linalg.cond(x, **k), [(M[0, :, :4],)],
     [{"p": "fro"}, {"p": 1}, {"p": np.inf}]),
    ("ufuncs", lambda m, x, y: [
        m.copysign(x, y), m.heaviside(x, 0.5), m.fmax(x, np.nan), m.fmin(np.nan, y),
        m.float_power(np.abs(x), 1.5), m.trunc(x), m.fmod(x, 0.3), m.signbit(-0.0 * x),
        m.isinf(x / 0.0), m.isposinf(x / 0.0), m.isneginf(x / 0.0), m.divmod(x, 0.3)[1],
        m.logical_xor(x > 0, y > 0), m.heaviside(np.array([np.nan, 0.0, -np.inf]), 0.5)],
     [(V7[:3], V3), (V7[:3].astype(np.float32), V3.astype(np.float32))], [{}]),
    ("isclose", lambda m, x, y: [
        m.isclose(x, y), m.allclose(x, x), m.array_equal(x, x),
        m.isclose(np.array([np.inf, np.nan, 1.0]), np.array([np.inf, np.nan, 1.0 + 1e-9]),
                  equal_nan=True), m.allclose(x[:0], y[:0])], [(V7[:3], V3)], [{}]),
    ("counts", lambda m, x: [m.count_nonzero(x > 0, axis=0), m.any(x > 2, axis=1),
                             m.all(x > -3), m.flatnonzero(x > 0), m.argwhere(x > 1)],
     [(M[0],)], [{}]),
    ("fft", lambda m, x, **k: [m.fft.fft(x, **k), m.fft.ifft(x, **k), m.fft.irfft(x, **k)],
     [(M[0],), (M[0] + 1j * M[1],), (M[0].astype(np.float32),)],
     [{}, {"n": 7}, {"n": 3, "axis": 0, "norm": "ortho"}, {"norm": "forward"}]),
    ("rfft", lambda m, x, **k: [m.fft.rfft(x, **k), m.fft.rfft2(x), m.fft.rfftn(x, axes=(0,))],
     [(M[0],), (M[0].astype(np.float32),)], [{}, {"n": 8, "axis": 0}, {"norm": "ortho"}]),
    ("fftn", lambda m, x: [m.fft.fft2(x, s=(3, 7)), m.fft.ifftn(x, axes=(0, 2)),
                           m.fft.irfft2(x, s=(4, 6), norm="forward"), m.fft.irfftn(x),
                           m.fft.fftshift(x), m.fft.ifftshift(x, axes=1)],
     [(M,), (M + 1j,)], [{}]),
    ("nan-quantiles", lambda m, x, **k: [m.nanquantile(x, [0.2, 0.7], **k),
                                         m.nanmedian(x, **k), m.nanpercentile(x, 35.0, **k)],
     [(NANS,), (np.where(M > 0.5, np.nan, M),)], [{}, {"axis": 1}, {"axis": 0, "keepdims": True}]),
    ("nan-quantiles-all-nan", lambda m, x: m.nanmedian(x, axis=1),
     [(np.array([[np.nan, np.nan], [1.0, np.nan]]),)], [{}]),
    ("nancumsum", lambda m, x: [m.nancumsum(x, 1), m.nancumprod(x)], [(NANS,)], [{}]),
    ("structure", lambda m, x: [m.block([[x, x[:, :2]], [x[:1], x[:1, :2]]]), m.diagflat(x[0], 1),
                                m.matrix_transpose(M), _unstack(m, x, 1),
                                m.select([x > 0.5, x < -0.5], [x, x ** 2], -1.0),
                                m.choose(np.array([[0, 1, 2, 1, 0]] * 4), [x, 2 * x, x ** 2]),
                                m.partition(x, 2), m.argpartition(V7, 3)[3:4],
                                m.linalg.outer(x[0], x[1]), m.linalg.matrix_transpose(M),
                                m.linalg.vecdot(x, x)], [(M[0],)], [{}]),
    ("spaces", lambda m, x, y: [m.logspace(x, y, 5), m.geomspace(x, y + 3, 4), m.astype(V7, np.float32)],
     [(np.float64(0.5), np.float64(2.0))], [{}]),
    ("binning", lambda m, x: [m.digitize(x, [-1.0, 0.0, 0.5]), m.digitize(x, [-1.0, 0.0], right=True),
                              m.bincount(np.array([0, 2, 2, 5, 1, 0, 3]), weights=x),
                              m.bincount(np.array([1, 1]), minlength=4),
                              m.isin(x, [V7[2], V7[5]]), m.isin(x, V7[:2], invert=True)],
     [(V7,)], [{}]),
    ("ufuncs-more", lambda m, x: [m.cbrt(x), m.ldexp(x, 3), m.modf(x)[0], m.modf(x)[1],
                                  m.vecdot(M, M[0]), _clip(m, x, -0.5, 0.5),
                                  m.einsum("i,i->", x, x, optimize=True)],
     [(V7,), (V7.astype(np.float32),)], [{}]),
    ("reductions-where", lambda m, x: [
        m.sum(x, 1, where=x > 0), m.prod(x, where=x > 0, initial=2.0),
        m.max(x, 0, initial=1.5), m.min(x, 1, where=x < 0, initial=0.0),
        m.mean(x, 0, where=x > -1)], [(M[0],)], [{}]),
]


def _leaves(v):
    return [np.asarray(t) for t in v] if isinstance(v, (list, tuple)) else [np.asarray(v)]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    for args in argsets:
        for k in kws:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices, x / 0
                want, got = _leaves(f(np, *args, **k)), _leaves(f(fnp, *args, **k))
            assert len(want) == len(got), (k, len(want), len(got))
            for w, g in zip(want, got):
                assert (w.shape, w.dtype) == (g.shape, g.dtype), (k, w.shape, w.dtype, g.shape,
                                                                  g.dtype)
                tol = 1e-5 if w.dtype in (np.float32, np.complex64) else 1e-12
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True,
                                           err_msg=str(k))


MASK = np.array([[True, False, False], [False, False, True]])
# Linear algebra rows take SPREAD (or a multiple of eye) plus a small multiple of the drawn
# matrix, whose norm is at most 2 * sqrt(12) < 7 (entries in [-2, 2], at most 12 of them):
# whatever values are drawn, the eigenvalues and singular values stay apart and away from 0,
# and eigenvectors keep a clear largest component.
SPREAD = np.diag([1.0, 2.5, 5.0])


def _sign_free(v):
    """Each eigenvector times its own diagonal entry: LAPACK fixes a vector's norm and its
    largest component's phase but not its sign, which can flip within a finite-difference
    step; the product keeps the norm and phase convention visible and drops the sign."""
    return v * fnp.diagonal(v)[None, :]


TABLE = [
    ("median", lambda x: fnp.median(x, axis=1) ** 2, [(2, 5)]),
    ("quantile", lambda x: fnp.quantile(x, [0.2, 0.75], axis=0), [(5, 2)]),
    ("percentile-nearest", lambda x: fnp.percentile(x, 40, method="nearest") * x, [(4,)]),
    ("nanmax-nanmin", lambda x: fnp.nanmax(fnp.where(MASK, np.nan, x), axis=1)
     * fnp.nanmin(fnp.where(MASK, np.nan, x)), [(2, 3)]),
    ("nanvar-nanstd", lambda x: fnp.nanvar(fnp.where(MASK, np.nan, x), axis=1)
     + fnp.nanstd(fnp.where(MASK, np.nan, x), ddof=1), [(2, 3)]),
    ("nanprod", lambda x: fnp.nanprod(fnp.where(MASK, np.nan, x), axis=0), [(2, 3)]),
    ("ptp", lambda x: fnp.ptp(x, axis=0), [(3, 2)]),
    ("cov", lambda x: fnp.cov(x), [(2, 4)]),
    ("cov-weights", lambda x, w: fnp.cov(x, aweights=w * w + 0.5, rowvar=False), [(4, 2), (4,)]),
    ("corrcoef", lambda x: fnp.corrcoef(x), [(3, 4)]),
    ("diff", lambda x: fnp.diff(x, n=2, axis=0, prepend=0.5) ** 2, [(4, 2)]),
    ("gradient", lambda x: fnp.gradient(x, 0.3, edge_order=2) ** 2, [(5,)]),
    ("gradient-axes", lambda x: fnp.gradient(x)[1] * fnp.gradient(x)[0], [(3, 4)]),
    ("trapezoid", lambda y, x: fnp.trapezoid(y ** 2, fnp.cumsum(x * x + 0.1)), [(4,), (4,)]),
    ("polyval", lambda p, x: fnp.polyval(p, x), [(3,), (4,)]),
    ("vander-polyfit", lambda x, y: fnp.vander(x, 3)
     * fnp.polyfit(np.arange(4.0) + 0.1 * x, y, 2), [(4,), (4,)]),  # nodes kept apart
    ("interp", lambda x, fp: fnp.interp(x, XP, fp), [(6,), (5,)]),
    ("interp-xp", lambda x, s: fnp.interp(x, XP + 0.1 * fnp.tanh(s), XP ** 3), [(6,), (5,)]),
    ("convolve", lambda a, v: fnp.convolve(a, v), [(5,), (3,)]),
    ("convolve-same", lambda a, v: fnp.convolve(v, a, mode="same"), [(5,), (3,)]),
    ("correlate", lambda a, v: fnp.correlate(a, v, mode="full"), [(4,), (3,)]),
    ("pad-modes", lambda x: fnp.pad(x, ((1, 2), (2, 1)), mode="reflect")
     * fnp.pad(x, 2, mode="edge")[:6, :6] + fnp.pad(x, 1, mode="wrap").sum(), [(3, 3)]),
    ("rot90-flips", lambda x: fnp.rot90(x) * fnp.fliplr(fnp.flipud(x)).T, [(3, 3)]),
    ("meshgrid", lambda x, y: fnp.meshgrid(x, y)[0] * fnp.meshgrid(x, y)[1], [(3,), (2,)]),
    ("insert-delete", lambda x: fnp.insert(fnp.delete(x, [1]), 2, x[:2] ** 2), [(4,)]),
    ("pinv", lambda a: fnp.linalg.pinv(2 * np.eye(3, 4) + 0.1 * a), [(3, 4)]),
    ("pinv-tall", lambda a: fnp.linalg.pinv(2 * np.eye(4, 2) + 0.1 * a), [(4, 2)]),
    ("lstsq", lambda a, b: fnp.linalg.lstsq(3 * np.eye(4, 3) + 0.2 * a, b)[0], [(4, 3), (4,)]),
    ("lstsq-residuals", lambda a, b: fnp.linalg.lstsq(3 * np.eye(4, 2) + 0.2 * a, b)[1],
     [(4, 2), (4, 2)]),
    ("eig", lambda a: fnp.real(_sign_free(fnp.linalg.eig(SPREAD + 0.05 * a)[1]) * (1 + 0.5j))
     + fnp.real(fnp.linalg.eigvals(SPREAD + 0.05 * a)), [(3, 3)]),
    ("cond", lambda a: fnp.linalg.cond(SPREAD + 0.1 * a), [(3, 3)]),
    ("cond-1", lambda a: fnp.linalg.cond(SPREAD + 0.1 * (a + 2.005), 1), [(3, 3)]),
    ("matrix_power", lambda a: fnp.linalg.matrix_power(a, 3) + fnp.linalg.matrix_power(
        3 * np.eye(2) + 0.2 * a, -2), [(2, 2)]),
    ("multi_dot", lambda a, b, c: fnp.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4, 2)]),
    ("copysign-heaviside", lambda x, y: fnp.copysign(x + 0.005, y + 0.005)
     * fnp.heaviside(x + 0.005, y),
     [(2, 3), (3,)]),
    ("fmax-fmin", lambda x, y: fnp.fmax(fnp.where(MASK, np.nan, x), y + 0.005)
     + fnp.fmin(x, fnp.where(MASK[0], np.nan, y + 0.005)), [(2, 3), (3,)]),
    ("float_power", lambda x: fnp.float_power(x * x + 0.5, 1.5), [(3,)]),
    ("fmod-divmod", lambda x, y: fnp.fmod(x, y * y + 0.7071) * fnp.divmod(x + 0.005, 0.7071)[1],
     [(2, 3), (3,)]),
    ("trunc-signbit", lambda x: (x + 0.005) * fnp.trunc(x + 0.005)
     + fnp.where(fnp.signbit(x + 0.005), x, 2 * x), [(2, 3)]),
    ("fft", lambda x: fnp.real(fnp.fft.fft(x)) * fnp.imag(fnp.fft.ifft(x, 5, norm="ortho"))[:, :4],
     [(2, 4)]),
    ("rfft-irfft", lambda x: fnp.fft.irfft(fnp.fft.rfft(x, axis=0) ** 2, 5, axis=0), [(4, 2)]),
    ("rfftn", lambda x: fnp.real(fnp.fft.rfftn(x, s=(3, 5), norm="forward")
                                 * fnp.conj(fnp.fft.rfftn(x, s=(3, 5)))), [(2, 4)]),
    ("irfft2", lambda x: fnp.fft.irfft2(fnp.fft.fft2(x) * (1 + 1j), s=(3, 4))
     * fnp.fft.fftshift(x), [(3, 4)]),
    ("nanquantile", lambda x: fnp.nanquantile(fnp.where(MASK, np.nan, x), [0.3, 0.8], axis=1)
     + fnp.nanmedian(fnp.where(MASK, np.nan, x)), [(2, 3)]),
    ("nancumsum", lambda x: fnp.nancumsum(fnp.where(MASK, np.nan, x), axis=1)
     * fnp.nancumprod(fnp.where(MASK, np.nan, x)).reshape(2, 3), [(2, 3)]),
    ("block-select-choose", lambda x: fnp.block([[x, x[:, :1]], [x[:1], x[:1, :1] ** 2]])[:2, :3]
     * fnp.select([x > 0.505, x < -0.505], [x, x ** 2], 0.5)
     * fnp.choose(MASK.astype(int), [x, fnp.sin(x)]), [(2, 3)]),
    ("spaces", lambda a, b: fnp.logspace(a[0], b[0], 4) * fnp.geomspace(a[0] + 3.0, b[0] + 3.0, 4),
     [(1,), (1,)]),
    ("bincount-cbrt", lambda w: fnp.bincount(np.array([0, 2, 2, 1]), weights=w ** 2)
     * fnp.cbrt(w + 3.0)[:3], [(4,)]),
    ("vecdot-ldexp-modf", lambda x, y: fnp.vecdot(x, y)[:, None] * fnp.ldexp(x, 2)
     + fnp.modf(x + 0.005)[0], [(2, 3), (3,)]),
    ("reductions-where", lambda x: fnp.sum(x, 1, where=MASK) + fnp.prod(x, where=MASK, initial=2.0)
     + fnp.max(x, 0, initial=0.505).sum() + fnp.mean(x, where=MASK), [(2, 3)]),
]


def _off_jumps(x, y):
    """fmod(x, d) jumps where x is a nonzero multiple of d = y² + 0.7071."""
    r = x / (y * y + 0.7071)
    k = np.round(r)
    return bool(np.all((k == 0) | (np.abs(r - k) > 1e-3)))


def _off_kinks(a):
    """cond(_, 1) sums |entries| of the matrix and of its inverse: none may sit at 0."""
    m = SPREAD + 0.1 * (a + 2.005)
    return bool(np.min(np.abs(np.linalg.inv(m))) > 1e-3)


ASSUME = {"fmod-divmod": _off_jumps, "cond-1": _off_kinks}


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_numpy_more(name, fn, shapes):
    run_row(fn, shapes, grid(-2, 2), unique=True, assume=ASSUME.get(name))


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_vmap_matches_loop(name, fn, shapes):
    check_vmap_matches_loop(fn, shapes, R)


def test_unique_values_carry_derivatives():
    """unique gathers each distinct value from its first occurrence (eager only: its output
    shape depends on the values)."""
    check_grads(lambda x: fnp.unique(x) ** 3, (np.array([0.5, -1.0, 0.25, 2.0]),), order=2)
    x = np.array([0.5, -1.0, 0.5, 2.0])  # a repeated value: the first occurrence gets it
    np.testing.assert_array_equal(fxad.grad(lambda x: fnp.sum(fnp.unique(x)))(x), [1, 1, 0, 1])


FFTS = [
    ("fft", lambda a: fnp.fft.fft(a, 7, axis=0)), ("ifft", lambda a: fnp.fft.ifft(a, 3)),
    ("irfft", lambda a: fnp.fft.irfft(a)), ("irfft-odd", lambda a: fnp.fft.irfft(a, 7, norm="ortho")),
    ("fft2", lambda a: fnp.fft.fft2(a, norm="forward")), ("irfftn", lambda a: fnp.fft.irfftn(a, s=(3, 5))),
]


@pytest.mark.parametrize("name,f", FFTS, ids=[n for n, _ in FFTS])
def test_fft_of_complex_input_second_order(name, f):
    """Complex operands (check_grads differentiates real and imaginary parts), with weights
    so no cotangent is symmetric by accident."""
    z = R.standard_normal((4, 6)) + 1j * R.standard_normal((4, 6))

    def loss(z):
        y = f(z)
        w = np.cos(np.arange(y.size)).reshape(y.shape)
        return fnp.sum(fnp.real(y) * w) + fnp.sum(fnp.imag(y) ** 2) if y.dtype.kind == "c" \
            else fnp.sum(y * w + y ** 2)
    check_grads(loss, (z,), order=2)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["real", "complex", "symmetric"])
def test_eig_matches_numpys_normalization_to_second_order(seed, kind):
    """eig's eigenvector derivative is that of what NumPy returns (unit norm, largest
    component real), so finite differences of NumPy's own eig agree, at order 2; real
    matrices here have complex-conjugate pairs. The sign is left free (see _sign_free)."""
    r = np.random.default_rng(seed)
    a = r.standard_normal((4, 4))
    a = a + 1j * r.standard_normal((4, 4)) if kind == "complex" else a + a.T \
        if kind == "symmetric" else a
    wt = np.cos(np.arange(16.0)).reshape(4, 4)

    def f(a):
        w, v = fnp.linalg.eig(a)
        v = _sign_free(v)
        return fnp.sum(fnp.real(v) * wt) + fnp.sum(fnp.imag(v) * wt.T) \
            + fnp.sum(fnp.real(w) * wt[0]) + fnp.sum(fnp.imag(w) ** 2)
    check_grads(f, (a,), order=2)
    np.testing.assert_allclose(fxad.jit(fxad.grad(f))(a), fxad.grad(f)(a), rtol=1e-12,
                               atol=1e-12)


def test_pinv_complex_second_order():
    a = R.standard_normal((3, 2)) + 1j * R.standard_normal((3, 2))
    check_grads(lambda z: fnp.real(fnp.sum(fnp.linalg.pinv(z) * np.arange(6).reshape(2, 3))),
                (a,), order=2)


# The same functions in plain NumPy, differentiated through dispatch, jitted and batched.
PLAIN = [
    ("median/percentile", lambda x: np.median(x) * np.percentile(x, 30) + np.quantile(x, 0.9)),
    ("nanmax/ptp", lambda x: np.nanmax(x) + np.ptp(x) * np.nanmean(x)),
    ("diff/gradient", lambda x: np.sum(np.diff(x) ** 2) + np.sum(np.gradient(x) ** 3)),
    ("trapezoid/polyval", lambda x: np.trapezoid(x ** 2) + np.sum(np.polyval(x[:2], x))),
    ("interp", lambda x: np.sum(np.interp(np.linspace(-1, 1, 5), XP, np.concatenate([x, x[:1]])))),
    ("convolve/correlate", lambda x: np.sum(np.convolve(x, x[:2]) ** 2)
     + np.sum(np.correlate(x, np.arange(3.0), "same"))),
    ("cov/corrcoef", lambda x: np.sum(np.cov(np.stack([x, x ** 2]))) + np.corrcoef(x, x ** 3)[0, 1]),
    ("pad/rot90", lambda x: np.sum(np.pad(x, 2, mode="reflect") ** 2)
     + np.sum(np.rot90(x.reshape(2, 2)) * np.arange(4.0).reshape(2, 2))),
    ("linalg", lambda x: np.sum(np.linalg.pinv(np.outer(x, x[:3]) + np.eye(4, 3)))
     + np.linalg.cond(np.outer(x, x[::-1]) + np.diag([4.0, 5.0, 6.0, 7.0]))
     + np.sum(np.linalg.matrix_power(np.outer(x, x) / 10, 3))
     + np.linalg.multi_dot([x, np.outer(x, x), x])
     + np.sum(np.linalg.lstsq(np.outer(x, x[:2]) + np.eye(4, 2), x, rcond=None)[0])),
    ("ufuncs", lambda x: np.sum(np.fmax(x, 0.1) + np.copysign(x, -1.0) + np.float_power(x * x, 1.5)
                                + np.fmod(x, 0.7071) + np.heaviside(x, 0.5) * x)),
    ("methods", lambda x: np.sum(x.repeat(2) ** 2) + x.cumsum().sum() + x.cumprod()[-1]
     + x.reshape(2, 2).trace() + x.reshape(2, 2).diagonal().sum() + x.take([0, 3]).sum()),
    ("reductions-where", lambda x: np.sum(x, where=x > 0) + np.max(x, initial=0.0)),
    ("predicates", lambda x: np.sum(x) * np.any(x > 0) * np.all(np.isfinite(x))
     + np.sum(np.where(np.isclose(x, 0.3), 0.0, x)) * np.count_nonzero(x > 0)),
    ("unique/searchsorted", lambda x: np.sum(np.unique(x) * np.searchsorted(np.sort(x), x))),
    ("numpy2-names", lambda x: np.vecdot(x, x) + np.linalg.vecdot(x, x[::-1])
     + np.sum(np.matrix_transpose(np.outer(x, x[::-1]))[0])
     + np.sum(np.astype(x, np.float64) ** 3)),
    pytest.param("numpy2.1-names", lambda x: np.sum(np.clip(x, min=0, max=1))
                 + np.sum(np.unstack(np.outer(x, x))[1]),
                 marks=pytest.mark.skipif(not NUMPY_2_1, reason="NumPy < 2.1 has neither "
                                          "np.unstack nor np.clip(min=, max=) to dispatch")),
    ("nanmedian-select", lambda x: np.nanmedian(np.where(x > 1.5, np.nan, x))
     + np.sum(np.select([x > 0, x < -1], [x, x ** 2], 0.5)) + np.sum(np.cbrt(x + 3))),
    ("ufunc-methods", lambda x: np.add.reduce(x) * np.multiply.accumulate(x)[-1]
     + np.maximum.reduce(x) + np.sum(np.add.accumulate(x) ** 2)),
    ("fft", lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2) + np.sum(np.fft.irfft(np.fft.rfft(x) * 1j))
     + np.sum(np.real(np.fft.ifft2(np.outer(x, x))) ** 2)),
]


@pytest.mark.parametrize("name,fn", PLAIN, ids=[p.values[0] if hasattr(p, "values") else p[0]
                                               for p in PLAIN])
def test_plain_numpy_under_transformations(name, fn):
    x = np.array([0.35, -1.2, 0.8, 2.05])
    check_grads(fn, (x,), order=2)
    g = fxad.grad(fn)(x)
    if name != "unique/searchsorted":  # unique's output shape depends on values: eager only
        np.testing.assert_allclose(fxad.jit(fxad.grad(fn))(x), g, rtol=1e-12)
        xs = np.stack([x, x[::-1]])
        np.testing.assert_allclose(fxad.vmap(fxad.grad(fn))(xs),
                                   np.stack([fxad.grad(fn)(r) for r in xs]), rtol=1e-12)


def test_predicates_are_staged_under_jit():
    """any/all/isclose/count_nonzero used to need concrete values; they are primitives now."""
    f = fxad.jit(lambda x: np.where(np.any(x > 1) & np.allclose(x, x), np.sum(x), 0.0)
                 + np.count_nonzero(x))
    x = np.array([0.5, 2.0, 0.0])
    assert f(x) == 2.5 + 2
    assert f(x - 2) == 2


@pytest.mark.parametrize("call,err,match", [
    (lambda x: fnp.quantile(x, x[0]), FxadTypeError, "q must be a concrete"),
    (lambda x: fnp.quantile(x, 1.5), FxadValueError, r"\[0, 1\]"),
    (lambda x: fnp.quantile(x, 0.5, method="weibull"), FxadValueError, "not supported"),
    (lambda x: fnp.pad(x, 1, mode="reflect", reflect_type="odd"), FxadValueError, "even"),
    (lambda x: fnp.pad(x, 1, mode="empty"), FxadValueError, "modes constant, edge"),
    (lambda x: fnp.gradient(x, np.arange(4.0)), FxadTypeError, "scalar spacings"),
    (lambda x: fnp.insert(fnp.reshape(x, (2, 2)), 1, 0.0, axis=0), FxadValueError, "1-d"),
    (lambda x: fnp.max(x, where=x > 0), FxadValueError, "initial="),
    (lambda x: fnp.interp(x, XP[:4], x, period=1.0), FxadTypeError, "period"),
    (lambda x: fnp.linalg.pinv(fnp.reshape(x, (2, 2)), rcond=x[0]), FxadValueError, "concrete"),
    (lambda x: fnp.linalg.matrix_power(fnp.reshape(x, (2, 2)), 1.5), FxadValueError, "integer"),
    (lambda x: x.sort(), FxadTypeError, "np.sort"),
    (lambda x: fnp.convolve(x, fnp.reshape(x, (2, 2))), FxadValueError, "1-d"),
    (lambda x: fnp.fft.rfft(x * 1j), FxadTypeError, "real input"),
    (lambda x: fnp.fft.fft(x, 0), FxadValueError, "data points"),
    (lambda x: fnp.fft.fft(x, norm="unitary"), FxadValueError, "norm"),
    (lambda x: fnp.fft.fftn(x, axes=(0, 0)), FxadValueError, "axes"),
])
def test_clear_errors(call, err, match):
    with pytest.raises(err, match=match):
        fxad.grad(lambda x: fnp.sum(call(x)))(np.array([0.3, -1.2, 0.8, 2.0]))

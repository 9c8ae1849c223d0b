"""Rule table: the wider fxad.numpy surface (issue 7), checked like the primitive tables, and
under vmap; the same functions written with plain `numpy` differentiate through dispatch."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp

from .common import check_vmap_matches_loop, grid, run_row

R = np.random.default_rng(7)
IDX = np.array([2, 0, 3])

TABLE = [
    ("logaddexp", lambda x, y: fnp.logaddexp(x, y), [(2, 3), (3,)]),
    ("logaddexp2", lambda x, y: fnp.logaddexp2(x, y), [(2, 3), (2, 3)]),
    ("exp2", fnp.exp2, [(2, 3)]),
    ("log2", lambda x: fnp.log2(x * x + 1.0), [(2, 3)]),
    ("log10", lambda x: fnp.log10(x * x + 1.0), [(2, 3)]),
    ("hypot", lambda x, y: fnp.hypot(x + 3.0, y), [(2, 3), (3,)]),  # kink at the origin
    ("deg2rad", fnp.deg2rad, [(3,)]),
    ("rad2deg", fnp.rad2deg, [(3,)]),
    ("sinc", fnp.sinc, [(2, 3)]),
    ("fabs", lambda x: fnp.fabs(x + 3.0), [(3,)]),
    ("clip", lambda x: fnp.clip(x, -0.5, 0.5) * x, [(2, 3)]),
    ("nan_to_num", lambda x: fnp.nan_to_num(x) * x, [(3,)]),
    ("cumsum", lambda x: fnp.cumsum(x, axis=1) ** 2, [(2, 3)]),
    ("cumsum-flat", lambda x: fnp.cumsum(x) ** 2, [(2, 3)]),
    ("cumprod", lambda x: fnp.cumprod(x, axis=1), [(2, 5)]),
    ("cumprod-flat", lambda x: fnp.cumprod(x), [(2, 3)]),
    ("var-ddof", lambda x: fnp.var(x, axis=0, ddof=1), [(3, 2)]),
    ("std-keepdims", lambda x: fnp.std(x, axis=1, keepdims=True), [(2, 3)]),
    ("average", lambda x, w: fnp.average(x, axis=1, weights=w * w + 1.0), [(2, 3), (3,)]),
    ("nansum", lambda x: fnp.nansum(x * x), [(2, 3)]),
    ("nanmean", lambda x: fnp.nanmean(x * x, axis=0), [(2, 3)]),
    ("atleast", lambda x: fnp.atleast_2d(x) * fnp.atleast_3d(x).sum(), [(3,)]),
    ("roll", lambda x: fnp.roll(x, 2, axis=1) * x, [(2, 3)]),
    ("tile", lambda x: fnp.tile(x, (2, 2)) ** 2, [(2, 3)]),
    ("repeat", lambda x: fnp.repeat(x, 2, axis=0) ** 2, [(2, 3)]),
    ("pad", lambda x: fnp.pad(x, ((1, 0), (2, 1)), constant_values=1.5) ** 2, [(2, 3)]),
    ("diag", lambda x: fnp.diag(x, 1) ** 2, [(3,)]),
    ("diag-2d", lambda x: fnp.diag(x) ** 2, [(3, 3)]),
    ("diagonal", lambda x: fnp.diagonal(x, -1) ** 2, [(3, 4)]),
    ("trace", lambda x: fnp.trace(x) * x, [(3, 3)]),
    ("tril-triu", lambda x: fnp.tril(x) * fnp.triu(x, -1), [(3, 4)]),
    ("take", lambda x: fnp.take(x, IDX, axis=1) ** 2, [(2, 4)]),
    ("take_along_axis", lambda x: fnp.take_along_axis(x, np.array([[1], [0]]), 1) * x, [(2, 3)]),
    ("sort", lambda x: fnp.sort(x, axis=1) * fnp.arange(3.0), [(2, 3)]),
    ("argsort", lambda x: x[fnp.argsort(x)] * fnp.arange(4.0), [(4,)]),
    ("stacks", lambda x: fnp.vstack([x, x]) * fnp.hstack([x, x]).sum()
     + fnp.dstack([x]).sum() + fnp.column_stack([x, x]).sum(), [(3,)]),
    ("array_split", lambda x: fnp.array_split(x, 3)[1] * fnp.array_split(x, [2])[0].sum(), [(5,)]),
    ("kron", lambda x, y: fnp.kron(x, y), [(2, 2), (2, 3)]),
    ("cross", lambda x, y: fnp.cross(x, y), [(2, 3), (3,)]),
    ("moveaxis-swap", lambda x: fnp.moveaxis(x, 0, 1) * fnp.swapaxes(x, 0, 1), [(2, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_numpy_extra(name, fn, shapes):
    run_row(fn, shapes, grid(-2, 2), unique=True)


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_vmap_matches_loop(name, fn, shapes):
    check_vmap_matches_loop(fn, shapes, R)


def test_cumprod_with_zero_second_order():
    from fxad.test_util import check_grads
    check_grads(fnp.cumprod, (np.array([2.0, 0.0, 3.0, -1.0]),), order=2)


def test_derivatives_at_special_points_are_finite():
    assert fxad.grad(lambda x: fnp.hypot(x, 0.0 * x))(0.0) == 0.0
    assert fxad.grad(fnp.sinc)(0.0) == 0.0
    g = fxad.grad(lambda x: fnp.logaddexp(x, -np.inf))(1.0)
    assert g == 1.0
    assert np.isfinite(fxad.grad(lambda x: fnp.logaddexp(x, x))(-np.inf))


# The same functions written against plain NumPy: fxad differentiates them unchanged through
# __array_ufunc__ / __array_function__.
PLAIN = [
    ("sin*exp", lambda x: np.sum(np.sin(x) * np.exp(x))),
    ("logaddexp", lambda x: np.sum(np.logaddexp(x, 2 * x))),
    ("cumsum", lambda x: np.sum(np.cumsum(x) ** 2)),
    ("sort", lambda x: np.sum(np.sort(x) * np.arange(4.0))),
    ("dot/matmul", lambda x: np.dot(x, x) + np.matmul(x, x)),
    ("reshape/transpose", lambda x: np.sum(np.transpose(np.reshape(x, (2, 2))) ** 3)),
    ("where/max", lambda x: np.sum(np.where(x > 0, x, 0.0)) + np.max(x)),
    ("mean/std", lambda x: np.mean(x) * np.std(x)),
    ("tanh/log1p", lambda x: np.sum(np.tanh(x) + np.log1p(x * x))),
    ("concatenate/stack", lambda x: np.sum(np.concatenate([x, x]) * np.stack([x, x]).sum(0)[0])),
    ("einsum", lambda x: np.einsum("i,i->", x, x)),
]


@pytest.mark.parametrize("name,fn", PLAIN, ids=[p[0] for p in PLAIN])
def test_plain_numpy_under_transformations(name, fn):
    from fxad.test_util import check_grads
    x = np.array([0.3, -1.2, 0.8, 2.0])
    check_grads(fn, (x,), order=2)
    fnp_version = fxad.grad(fn)(x)
    np.testing.assert_allclose(fxad.jit(fxad.grad(fn))(x), fnp_version, rtol=1e-12)
    xs = np.stack([x, x[::-1]])
    np.testing.assert_allclose(fxad.vmap(fxad.grad(fn))(xs),
                               np.stack([fxad.grad(fn)(r) for r in xs]), rtol=1e-12)

"""Rule table: fxad.numpy.linalg's composites and the decompositions they rest on (pinv,
lstsq, eig, cond, matrix_power, multi_dot, matrix_rank): values against NumPy, derivatives to
second order in both modes, vmap against a loop. (The solves, factorizations and norms are
rows of tests/rules/linalg/test_solve.py.)"""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.scipy import linalg as fsl
from fxad.test_util import check_grads

from ..rules.linalg.inputs import M23, V4, rect_distinct, rng_args
from ..rules.common import M, V3, V7, check_values_match_numpy, floats, grid, Row, row_tests

R = np.random.default_rng(11)

# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
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
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


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


def _off_kinks(a):
    """cond(_, 1) sums |entries| of the matrix and of its inverse: none may sit at 0."""
    m = SPREAD + 0.1 * (a + 2.005)
    return bool(np.min(np.abs(np.linalg.inv(m))) > 1e-3)


D = grid(-2, 2)
TABLE = [
    Row("pinv", lambda a: fnp.linalg.pinv(2 * np.eye(3, 4) + 0.1 * a), [(3, 4)], D, unique=True),
    Row("pinv-tall", lambda a: fnp.linalg.pinv(2 * np.eye(4, 2) + 0.1 * a), [(4, 2)], D,
        unique=True),
    Row("lstsq", lambda a, b: fnp.linalg.lstsq(3 * np.eye(4, 3) + 0.2 * a, b)[0], [(4, 3), (4,)],
        D, unique=True),
    Row("lstsq-residuals", lambda a, b: fnp.linalg.lstsq(3 * np.eye(4, 2) + 0.2 * a, b)[1],
        [(4, 2), (4, 2)], D, unique=True),
    Row("eig", lambda a: fnp.real(_sign_free(fnp.linalg.eig(SPREAD + 0.05 * a)[1]) * (1 + 0.5j))
        + fnp.real(fnp.linalg.eigvals(SPREAD + 0.05 * a)), [(3, 3)], D, unique=True),
    Row("cond", lambda a: fnp.linalg.cond(SPREAD + 0.1 * a), [(3, 3)], D, unique=True),
    Row("cond-1", lambda a: fnp.linalg.cond(SPREAD + 0.1 * (a + 2.005), 1), [(3, 3)], D,
        unique=True, assume=_off_kinks),
    Row("matrix_power", lambda a: fnp.linalg.matrix_power(a, 3) + fnp.linalg.matrix_power(
        3 * np.eye(2) + 0.2 * a, -2), [(2, 2)], D, unique=True),
    Row("multi_dot", lambda a, b, c: fnp.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4, 2)], D,
        unique=True),
]
TABLE += [Row(*r, floats(-1, 1), rtol=1e-10) if not isinstance(r, Row) else r for r in [
    # norms (finite differences need no kink: V4 and M23 keep entries away from 0)
    ("norm_vec2", lambda x: fnp.linalg.norm(x + V4), [(4,)]),
    ("norm_vec1", lambda x: fnp.linalg.norm(x + V4, 1), [(4,)]),
    ("norm_vec_inf", lambda x: fnp.linalg.norm(x + V4, np.inf), [(4,)]),
    ("norm_vec_neg_inf", lambda x: fnp.linalg.norm(x + V4, -np.inf), [(4,)]),
    ("norm_vec3", lambda x: fnp.linalg.norm(x + V4, 3), [(4,)]),
    ("norm_vec0", lambda x: fnp.linalg.norm(x + V4, 0), [(4,)]),
    ("norm_axis", lambda x: fnp.linalg.norm(x + M23, axis=1, keepdims=True), [(2, 3)]),
    ("norm_flat", lambda x: fnp.linalg.norm(x + 2.0), [(2, 2, 3)]),
    ("norm_fro", lambda x: fnp.linalg.norm(x + M23, "fro"), [(2, 3)]),
    ("norm_nuc", lambda x: fnp.linalg.norm(rect_distinct(x), "nuc"), [(3, 4)]),
    ("norm_mat2", lambda x: fnp.linalg.norm(rect_distinct(x), 2), [(4, 3)]),
    ("norm_mat_neg2", lambda x: fnp.linalg.norm(rect_distinct(x), -2, axis=(1, 2)), [(2, 4, 3)]),
    ("norm_mat1", lambda x: fnp.linalg.norm(x + M23, 1), [(2, 3)]),
    ("norm_mat_inf", lambda x: fnp.linalg.norm(x + M23, np.inf, keepdims=True), [(2, 3)]),
    ("norm_mat_neg1", lambda x: fnp.linalg.norm(x + M23, -1), [(2, 3)]),
    ("norm_mat_neg_inf", lambda x: fnp.linalg.norm(x + M23, -np.inf, axis=(1, 0)), [(2, 3)]),
    Row("vmap_norm", lambda x: fnp.linalg.norm(x, 2, axis=0), [(3, 2)], floats(-1, 1), grad=False,
        in_axes=[0], rtol=1e-10),
    Row("vmap_norm_nuc", lambda x: fnp.linalg.norm(rect_distinct(x), "nuc"), [(3, 2)], floats(-1, 1),
        grad=False, in_axes=[0], rtol=1e-10),
    ("scipy_norm", lambda x: fsl.norm(x + 2.0), [(3,)]),
]]
test_row = row_tests(TABLE)


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


def test_all_lists_every_public_function():
    # the Array API names were appended to linalg.py with their own `__all__ = [...]`, which
    # replaced the list: `from fxad.numpy.linalg import *` gave 6 names
    public = {n for n in dir(fnp.linalg) if not n.startswith("_")
              and callable(getattr(fnp.linalg, n)) and getattr(np.linalg, n, None) is not None}
    assert public <= set(fnp.linalg.__all__), sorted(public - set(fnp.linalg.__all__))
    assert {"solve", "det", "svd", "matrix_norm", "tensorsolve"} <= set(fnp.linalg.__all__)


@pytest.mark.parametrize("ord", [None, 1, 2, np.inf, -np.inf, 0, 3, -1])
def test_vector_norm_values(ord):
    x = rng_args([(2, 5)])[0]
    np.testing.assert_allclose(fnp.linalg.norm(x, ord, axis=1), np.linalg.norm(x, ord, axis=1))


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm_values(ord):
    x = rng_args([(2, 4, 3)])[0]
    for axis in [(1, 2), (2, 0)]:
        np.testing.assert_allclose(fnp.linalg.norm(x, ord, axis, keepdims=True),
                                   np.linalg.norm(x, ord, axis, keepdims=True))
    np.testing.assert_allclose(fnp.linalg.norm(x[0], ord), np.linalg.norm(x[0], ord))


@pytest.mark.parametrize("f", [lambda x: fnp.linalg.norm(x), lambda x: fnp.linalg.norm(x, 2),
                               lambda x: fnp.linalg.norm(x.reshape(2, 2), "fro"),
                               lambda x: fnp.linalg.norm(x, 3)])
def test_norm_gradient_at_zero_is_finite(f):
    z = np.zeros(4)
    np.testing.assert_array_equal(fxad.grad(f)(z), np.zeros(4))
    assert np.all(np.isfinite(fxad.hessian(f)(z)))
    np.testing.assert_allclose(fxad.grad(f)(np.array([3.0, 0, 0, 0]))[0], 1.0)

"""Rule table: linear algebra (fxad.rules.linalg.solve / linalg_decomp, fxad.numpy.linalg,
fxad.scipy.linalg). Each row's function builds a well-conditioned input from arbitrary
values in [-1, 1] (SPD, diagonally dominant, distinct eigen/singular values), so derivatives
are checked by finite differences to order 2 in both modes, values against NumPy/SciPy, and
vmap against a Python loop."""
import numpy as np
import pytest
import scipy.linalg as sl

import fxad
import fxad.numpy as fnp
from fxad.errors import FxadValueError
from fxad.numpy import linalg as fla
from fxad.scipy import linalg as fsl
from fxad.test_util import check_grads
from fxad.tree_util import tree_leaves, tree_map

from ..common import floats, run_row


# --- well-conditioned inputs from arbitrary x -----------------------------------------------

def _T(x):
    return fnp.swapaxes(x, -1, -2)


def gen(x):  # diagonally dominant: far from singular
    return x + 3 * np.eye(x.shape[-1])


def spd(x):
    return x @ _T(x) + 3 * np.eye(x.shape[-1])


def symm(x):  # the symmetric part: symmetric-input functions are checked along symmetric
    return 0.5 * (x + _T(x))  # directions (their derivatives live there; notes/linalg.md)


def sym_distinct(x):  # symmetric, eigenvalues near 1, 2, 3, ...: well separated
    n = x.shape[-1]
    return 0.1 * (x + _T(x)) + np.diag(np.arange(1.0, n + 1))


def rect_distinct(x):  # singular values near k, ..., 2, 1, in the order svd returns them
    m, n = x.shape[-2:]
    d = np.zeros((m, n))
    k = min(m, n)
    d[np.arange(k), np.arange(k)] = np.arange(k, 0.0, -1)
    return 0.1 * x + d


def pivoting(x):  # diagonally dominant after a fixed row permutation: LU pivots, stably
    return gen(x)[..., [2, 0, 1], :]


def dense(x):  # full rank, and never triangular (LAPACK's QR signs jump at triangular input)
    m, n = x.shape[-2:]
    return rect_distinct(x) + 0.3 * np.ones((m, n))


def _diag_sign(m):
    """sign of each column's diagonal entry, shape (..., 1, k): fixes the eigen/singular
    vectors' arbitrary signs (the diagonal entries are the large ones here)."""
    k = m.shape[-1]
    d = fnp.sum(m[..., :k, :] * np.eye(k), axis=-2)
    return fnp.sign(d)[..., None, :]


def eigh_fixed(a, **kw):
    w, v = fla.eigh(a, **kw)
    return w, v * _diag_sign(v)


def svd_fixed(a):
    u, s, vt = fla.svd(a, full_matrices=False)
    sg = _diag_sign(u)
    return u * sg, s, vt * _T(sg)


V4 = np.array([3.0, -6.0, 9.0, -12.0])  # offsets: distinct |entries|, none near 0
M23 = np.array([[3.0, -6.0, 9.0], [-13.0, 16.0, -20.0]])


def _flip_first_row(a):
    return a * np.array([-1.0, 1.0, 1.0])[:, None]


TABLE = [
    # solve: factor once with LU (numpy and scipy spellings)
    ("solve_vec", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3,)]),
    ("solve_mat", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3, 2)]),
    ("solve_batched", lambda x, b: fla.solve(gen(x), b), [(2, 3, 3), (2, 3, 2)]),
    ("solve_batched_vec", lambda x, b: fla.solve(gen(x), b), [(2, 3, 3), (3,)]),
    ("inv", lambda x: fla.inv(gen(x)), [(3, 3)]),
    ("inv_batched", lambda x: fla.inv(gen(x)), [(2, 3, 3)]),
    ("det", lambda x: fla.det(gen(x)), [(3, 3)]),
    ("det_batched", lambda x: fla.det(gen(x)), [(2, 3, 3)]),
    # the gradient (the cofactor matrix) as a function, checked to order 2 (det's third)
    ("grad_det", fxad.grad(lambda x: fla.det(gen(x))), [(3, 3)]),
    ("slogdet", lambda x: tuple(fla.slogdet(_flip_first_row(gen(x)))), [(3, 3)]),
    ("slogdet_batched", lambda x: tuple(fla.slogdet(gen(x))), [(2, 3, 3)]),
    ("scipy_solve_T", lambda x, b: fsl.solve(gen(x), b, transposed=True), [(3, 3), (3,)]),
    ("scipy_solve_sym", lambda x, b: fsl.solve(gen(x), b, assume_a="sym"), [(3, 3), (3,)]),
    ("scipy_solve_pos", lambda x, b: fsl.solve(spd(x), b, assume_a="pos"), [(3, 3), (3, 2)]),
    ("scipy_solve_pos_lower", lambda x, b: fsl.solve(symm(gen(x)) + 2 * np.eye(3), b,
                                                     assume_a="pos", lower=True),
     [(3, 3), (3,)]),
    ("lu_solve", lambda x, b: fsl.lu_solve(fsl.lu_factor(gen(x)), b), [(3, 3), (3, 2)]),
    ("lu_solve_T", lambda x, b: fsl.lu_solve(fsl.lu_factor(gen(x)), b, trans=1),
     [(3, 3), (3,)]),
    # the factors themselves (rows permuted so that LU pivots), and a plain (lu, piv) tuple
    ("lu_factor_lu", lambda x: fsl.lu_factor(pivoting(x))[0], [(3, 3)]),
    ("lu_factor_lu_batched", lambda x: fsl.lu_factor(pivoting(x))[0], [(2, 3, 3)]),
    ("lu_solve_plain_tuple", lambda x, b: fsl.lu_solve(tuple(fsl.lu_factor(pivoting(x))), b),
     [(3, 3), (3,)]),
    ("lu_solve_plain_tuple_T", lambda x, b: fsl.lu_solve(tuple(fsl.lu_factor(pivoting(x))), b,
                                                         trans=1), [(3, 3), (3, 2)]),
    ("scipy_inv_det", lambda x: (fsl.inv(gen(x)), fsl.det(gen(x))), [(3, 3)]),
    # triangular solves: one triangle of a is read
    ("solve_triangular_lower", lambda x, b: fsl.solve_triangular(gen(x), b, lower=True),
     [(3, 3), (3,)]),
    ("solve_triangular_upper_T", lambda x, b: fsl.solve_triangular(gen(x), b, trans="T"),
     [(3, 3), (3, 2)]),
    ("solve_triangular_unit", lambda x, b: fsl.solve_triangular(x, b, lower=True,
                                                                unit_diagonal=True),
     [(3, 3), (3,)]),
    ("solve_triangular_batched", lambda x, b: fsl.solve_triangular(gen(x), b, lower=True),
     [(2, 3, 3), (2, 3, 2)]),
    # Cholesky
    ("cholesky", lambda x: fla.cholesky(spd(x)), [(3, 3)]),
    ("cholesky_batched", lambda x: fla.cholesky(spd(x)), [(2, 3, 3)]),
    ("cholesky_symmetric", lambda x: fla.cholesky(symm(gen(x)) + 2 * np.eye(3)), [(3, 3)]),
    ("cholesky_upper", lambda x: fla.cholesky(spd(x), upper=True), [(3, 3)]),
    ("scipy_cholesky", lambda x: fsl.cholesky(symm(gen(x)) + 2 * np.eye(3)), [(3, 3)]),
    ("cho_solve", lambda x, b: fsl.cho_solve(fsl.cho_factor(spd(x)), b), [(3, 3), (3,)]),
    ("cho_solve_lower", lambda x, b: fsl.cho_solve(fsl.cho_factor(spd(x), lower=True), b),
     [(3, 3), (3, 2)]),
    ("cho_solve_plain_tuple", lambda x, b: fsl.cho_solve(tuple(fsl.cho_factor(spd(x))), b),
     [(3, 3), (3,)]),
    ("cho_factor", lambda x: fsl.cho_factor(spd(x))[0], [(3, 3)]),
    # decompositions (distinct eigen/singular values)
    ("eigh", lambda x: eigh_fixed(sym_distinct(x)), [(3, 3)]),
    ("eigh_batched", lambda x: eigh_fixed(sym_distinct(x)), [(2, 3, 3)]),
    ("eigh_upper", lambda x: eigh_fixed(sym_distinct(x), UPLO="U"), [(3, 3)]),
    ("eigvalsh", lambda x: fla.eigvalsh(sym_distinct(x)), [(3, 3)]),
    ("scipy_eigh", lambda x: fsl.eigh(sym_distinct(x), eigvals_only=True), [(3, 3)]),
    ("qr_square", lambda x: tuple(fla.qr(dense(x))), [(3, 3)]),
    ("qr_tall", lambda x: tuple(fla.qr(dense(x))), [(4, 3)]),
    ("qr_batched", lambda x: tuple(fla.qr(dense(x))), [(2, 4, 3)]),
    ("qr_r", lambda x: fla.qr(dense(x), mode="r"), [(4, 2)]),
    ("scipy_qr", lambda x: fsl.qr(dense(x), mode="economic"), [(4, 3)]),
    ("svd_square", lambda x: svd_fixed(rect_distinct(x)), [(3, 3)]),
    ("svd_tall", lambda x: svd_fixed(rect_distinct(x)), [(4, 3)]),
    ("svd_wide", lambda x: svd_fixed(rect_distinct(x)), [(2, 4)]),
    ("svd_batched", lambda x: svd_fixed(rect_distinct(x)), [(2, 4, 3)]),
    ("svd_values", lambda x: fla.svd(rect_distinct(x), compute_uv=False), [(3, 4)]),
    # norms
    ("norm_vec2", lambda x: fla.norm(x + V4), [(4,)]),  # at 0: test_norm_gradient_at_zero
    ("norm_vec1", lambda x: fla.norm(x + V4, 1), [(4,)]),
    ("norm_vec_inf", lambda x: fla.norm(x + V4, np.inf), [(4,)]),
    ("norm_vec_neg_inf", lambda x: fla.norm(x + V4, -np.inf), [(4,)]),
    ("norm_vec3", lambda x: fla.norm(x + V4, 3), [(4,)]),
    ("norm_vec0", lambda x: fla.norm(x + V4, 0), [(4,)]),
    ("norm_axis", lambda x: fla.norm(x + M23, axis=1, keepdims=True), [(2, 3)]),
    ("norm_flat", lambda x: fla.norm(x + 2.0), [(2, 2, 3)]),
    ("norm_fro", lambda x: fla.norm(x + M23, "fro"), [(2, 3)]),
    ("norm_nuc", lambda x: fla.norm(rect_distinct(x), "nuc"), [(3, 4)]),
    ("norm_mat2", lambda x: fla.norm(rect_distinct(x), 2), [(4, 3)]),
    ("norm_mat_neg2", lambda x: fla.norm(rect_distinct(x), -2, axis=(1, 2)), [(2, 4, 3)]),
    ("norm_mat1", lambda x: fla.norm(x + M23, 1), [(2, 3)]),
    ("norm_mat_inf", lambda x: fla.norm(x + M23, np.inf, keepdims=True), [(2, 3)]),
    ("norm_mat_neg1", lambda x: fla.norm(x + M23, -1), [(2, 3)]),
    ("norm_mat_neg_inf", lambda x: fla.norm(x + M23, -np.inf, axis=(1, 0)), [(2, 3)]),
    ("scipy_norm", lambda x: fsl.norm(x + 2.0), [(3,)]),
    # matrix exponential and its Fréchet derivative
    ("expm", fsl.expm, [(3, 3)]),
    ("expm_batched", fsl.expm, [(2, 3, 3)]),
    ("expm_frechet", lambda a, e: fsl.expm_frechet(a, e, compute_expm=False), [(3, 3), (3, 3)]),
    ("expm_frechet_with_expm", lambda a, e: fsl.expm_frechet(a, e), [(2, 2), (2, 2)]),
]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[r[0] for r in TABLE])
def test_row(name, fn, shapes):
    run_row(fn, shapes, floats(-1, 1))


# --- values against NumPy / SciPy -----------------------------------------------------------

def _rng_args(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, s) for s in shapes]


def _np_gen(x):
    return x + 3 * np.eye(x.shape[-1])


def _np_spd(x):
    return x @ np.swapaxes(x, -1, -2) + 3 * np.eye(x.shape[-1])


def _np_sym(x):
    """The symmetric part, which the symmetric routines read (exactly x if x is symmetric)."""
    return x + (np.swapaxes(x, -1, -2) - x) / 2


def _np_fix_signs(w, v):
    return w, v * np.sign(v[:1])


VALUES = [  # (name, ours, theirs, shapes, input builders)
    ("solve", fla.solve, np.linalg.solve, [(3, 3), (3,)], [_np_gen, None]),
    ("solve_mat", fla.solve, np.linalg.solve, [(3, 3), (3, 2)], [_np_gen, None]),
    ("solve_batch", fla.solve, np.linalg.solve, [(2, 3, 3), (2, 3, 2)], [_np_gen, None]),
    ("solve_bcast", fla.solve, np.linalg.solve, [(2, 3, 3), (3,)], [_np_gen, None]),
    ("inv", fla.inv, np.linalg.inv, [(2, 3, 3)], [_np_gen]),
    ("det", fla.det, np.linalg.det, [(2, 3, 3)], [_np_gen]),
    ("det_neg", fla.det, np.linalg.det, [(4, 4)], [lambda x: x * 3]),
    ("slogdet", fla.slogdet, np.linalg.slogdet, [(2, 4, 4)], [lambda x: x * 3]),
    ("cholesky", fla.cholesky, np.linalg.cholesky, [(2, 3, 3)], [_np_spd]),
    # nonsymmetric input: the symmetric part by default; NumPy's one triangle on request
    ("cholesky_nonsym", fla.cholesky, lambda a: np.linalg.cholesky(_np_sym(a)), [(3, 3)],
     [lambda x: _np_gen(x) + 2]),
    ("cholesky_nonsym_tri", lambda a: fla.cholesky(a, symmetrize_input=False),
     np.linalg.cholesky, [(3, 3)], [lambda x: _np_gen(x) + 2]),
    ("cholesky_upper", lambda a: fla.cholesky(a, upper=True),
     lambda a: np.linalg.cholesky(a, upper=True), [(3, 3)], [_np_spd]),
    ("eigh", fla.eigh, np.linalg.eigh, [(2, 3, 3)], [_np_sym]),
    ("eigh_nonsym", lambda a: _np_fix_signs(*fla.eigh(a)),
     lambda a: _np_fix_signs(*np.linalg.eigh(_np_sym(a))), [(2, 3, 3)], [None]),
    ("eigh_U_tri", lambda a: fla.eigh(a, "U", symmetrize_input=False),
     lambda a: np.linalg.eigh(a, "U"), [(3, 3)], [None]),
    ("eigh_L_tri", lambda a: fla.eigh(a, symmetrize_input=False), np.linalg.eigh, [(2, 3, 3)],
     [None]),
    ("qr", fla.qr, np.linalg.qr, [(2, 4, 3)], [None]),
    ("qr_r", lambda a: fla.qr(a, "r"), lambda a: np.linalg.qr(a, "r"), [(4, 3)], [None]),
    ("svd", lambda a: fla.svd(a, False), lambda a: np.linalg.svd(a, False), [(2, 3, 5)], [None]),
    ("svdvals", lambda a: fla.svd(a, compute_uv=False),
     lambda a: np.linalg.svd(a, compute_uv=False), [(4, 3)], [None]),
    ("scipy_solve", fsl.solve, sl.solve, [(3, 3), (3, 2)], [_np_gen, None]),
    ("scipy_solve_pos", lambda a, b: fsl.solve(a, b, assume_a="pos"),
     lambda a, b: sl.solve(a, b, assume_a="pos"), [(3, 3), (3,)], [_np_spd, None]),
    ("scipy_solve_sym_lower", lambda a, b: fsl.solve(a, b, assume_a="sym", lower=True),
     lambda a, b: sl.solve(_np_sym(a), b, assume_a="sym", lower=True), [(3, 3), (3,)],
     [_np_gen, None]),
    ("scipy_solve_T", lambda a, b: fsl.solve(a, b, transposed=True),
     lambda a, b: sl.solve(a, b, transposed=True), [(3, 3), (3,)], [_np_gen, None]),
    ("lu_factor", lambda a: tuple(fsl.lu_factor(a)), sl.lu_factor, [(4, 4)], [None]),
    ("lu_solve", lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b, trans=1),
     lambda a, b: sl.lu_solve(sl.lu_factor(a), b, trans=1), [(3, 3), (3, 2)], [_np_gen, None]),
    ("cho_solve", lambda a, b: fsl.cho_solve(fsl.cho_factor(a), b),
     lambda a, b: sl.cho_solve(sl.cho_factor(a), b), [(3, 3), (3,)], [_np_spd, None]),
    ("scipy_cholesky", fsl.cholesky, lambda a: sl.cholesky(_np_sym(a)), [(3, 3)],
     [lambda x: _np_gen(x) + 2]),
    ("solve_triangular", lambda a, b: fsl.solve_triangular(a, b, trans=1, unit_diagonal=True),
     lambda a, b: sl.solve_triangular(a, b, trans=1, unit_diagonal=True), [(3, 3), (3, 2)],
     [None, None]),
    ("scipy_eigh_upper", lambda a: _np_fix_signs(*fsl.eigh(a, lower=False)),  # other driver
     lambda a: _np_fix_signs(*sl.eigh(_np_sym(a), lower=False)), [(3, 3)], [None]),
    ("expm", fsl.expm, sl.expm, [(2, 3, 3)], [None]),
    ("expm_frechet", fsl.expm_frechet, sl.expm_frechet, [(3, 3), (3, 3)], [None, None]),
]


@pytest.mark.parametrize("name,ours,theirs,shapes,builders", VALUES,
                         ids=[r[0] for r in VALUES])
def test_values_match(name, ours, theirs, shapes, builders):
    args = [b(x) if b else x for b, x in zip(builders, _rng_args(shapes))]
    got, want = ours(*args), theirs(*args)
    for g, w in zip(tree_leaves(got), tree_leaves(tuple(want) if isinstance(want, tuple)
                                                   else want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("ord", [None, 1, 2, np.inf, -np.inf, 0, 3, -1])
def test_vector_norm_values(ord):
    x = _rng_args([(2, 5)])[0]
    np.testing.assert_allclose(fla.norm(x, ord, axis=1), np.linalg.norm(x, ord, axis=1))


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm_values(ord):
    x = _rng_args([(2, 4, 3)])[0]
    for axis in [(1, 2), (2, 0)]:
        np.testing.assert_allclose(fla.norm(x, ord, axis, keepdims=True),
                                   np.linalg.norm(x, ord, axis, keepdims=True))
    np.testing.assert_allclose(fla.norm(x[0], ord), np.linalg.norm(x[0], ord))


# --- vmap: a leading batch equals a Python loop ---------------------------------------------

B = 3
VMAP = [  # (name, fn, per-example shapes, in_axes)
    ("solve", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3,)], 0),
    ("solve_mat", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3, 2)], 0),
    ("solve_only_b", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3,)], (None, 0)),
    ("solve_only_b_mat", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3, 2)], (None, 0)),
    ("solve_only_A", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3,)], (0, None)),
    ("solve_axis1", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3,)], (1, 1)),
    ("inv", lambda x: fla.inv(gen(x)), [(3, 3)], 0),
    ("det", lambda x: fla.det(gen(x)), [(3, 3)], 0),
    ("slogdet", lambda x: tuple(fla.slogdet(gen(x))), [(3, 3)], 0),
    ("lu_solve_T_only_b", lambda x, b: fsl.lu_solve(fsl.lu_factor(gen(x)), b, trans=1),
     [(3, 3), (3, 2)], (None, 0)),
    ("lu_factor", lambda x: tuple(fsl.lu_factor(pivoting(x))), [(3, 3)], 0),
    ("lu_solve_plain_tuple", lambda x, b: fsl.lu_solve(tuple(fsl.lu_factor(pivoting(x))), b),
     [(3, 3), (3,)], 0),
    ("grad_lu_factor", fxad.grad(lambda x: fnp.sum(fsl.lu_factor(pivoting(x))[0] ** 2)),
     [(3, 3)], 0),
    ("solve_triangular", lambda x, b: fsl.solve_triangular(gen(x), b, lower=True),
     [(3, 3), (3,)], 0),
    ("solve_triangular_only_b", lambda x, b: fsl.solve_triangular(gen(x), b, trans=1),
     [(3, 3), (3,)], (None, 0)),
    ("cholesky", lambda x: fla.cholesky(spd(x)), [(3, 3)], 0),
    ("cho_solve", lambda x, b: fsl.cho_solve(fsl.cho_factor(spd(x)), b), [(3, 3), (3,)], 0),
    ("cho_solve_only_b", lambda x, b: fsl.cho_solve(fsl.cho_factor(spd(x)), b),
     [(3, 3), (3, 2)], (None, 0)),
    ("scipy_solve_pos", lambda x, b: fsl.solve(spd(x), b, assume_a="pos"), [(3, 3), (3,)], 0),
    ("eigh", lambda x: eigh_fixed(sym_distinct(x)), [(3, 3)], 0),
    ("eigvalsh", lambda x: fla.eigvalsh(sym_distinct(x)), [(3, 3)], 1),
    ("grad_eigvalsh", fxad.grad(lambda x: fnp.sum(fla.eigvalsh(sym_distinct(x)) ** 3)),
     [(3, 3)], 0),
    ("qr", lambda x: tuple(fla.qr(dense(x))), [(4, 3)], 0),
    ("svd", lambda x: svd_fixed(rect_distinct(x)), [(3, 4)], 0),
    ("norm", lambda x: fla.norm(x, 2, axis=0), [(3, 2)], 0),
    ("norm_nuc", lambda x: fla.norm(rect_distinct(x), "nuc"), [(3, 2)], 0),
    ("expm", fsl.expm, [(3, 3)], 0),
    ("expm_frechet", lambda a, e: fsl.expm_frechet(a, e, compute_expm=False),
     [(3, 3), (3, 3)], 0),
    ("expm_frechet_only_e", lambda a, e: fsl.expm_frechet(a, e, compute_expm=False),
     [(3, 3), (3, 3)], (None, 0)),
    # batching the derivative rules (JVPs, transposes) as well
    ("grad_solve", fxad.grad(lambda x, b: fnp.sum(fla.solve(gen(x), b) ** 2), (0, 1)),
     [(3, 3), (3,)], 0),
    ("grad_logdet", fxad.grad(lambda x: fla.slogdet(spd(x))[1]), [(3, 3)], 0),
    ("grad_det", fxad.grad(lambda x: fla.det(gen(x))), [(3, 3)], 0),
    ("grad_cholesky", fxad.grad(lambda x: fnp.sum(fla.cholesky(spd(x)) ** 2)), [(3, 3)], 0),
    ("grad_eigh", fxad.grad(lambda x: fnp.sum(eigh_fixed(sym_distinct(x))[1][0] ** 3)),
     [(3, 3)], 0),
    ("grad_svd", fxad.grad(lambda x: fnp.sum(svd_fixed(rect_distinct(x))[0] ** 3)),
     [(4, 3)], 0),
    ("grad_qr", fxad.grad(lambda x: fnp.sum(fla.qr(dense(x))[0] ** 3)), [(4, 3)], 0),
    ("grad_expm", fxad.grad(lambda x: fnp.sum(fsl.expm(x) ** 2)), [(2, 2)], 0),
    ("hessian_expm", fxad.hessian(lambda x: fnp.sum(fsl.expm(x))), [(2, 2)], 0),
]


def _take(a, ax, i):
    return a if ax is None else np.take(a, i, axis=ax)


@pytest.mark.parametrize("name,fn,shapes,in_axes", VMAP, ids=[r[0] for r in VMAP])
def test_vmap_matches_loop(name, fn, shapes, in_axes):
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(shapes)
    rng = np.random.default_rng(1)
    args = []
    for s, ax in zip(shapes, axes):
        full = list(s)
        if ax is not None:
            full.insert(ax, B)
        args.append(rng.uniform(-1, 1, full))
    got = fxad.vmap(fn, in_axes=in_axes)(*args)
    loop = [fn(*[_take(a, ax, i) for a, ax in zip(args, axes)]) for i in range(B)]
    want = tree_map(lambda *xs: np.stack(xs), *loop)
    for g, w in zip(tree_leaves(got), tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


# --- factor once ----------------------------------------------------------------------------

def _count_calls(monkeypatch, name):
    """Count the LU factorizations / solves: fxad's impls run them (on LAPACK) only here."""
    import fxad.rules.linalg.solve as ls
    calls = []
    real = getattr(ls, f"_{name}_one")

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(ls, f"_{name}_one", counting)
    return calls


def test_grad_of_solve_factors_once(monkeypatch):
    rng = np.random.default_rng(2)
    A, b = _np_gen(rng.uniform(-1, 1, (5, 5))), rng.uniform(-1, 1, 5)
    factors, solves = _count_calls(monkeypatch, "lu_factor"), _count_calls(monkeypatch, "lu_solve")
    gA, gb = fxad.grad(lambda A, b: fnp.sum(fla.solve(A, b)), (0, 1))(A, b)
    assert len(factors) == 1 and len(solves) == 2  # x, then one adjoint solve for both
    y = np.linalg.solve(A.T, np.ones(5))
    np.testing.assert_allclose(gb, y, rtol=1e-12)
    np.testing.assert_allclose(gA, -np.outer(y, np.linalg.solve(A, b)), rtol=1e-12)


def test_jacobian_of_solve_factors_once(monkeypatch):
    rng = np.random.default_rng(3)
    A, b = _np_gen(rng.uniform(-1, 1, (4, 4))), rng.uniform(-1, 1, 4)
    factors, solves = _count_calls(monkeypatch, "lu_factor"), _count_calls(monkeypatch, "lu_solve")
    J = fxad.jacrev(lambda b: fla.solve(A, b))(b)
    assert len(factors) == 1 and len(solves) == 2  # the cotangent basis is one solve
    np.testing.assert_allclose(J, np.linalg.inv(A), rtol=1e-12)


def test_lu_factors_reconstruct_the_matrix():
    a = np.random.default_rng(13).uniform(-1, 1, (2, 5, 5))
    lu, piv = sl.lu_factor(a[0])
    from fxad.rules.linalg.solve import lu_pivots_to_permutation, lu_reconstruct
    perm = lu_pivots_to_permutation(piv)
    assert sorted(perm) == list(range(5))
    l, u = np.tril(lu, -1) + np.eye(5), np.triu(lu)
    np.testing.assert_allclose(a[0][perm], l @ u, atol=1e-12)
    lus, pivs = fsl.lu_factor(a)
    np.testing.assert_allclose(lu_reconstruct(lus, pivs), a, atol=1e-12)


def test_grad_through_scipy_lu_idioms_agrees_with_solve():
    rng = np.random.default_rng(14)
    x, b = rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, 3)
    want = fxad.grad(lambda x: fnp.sum(fla.solve(pivoting(x), b)))(x)

    def unpacked(x):
        lu, piv = fsl.lu_factor(pivoting(x))
        return fnp.sum(fsl.lu_solve((lu, piv), b))
    for f in (unpacked, lambda x: fnp.sum(fsl.lu_solve(fsl.lu_factor(pivoting(x)), b))):
        np.testing.assert_allclose(fxad.grad(f)(x), want, rtol=1e-12)
    # the determinant from the factors' diagonal (a 3-cycle of rows: an even permutation)
    det_lu = lambda x: fnp.prod(fnp.sum(fsl.lu_factor(pivoting(x))[0] * np.eye(3), axis=0))
    np.testing.assert_allclose(fxad.grad(det_lu)(x),
                               fxad.grad(lambda x: fla.det(pivoting(x)))(x), rtol=1e-12)


def test_cho_factor_then_solve_differentiates_through_a():
    rng = np.random.default_rng(4)
    x, b = rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, 3)
    f1 = lambda x: fnp.sum(fsl.cho_solve(fsl.cho_factor(spd(x)), b))
    f2 = lambda x: fnp.sum(fla.solve(spd(x), b))
    np.testing.assert_allclose(fxad.grad(f1)(x), fxad.grad(f2)(x), rtol=1e-12)


# --- decompositions -------------------------------------------------------------------------

def test_eigh_eigenvalue_gradient_is_outer_product_of_eigenvector():
    a = sym_distinct(np.random.default_rng(5).uniform(-1, 1, (4, 4)))
    w, v = np.linalg.eigh(a)
    for i in range(4):
        g = fxad.grad(lambda a: fla.eigh(a)[0][i])(a)
        # the symmetric convention (JAX's, PyTorch's): dw_i/dA = v_i v_iᵀ
        np.testing.assert_allclose(g, np.outer(v[:, i], v[:, i]), atol=1e-12)


def test_svd_singular_value_gradient():
    a = rect_distinct(np.random.default_rng(6).uniform(-1, 1, (4, 3)))
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    for i in range(3):
        g = fxad.grad(lambda a: fla.svd(a, compute_uv=False)[i])(a)
        np.testing.assert_allclose(g, np.outer(u[:, i], vt[i]), atol=1e-12)


def test_eigh_vectors_reconstruct_and_stay_orthonormal_to_first_order():
    a = sym_distinct(np.random.default_rng(7).uniform(-1, 1, (3, 3)))
    da = np.random.default_rng(8).uniform(-1, 1, (3, 3))
    da = da + da.T
    (w, v), (dw, dv) = fxad.jvp(lambda a: fla.eigh(a), (a,), (da,))
    np.testing.assert_allclose(v.T @ dv + dv.T @ v, 0, atol=1e-12)  # skew: stays orthonormal
    np.testing.assert_allclose(dv @ np.diag(w) @ v.T + v @ np.diag(dw) @ v.T
                               + v @ np.diag(w) @ dv.T, da, atol=1e-12)


def test_wide_qr_and_full_svd_are_refused():
    x = np.random.default_rng(9).uniform(-1, 1, (2, 3))
    with pytest.raises(FxadValueError, match="m >= n"):
        fxad.jvp(lambda a: fla.qr(a)[0], (x,), (x,))
    with pytest.raises(FxadValueError, match="full_matrices"):
        fla.svd(x)


# --- norms ----------------------------------------------------------------------------------

@pytest.mark.parametrize("f", [lambda x: fla.norm(x), lambda x: fla.norm(x, 2),
                               lambda x: fla.norm(x.reshape(2, 2), "fro"),
                               lambda x: fla.norm(x, 3)])
def test_norm_gradient_at_zero_is_finite(f):
    z = np.zeros(4)
    np.testing.assert_array_equal(fxad.grad(f)(z), np.zeros(4))
    assert np.all(np.isfinite(fxad.hessian(f)(z)))
    np.testing.assert_allclose(fxad.grad(f)(np.array([3.0, 0, 0, 0]))[0], 1.0)


# --- matrix exponential ---------------------------------------------------------------------

def test_expm_jvp_is_the_frechet_derivative():
    rng = np.random.default_rng(10)
    a, e = rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, (3, 3))
    val, tan = fxad.jvp(fsl.expm, (a,), (e,))
    want_val, want_tan = sl.expm_frechet(a, e)
    np.testing.assert_allclose(val, want_val, rtol=1e-13)
    np.testing.assert_allclose(tan, want_tan, rtol=1e-12)
    # and the vjp is the adjoint Fréchet derivative L(Aᵀ, C)
    _, f_vjp = fxad.vjp(fsl.expm, a)
    np.testing.assert_allclose(f_vjp(e)[0], sl.expm_frechet(a.T, e, compute_expm=False),
                               rtol=1e-12)


def test_expm_third_order_2x2():
    a = np.array([[0.3, -0.7], [0.5, 0.1]])
    check_grads(fsl.expm, (a,), order=3, modes=("fwd",))


def test_expm_second_derivative_matches_block_formula():
    """d²expm(A)[E, F] is the top-right block of L([[A, E], [0, A]], [[F, 0], [0, F]])."""
    rng = np.random.default_rng(11)
    a, e, f = (rng.uniform(-1, 1, (3, 3)) for _ in range(3))
    got = fxad.jvp(lambda a: fxad.jvp(fsl.expm, (a,), (e,))[1], (a,), (f,))[1]
    z = np.zeros((3, 3))
    big = sl.expm_frechet(np.block([[a, e], [z, a]]), np.block([[f, z], [z, f]]),
                          compute_expm=False)
    np.testing.assert_allclose(got, big[:3, 3:], rtol=1e-11)


def test_linear_primitives_refuse_nonlinear_transpose():
    rng = np.random.default_rng(12)
    a = _np_gen(rng.uniform(-1, 1, (3, 3)))
    from fxad.rules.linalg.solve import lu_solve_p
    from fxad.interpreters.transpose import UndefinedPrimal
    from fxad.core import ShapedArray
    with pytest.raises(TypeError, match="right-hand side"):
        lu_solve_p.transpose(np.ones(3), UndefinedPrimal(ShapedArray((3, 3), np.float64)),
                             *sl.lu_factor(a), np.ones(3), trans=0, lu_t=False)


def test_singular_and_empty_solves_behave_like_scipy():
    """The LU impls call LAPACK directly; a singular matrix still warns as SciPy does (and
    gives non-finite values, as SciPy's lu_solve would), and empty systems still work."""
    from scipy.linalg import LinAlgWarning
    with pytest.warns(LinAlgWarning, match="Singular matrix"):
        x = fla.solve(np.zeros((2, 2)), np.ones(2))
    assert not np.isfinite(x).all()
    assert fla.solve(np.zeros((0, 0)), np.ones(0)).shape == (0,)
    a = np.array([[2.0, 1.0], [1.0, 3.0]]) * (1 + 1j)
    np.testing.assert_allclose(fsl.lu_solve(fsl.lu_factor(a), np.ones(2), trans=1),
                               sl.lu_solve(sl.lu_factor(a), np.ones(2), trans=1), rtol=1e-14)


_EMPTY_SOLVES = {
    "solve": fla.solve,
    "lu_solve": lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b),
    "solve_triangular": fsl.solve_triangular,
    "cho_solve": lambda a, b: fsl.cho_solve(fsl.cho_factor(a), b),
}


@pytest.mark.parametrize("name,dtype", [
    (name, dtype) for name in _EMPTY_SOLVES
    for dtype in (np.float64, np.float32, np.float16, np.int64, np.complex64)
    if (name, dtype) != ("cho_solve", np.float16)])  # fxad's cholesky has no float16 yet
def test_empty_systems_have_the_shape_rules_dtype(name, dtype):
    """Empty systems (no unknowns, or no right-hand sides) never reach LAPACK (SciPy < 1.14
    rejects n = 0): the solution has b's shape and the dtype a 1x1 system of the same dtypes
    gets, eagerly and staged, batched or not."""
    fn = _EMPTY_SOLVES[name]
    want = fn(2 * np.eye(1, dtype=dtype), np.ones(1, dtype)).dtype
    for a, b in [(np.zeros((0, 0)), np.ones(0)), (np.zeros((0, 0)), np.ones((0, 3))),
                 (2 * np.eye(3), np.ones((3, 0))), (np.zeros((2, 0, 0)), np.ones((2, 0, 3)))]:
        a, b = a.astype(dtype), b.astype(dtype)
        for got in (fn(a, b), fxad.jit(fn)(a, b)):
            assert (got.shape, got.dtype) == (b.shape, want), (a.shape, b.shape, got.dtype)
    lu, piv = fsl.lu_factor(np.zeros((0, 0), dtype))
    assert (lu.shape, lu.dtype, piv.shape, piv.dtype) == ((0, 0), want, (0,), np.int32)


@pytest.mark.parametrize("name,fn", [
    ("solve", lambda a: fla.solve(a, np.ones(3, np.float16))), ("inv", fla.inv),
    ("det", fla.det), ("slogdet", lambda a: fla.slogdet(a)[1]), ("expm", fsl.expm),
    ("solve_triangular", lambda a: fsl.solve_triangular(a, np.ones(3, np.float16)))])
def test_half_precision_computes_in_float32_eagerly_and_staged(name, fn):
    """LAPACK has no float16: SciPy computes in float32, and the shape rules say so too."""
    a = (np.eye(3) * 2 + 0.1).astype(np.float16)
    assert fn(a).dtype == np.float32
    assert fxad.make_jaxpr(fn)(a).out_avals[0].dtype == np.float32
    assert fxad.jit(fn)(a).dtype == np.float32


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_solve_and_inv_for_every_memory_layout(layout):
    """solve/inv factor aᵀ (LAPACK's column-major view of a row-major a); the answer and its
    gradient must not depend on how `a` lies in memory."""
    rng = np.random.default_rng(5)
    base = _np_gen(rng.uniform(-1, 1, (8, 8)))
    a = {"C": base[:4, :4].copy(), "F": np.asfortranarray(base[:4, :4]),
         "strided": base[::2, ::2]}[layout]
    b = rng.uniform(-1, 1, 4)
    np.testing.assert_allclose(fnp.linalg.solve(a, b), np.linalg.solve(a, b), rtol=1e-12)
    np.testing.assert_allclose(fnp.linalg.inv(a), np.linalg.inv(a), rtol=1e-12)
    np.testing.assert_allclose(fxad.jit(fnp.linalg.solve)(a, b), np.linalg.solve(a, b),
                               rtol=1e-12)
    ga, gb = fxad.grad(lambda a, b: fnp.sum(fnp.linalg.solve(a, b)), argnums=(0, 1))(a, b)
    y = np.linalg.solve(a.T, np.ones(4))
    np.testing.assert_allclose(gb, y, rtol=1e-12)
    np.testing.assert_allclose(ga, -np.outer(y, np.linalg.solve(a, b)), rtol=1e-12)


def test_transposed_lu_factors_are_those_of_the_transpose():
    from fxad.rules.linalg.solve import _lu_factor_one
    a = _np_gen(np.random.default_rng(6).uniform(-1, 1, (5, 5)))
    lu, piv = _lu_factor_one(a, transposed=True)
    lu_ref, piv_ref = sl.lu_factor(a.T)
    np.testing.assert_allclose(lu, lu_ref, rtol=1e-14)
    np.testing.assert_array_equal(piv, piv_ref)

"""fxad.lax.linalg (JAX's jax.lax.linalg signatures): values against NumPy/SciPy or the defining
identity, derivatives by check_grads (to order 2, both modes), vmap against a loop, jit against
eager, and the clear errors for what is not supported."""
import numpy as np
import pytest
import scipy.linalg as sl

import fxad
import fxad.lax.linalg as L
from fxad.errors import FxadValueError
from fxad.test_util import check_grads

R = np.random.default_rng(0)
A = R.standard_normal((4, 4))
SPD = A @ A.T + 4 * np.eye(4)
B = R.standard_normal((4, 3))
BR = R.standard_normal((3, 4))
UT = np.triu(A) + 3 * np.eye(4)


def spd(x):
    return x @ x.T + 4 * np.eye(x.shape[-1])


def test_eigh_returns_vectors_then_ascending_values():
    v, w = L.eigh(SPD)
    want_w, _ = np.linalg.eigh(SPD)
    np.testing.assert_allclose(w, want_w, rtol=1e-12)
    np.testing.assert_allclose(SPD @ v, v * w, atol=1e-11)
    v2, w2 = L.eigh(SPD, subset_by_index=(1, 3))
    np.testing.assert_allclose(w2, want_w[1:3], rtol=1e-12)
    assert v2.shape == (4, 2)
    # symmetrize_input=False reads the `lower` triangle only
    lower_only = np.tril(SPD) + np.triu(R.standard_normal((4, 4)), 1)
    np.testing.assert_allclose(L.eigh(lower_only, symmetrize_input=False)[1], want_w,
                               rtol=1e-12)
    upper_only = np.triu(SPD) + np.tril(R.standard_normal((4, 4)), -1)
    np.testing.assert_allclose(L.eigh(upper_only, lower=False, symmetrize_input=False)[1],
                               want_w, rtol=1e-12)


def test_cholesky_is_the_lower_factor():
    np.testing.assert_allclose(L.cholesky(SPD), np.linalg.cholesky(SPD), rtol=1e-12)
    noisy = SPD + np.triu(R.standard_normal((4, 4)), 1)
    np.testing.assert_allclose(L.cholesky(noisy, symmetrize_input=False),
                               np.linalg.cholesky(SPD), rtol=1e-12)


def test_lu_packed_factors_pivots_and_permutation():
    lu, piv, perm = L.lu(A)
    want_lu, want_piv = sl.lu_factor(A)
    np.testing.assert_allclose(lu, want_lu, rtol=1e-12)
    np.testing.assert_array_equal(piv, want_piv)
    assert piv.dtype == perm.dtype == np.int32
    l, u = np.tril(lu, -1) + np.eye(4), np.triu(lu)
    np.testing.assert_allclose(A[perm], l @ u, atol=1e-12)
    np.testing.assert_array_equal(L.lu_pivots_to_permutation(piv, 4), perm)
    np.testing.assert_array_equal(L.lu_pivots_to_permutation(np.array([2, 2], np.int32), 4),
                                  [2, 0, 1, 3])


def test_qr_svd_schur_reconstruct():
    q, r = L.qr(A)
    np.testing.assert_allclose(q @ r, A, atol=1e-12)
    tall = R.standard_normal((5, 3))
    q, r = L.qr(tall, full_matrices=False)
    assert q.shape == (5, 3) and r.shape == (3, 3)
    u, s, vh = L.svd(A)
    np.testing.assert_allclose((u * s) @ vh, A, atol=1e-12)
    np.testing.assert_allclose(L.svd(A, compute_uv=False), np.linalg.svd(A)[1], rtol=1e-12)
    t, z = L.schur(A)
    want_t, _ = sl.schur(A)
    np.testing.assert_allclose(z @ t @ z.T, A, atol=1e-11)
    np.testing.assert_allclose(np.diag(t), np.diag(want_t), rtol=1e-10)


def test_eig_left_and_right_eigenvectors():
    w, vl, vr = L.eig(A)
    np.testing.assert_allclose(A @ vr, vr * w, atol=1e-11)
    np.testing.assert_allclose(vl.conj().T @ A, w[:, None] * vl.conj().T, atol=1e-11)
    np.testing.assert_allclose(np.linalg.norm(vl, axis=0), 1.0, rtol=1e-12)
    only_w, only_vr = L.eig(A, compute_left_eigenvectors=False)
    np.testing.assert_allclose(only_vr, vr)


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a,conjugate_a", [(False, False), (True, False),
                                                     (False, True), (True, True)])
def test_triangular_solve_every_form(left_side, lower, transpose_a, conjugate_a):
    a = (np.tril if lower else np.triu)(A + 1j * R.standard_normal((4, 4))) + 3 * np.eye(4)
    b = (B if left_side else BR) + 0j
    op = a.conj() if conjugate_a else a
    op = op.T if transpose_a else op
    x = L.triangular_solve(a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                           conjugate_a=conjugate_a)
    np.testing.assert_allclose(op @ x if left_side else x @ op, b, atol=1e-12)
    # the other triangle is never read
    junk = a + (np.triu if lower else np.tril)(R.standard_normal((4, 4)), 1 if lower else -1)
    np.testing.assert_allclose(L.triangular_solve(junk, b, left_side=left_side, lower=lower,
                                                  transpose_a=transpose_a,
                                                  conjugate_a=conjugate_a), x, atol=1e-12)


def test_tridiagonal_solve():
    dl, d, du = R.standard_normal(4), R.standard_normal(4) + 5, R.standard_normal(4)
    a = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    np.testing.assert_allclose(a @ L.tridiagonal_solve(dl, d, du, B), B, atol=1e-12)


ROWS = [
    ("cholesky", lambda x: L.cholesky(spd(x))),
    ("eigh_values", lambda x: L.eigh(spd(x))[1]),
    ("eigh_vectors_gauge_free", lambda x: (lambda v: v @ v.T * 2.0)(L.eigh(spd(x))[0][:, :2])),
    ("lu", lambda x: L.lu(x + 4 * np.eye(4))[0]),
    ("qr_r_abs", lambda x: np.abs(L.qr(x + 4 * np.eye(4))[1]) * 1.0),
    ("svd_values", lambda x: L.svd(x, compute_uv=False)),
    ("triangular_solve_left", lambda x: L.triangular_solve(np.triu(x) + 3 * np.eye(4), B,
                                                            left_side=True)),
    ("triangular_solve_right_lower_t", lambda x: L.triangular_solve(
        np.tril(x) + 3 * np.eye(4), BR, lower=True, transpose_a=True)),
    ("tridiagonal_solve", lambda x: L.tridiagonal_solve(x[0], x[1] + 5.0, x[2], B)),
]


@pytest.mark.parametrize("name,fn", ROWS, ids=[r[0] for r in ROWS])
def test_row_derivatives_vmap_jit(name, fn):
    x = A.copy()
    check_grads(fn, (x,), order=2, modes=("fwd", "rev"))
    xs = np.stack([A, A.T * 0.9, A * 1.1])
    np.testing.assert_allclose(fxad.vmap(fn)(xs), np.stack([fn(v) for v in xs]), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(fxad.jit(fn)(x), fn(x), rtol=1e-10, atol=1e-12)


def test_unsupported_forms_say_what_to_do():
    with pytest.raises(FxadValueError, match="full_matrices=False"):
        L.qr(R.standard_normal((5, 3)))
    with pytest.raises(FxadValueError, match="full_matrices=False"):
        L.svd(R.standard_normal((5, 3)))
    with pytest.raises(FxadValueError, match="pivoting"):
        L.qr(A, pivoting=True)
    with pytest.raises(FxadValueError, match="square"):
        L.cholesky(R.standard_normal((3, 4)))
    with pytest.raises(FxadValueError, match="sort_eig_vals"):
        L.schur(A, sort_eig_vals=True)

"""jax.lax.linalg: JAX's primitive-level linear algebra, with JAX's signatures and return
conventions (eigh returns (v, w); lu returns (lu, pivots, permutation); triangular_solve
solves from the right by default), on the primitives of fxad/rules/linalg/. Matrices are the
last two axes, with any leading batch axes."""
from __future__ import annotations

import numpy as np

from ..core import Tracer
from ..errors import FxadValueError
from ..rules import ops
from ..rules.helpers import dtype_of, shape_of
from ..rules.linalg import decompositions as _dec, solve as _sol, sylvester as _syl
from ..rules.linalg.solve import mH, mT

__all__ = ["cholesky", "eig", "eigh", "lu", "lu_pivots_to_permutation", "qr", "schur", "svd",
           "triangular_solve", "tridiagonal_solve"]


def _float(x):
    """x as a float array or tracer (integers become float64, as in NumPy)."""
    if not isinstance(x, Tracer):
        x = np.asarray(x)
    return x if dtype_of(x).kind in "fc" else ops.convert_element_type(x, np.float64)


def _matrices(name, x, square=False):
    """x as a float array of matrices (..., m, n), checked with a message naming `name`."""
    x = _float(x)
    s = shape_of(x)
    if len(s) < 2 or (square and s[-1] != s[-2]):
        raise FxadValueError(f"lax.linalg.{name}: expected {'square ' if square else ''}"
                             f"matrices (..., m, n) in the last two axes, got shape {s}")
    return x


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor L (x = L Lᴴ) of Hermitian positive-definite matrices; with
    symmetrize_input=False only x's lower triangle is read."""
    x = _matrices("cholesky", x, square=True)
    return _sol.cholesky(_sol.symmetric_part(x) if symmetrize_input else x)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None):
    """(v, w): eigenvectors (columns of v) and eigenvalues (ascending) of Hermitian matrices,
    reading the `lower` (or upper) triangle when symmetrize_input is False.
    subset_by_index=(lo, hi) keeps the eigenpairs lo..hi-1 (in ascending order)."""
    x = _matrices("eigh", x, square=True)
    w, v = _dec.eigh(_sol.symmetric_part(x) if symmetrize_input else x, bool(lower))
    if subset_by_index is not None:
        lo, hi = (int(i) for i in subset_by_index)
        n = shape_of(x)[-1]
        if not 0 <= lo <= hi <= n:
            raise FxadValueError(f"lax.linalg.eigh: subset_by_index={subset_by_index} must be "
                                 f"0 <= lo <= hi <= {n}")
        w, v = w[..., lo:hi], v[..., lo:hi]
    return v, w  # LAPACK's eigenvalues are ascending already: sort_eigenvalues holds


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True, use_magma=None):
    """[w, vl, vr] (the eigenvectors asked for): eigenvalues and left (vlᴴ x = w vlᴴ) and right
    (x vr = vr w) eigenvectors of general square matrices, complex, each eigenvector of unit
    norm with its largest component real (LAPACK's normalization). Derivatives assume distinct
    eigenvalues."""
    x = _matrices("eig", x, square=True)
    w, vr = _dec.eig(x)
    out = [w]
    if compute_left_eigenvectors:
        n = shape_of(x)[-1]
        eye = np.broadcast_to(np.eye(n, dtype=dtype_of(vr)), shape_of(vr))
        lu, piv = _sol.lu_factor(vr)
        vl = mH(_sol.lu_solve(vr, lu, piv, eye))  # rows of vr⁻¹ are the left eigenvectors ᴴ
        out.append(_unit_largest_real(vl))
    if compute_right_eigenvectors:
        out.append(vr)
    return out


def _unit_largest_real(v):
    """Each column scaled to unit norm with its largest-magnitude component real and positive."""
    norms = ops.sqrt(ops.reduce_sum(ops.real(ops.mul(v, ops.conj(v))), (len(shape_of(v)) - 2,),
                                    True))
    v = ops.div(v, norms)
    mag = ops.real(ops.mul(v, ops.conj(v)))
    big = ops.argmax(mag, len(shape_of(v)) - 2, True)  # the row of each column's largest
    rows = np.arange(shape_of(v)[-2]).reshape(-1, 1)
    top = ops.reduce_sum(ops.select(ops.eq(big, rows), v, ops.mul(v, 0.0)),
                         (len(shape_of(v)) - 2,), True)
    return ops.mul(v, ops.div(ops.conj(top), ops.abs(top)))


def lu(x):
    """(lu, pivots, permutation) of square matrices with partial pivoting, as LAPACK's getrf:
    `lu` holds U and the unit-lower L below its diagonal, `pivots` the row swaps (row i was
    swapped with pivots[i]), and x[permutation] = L U. Differentiable in `lu`."""
    x = _matrices("lu", x, square=True)
    factors, pivots = _sol.lu_factor(x, with_lu_tangent=True)
    pivots = ops.convert_element_type(pivots, np.int32)
    return factors, pivots, _sol.lu_pivots_to_permutation(pivots)


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation (of permutation_size entries) that LAPACK's row swaps `pivots` apply."""
    k, size = shape_of(pivots)[-1], int(permutation_size)
    if size < k:
        raise FxadValueError(f"lax.linalg.lu_pivots_to_permutation: permutation_size={size} "
                             f"is less than the number of pivots {k}")
    pivots = ops.convert_element_type(pivots, np.int32)
    if size > k:  # rows past the pivots stay in place
        lead = tuple(shape_of(pivots)[:-1])
        rest = np.broadcast_to(np.arange(k, size, dtype=np.int32), lead + (size - k,))
        pivots = ops.concatenate([pivots, rest], len(lead))
    return _sol.lu_pivots_to_permutation(pivots)


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """(q, r) with x = q r, q with orthonormal columns, r upper triangular. The full
    factorization of a tall matrix (an m x m q) is not available: pass full_matrices=False."""
    if pivoting:
        raise FxadValueError("lax.linalg.qr: pivoting=True is not supported")
    x = _matrices("qr", x)
    m, n = shape_of(x)[-2:]
    if m < n:
        raise FxadValueError(f"lax.linalg.qr: matrices with more columns than rows ({m} x {n}) "
                             "are not supported; factor the transpose")
    if full_matrices and m > n:
        raise FxadValueError(f"lax.linalg.qr: full_matrices=True for a tall {m} x {n} matrix "
                             "needs an m x m q, which fxad does not compute; pass "
                             "full_matrices=False")
    return tuple(_dec.qr(x))


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """(u, s, vh) with x = u diag(s) vh (s descending), or s alone without compute_uv.
    full_matrices=True is available for square matrices (where it is the reduced form).
    subset_by_index=(lo, hi) keeps the singular triplets lo..hi-1."""
    x = _matrices("svd", x)
    m, n = shape_of(x)[-2:]
    u, s, vh = _dec.svd(x)
    if subset_by_index is not None:
        lo, hi = (int(i) for i in subset_by_index)
        if not 0 <= lo <= hi <= min(m, n):
            raise FxadValueError(f"lax.linalg.svd: subset_by_index={subset_by_index} must be "
                                 f"0 <= lo <= hi <= {min(m, n)}")
        u, s, vh = u[..., lo:hi], s[..., lo:hi], vh[..., lo:hi, :]
    if not compute_uv:
        return s
    if full_matrices and m != n and subset_by_index is None:
        raise FxadValueError("lax.linalg.svd: full_matrices=True is supported for square "
                             "matrices only; pass full_matrices=False")
    return u, s, vh


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """(t, vs) with x = vs t vsᴴ: the real Schur form of a real matrix (quasi-triangular), the
    complex one of a complex matrix; t alone without compute_schur_vectors."""
    if sort_eig_vals or select_callable is not None:
        raise FxadValueError("lax.linalg.schur: sorting the eigenvalues (sort_eig_vals, "
                             "select_callable) is not supported")
    x = _matrices("schur", x, square=True)
    t, vs = _syl.schur(x, "complex" if dtype_of(x).kind == "c" else "real")
    return (t, vs) if compute_schur_vectors else t


def _solve_left(a, b, lower, transpose, conjugate, unit_diagonal):
    """op(a) x = b, op(a) one of a, aᵀ, conj(a), aᴴ."""
    if conjugate and not transpose:  # conj(a) x = b  <=>  a conj(x) = conj(b)
        return ops.conj(_sol.solve_triangular(a, ops.conj(b), lower, 0, unit_diagonal))
    trans = 0 if not transpose else 2 if conjugate else 1
    return _sol.solve_triangular(a, b, lower, trans, unit_diagonal)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """x with op(a) x = b (left_side) or x op(a) = b (JAX's default), for triangular a (the
    `lower` or upper triangle is read; unit_diagonal: its diagonal is taken as ones) and
    op(a) = a, aᵀ (transpose_a), conj(a) (conjugate_a), or aᴴ (both)."""
    a = _matrices("triangular_solve", a, square=True)
    b = _matrices("triangular_solve", b)
    if len(shape_of(b)) != len(shape_of(a)):
        raise FxadValueError(f"lax.linalg.triangular_solve: b (shape {shape_of(b)}) must be "
                             f"matrices with a's leading dimensions {shape_of(a)[:-2]}")
    if left_side:
        return _solve_left(a, b, lower, transpose_a, conjugate_a, unit_diagonal)
    # x op(a) = b  <=>  op(a)ᵀ xᵀ = bᵀ, and op(a)ᵀ is a with transpose_a flipped
    return mT(_solve_left(a, mT(b), lower, not transpose_a, conjugate_a, unit_diagonal))


def tridiagonal_solve(dl, d, du, b):
    """x with A x = b for the tridiagonal A of sub-diagonal dl (dl[..., 0] unused), diagonal d
    and super-diagonal du (du[..., -1] unused); b is (..., m, n). Solved by LU with partial
    pivoting of the assembled matrix."""
    d = _float(d)
    m = shape_of(d)[-1]
    dt = dtype_of(d)
    dl, du = (ops.convert_element_type(v, dt) for v in (dl, du))
    b = _matrices("tridiagonal_solve", b)
    rows = np.arange(m)
    sub = (rows[:, None] == rows[None, :] + 1).astype(dt)  # (i, i - 1)
    sup = (rows[:, None] + 1 == rows[None, :]).astype(dt)  # (i, i + 1)
    eye = np.eye(m, dtype=dt)

    def col(v):  # v[..., i] as the (..., m, 1) column broadcasting along each row i
        return ops.reshape(v, shape_of(v) + (1,))
    a = ops.add(ops.add(ops.mul(col(d), eye), ops.mul(col(dl), sub)), ops.mul(col(du), sup))
    lu_, piv = _sol.lu_factor(a)
    return _sol.lu_solve(a, lu_, piv, b)

"""Rule table: fxad/rules/linalg/sylvester.py (solve_sylvester, sqrtm, polar, schur, lu,
eigh_tridiagonal). Rows build well-conditioned inputs from values in [-1, 1] (as
tests/rules/linalg/test_solve.py does): derivatives to second order in both modes."""
import numpy as np

import fxad.numpy as fnp

from fxad.rules.linalg import sylvester as lm

from ..common import floats, Row, row_tests


def spd(x):
    return x @ np.swapaxes(x, -1, -2) * 0.2 + np.diag(np.arange(1.0, x.shape[-1] + 1))


def gen(x):
    return x + 3 * np.eye(x.shape[-1])


def upper_distinct(x):  # real distinct eigenvalues 1..n in an orthogonal-ish similarity
    n = x.shape[-1]
    q = np.linalg.qr(np.arange(1.0, n * n + 1).reshape(n, n) % 7 + np.eye(n))[0]
    return q @ (np.triu(x, 1) * 0.5 + np.diag(np.arange(1.0, n + 1)) + np.tril(x, -1) * 0.05) \
        @ q.T


def negative_eig(x):  # real eigenvalues -1, 2, 3: the principal root is complex
    n = x.shape[-1]
    q = np.linalg.qr(np.arange(1.0, n * n + 1).reshape(n, n) % 5 + np.eye(n))[0]
    return q @ (np.triu(x, 1) * 0.3 + np.diag([-1.0, 2.0, 3.0]) + np.tril(x, -1) * 0.05) @ q.T


def rotation_like(x):  # eigenvalues 2 ± i and 3: the real Schur form has a 2x2 block
    base = np.array([[2.0, -1.0, 0.2], [1.0, 2.0, 0.1], [0.0, 0.3, 3.0]])
    return base + 0.05 * x


def band(ab, u):  # the main diagonal (row u of SciPy's storage) dominant
    return ab + np.eye(ab.shape[-2])[u][:, None] * 4.0


def _values_and_projectors(w, v):
    return w, fnp.einsum("ik,jk->kij", v, v)


TABLE = [
    ("solve_sylvester", lambda a, b, q: lm.solve_sylvester(gen(a), gen(b), q),
     [(3, 3), (2, 2), (3, 2)]),
    ("sqrtm", lambda a: lm.sqrtm(spd(a)), [(3, 3)]),
    ("sqrtm_batched", lambda a: lm.sqrtm(spd(a)), [(2, 3, 3)]),
    # a real matrix with a negative eigenvalue: SciPy's complex root
    ("sqrtm_complex_out", lambda a: lm.sqrtm(negative_eig(a), complex_out=True), [(3, 3)]),
    # the Sylvester solve on X's Schur form (sqrtm's JVP): x carries the derivative, the
    # factors are constants; trans 1 solves with Xᵀ (its transpose)
    *[(f"sylvester_schur_{t}", lambda x, c, t=t: lm.sylvester_schur(
        spd(x), *lm.schur_of(spd(x)), c, t), [(3, 3), (3, 3)]) for t in (0, 1)],
    ("sylvester_schur_2x2_blocks", lambda x, c: lm.sylvester_schur(
        rotation_like(x), *lm.schur_of(rotation_like(x)), c), [(3, 3), (3, 3)]),
    # banded solves in SciPy's storage: vector and matrix right-hand sides, both transposes
    ("solve_banded_11", lambda ab, b: lm.solve_banded(band(ab, 1), b, 1, 1), [(3, 4), (4,)]),
    ("solve_banded_21_T", lambda ab, b: lm.solve_banded(band(ab, 1), b, 2, 1, 1),
     [(4, 5), (5, 2)]),
    ("solve_banded_02", lambda ab, b: lm.solve_banded(band(ab, 2), b, 0, 2), [(3, 4), (4, 2)]),
    ("solve_banded_batched", lambda ab, b: lm.solve_banded(band(ab, 1), b, 1, 1),
     [(2, 3, 4), (2, 4)]),
    # (multiple results as tuples: check_grads pairs them with tuple cotangents)
    ("polar_right", lambda a: tuple(lm.polar(a + np.eye(4, 3) * 3, "right")), [(4, 3)]),
    ("polar_left", lambda a: tuple(lm.polar(a + np.eye(2, 4) * 3, "left")), [(2, 4)]),
    ("schur_real", lambda a: tuple(lm.schur(upper_distinct(a), "real")), [(3, 3)]),
    ("lu_square", lambda a: tuple(lm.lu(gen(a))[1:]), [(3, 3)]),
    ("lu_tall", lambda a: tuple(lm.lu(a + np.eye(4, 3) * 3)[1:]), [(4, 3)]),
    ("lu_wide", lambda a: tuple(lm.lu(a + np.eye(2, 4) * 3)[1:]), [(2, 4)]),
    # eigenvectors through their projectors v v^T: LAPACK may flip a vector's sign between
    # nearby inputs (SciPy 1.15 does), which finite differences would see as a jump
    ("eigh_tridiagonal", lambda d, e: _values_and_projectors(
        *lm.eigh_tridiagonal(d + np.arange(4.0), e * 0.3 + 0.5)), [(4,), (3,)]),
    ("eigvalsh_tridiagonal", lambda d, e: lm.eigvalsh_tridiagonal(d + np.arange(4.0), e * 0.3),
     [(4,), (3,)]),
]


TABLE = [Row(n, f, s, floats(-1, 1)) for n, f, s in TABLE]
test_row = row_tests(TABLE)



"""Well-conditioned inputs for the linear-algebra rule tables, built from arbitrary values in
[-1, 1] (SPD, diagonally dominant, distinct eigen/singular values), and their NumPy versions
for the value checks."""
import numpy as np

import fxad.numpy as fnp
from fxad.numpy import linalg as fla


def mT(x):
    return fnp.swapaxes(x, -1, -2)


def gen(x):  # diagonally dominant: far from singular
    return x + 3 * np.eye(x.shape[-1])


def spd(x):
    return x @ mT(x) + 3 * np.eye(x.shape[-1])


def symm(x):  # the symmetric part: symmetric-input functions are checked along symmetric
    return 0.5 * (x + mT(x))  # directions (their derivatives live there; notes/linalg.md)


def sym_distinct(x):  # symmetric, eigenvalues near 1, 2, 3, ...: well separated
    n = x.shape[-1]
    return 0.1 * (x + mT(x)) + np.diag(np.arange(1.0, n + 1))


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


def diag_sign(m):
    """sign of each column's diagonal entry, shape (..., 1, k): fixes the eigen/singular
    vectors' arbitrary signs (the diagonal entries are the large ones here)."""
    k = m.shape[-1]
    d = fnp.sum(m[..., :k, :] * np.eye(k), axis=-2)
    return fnp.sign(d)[..., None, :]


def eigh_fixed(a, **kw):
    w, v = fla.eigh(a, **kw)
    return w, v * diag_sign(v)


def svd_fixed(a):
    u, s, vt = fla.svd(a, full_matrices=False)
    sg = diag_sign(u)
    return u * sg, s, vt * mT(sg)


V4 = np.array([3.0, -6.0, 9.0, -12.0])  # offsets: distinct |entries|, none near 0


M23 = np.array([[3.0, -6.0, 9.0], [-13.0, 16.0, -20.0]])


def flip_first_row(a):
    return a * np.array([-1.0, 1.0, 1.0])[:, None]


def rng_args(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, s) for s in shapes]


def np_gen(x):
    return x + 3 * np.eye(x.shape[-1])


def np_spd(x):
    return x @ np.swapaxes(x, -1, -2) + 3 * np.eye(x.shape[-1])


def np_sym(x):
    """The symmetric part, which the symmetric routines read (exactly x if x is symmetric)."""
    return x + (np.swapaxes(x, -1, -2) - x) / 2


def np_fix_signs(w, v):
    return w, v * np.sign(v[:1])

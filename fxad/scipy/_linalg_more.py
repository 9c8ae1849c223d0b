"""scipy.linalg's lu, sqrtm, schur, polar, solve_sylvester, eigh_tridiagonal (rules:
fxad/rules/linalg/sylvester.py) and the constructors block_diag, toeplitz (composites);
fxad/scipy/linalg.py re-exports them (notes/linalg.md)."""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..errors import FxadValueError
from ..numpy.linalg import _matrices, as_float
from ..rules.linalg import sylvester as _more


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """(P, L, U) with a = P @ L @ U (L unit lower trapezoidal, U upper); permute_l returns
    (P @ L, U); p_indices returns P as the row indices p with a = (L @ U)[p]."""
    p, l, u = _more.lu(_matrices("lu", a))
    if permute_l:
        return fnp.matmul(p, l), u
    if p_indices:
        return fnp.argmax(p, axis=-1), l, u  # a[i] = (L U)[p[i]]
    return p, l, u


def sqrtm(A, disp=True, blocksize=64):
    """The principal square root (real for a real matrix whose root is real; a real matrix
    whose root is complex is refused with a message: pass it as complex)."""
    return _more.sqrtm(_matrices("sqrtm", A, square=True))


def schur(a, output="real", lwork=None, overwrite_a=False, sort=None, check_finite=True):
    if output not in ("real", "complex", "r", "c"):
        raise FxadValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    if sort is not None:
        raise FxadValueError("schur: sort is not supported (the reordered form's derivative "
                             "is not implemented)")
    output = {"r": "real", "c": "complex"}.get(output, output)
    a = _matrices("schur", a, square=True)
    if output == "complex":
        a = lax.convert_element_type(a, np.result_type(fnp.result_type(a), np.complex64))
    return tuple(_more.schur(a, output))


def polar(a, side="right"):
    if side not in ("right", "left"):
        raise FxadValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    return tuple(_more.polar(_matrices("polar", a), side))


def solve_sylvester(a, b, q):
    a, b = _matrices("solve_sylvester", a, square=True), _matrices("solve_sylvester", b,
                                                                  square=True)
    return _more.solve_sylvester(a, b, as_float(q))


def eigh_tridiagonal(d, e, eigvals_only=False, select="a", select_range=None,
                     check_finite=True, tol=0.0, lapack_driver="auto"):
    if select != "a" or select_range is not None:
        raise FxadValueError("eigh_tridiagonal: only select='a' (all eigenvalues) is "
                             "supported; index the result instead")
    d, e = as_float(d), as_float(e)
    if eigvals_only:
        return _more.eigvalsh_tridiagonal(d, e)
    return tuple(_more.eigh_tridiagonal(d, e))


def block_diag(*arrs):
    """The block-diagonal matrix of the arguments (scalars and 1-d arrays are 1-row
    matrices, as in SciPy); built by concatenating zero-padded rows, differentiable."""
    if not arrs:
        return np.zeros((1, 0))
    mats = []
    for a in arrs:
        a = fnp.asarray(a)
        if fnp.ndim(a) > 2:
            raise FxadValueError(f"block_diag: arguments must have at most 2 dimensions, got "
                                 f"{fnp.ndim(a)}")
        mats.append(fnp.atleast_2d(a))
    dt = fnp.result_type(*mats)
    total = sum(fnp.shape(m)[1] for m in mats)
    rows, col = [], 0
    for m in mats:
        r, c = fnp.shape(m)
        parts = [np.zeros((r, col), dt), lax.convert_element_type(m, dt),
                 np.zeros((r, total - col - c), dt)]
        rows.append(fnp.concatenate(parts, axis=1))
        col += c
    return fnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """T[i, j] = c[i - j] below the diagonal, r[j - i] above (r[0] is ignored; r defaults to
    conj(c)); a gather from the concatenation [r reversed, c]."""
    c = fnp.ravel(fnp.asarray(c))
    r = lax.conj(c) if r is None else fnp.ravel(fnp.asarray(r))
    n, m = fnp.shape(c)[0], fnp.shape(r)[0]
    vals = fnp.concatenate([fnp.flip(r[1:]), c]) if m > 1 else c
    idx = (m - 1) + np.arange(n)[:, None] - np.arange(m)[None, :]
    return vals[idx]


__all__ = ["lu", "sqrtm", "schur", "polar", "solve_sylvester", "eigh_tridiagonal",
           "block_diag", "toeplitz"]

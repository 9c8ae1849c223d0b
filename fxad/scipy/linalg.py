"""scipy.linalg's names and signatures, differentiable (rules: fxad/rules/linalg/).

`lu_factor`/`cho_factor` return scipy's tuples, which also remember the matrix, so
`lu_solve(lu_factor(a), b)` differentiates with respect to `a` through the one factorization
(notes/linalg.md). overwrite_* and check_finite are accepted and ignored. The routines for
symmetric (Hermitian) matrices are functions of the input's symmetric (Hermitian) part, as
in fxad.numpy.linalg: SciPy's values on every symmetric input, whichever triangle `lower`
names, and symmetric gradients.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..core import Tracer
from ..errors import ConcretizationError, FxadValueError
from ..numpy.linalg import (_matrices, as_float, det, hermitian_matrices, inv, norm,  # noqa: F401
                            solve_operands, svd as _np_svd)
from ..numpy.manipulation import diagonal as _diagonal
from ..rules.linalg import decompositions as _dec, solve as _sol, sylvester as _syl
from ..lax import stop_gradient
from ..tree_util import register_pytree_node
from ._special_matrices import (circulant, companion, convolution_matrix, dft,  # noqa: F401
                                fiedler, fiedler_companion, hadamard, hankel, helmert,
                                hilbert, invhilbert, invpascal, leslie, pascal)
from ._special_matrices import __all__ as _special


class LUFactor(tuple):
    """(lu, piv) as SciPy returns it; `.a` is the factored matrix, through which `lu_solve`
    differentiates with the one factorization."""

    def __new__(cls, lu, piv, a):
        self = super().__new__(cls, (lu, piv))
        self.a = a
        return self


class ChoFactor(tuple):
    """(c, lower) as SciPy returns it; `.a` is the factored matrix (see LUFactor)."""

    def __new__(cls, c, lower, a):
        self = super().__new__(cls, (c, lower))
        self.a = a
        return self


register_pytree_node(LUFactor, lambda f: ((f[0], f[1], f.a), None),
                     lambda _, ch: LUFactor(*ch))
register_pytree_node(ChoFactor, lambda f: ((f[0], f.a), f[1]),
                     lambda lower, ch: ChoFactor(ch[0], lower, ch[1]))


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv): the LU factorization with partial pivoting in LAPACK's compact form, as
    `scipy.linalg.lu_factor`; differentiable in a."""
    a = _matrices("lu_factor", a, square=True)
    lu, piv = _sol.lu_factor(a, with_lu_tangent=True)  # lu's own derivative, for direct use
    return LUFactor(lu, piv, a)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with a x = b (or a^T x = b for trans=1, a^H x = b for 2) from lu_factor's (lu, piv), as
    `scipy.linalg.lu_solve`; differentiable in lu and b."""
    lu, piv = lu_and_piv
    a = getattr(lu_and_piv, "a", None)
    if a is None:  # a plain tuple: rebuild a = Pᵀ L U (O(n³)) only if lu may carry a derivative
        a = _sol.lu_reconstruct(lu, piv) if isinstance(lu, Tracer) else lu
    return _sol.lu_solve(a, lu, piv, _rhs_for(lu, b), _trans(trans))


def _rhs_for(m, b):
    """b broadcast to the factors' leading dims (the factors are not broadcast)."""
    b = as_float(b)
    lead, sb = tuple(m.shape[:-2]), tuple(b.shape)
    shape = lead + (sb if len(sb) == 1 else sb[-2:])
    return b if sb == shape else lax.broadcast_to(b, shape)


def _trans(trans):
    t = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}.get(trans)  # 2: conjugate transpose
    if t is None:
        raise FxadValueError(f"trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    return t


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of a Hermitian positive definite a, upper by default (`lower=True` for
    lower), as `scipy.linalg.cholesky`; differentiable."""
    a = hermitian_matrices("cholesky", a)
    if lower:
        return _sol.cholesky(a)
    return _sol.mH(_sol.cholesky(_sol.mH(a)))  # upper: the lower factor of aᴴ's lower triangle


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """The factor has its true derivative here (unlike LU's), and zeros in the other
    triangle (SciPy leaves arbitrary values there)."""
    a = hermitian_matrices("cho_factor", a)
    return ChoFactor(cholesky(a, lower=lower), bool(lower), a)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a x = b from the Cholesky factor (c, lower), as `scipy.linalg.cho_solve`;
    differentiable in c and b."""
    c, lower = c_and_lower
    l = _sol.tri(c, True) if lower else _sol.mH(_sol.tri(c, False))  # the lower factor
    a = getattr(c_and_lower, "a", None)
    if a is None:  # a plain tuple: rebuild the matrix so the factor's derivative flows
        a, lower = (_sol.mm(l, _sol.mH(l)) if isinstance(c, Tracer) else l), True
    return _sol.cho_solve(a, l, _rhs_for(l, b), lower)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """x with a x = b for triangular a (`trans`, `lower`, `unit_diagonal` as SciPy's), as
    `scipy.linalg.solve_triangular`; differentiable in a and b."""
    a, b = solve_operands(a, b, "solve_triangular")
    return _sol.solve_triangular(a, b, lower=lower, trans=_trans(trans),
                                 unit_diagonal=unit_diagonal)


_ASSUME_A = {None: "gen", "gen": "gen", "general": "gen", "banded": "gen", "sym": "sym",
             "symmetric": "sym", "her": "her", "hermitian": "her", "pos": "pos",
             "positive definite": "pos", "lower triangular": "lower",
             "upper triangular": "upper", "diagonal": "diagonal", "tridiagonal": "tridiagonal"}


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    """assume_a names which entries of `a` are read: all of them ('gen', 'banded': SciPy
    finds the band from the values, so every nonzero is read, and None: SciPy's structure
    checks only pick a faster solver), the symmetric or Hermitian part ('sym', 'her', 'pos';
    `lower` then changes nothing), one triangle, or the (tri)diagonal; the derivative is that
    of the function of those entries."""
    a, b = solve_operands(a, b)
    kind = _ASSUME_A.get(assume_a)
    if kind is None:
        raise FxadValueError(f"solve: assume_a={assume_a!r} is not one of SciPy's: "
                             f"{sorted(k for k in _ASSUME_A if k)}")
    if kind in ("lower", "upper"):
        return _sol.solve_triangular(a, b, lower=kind == "lower", trans=int(transposed))
    if kind == "diagonal":
        d = _diagonal(a, axis1=-2, axis2=-1)
        return lax.div(b, d if len(b.shape) == len(a.shape) - 1 else lax.expand_dims(d, (-1,)))
    if kind == "pos":  # factor once; the derivative flows through `a` in cho_solve
        a = _sol.symmetric_part(a)
        l = _sol.cholesky(stop_gradient(a))
        if transposed:  # aᵀ = conj(a) for Hermitian a (SciPy refuses complex a here)
            return lax.conj(_sol.cho_solve(a, l, lax.conj(b), True))
        return _sol.cho_solve(a, l, b, True)
    if kind in ("sym", "her"):  # complex 'sym' is symmetric (aᵀ = a), not Hermitian
        a = _sol.symmetric_part(a, conjugate=kind == "her")
    elif kind == "tridiagonal":
        a = _sol.band_part(a, 1, 1)
    lu, piv = _sol.lu_factor(a, transposed=True)
    return _sol.lu_solve(a, lu, piv, b, int(transposed), lu_t=True)


def expm(A):
    """The matrix exponential, as `scipy.linalg.expm` (Pade approximation with scaling and
    squaring); differentiable to any order (the derivative is the Frechet derivative)."""
    return _dec.expm(_matrices("expm", A, square=True))


def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    """(expm(A), the Frechet derivative of expm at A in the direction E), as
    `scipy.linalg.expm_frechet` (only the exponential's derivative with compute_expm=False);
    differentiable in A and E."""
    A, E = as_float(A), as_float(E)
    L = _dec.expm_frechet(A, E)
    return (_dec.expm(A), L) if compute_expm else L


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         check_finite=True, **kwargs):
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, or of the generalized
    problem a v = w b v, as `scipy.linalg.eigh` (eigvals_only as SciPy's); differentiable where
    the eigenvalues are distinct."""
    if b is not None or kwargs:
        raise FxadValueError("eigh: generalized problems (b) and subset options are not "
                             "supported")
    a = hermitian_matrices("eigh", a)
    if eigvals_only:
        return _dec.eigvalsh(a, lower)
    return _dec.eigh(a, lower)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """The QR factorization, as `scipy.linalg.qr` (mode "full", "economic", "r"; no pivoting);
    differentiable for full-rank input."""
    if pivoting:
        raise FxadValueError("qr: pivoting is not supported")
    a = as_float(a)
    m, n = a.shape[-2:]
    if mode not in ("economic", "r", "full") or (mode == "full" and m > n):
        raise FxadValueError(f"qr: mode={mode!r} is supported as 'economic', 'r', or 'full' "
                             "with m <= n (where it equals 'economic')")
    q, r = _dec.qr(a)
    return (r,) if mode == "r" else (q, r)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """The singular value decomposition, as `scipy.linalg.svd`; the singular values are
    differentiable everywhere, the vectors where the singular values are distinct and non-zero."""
    out = _np_svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


# --- factorizations and matrix functions beyond numpy.linalg's, and constructors ------------

def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """(P, L, U) with a = P @ L @ U (L unit lower trapezoidal, U upper); permute_l returns
    (P @ L, U); p_indices returns P as the row indices p with a = (L @ U)[p]."""
    p, l, u = _syl.lu(_matrices("lu", a))
    if permute_l:
        return fnp.matmul(p, l), u
    if p_indices:
        return fnp.argmax(p, axis=-1), l, u  # a[i] = (L U)[p[i]]
    return p, l, u


def sqrtm(A, disp=True, blocksize=64):
    """The principal square root, with SciPy's dtype: a real matrix's root is real unless
    the matrix has a negative eigenvalue, then complex. That needs the values, so under jit
    or vmap a real matrix gets a real root (and one with a negative eigenvalue is refused,
    naming the fix: pass it as complex)."""
    a = _matrices("sqrtm", A, square=True)
    if fnp.result_type(a).kind == "c":
        return _syl.sqrtm(a)
    try:
        value = a.concrete_value("sqrtm") if isinstance(a, Tracer) else a
    except ConcretizationError:
        return _syl.sqrtm(a)
    return _syl.sqrtm(a, complex_out=_syl.root_is_complex(value))


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """x with A x = b for the banded A stored as SciPy stores it, ab[u + i - j, j] = A[i, j]
    (ab's corner entries outside the matrix are not read, and their derivative is 0). b is
    a vector (M,) or matrices (..., M, K); ab may carry leading batch dims."""
    l, u = (int(operator.index(k)) for k in l_and_u)
    if l < 0 or u < 0:
        raise FxadValueError(f"solve_banded: l and u must be >= 0, got {(l, u)}")
    ab, b = as_float(ab), as_float(b)
    sa, sb = fnp.shape(ab), fnp.shape(b)
    if len(sa) < 2 or sa[-2] != l + u + 1:
        raise FxadValueError(f"solve_banded: invalid values for the number of lower and upper "
                             f"diagonals: l + u + 1 ({l + u + 1}) does not equal ab.shape[-2] "
                             f"(ab has shape {sa})")
    if not sb or sb[0 if len(sb) == 1 else -2] != sa[-1]:
        raise FxadValueError(f"solve_banded: shapes of ab {sa} and b {sb} are not compatible")
    if len(sb) == 1:
        b = lax.broadcast_to(b, sa[:-2] + sb) if sa[:-2] else b
    else:
        lead = np.broadcast_shapes(sa[:-2], sb[:-2])
        ab = ab if sa[:-2] == lead else lax.broadcast_to(ab, lead + sa[-2:])
        b = b if sb[:-2] == lead else lax.broadcast_to(b, lead + sb[-2:])
    return _syl.solve_banded(ab, b, l, u)


def schur(a, output="real", lwork=None, overwrite_a=False, sort=None, check_finite=True):
    """The Schur decomposition (T, Z) with a = Z T Z^H, as `scipy.linalg.schur` (output "real" or
    "complex"); differentiable where the eigenvalues are distinct."""
    if output not in ("real", "complex", "r", "c"):
        raise FxadValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    if sort is not None:
        raise FxadValueError("schur: sort is not supported (the reordered form's derivative "
                             "is not implemented)")
    output = {"r": "real", "c": "complex"}.get(output, output)
    a = _matrices("schur", a, square=True)
    if output == "complex":
        a = lax.convert_element_type(a, np.result_type(fnp.result_type(a), np.complex64))
    return tuple(_syl.schur(a, output))


def polar(a, side="right"):
    """The polar decomposition (u, p), a = u p (side "right") or p u ("left"), as
    `scipy.linalg.polar`; differentiable for full-rank a."""
    if side not in ("right", "left"):
        raise FxadValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    return tuple(_syl.polar(_matrices("polar", a), side))


def solve_sylvester(a, b, q):
    """x with a x + x b = q, as `scipy.linalg.solve_sylvester`; differentiable in a, b and q."""
    a, b = _matrices("solve_sylvester", a, square=True), _matrices("solve_sylvester", b,
                                                                  square=True)
    return _syl.solve_sylvester(a, b, as_float(q))


def eigh_tridiagonal(d, e, eigvals_only=False, select="a", select_range=None,
                     check_finite=True, tol=0.0, lapack_driver="auto"):
    """Eigenvalues (and eigenvectors) of the symmetric tridiagonal matrix with diagonal d and off-
    diagonal e, as `scipy.linalg.eigh_tridiagonal`; differentiable in d and e where the
    eigenvalues are distinct."""
    if select != "a" or select_range is not None:
        raise FxadValueError("eigh_tridiagonal: only select='a' (all eigenvalues) is "
                             "supported; index the result instead")
    d, e = as_float(d), as_float(e)
    if eigvals_only:
        return _syl.eigvalsh_tridiagonal(d, e)
    return tuple(_syl.eigh_tridiagonal(d, e))


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


__all__ = ["LUFactor", "ChoFactor", "lu_factor", "lu_solve", "cholesky", "cho_factor",
           "cho_solve", "solve_triangular", "solve", "expm", "expm_frechet", "inv", "det",
           "eigh", "qr", "svd", "norm", "lu", "sqrtm", "solve_banded", "schur", "polar", "solve_sylvester",
           "eigh_tridiagonal", "block_diag", "toeplitz", *_special]

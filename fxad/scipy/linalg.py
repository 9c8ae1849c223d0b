"""scipy.linalg's names and signatures, differentiable (rules: fxad/rules/linalg_*.py).

`lu_factor`/`cho_factor` return scipy's tuples, which also remember the matrix, so
`lu_solve(lu_factor(a), b)` differentiates with respect to `a` through the one factorization
(notes/linalg.md). overwrite_* and check_finite are accepted and ignored. The routines for
symmetric (Hermitian) matrices are functions of the input's symmetric (Hermitian) part, as
in fxad.numpy.linalg: SciPy's values on every symmetric input, whichever triangle `lower`
names, and symmetric gradients.
"""
from __future__ import annotations

from .. import lax
from ..core import Tracer
from ..errors import FxadValueError
from ..numpy.linalg import (_matrices, as_float, det, hermitian_matrices, inv, norm,  # noqa: F401
                            solve_operands, svd as _np_svd)
from ..numpy.manipulation import diagonal as _diagonal
from ..rules.linalg import decompositions as _dec, solve as _sol
from ..lax import stop_gradient
from ..tree_util import register_pytree_node


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
    a = _matrices("lu_factor", a, square=True)
    lu, piv = _sol.lu_factor(a, with_lu_tangent=True)  # lu's own derivative, for direct use
    return LUFactor(lu, piv, a)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
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
    c, lower = c_and_lower
    l = _sol.tri(c, True) if lower else _sol.mH(_sol.tri(c, False))  # the lower factor
    a = getattr(c_and_lower, "a", None)
    if a is None:  # a plain tuple: rebuild the matrix so the factor's derivative flows
        a, lower = (_sol.mm(l, _sol.mH(l)) if isinstance(c, Tracer) else l), True
    return _sol.cho_solve(a, l, _rhs_for(l, b), lower)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
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
    return _dec.expm(_matrices("expm", A, square=True))


def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    A, E = as_float(A), as_float(E)
    L = _dec.expm_frechet(A, E)
    return (_dec.expm(A), L) if compute_expm else L


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         check_finite=True, **kwargs):
    if b is not None or kwargs:
        raise FxadValueError("eigh: generalized problems (b) and subset options are not "
                             "supported")
    a = hermitian_matrices("eigh", a)
    if eigvals_only:
        return _dec.eigvalsh(a, lower)
    return _dec.eigh(a, lower)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
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
    out = _np_svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


__all__ = ["LUFactor", "ChoFactor", "lu_factor", "lu_solve", "cholesky", "cho_factor",
           "cho_solve", "solve_triangular", "solve", "expm", "expm_frechet", "inv", "det",
           "eigh", "qr", "svd", "norm"]

# issue 18: lu, sqrtm, schur, polar, solve_sylvester, eigh_tridiagonal, block_diag, toeplitz
from ._linalg_more import *  # noqa: F401,F403,E402
from ._linalg_more import __all__ as _more_names  # noqa: E402
__all__ += _more_names

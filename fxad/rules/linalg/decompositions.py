"""Decompositions (eigh, qr, svd) and the matrix exponential with its Fréchet derivative.

Conventions as in linalg_solve: leading batch dims; eigh and eigvalsh read one triangle of
their input and of its tangent.
Every JVP is linear in the tangent (products and triangular solves against primal-only
values), and is written with primitives that have their own JVPs, so every order works.
eigh and svd assume distinct eigen/singular values (notes/linalg.md): the tangents of the
vectors divide by their gaps. Real and complex matrices share one rule each: adjoints (mH)
where the real rule had transposes, and for complex matrices a fixed gauge for the vectors'
free phases (JAX's): eigh's vᴴ dv and svd's Vᴴ dV have zero diagonals (U takes the phase
svd's identity needs); QR keeps R's diagonal real, as LAPACK returns it.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from ...core import Primitive, ShapedArray
from ...errors import FxadTypeError, FxadValueError
from ..helpers import bdim_to_front, ndim_of
from ...interpreters.jvp import Zero
from ...interpreters.transpose import is_undefined
from ..helpers import ct_for, defjvp, dtype_of, shape_of
from .solve import (batch_all, diag_part, eye_like, float_dtype, lu_factor, lu_solve,
                    mH, mm, mT, one_triangle_herm, solve_triangular, square, square_aval,
                    stacked, tri)
from .. import ops


def _inv_gaps(d):
    """F_ij = 1 / (d_j - d_i) off the diagonal, 0 on it (the diagonal is never divided by)."""
    s = shape_of(d)
    n = s[-1]
    diff = ops.sub(ops.reshape(d, s[:-1] + (1, n)), ops.reshape(d, s[:-1] + (n, 1)))
    eye = np.eye(n, dtype=bool)
    return ops.mul(ops.div(1.0, ops.select(eye, 1.0, diff)), (~eye).astype(dtype_of(d)))


def _imag_diag(x, scale=None):
    """i Im(x_jj) (times scale_j) on the diagonal, 0 elsewhere: (x - xᴴ)/2 masked by the
    identity. None for real x, where it vanishes."""
    if dtype_of(x).kind != "c":
        return None
    half = ops.mul(eye_like(x), 0.5)
    return ops.mul(ops.mul(ops.sub(x, mH(x)), half), 1.0 if scale is None else scale)


def _front(prim):
    """Batching of a one-operand primitive that takes leading batch dims."""
    def rule(vals, dims, **params):
        out = prim.bind(bdim_to_front(vals[0], dims[0]), **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)
    return rule


# --- symmetric eigendecomposition -----------------------------------------------------------

eigh_p = Primitive("eigh", multiple_results=True)  # -> (w ascending, v); reads one triangle
eigh_p.def_impl(lambda a, lower: tuple(np.linalg.eigh(a, "L" if lower else "U")))
def _eigh_shape(a, lower):
    square("eigh", a)
    dt = float_dtype(a.dtype)  # eigenvalues are real, for a complex Hermitian a too
    return [ShapedArray(a.shape[:-1], np.finfo(dt).dtype), ShapedArray(a.shape, dt)]
eigh_p.def_abstract_eval(_eigh_shape)
def _eigh_jvp(primals, tangents, lower):
    (a,), (ta,) = primals, tangents
    w, v = eigh(a, lower)
    if type(ta) is Zero:
        return [w, v], [Zero.like(w), Zero.like(v)]
    # M = vᴴ dA v (Hermitian): dw = Re diag(M), dv = v (F ∘ M) with F_ij = 1/(w_j - w_i).
    # F's zero diagonal is the gauge: vᴴ dv has a zero diagonal (each vector's phase stays).
    M = mm(mH(v), mm(one_triangle_herm(ta, lower), v))  # the tangent of the matrix read
    return [w, v], [ops.real(diag_part(M)), mm(v, ops.mul(M, _inv_gaps(w)))]
eigh_p.def_jvp(_eigh_jvp)
eigh_p.def_batch(_front(eigh_p))
def eigh(a, lower=True): return eigh_p.bind(a, lower=bool(lower))


# Eigenvalues alone: dw = Re diag(vᴴ dA v), no division by gaps and no eigenvector tangent
# (the second derivative goes through eigh's rule; dw does not depend on the vectors' phases).
eigvalsh_p = Primitive("eigvalsh")  # w ascending; reads one triangle
eigvalsh_p.def_impl(lambda a, lower: np.linalg.eigvalsh(a, "L" if lower else "U"))
eigvalsh_p.def_abstract_eval(lambda a, lower: ShapedArray(
    a.shape[:-2] + (square("eigvalsh", a),), np.finfo(float_dtype(a.dtype)).dtype))
def _eigvalsh_jvp(primals, tangents, lower):
    (a,), (ta,) = primals, tangents
    if type(ta) is Zero:
        w = eigvalsh(a, lower)
        return w, Zero.like(w)
    w, v = eigh(a, lower)
    return w, ops.real(diag_part(mm(mH(v), mm(one_triangle_herm(ta, lower), v))))
eigvalsh_p.def_jvp(_eigvalsh_jvp)
eigvalsh_p.def_batch(_front(eigvalsh_p))
def eigvalsh(a, lower=True): return eigvalsh_p.bind(a, lower=bool(lower))


# --- QR (reduced) ---------------------------------------------------------------------------

qr_p = Primitive("qr", multiple_results=True)  # -> (q (m, k), r (k, n)), k = min(m, n)
qr_p.def_impl(lambda a: tuple(np.linalg.qr(a, mode="reduced")))
def _qr_shape(a):
    *lead, m, n = a.shape
    k, dt = min(m, n), float_dtype(a.dtype)
    return [ShapedArray((*lead, m, k), dt), ShapedArray((*lead, k, n), dt)]
qr_p.def_abstract_eval(_qr_shape)
def _qr_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    q, r = qr(a)
    if type(ta) is Zero:
        return [q, r], [Zero.like(q), Zero.like(r)]
    m, n = shape_of(a)[-2:]
    if m < n:
        raise FxadValueError("qr: derivatives need a tall or square matrix (m >= n); "
                             f"got {m}x{n}")
    # dA = dQ R + Q dR with QᴴdQ skew-Hermitian and dR upper: split Qᴴ dA R⁻¹ into those
    # parts. For complex matrices the skew part's diagonal i Im(Qᴴ dA R⁻¹)_jj keeps dR's
    # diagonal real, as R's is (LAPACK's Householder vectors make it real).
    dA_rinv = mT(solve_triangular(r, mT(ta), lower=False, trans=1))  # dA R⁻¹, no conj
    qt = mm(mH(q), dA_rinv)
    low = tri(qt, True, -1)
    skew = ops.sub(low, mH(low))
    phase = _imag_diag(qt)
    if phase is not None:
        skew = ops.add(skew, phase)
    dq = ops.add(mm(q, ops.sub(skew, qt)), dA_rinv)
    return [q, r], [dq, mm(ops.sub(qt, skew), r)]
qr_p.def_jvp(_qr_jvp)
qr_p.def_batch(_front(qr_p))
def qr(a): return qr_p.bind(a)


# --- SVD (reduced) --------------------------------------------------------------------------

def guard_non_finite(fn):
    """fn (an SVD) on a stack of matrices without calling LAPACK on non-finite ones: a NaN
    entry raises LinAlgError, as numpy.linalg.svd does; an inf entry gives NaN results
    (LAPACK's gesdd can loop forever there: numpy.linalg.svd, pinv and lstsq never return)."""
    def impl(a, **params):
        a = np.asarray(a)
        ok = np.isfinite(a).all(axis=(-2, -1))
        if ok.all():
            return fn(a, **params)
        if np.isnan(a).any():
            raise np.linalg.LinAlgError("SVD did not converge: the matrix has NaN entries")
        out = fn(np.where(ok[..., None, None], a, 0), **params)
        for x in (out if isinstance(out, tuple) else (out,)):
            x[~ok] = np.nan
        return out
    return impl


svd_p = Primitive("svd", multiple_results=True)  # -> (u, s descending, vt), full_matrices=False
svd_p.def_impl(guard_non_finite(lambda a: tuple(np.linalg.svd(a, full_matrices=False))))
def _svd_shape(a):
    *lead, m, n = a.shape
    k, dt = min(m, n), float_dtype(a.dtype)
    return [ShapedArray((*lead, m, k), dt), ShapedArray((*lead, k), np.finfo(dt).dtype),
            ShapedArray((*lead, k, n), dt)]
svd_p.def_abstract_eval(_svd_shape)
def _svd_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    u, s, vt = svd(a)
    if type(ta) is Zero:
        return [u, s, vt], [Zero.like(u), Zero.like(s), Zero.like(vt)]
    m, n = shape_of(a)[-2:]
    v = mH(vt)
    dS = mm(mH(u), mm(ta, v))  # Uᴴ dA V; ds is its diagonal's real part
    sh = shape_of(s)
    s_row = ops.reshape(s, sh[:-1] + (1, sh[-1]))
    F = _inv_gaps(ops.mul(s, s))  # 1 / (s_j² - s_i²)
    dSS, SdS = ops.mul(dS, s_row), ops.mul(mT(s_row), dS)
    uh_du = ops.mul(F, ops.add(dSS, mH(dSS)))
    # complex: diag(Uᴴ dU) - diag(Vᴴ dV) must be i Im(dS_jj) / s_j; the gauge puts it in U
    zero = ops.eq(s_row, 0.0)  # a zero singular value's vectors have no phase to follow
    phase = _imag_diag(dS, ops.select(zero, 0.0, ops.div(1.0, ops.select(zero, 1.0, s_row))))
    du = mm(u, uh_du if phase is None else ops.add(uh_du, phase))
    dv = mm(v, ops.mul(F, ops.add(SdS, mH(SdS))))
    if m > n:  # the part of dA V outside span(U)
        du = ops.add(du, ops.div(ops.sub(mm(ta, v), mm(u, dS)), s_row))
    if n > m:  # the part of dAᴴ U outside span(V)
        dv = ops.add(dv, ops.div(ops.sub(mm(mH(ta), u), mm(v, mH(dS))), s_row))
    return [u, s, vt], [du, ops.real(diag_part(dS)), mH(dv)]
svd_p.def_jvp(_svd_jvp)
svd_p.def_batch(_front(svd_p))
def svd(a): return svd_p.bind(a)


# --- matrix exponential ---------------------------------------------------------------------

expm_p = Primitive("expm")
expm_p.def_impl(lambda a: scipy.linalg.expm(a))
expm_p.def_abstract_eval(square_aval("expm"))
# d expm(A)[dA] is the Fréchet derivative L(A, dA): one primitive that reuses the Padé work.
defjvp(expm_p, lambda t, a: expm_frechet(a, t))
expm_p.def_batch(_front(expm_p))
def expm(a): return expm_p.bind(a)


def _block(tl, tr, bl):
    """[[tl, tr], [bl, tl]] over the last two axes."""
    nd = len(shape_of(tl))
    return ops.concatenate([ops.concatenate([tl, tr], nd - 1),
                            ops.concatenate([bl, tl], nd - 1)], nd - 2)


expm_frechet_p = Primitive("expm_frechet")  # L(a, e), linear in e
def _expm_frechet_impl(a, e):
    out = stacked(lambda a, e: scipy.linalg.expm_frechet(a, e, compute_expm=False,
                                                         check_finite=False), a, e)
    # SciPy works in float64; keep float32 operands float32, as the shape rule says
    dt = np.result_type(float_dtype(np.asarray(a).dtype), float_dtype(np.asarray(e).dtype))
    return out.astype(dt, copy=False)


expm_frechet_p.def_impl(_expm_frechet_impl)
def _expm_frechet_shape(a, e):
    square("expm_frechet", a)
    if e.shape != a.shape:
        raise FxadValueError(f"expm_frechet: direction of shape {e.shape} does not match the "
                             f"matrix's {a.shape}")
    return ShapedArray(a.shape, np.result_type(float_dtype(a.dtype), float_dtype(e.dtype)))
expm_frechet_p.def_abstract_eval(_expm_frechet_shape)
def _expm_frechet_jvp(primals, tangents):
    (a, e), (ta, te) = primals, tangents
    ans = expm_frechet(a, e)
    if type(ta) is Zero:
        return ans, (Zero.like(ans) if type(te) is Zero else expm_frechet(a, te))
    # expm([[A, E], [0, A]]) = [[expm A, L(A, E)], [0, expm A]], so dL(A, E)[dA, dE] is the
    # top-right block of L([[A, E], [0, A]], [[dA, dE], [0, dA]]).
    n = shape_of(a)[-1]
    z = np.zeros(shape_of(ta), dtype_of(ta))
    big = expm_frechet(_block(a, e, np.zeros(shape_of(a), dtype_of(a))),
                       _block(ta, z if type(te) is Zero else te, z))
    return ans, ops.getitem(big, (Ellipsis, slice(0, n), slice(n, 2 * n)))
expm_frechet_p.def_jvp(_expm_frechet_jvp)
def _expm_frechet_transpose(ct, a, e):
    if is_undefined(a) or not is_undefined(e):
        raise FxadTypeError("cannot transpose 'expm_frechet': it is linear in its direction "
                            "only")
    return [None, ct_for(e, expm_frechet(mT(a), ct))]  # ⟨C, L(A, E)⟩ = ⟨L(Aᵀ, C), E⟩
expm_frechet_p.def_transpose(_expm_frechet_transpose)
expm_frechet_p.def_batch(lambda vals, dims: batch_all(lambda *v: expm_frechet(*v), vals, dims))
def expm_frechet(a, e): return expm_frechet_p.bind(a, e)


# --- general (non-symmetric) eigendecomposition ------------------------------------------------

# Always complex (NumPy returns real arrays when every eigenvalue is real, a dtype that
# depends on the values). With M = V⁻¹ dA V: dw = diag(M), and dV = V (F ∘ M) (F as for
# eigh, so diag(V⁻¹ dV) = 0), then moved within each eigenvector's gauge to LAPACK's
# normalization: unit norm (minus v Re(vᴴ dv)) and the largest component real (minus
# i Im(dv_k / v_k) v). So dV is the derivative of what NumPy returns, away from repeated
# eigenvalues and from ties for the largest component.
eig_p = Primitive("eig", multiple_results=True)  # -> (w (..., n), v (..., n, n)), complex
eig_p.def_impl(lambda a: tuple(np.asarray(r, np.result_type(r, np.complex64))
                               for r in np.linalg.eig(a)))
def _eig_shape(a):
    n = square("eig", a)
    dt = np.result_type(float_dtype(a.dtype), np.complex64)
    return [ShapedArray(a.shape[:-2] + (n,), dt), ShapedArray(a.shape, dt)]
eig_p.def_abstract_eval(_eig_shape)
def _eig_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    w, v = eig(a)
    if type(ta) is Zero:
        return [w, v], [Zero.like(w), Zero.like(v)]
    lu, piv = lu_factor(v, transposed=True)
    m = lu_solve(v, lu, piv, mm(ops.convert_element_type(ta, dtype_of(v)), v), 0, lu_t=True)
    dv = mm(v, ops.mul(_inv_gaps(w), m))
    unit = ops.reduce_sum(ops.real(ops.mul(ops.conj(v), dv)), (ndim_of(v) - 2,), True)
    dv = ops.sub(dv, ops.mul(v, unit))                                  # keep |v_j| = 1
    n = shape_of(v)[-1]
    k = ops.argmax(ops.abs(v), ndim_of(v) - 2, keepdims=True)          # (..., 1, n)
    pick = ops.eq(np.arange(n).reshape(n, 1), k)                       # one-hot rows
    vk = ops.reduce_sum(ops.select(pick, v, 0.0), (ndim_of(v) - 2,), True)
    dvk = ops.reduce_sum(ops.select(pick, dv, 0.0), (ndim_of(v) - 2,), True)
    turn = ops.imag(ops.div(dvk, vk))                                  # keep v_k real
    dv = ops.sub(dv, ops.mul(v, ops.complex(ops.mul(turn, 0.0), turn)))
    return [w, v], [diag_part(m), dv]
eig_p.def_jvp(_eig_jvp)
eig_p.def_batch(_front(eig_p))
def eig(a): return eig_p.bind(a)


# --- Moore-Penrose pseudo-inverse -------------------------------------------------------------

# The JVP (Golub & Pereyra) holds where the rank is locally constant, i.e. where no singular
# value crosses the cutoff: dp = -p da p + p pᴴ daᴴ (I - a p) + (I - p a) daᴴ pᴴ p.
pinv_p = Primitive("pinv")  # (..., m, n) -> (..., n, m); singular values <= rcond * max cut
pinv_p.def_impl(guard_non_finite(lambda a, rcond: np.linalg.pinv(a, rcond=rcond)))
pinv_p.def_abstract_eval(lambda a, rcond: ShapedArray(
    a.shape[:-2] + (a.shape[-1], a.shape[-2]), float_dtype(a.dtype)))
def _pinv_jvp(primals, tangents, rcond):
    (a,), (ta,) = primals, tangents
    p = pinv(a, rcond)
    if type(ta) is Zero:
        return p, Zero.like(p)
    m, n = shape_of(a)[-2:]
    ph, tah = mH(p), mH(ta)
    left = ops.sub(np.eye(m, dtype=dtype_of(p)), mm(a, p))    # I - a p (m, m)
    right = ops.sub(np.eye(n, dtype=dtype_of(p)), mm(p, a))   # I - p a (n, n)
    dp = ops.neg(mm(mm(p, ta), p))
    dp = ops.add(dp, mm(mm(p, ph), mm(tah, left)))
    dp = ops.add(dp, mm(right, mm(tah, mm(ph, p))))
    return p, dp
pinv_p.def_jvp(_pinv_jvp)
pinv_p.def_batch(_front(pinv_p))
def pinv(a, rcond=1e-15): return pinv_p.bind(a, rcond=float(rcond))


__all__ = ["eigh", "eigvalsh", "eig", "qr", "svd", "expm", "expm_frechet", "pinv"]

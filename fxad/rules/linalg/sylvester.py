"""More of scipy.linalg: the Sylvester solve, the principal square root, the polar and Schur
decompositions, LU as (P, L, U), and the symmetric tridiagonal eigenproblem.

Values are SciPy's (looped over leading batch dims). The JVPs are written with primitives that
have their own JVPs, so every order works:
- solve_sylvester: A dX + dX B = dQ - dA X - X dB (one more Sylvester solve); its transpose in
  Q is the Sylvester solve with Aᵀ and Bᵀ.
- sqrtm: X² = A gives X dX + dX X = dA, a Sylvester equation in dX, solved by LAPACK's trsyl
  on one Schur factorization of X (sylvester_schur), which the transpose and higher orders
  reuse.
- polar (A = U P, or P U): P² = AᴴA (or AAᴴ) gives dP by a Sylvester equation, then
  dU = (dA - U dP) P⁻¹ (or P⁻¹ (dA - dP U)); P must be nonsingular (full-rank A).
- schur (A = Z T Zᴴ): with K = Zᴴ dZ (skew) and M = Zᴴ dA Z, dT = M - K T + T K must stay upper
  triangular, which fixes K's strictly lower part one column at a time by triangular solves
  with T - T_jj (distinct eigenvalues needed); real output only when T is triangular (no 2x2
  blocks: real eigenvalues), which the primitive checks at run time when differentiated.
- lu (A = P L U, P constant): Φ = L₁⁻¹ Pᵀ dA₁ U₁⁻¹ on the leading square block gives
  dL₁ = L₁ stril Φ, dU₁ = triu Φ U₁; the rest of L (tall A) or of U (wide A) follows by
  one triangular solve.
- eigh_tridiagonal: eigh's rule with dT the tridiagonal matrix of (dd, de).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from ...core import Primitive, ShapedArray
from ...errors import FxadTypeError, FxadValueError
from ...interpreters.jvp import Zero
from ...interpreters.transpose import is_undefined
from .. import ops
from ..helpers import bdim_to_front, ct_for, dtype_of, ndim_of, shape_of
from .decompositions import _inv_gaps
from .solve import (batch_all, batch_solve, diag_part, eye_like, float_dtype, mH, mm, mT,
                    lu_factor, lu_solve, only_b_linear, rhs_aval, solve_dtype, square,
                    stacked, solve_triangular, tri)


def _front(prim):
    def rule(vals, dims, **params):
        out = prim.bind(bdim_to_front(vals[0], dims[0]), **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)
    return rule


def _solve(a, b):
    """a⁻¹ b for a square a, via lu_solve (differentiable)."""
    lu, piv = lu_factor(a)
    return lu_solve(a, lu, piv, b, 0)


# --- Sylvester equations ------------------------------------------------------------------

solve_sylvester_p = Primitive("solve_sylvester")  # X with A X + X B = Q; linear in Q
solve_sylvester_p.def_impl(lambda a, b, q: stacked(
    lambda a, b, q: scipy.linalg.solve_sylvester(a, b, q), a, b, q))
def _sylvester_shape(a, b, q):
    m, n = square("solve_sylvester", a), square("solve_sylvester", b)
    if q.shape[-2:] != (m, n):
        raise FxadValueError(f"solve_sylvester: q must be ({m}, {n}) for a {a.shape} and b "
                             f"{b.shape}; got {q.shape}")
    return ShapedArray(q.shape, float_dtype(np.result_type(a.dtype, b.dtype, q.dtype)))
solve_sylvester_p.def_abstract_eval(_sylvester_shape)
def _sylvester_jvp(primals, tangents):
    (a, b, q), (ta, tb, tq) = primals, tangents
    x = solve_sylvester(a, b, q)
    if all(type(t) is Zero for t in tangents):
        return x, Zero.like(x)
    rhs = None if type(tq) is Zero else tq
    for term in ([] if type(ta) is Zero else [mm(ta, x)]) + \
            ([] if type(tb) is Zero else [mm(x, tb)]):
        rhs = ops.neg(term) if rhs is None else ops.sub(rhs, term)
    return x, solve_sylvester(a, b, rhs)
solve_sylvester_p.def_jvp(_sylvester_jvp)
def _sylvester_transpose(ct, a, b, q):
    if is_undefined(a) or is_undefined(b) or not is_undefined(q):
        raise FxadTypeError("cannot transpose 'solve_sylvester': it is linear in q only")
    return [None, None, ct_for(q, solve_sylvester(mT(a), mT(b), ct))]
solve_sylvester_p.def_transpose(_sylvester_transpose)
solve_sylvester_p.def_batch(lambda vals, dims: batch_all(
    lambda *v: solve_sylvester(*v), vals, dims))
def solve_sylvester(a, b, q): return solve_sylvester_p.bind(a, b, q)


# --- the principal square root ----------------------------------------------------------------

def _sqrtm_one(a, complex_out):
    out = scipy.linalg.sqrtm(a)
    if complex_out:
        return np.asarray(out, np.result_type(float_dtype(a.dtype), np.complex64))
    if np.iscomplexobj(out) and not np.iscomplexobj(a):
        if np.max(np.abs(out.imag), initial=0.0) > 1e3 * np.finfo(a.dtype).eps * \
                max(np.max(np.abs(out.real), initial=0.0), 1.0):
            raise FxadValueError(
                "sqrtm: the principal square root of this real matrix is complex (it has a "
                "negative eigenvalue). SciPy then returns a complex array; fxad does so where "
                "the matrix is known, but not under jit or vmap, where the dtype must be "
                "fixed before the values exist: pass a complex matrix (a.astype(complex))")
        out = out.real
    return np.asarray(out, float_dtype(a.dtype))


def root_is_complex(a):
    """Whether SciPy's sqrtm of the real matrices `a` (concrete) is complex: some
    eigenvalue is real and negative. Symmetric positive definite matrices (the common case)
    are recognized by a Cholesky factorization, far cheaper than the eigenvalues."""
    a = np.asarray(a, np.float64)
    if np.array_equal(a, np.swapaxes(a, -1, -2)):
        try:
            np.linalg.cholesky(a)
            return False
        except np.linalg.LinAlgError:
            return bool(np.any(np.linalg.eigvalsh(a) < 0))
    w = np.linalg.eigvals(a)
    return bool(np.any((w.imag == 0) & (w.real < 0)))


# sqrtm(a, complex_out): SciPy's value; complex_out casts a real matrix's root to complex (the
# public wrapper sets it where SciPy's root is complex). JVP: X dX + dX X = dA, solved with
# ONE Schur factorization of X that the transpose and higher orders reuse.
sqrtm_p = Primitive("sqrtm")
sqrtm_p.def_impl(lambda a, complex_out: stacked(lambda a: _sqrtm_one(a, complex_out), a))
def _sqrtm_shape(a, complex_out):
    dt = float_dtype(a.dtype)
    return ShapedArray(a.shape[:-2] + (square("sqrtm", a),) * 2,
                       np.result_type(dt, np.complex64) if complex_out else dt)
sqrtm_p.def_abstract_eval(_sqrtm_shape)
def _sqrtm_jvp(primals, tangents, complex_out):
    (a,), (ta,) = primals, tangents
    x = sqrtm(a, complex_out)
    if type(ta) is Zero:
        return x, Zero.like(x)
    t, z = schur_of(x)
    return x, sylvester_schur(x, t, z, ta)
sqrtm_p.def_jvp(_sqrtm_jvp)
sqrtm_p.def_batch(_front(sqrtm_p))
def sqrtm(a, complex_out=False): return sqrtm_p.bind(a, complex_out=bool(complex_out))


def schur_of(x):
    """(T, Z) with x = Z T Zᴴ, as constants: the real (quasi-triangular) form for real x."""
    fixed = ops.stop_gradient(x)
    return schur(fixed, "complex" if dtype_of(x).kind == "c" else "real")


def _trsyl_one(t, z, c, trans):
    """Y with X Y + Y X = C (trans 0) or Xᵀ Y + Y Xᵀ = C (trans 1), X = Z T Zᴴ: the
    triangular equation T W + W T = Zᴴ C Z (LAPACK trsyl), then Y = Z W Zᴴ. Xᵀ's Schur form
    is conj(Z) Tᵀ Zᵀ, so trans 1 solves Tᵀ W + W Tᵀ = F, the conjugate of trsyl's 'C' form."""
    if t.dtype.kind != "c" and c.dtype.kind == "c":  # a real operator: real and imaginary parts
        return _trsyl_one(t, z, c.real, trans) + 1j * _trsyl_one(t, z, c.imag, trans)
    zs = z if trans == 0 else z.conj()
    f = zs.conj().T @ c @ zs
    dt = np.result_type(t.dtype, f.dtype)
    t, f = t.astype(dt, copy=False), f.astype(dt, copy=False)
    routine = scipy.linalg.get_lapack_funcs(("trsyl",), (t, f))[0]
    if trans == 0:
        w, scale, info = routine(t, t, f)
    elif dt.kind == "c":
        w, scale, info = routine(t, t, f.conj(), trana="C", tranb="C")
        w = w.conj()
    else:
        w, scale, info = routine(t, t, f, trana="T", tranb="T")
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of LAPACK trsyl")
    return zs @ (w / scale) @ zs.conj().T


# sylvester_schur(x, t, z, c, trans): Y with op(X) Y + Y op(X) = C, op = identity / transpose,
# given X's Schur form (t, z), which this primitive reads and `x` does not: x carries the
# derivative (as lu_solve's `a` does), linear in c.
sylvester_schur_p = Primitive("sylvester_schur")
sylvester_schur_p.def_impl(lambda x, t, z, c, trans: stacked(
    lambda t, z, c: _trsyl_one(t, z, c, trans), t, z, c))
def _sylvester_schur_shape(x, t, z, c, trans):
    n = square("sylvester_schur", x)
    if c.shape != x.shape or t.shape != x.shape or z.shape != x.shape:
        raise FxadValueError(f"sylvester_schur: expected ({n}, {n}) matrices like x's "
                             f"{x.shape}; got t {t.shape}, z {z.shape}, c {c.shape}")
    return ShapedArray(c.shape, float_dtype(np.result_type(x.dtype, c.dtype)))
sylvester_schur_p.def_abstract_eval(_sylvester_schur_shape)
def _sylvester_schur_jvp(primals, tangents, trans):
    (x, t, z, c), (tx, _, _, tc) = primals, tangents
    y = sylvester_schur(x, t, z, c, trans)
    if type(tx) is Zero and type(tc) is Zero:
        return y, Zero.like(y)
    # op(X) dY + dY op(X) = dC - op(dX) Y - Y op(dX): one more solve with the same factors
    rhs = None if type(tc) is Zero else tc
    if type(tx) is not Zero:
        dx = tx if trans == 0 else mT(tx)
        term = ops.add(mm(dx, y), mm(y, dx))
        rhs = ops.neg(term) if rhs is None else ops.sub(rhs, term)
    return y, sylvester_schur(x, t, z, rhs, trans)
sylvester_schur_p.def_jvp(_sylvester_schur_jvp)
def _sylvester_schur_transpose(ct, x, t, z, c, trans):
    if any(is_undefined(v) for v in (x, t, z)) or not is_undefined(c):
        raise FxadTypeError("cannot transpose 'sylvester_schur': it is linear in c only")
    return [None, None, None, ct_for(c, sylvester_schur(x, t, z, ct, 1 - trans))]
sylvester_schur_p.def_transpose(_sylvester_schur_transpose)
sylvester_schur_p.def_batch(lambda vals, dims, trans: batch_all(
    lambda *v: sylvester_schur(*v, trans), vals, dims))
def sylvester_schur(x, t, z, c, trans=0):
    return sylvester_schur_p.bind(x, t, z, c, trans=int(trans))


# --- banded solves ---------------------------------------------------------------------------

def _band_shift(v, s, axis):
    """v moved by s places along axis (v_i -> position i + s), zeros shifted in."""
    shape = shape_of(v)
    n = shape[axis]
    if s == 0:
        return v
    if abs(s) >= n:
        return ops.mul(v, np.zeros((), dtype_of(v)))
    zeros = np.zeros(shape[:axis] + (abs(s),) + shape[axis + 1:], dtype_of(v))
    lead = (slice(None),) * axis
    if s > 0:
        return ops.concatenate([zeros, ops.getitem(v, lead + (slice(0, n - s),))], axis)
    return ops.concatenate([ops.getitem(v, lead + (slice(-s, n),)), zeros], axis)


def band_matvec(ab, x, l, u, trans=0):
    """A x (trans 0) or Aᵀ x (trans 1) for the banded A stored as SciPy does,
    ab[u + i - j, j] = A[i, j]. Entries of ab outside the band's matrix are multiplied by
    nothing (trans 0: shifted out) or by a shifted-in zero (trans 1): their derivative is
    exactly 0."""
    vec = ndim_of(x) == ndim_of(ab) - 1
    if vec:
        x = ops.reshape(x, shape_of(x) + (1,))
    axis = ndim_of(x) - 2
    out = None
    for k in range(l + u + 1):
        row = ops.reshape(ops.getitem(ab, (Ellipsis, k, slice(None))),
                          shape_of(ab)[:-2] + (shape_of(ab)[-1], 1))
        if trans == 0:  # row k holds A[j + k - u, j]: y_(j+k-u) += ab[k, j] x_j
            term = _band_shift(ops.mul(row, x), k - u, axis)
        else:  # (Aᵀ x)_j += ab[k, j] x_(j+k-u)
            term = ops.mul(row, _band_shift(x, u - k, axis))
        out = term if out is None else ops.add(out, term)
    return ops.reshape(out, shape_of(out)[:-1]) if vec else out


def _band_transpose_np(ab, l, u):
    """Aᵀ's band storage (l and u swapped): abT[k, j] = ab[l + u - k, j + k - l]."""
    n = ab.shape[-1]
    out = np.zeros_like(ab)
    for k in range(l + u + 1):
        s = k - l
        lo, hi = max(0, -s), min(n, n - s)
        if lo < hi:
            out[..., k, lo:hi] = ab[..., l + u - k, lo + s:hi + s]
    return out


def _solve_banded_one(ab, b, l, u, trans):
    if trans:
        ab, l, u = _band_transpose_np(ab, l, u), u, l
    out = scipy.linalg.solve_banded((l, u), ab, b, check_finite=False)
    return np.asarray(out, solve_dtype(ab.dtype, b.dtype))


# solve_banded(ab, b, l, u, trans): A⁻¹ b (trans 0) or A⁻ᵀ b (trans 1), A banded in SciPy's
# storage; linear in b. JVP: op(A) dx = db - op(dA) x, with op(dA) x a banded product.
solve_banded_p = Primitive("solve_banded")
solve_banded_p.def_impl(lambda ab, b, l, u, trans: stacked(
    lambda ab, b: _solve_banded_one(ab, b, l, u, trans), ab, b))
def _solve_banded_shape(ab, b, l, u, trans):
    if len(ab.shape) < 2 or ab.shape[-2] != l + u + 1:
        raise FxadValueError(f"solve_banded: ab must have l + u + 1 = {l + u + 1} rows, got "
                             f"shape {ab.shape}")
    square_view = ShapedArray(ab.shape[:-2] + (ab.shape[-1],) * 2, ab.dtype)
    return rhs_aval("solve_banded", square_view, b)
solve_banded_p.def_abstract_eval(_solve_banded_shape)
def _solve_banded_jvp(primals, tangents, l, u, trans):
    (ab, b), (tab, tb) = primals, tangents
    x = solve_banded(ab, b, l, u, trans)
    if type(tab) is Zero and type(tb) is Zero:
        return x, Zero.like(x)
    rhs = None if type(tb) is Zero else tb
    if type(tab) is not Zero:
        term = band_matvec(tab, x, l, u, trans)
        rhs = ops.neg(term) if rhs is None else ops.sub(rhs, term)
    return x, solve_banded(ab, rhs, l, u, trans)
solve_banded_p.def_jvp(_solve_banded_jvp)
def _solve_banded_transpose(ct, ab, b, l, u, trans):
    only_b_linear("solve_banded", (ab, b))
    return [None, ct_for(b, solve_banded(ab, ct, l, u, 1 - trans))]
solve_banded_p.def_transpose(_solve_banded_transpose)
solve_banded_p.def_batch(lambda vals, dims, l, u, trans: batch_solve(
    lambda *v: solve_banded(*v, l, u, trans), vals, dims))
def solve_banded(ab, b, l, u, trans=0):
    return solve_banded_p.bind(ab, b, l=int(l), u=int(u), trans=int(trans))


# --- the polar decomposition ------------------------------------------------------------------

polar_p = Primitive("polar", multiple_results=True)  # -> (u, p)
polar_p.def_impl(lambda a, side: stacked(lambda a: scipy.linalg.polar(a, side), a))
def _polar_shape(a, side):
    *lead, m, n = a.shape
    k = n if side == "right" else m
    dt = float_dtype(a.dtype)
    return [ShapedArray(a.shape, dt), ShapedArray((*lead, k, k), dt)]
polar_p.def_abstract_eval(_polar_shape)
def _polar_jvp(primals, tangents, side):
    (a,), (ta,) = primals, tangents
    u, p = polar(a, side)
    if type(ta) is Zero:
        return [u, p], [Zero.like(u), Zero.like(p)]
    m, n = shape_of(a)[-2:]
    if (m < n) if side == "right" else (m > n):
        raise FxadValueError(f"polar: derivatives of side={side!r} need "
                             f"{'m >= n' if side == 'right' else 'm <= n'}; got {m}x{n}")
    if side == "right":  # A = U P, P² = AᴴA
        sym = ops.add(mm(mH(ta), a), mm(mH(a), ta))
        dp = solve_sylvester(p, p, sym)
        du = mH(_solve(p, mH(ops.sub(ta, mm(u, dp)))))  # (dA - U dP) P⁻¹, P Hermitian
    else:  # A = P U, P² = AAᴴ
        sym = ops.add(mm(ta, mH(a)), mm(a, mH(ta)))
        dp = solve_sylvester(p, p, sym)
        du = _solve(p, ops.sub(ta, mm(dp, u)))
    return [u, p], [du, dp]
polar_p.def_jvp(_polar_jvp)
polar_p.def_batch(_front(polar_p))
def polar(a, side="right"): return polar_p.bind(a, side=str(side))


# --- the Schur decomposition ------------------------------------------------------------------

def _schur_one(a, output, checked):
    t, z = scipy.linalg.schur(a, output=output)
    if checked and output == "real" and np.any(np.diag(t, -1) != 0):
        raise FxadValueError("schur: the real Schur form has 2x2 blocks (complex eigenvalues), "
                             "whose derivative is not defined; use output='complex'")
    return t, z


schur_p = Primitive("schur", multiple_results=True)  # -> (t, z); a = z t zᴴ
schur_p.def_impl(lambda a, output, checked: stacked(
    lambda a: _schur_one(a, output, checked), a))
def _schur_shape(a, output, checked):
    square("schur", a)
    dt = float_dtype(a.dtype)
    if output == "complex":
        dt = np.result_type(dt, np.complex64)
    return [ShapedArray(a.shape, dt), ShapedArray(a.shape, dt)]
schur_p.def_abstract_eval(_schur_shape)


def _schur_skew(t, m):
    """K (skew-Hermitian, zero diagonal) whose strictly lower part makes M - K T + T K upper
    triangular: column j solves (T[j+1:, j+1:] - T_jj) k = -M[j+1:, j] + K[j+1:, :j] T[:j, j]."""
    n = shape_of(t)[-1]
    lead = tuple(shape_of(t)[:-2])
    cols = []  # the strictly lower part of each column, as full length-n columns
    for j in range(n - 1):
        rhs = ops.neg(m[..., j + 1:, j])
        if j:
            prev = ops.concatenate([c[..., None] for c in cols], len(lead) + 1)[..., j + 1:, :]
            rhs = ops.add(rhs, mm(prev, t[..., :j, j:j + 1])[..., 0])
        sub = ops.sub(t[..., j + 1:, j + 1:], ops.mul(eye_like(t[..., j + 1:, j + 1:]),
                                                      t[..., j:j + 1, j:j + 1]))
        k = solve_triangular(sub, rhs[..., None], lower=False)[..., 0]
        zeros = np.zeros(lead + (j + 1,), dtype_of(k))
        cols.append(ops.concatenate([zeros, k], len(lead)))
    zeros = np.zeros(lead + (n,), dtype_of(m))
    cols.append(zeros)
    low = ops.concatenate([c[..., None] for c in cols], len(lead) + 1)
    return ops.sub(low, ops.conj(mT(low)))


def _schur_jvp(primals, tangents, output, checked):
    (a,), (ta,) = primals, tangents
    t, z = schur(a, output, checked=True)  # the real form's blocks are refused at run time
    if type(ta) is Zero:
        return [t, z], [Zero.like(t), Zero.like(z)]
    zh = ops.conj(mT(z))
    m = mm(zh, mm(ta, z))
    k = _schur_skew(t, m)
    dt = tri(ops.add(ops.sub(m, mm(k, t)), mm(t, k)), False)
    return [t, z], [dt, mm(z, k)]
schur_p.def_jvp(_schur_jvp)
schur_p.def_batch(_front(schur_p))
def schur(a, output="real", checked=False):
    return schur_p.bind(a, output=str(output), checked=bool(checked))


# --- LU as (P, L, U) --------------------------------------------------------------------------

lu_p = Primitive("lu", multiple_results=True)  # -> (p, l, u); a = p @ l @ u
lu_p.def_impl(lambda a: stacked(lambda a: tuple(scipy.linalg.lu(a)), a))
def _lu_shape(a):
    *lead, m, n = a.shape
    k, dt = min(m, n), float_dtype(a.dtype)
    return [ShapedArray((*lead, m, m), dt), ShapedArray((*lead, m, k), dt),
            ShapedArray((*lead, k, n), dt)]
lu_p.def_abstract_eval(_lu_shape)
def _lu_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    p, l, u = lu(a)
    zeros = [Zero.like(p)]
    if type(ta) is Zero:
        return [p, l, u], zeros + [Zero.like(l), Zero.like(u)]
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    pda = mm(mT(p), ta)  # Pᵀ dA = dL U + L dU (P is a permutation: real, orthogonal)
    l1, u1 = l[..., :k, :k], u[..., :k, :k]
    x = solve_triangular(l1, pda[..., :k, :k], lower=True, unit_diagonal=True)
    phi = mT(solve_triangular(u1, mT(x), lower=False, trans=1))  # L₁⁻¹ Pᵀ dA₁ U₁⁻¹
    dl1, du1 = mm(l1, tri(phi, True, -1)), mm(tri(phi, False), u1)
    dl, du = dl1, du1
    if m > n:  # dL₂ = (Pᵀ dA₂ - L₂ dU) U⁻¹
        rest = ops.sub(pda[..., k:, :], mm(l[..., k:, :], du1))
        dl = ops.concatenate([dl1, mT(solve_triangular(u1, mT(rest), lower=False, trans=1))],
                             len(shape_of(a)) - 2)
    elif n > m:  # dU₂ = L⁻¹ (Pᵀ dA₂ - dL U₂)
        rest = ops.sub(pda[..., :, k:], mm(dl1, u[..., :, k:]))
        du = ops.concatenate([du1, solve_triangular(l1, rest, lower=True, unit_diagonal=True)],
                             len(shape_of(a)) - 1)
    return [p, l, u], zeros + [dl, du]
lu_p.def_jvp(_lu_jvp)
lu_p.def_batch(_front(lu_p))
def lu(a): return lu_p.bind(a)


# --- the symmetric tridiagonal eigenproblem ---------------------------------------------------

def _tridiagonal(d, e):
    """The dense symmetric tridiagonal matrix with diagonal d (..., n), off-diagonal e."""
    n = shape_of(d)[-1]
    lead = tuple(shape_of(d)[:-1])
    ep = ops.concatenate([e, np.zeros(lead + (1,), dtype_of(e))], len(lead))
    eye = np.eye(n, dtype=dtype_of(d))
    out = ops.mul(ops.reshape(d, lead + (1, n)), eye)
    out = ops.add(out, ops.mul(ops.reshape(ep, lead + (n, 1)), np.eye(n, k=1)))
    return ops.add(out, ops.mul(ops.reshape(ep, lead + (1, n)), np.eye(n, k=-1)))


def _eigh_tri_impl(d, e, vectors):
    def one(d, e):
        out = scipy.linalg.eigh_tridiagonal(d, e, eigvals_only=not vectors)
        return _fixed_signs(*out) if vectors else out
    lead = np.shape(d)[:-1]
    if not lead:
        return one(d, e)
    outs = [one(d[i], e[i]) for i in np.ndindex(lead)]
    if vectors:
        return tuple(np.stack(o).reshape(lead + o[0].shape) for o in zip(*outs))
    return np.stack(outs).reshape(lead + outs[0].shape)


def _fixed_signs(w, v):
    """Each eigenvector with its largest-magnitude entry positive. LAPACK's signs can flip
    under a tiny change of the input (SciPy 1.15's stemr does), which would make the value a
    discontinuous function that its derivative does not describe; this gauge is locally
    constant wherever the largest entry is unique, the gauge the JVP rule assumes."""
    big = np.abs(v).argmax(axis=0)
    return w, v * np.where(v[big, np.arange(v.shape[1])] < 0, -1, 1).astype(v.dtype)


def _tri_shape(d, e):
    n = d.shape[-1]
    if e.shape[-1] != n - 1 or e.shape[:-1] != d.shape[:-1]:
        raise FxadValueError(f"eigh_tridiagonal: e must have n - 1 = {n - 1} entries (and d's "
                             f"leading dims); got d {d.shape}, e {e.shape}")
    return n, float_dtype(np.result_type(d.dtype, e.dtype))


eigh_tridiagonal_p = Primitive("eigh_tridiagonal", multiple_results=True)  # -> (w, v)
eigh_tridiagonal_p.def_impl(lambda d, e: _eigh_tri_impl(d, e, True))
def _eigh_tri_shape(d, e):
    n, dt = _tri_shape(d, e)
    return [ShapedArray(d.shape, dt), ShapedArray(d.shape + (n,), dt)]
eigh_tridiagonal_p.def_abstract_eval(_eigh_tri_shape)
def _eigh_tri_jvp(primals, tangents):
    (d, e), (td, te) = primals, tangents
    w, v = eigh_tridiagonal(d, e)
    if type(td) is Zero and type(te) is Zero:
        return [w, v], [Zero.like(w), Zero.like(v)]
    td = np.zeros(shape_of(d), dtype_of(d)) if type(td) is Zero else td
    te = np.zeros(shape_of(e), dtype_of(e)) if type(te) is Zero else te
    m = mm(mT(v), mm(_tridiagonal(td, te), v))
    return [w, v], [diag_part(m), mm(v, ops.mul(m, _inv_gaps(w)))]
eigh_tridiagonal_p.def_jvp(_eigh_tri_jvp)
eigh_tridiagonal_p.def_batch(lambda vals, dims: batch_all(
    lambda *v: eigh_tridiagonal(*v), vals, dims, nout=2))
def eigh_tridiagonal(d, e): return eigh_tridiagonal_p.bind(d, e)


eigvalsh_tridiagonal_p = Primitive("eigvalsh_tridiagonal")  # w alone: no division by gaps
eigvalsh_tridiagonal_p.def_impl(lambda d, e: _eigh_tri_impl(d, e, False))
eigvalsh_tridiagonal_p.def_abstract_eval(lambda d, e: ShapedArray(d.shape, _tri_shape(d, e)[1]))
def _eigvalsh_tri_jvp(primals, tangents):
    (d, e), (td, te) = primals, tangents
    if type(td) is Zero and type(te) is Zero:
        w = eigvalsh_tridiagonal(d, e)
        return w, Zero.like(w)
    w, v = eigh_tridiagonal(d, e)
    # dw_i = Σ_k v_ki² dd_k + 2 Σ_k v_ki v_(k+1)i de_k
    out = None
    if type(td) is not Zero:
        out = mm(ops.reshape(td, shape_of(td)[:-1] + (1, shape_of(td)[-1])), ops.mul(v, v))
    if type(te) is not Zero:
        prod = ops.mul(ops.mul(v[..., :-1, :], v[..., 1:, :]), 2.0)
        c = mm(ops.reshape(te, shape_of(te)[:-1] + (1, shape_of(te)[-1])), prod)
        out = c if out is None else ops.add(out, c)
    return w, out[..., 0, :]
eigvalsh_tridiagonal_p.def_jvp(_eigvalsh_tri_jvp)
eigvalsh_tridiagonal_p.def_batch(lambda vals, dims: batch_all(
    lambda *v: eigvalsh_tridiagonal(*v), vals, dims))
def eigvalsh_tridiagonal(d, e): return eigvalsh_tridiagonal_p.bind(d, e)


__all__ = ["solve_sylvester", "sqrtm", "polar", "schur", "lu", "eigh_tridiagonal",
           "eigvalsh_tridiagonal"]

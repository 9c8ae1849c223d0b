"""Linear solves that factor once: LU and Cholesky, triangular solves, det and slogdet.

The factorization primitives (`lu_factor`) return auxiliary values with zero tangents; every
primitive that consumes the factors also takes the matrix `a` itself, which carries the
derivative. So x = A⁻¹b differentiates as dx = A⁻¹(db - dA x) with the SAME factors: the
JVP is one more `lu_solve`, the transpose of `lu_solve` is `lu_solve` with the other `trans`,
and grad(sum(solve(A, b))) costs one factorization and two solves. Because the JVP is again
written with `lu_solve` on `a`, higher orders come out right with no extra rules.

Conventions for every primitive in the linalg files: matrices are (..., n, n) with leading
batch dims; a right-hand side b is (..., n) (a stack of vectors: ndim one less than the
matrix) or (..., n, k), with exactly the matrix's leading dims (public wrappers broadcast).
Impls loop over the leading dims where SciPy wants 2-D arrays. The symmetric-input
primitives (cholesky, cho_solve, eigh, eigvalsh) read ONE triangle, as LAPACK does, and
their JVPs read the tangent through the same triangle, so each primitive's derivative is
that of its value. The public functions symmetrize their input first (`symmetric_part`,
JAX's convention), which makes them functions of the Hermitian part with symmetric
gradients; notes/linalg.md.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from ...core import Primitive, ShapedArray
from ...errors import FxadTypeError, FxadValueError
from ..helpers import batch_size, bdim_to_front, broadcast_batched, ndim_of
from ...interpreters.jvp import Zero
from ...interpreters.transpose import is_undefined
from ..helpers import ct_for, defjvp_zero, dtype_of, shape_of
from .. import ops


# --- shared helpers (also used by linalg_decomp) -------------------------------------------

def float_dtype(dt):
    """The dtype LAPACK computes in: integers as float64, float16 as float32 (LAPACK has no
    half precision; SciPy converts the same way, so staged and eager dtypes agree)."""
    dt = np.dtype(dt)
    if dt == np.float16:
        return np.dtype(np.float32)
    return dt if dt.kind in "fc" else np.dtype(np.float64)


def stacked(fn, *args):
    """Apply a 2-D SciPy routine over the leading dims of args[0] (all args share them)."""
    lead = np.shape(args[0])[:-2]
    if not lead:
        return fn(*args)
    outs = [fn(*[a[i] for a in args]) for i in np.ndindex(lead)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o).reshape(lead + o[0].shape) for o in zip(*outs))
    return np.stack(outs).reshape(lead + outs[0].shape)


def square(name, a):
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise FxadValueError(f"{name}: expected square matrices (..., n, n), got {a.shape}")
    return a.shape[-1]


def square_aval(name):
    """Shape rule of a matrix -> matrix primitive."""
    def rule(a, *rest, **params):
        square(name, a)
        return ShapedArray(a.shape, float_dtype(a.dtype))
    return rule


def rhs_aval(name, m, b):
    """Shape rule of a solve: b is (..., n) or (..., n, k) with the matrix's leading dims."""
    n = square(name, m)
    lead = m.shape[:-2]
    if len(b.shape) not in (len(lead) + 1, len(lead) + 2) or b.shape[:len(lead)] != lead \
            or b.shape[len(lead)] != n:
        raise FxadValueError(f"{name}: right-hand side of shape {b.shape} does not match "
                             f"matrices of shape {m.shape}: it needs {n} rows, as ({n},) or "
                             f"(..., {n}, k)")
    return ShapedArray(b.shape, solve_dtype(m.dtype, b.dtype))


def solve_dtype(m_dtype, b_dtype):
    dm, db = float_dtype(m_dtype), float_dtype(b_dtype)
    return dm if dm == db else np.result_type(dm, db)


def empty_solution(m, b):
    """The solution of an empty system (no unknowns or no right-hand sides), made here and
    not by LAPACK: SciPy < 1.14 rejects n = 0, and the dtype is the shape rule's."""
    return np.empty(np.shape(b), solve_dtype(np.asarray(m).dtype, np.asarray(b).dtype))


def mT(x):
    """Swap the last two axes."""
    perm = list(range(ndim_of(x)))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return ops.transpose(x, tuple(perm))


def mH(x):
    """The conjugate transpose (mT for real x: conj is then the identity)."""
    return ops.conj(mT(x))


def op(x, trans):
    """LAPACK's op(x) for trans = 0, 1, 2: x, xᵀ, xᴴ."""
    return x if trans == 0 else mT(x) if trans == 1 else mH(x)


def mm(a, b):
    """a @ b over equal leading dims; b may be a stack of vectors (one dim fewer than a)."""
    nd = ndim_of(a)
    batch = tuple(range(nd - 2))
    return ops.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def tri(x, lower=True, k=0):
    """The lower (upper) triangle of x from diagonal k (-k), as a multiply by a constant."""
    n = shape_of(x)[-1]
    mask = np.tri(n, k=k, dtype=dtype_of(x))
    return ops.mul(x, mask if lower else mask.T)


def band_part(x, lower, upper):
    """x's entries from `lower` diagonals below the main one to `upper` above it, zeros
    elsewhere (a select, so entries outside, even inf or NaN, are not read)."""
    n = shape_of(x)[-1]
    offset = np.subtract.outer(np.arange(n), np.arange(n))  # i - j
    return ops.select((offset <= lower) & (-offset <= upper), x, 0.0)


def one_triangle_sym(x, lower=True):
    """The symmetric matrix LAPACK sees when it reads only one triangle of x."""
    return ops.add(tri(x, lower), mT(tri(x, lower, -1)))


def one_triangle_herm(x, lower=True):
    """The Hermitian matrix LAPACK sees when it reads only one triangle of x and the real
    part of its diagonal (Cholesky); the symmetric one for real x."""
    if dtype_of(x).kind != "c":
        return one_triangle_sym(x, lower)
    strict, re = tri(x, lower, -1), ops.real(x)
    return ops.add(ops.add(strict, mH(strict)), ops.mul(re, eye_like(re)))


def symmetric_part(x, conjugate=True):
    """(x + xᴴ)/2 (conjugate=False: (x + xᵀ)/2), written x + (xᴴ - x)/2 so that it is exactly
    x when x is already Hermitian (symmetric): the public symmetric routines apply it to
    their input, and then give NumPy's values bit for bit on every input NumPy's are meant
    for. A Hermitian matrix's diagonal is real: its imaginary part is dropped, as LAPACK
    ignores it."""
    return ops.add(x, ops.mul(ops.sub(mH(x) if conjugate else mT(x), x), 0.5))


def eye_like(x):
    n = shape_of(x)[-1]
    return np.eye(n, dtype=dtype_of(x))


def diag_part(x):
    return ops.reduce_sum(ops.mul(x, eye_like(x)), (ndim_of(x) - 1,))


def minus_dA_x(tb, dA, x):
    """tb - dA x (tb may be None): the right-hand side whose solve is the tangent of A⁻¹b."""
    if dA is None:
        return tb
    d = mm(dA, x)
    return ops.neg(d) if tb is None else ops.sub(tb, d)


def nonzero(t):
    return None if type(t) is Zero else t


def batch_all(bind, vals, dims, nout=None):
    """Batching by moving every batch axis to the front (broadcasting unbatched operands):
    the primitives all take leading batch dims."""
    n = batch_size(vals, dims)
    out = bind(*[broadcast_batched(v, d, n) for v, d in zip(vals, dims)])
    return out, (0 if nout is None else [0] * nout)


def batch_solve(bind, vals, dims):
    """Batching for solves whose last operand is b. If only b is batched and the matrix is a
    single one, the batch becomes extra columns of b: one solve call, not a loop."""
    *mats, b = vals
    *mdims, bd = dims
    if bd is not None and all(d is None for d in mdims) and ndim_of(mats[0]) == 2:
        b = bdim_to_front(b, bd)
        s = shape_of(b)
        if len(s) == 2:  # (B, n) vectors -> an (n, B) right-hand side
            return bind(*mats, mT(b)), 1
        cols = ops.reshape(ops.transpose(b, (1, 0, 2)), (s[1], s[0] * s[2]))
        return ops.reshape(bind(*mats, cols), (s[1], s[0], s[2])), 1
    return batch_all(bind, vals, dims)


def only_b_linear(name, args):
    if not is_undefined(args[-1]) or any(is_undefined(v) for v in args[:-1]):
        raise FxadTypeError(f"cannot transpose '{name}': it is linear in its right-hand side "
                            "only")


def transposed_solve(solve, ct, trans):
    """The transpose of b -> op(A)⁻¹ b applied to ct, given solve(rhs, trans): op(A)⁻ᵀ ct,
    the solve with the other `trans`; for op = ᴴ (trans 2) that is conj(A⁻¹ conj(ct))."""
    if trans == 2:
        return ops.conj(solve(ops.conj(ct), 0))
    return solve(ct, 1 - trans)


# --- LU -------------------------------------------------------------------------------------

_lapack_routines = {}


def _lapack(name, *arrays):
    """LAPACK's routine for these arrays' dtypes, found once per dtype combination. The LU
    impls call getrf/getrs directly: SciPy's lu_factor/lu_solve wrappers check and convert
    their inputs for ~10 µs a call, which eager grad of a small solve pays three times."""
    key = (name,) + tuple(a.dtype.char for a in arrays)
    fn = _lapack_routines.get(key)
    if fn is None:
        fn = _lapack_routines[key] = scipy.linalg.get_lapack_funcs((name,), arrays)[0]
    return fn


def _check_info(info, name):
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of LAPACK {name}")
    if info > 0 and name == "getrf":  # as scipy.linalg.lu_factor warns
        import warnings
        warnings.warn(f"Diagonal number {info} is exactly zero. Singular matrix.",
                      scipy.linalg.LinAlgWarning, stacklevel=4)


def _lu_factor_one(a, transposed=False):
    """(lu, piv) of one matrix, or of its transpose (tests count calls to this, the only
    factorization). LAPACK works on column-major matrices: a row-major `a` would first be
    copied into that order with a transposing copy, while `a.T` is column-major as it is."""
    a = np.asarray(a)
    if transposed:
        a = a.T
    if a.size == 0:  # an empty system: nothing to factor (SciPy < 1.14 rejects it)
        lu, piv = np.empty(a.shape, float_dtype(a.dtype)), np.empty(a.shape[0], np.int32)
    else:
        lu, piv, info = _lapack("getrf", a)(a, overwrite_a=False)
        _check_info(info, "getrf")
    return lu, piv.astype(np.int32, copy=False)


def _lu_solve_one(lu, piv, b, trans):
    """op(a)⁻¹ b from one matrix's factors (tests count calls to this)."""
    lu, b = np.asarray(lu), np.asarray(b)
    if b.size == 0:
        return empty_solution(lu, b)
    x, info = _lapack("getrs", lu, b)(lu, piv, b, trans=trans, overwrite_b=False)
    _check_info(info, "getrs")
    return x


# lu_factor(a, with_lu_tangent, transposed) -> (lu, piv). By default the factors are
# auxiliary, with zero tangents: every consumer also takes `a` and differentiates through it,
# so no work is spent on dlu. The public scipy `lu_factor` asks for lu's true tangent, for
# users who read the factors themselves; it is staged (free when unused) in reverse mode.
# `transposed` factors aᵀ instead (no transposing copy of a row-major `a`, ~4% of an LU at
# n = 400); lu_solve's `lu_t` says which one its factors are. Only auxiliary factors may be.
lu_factor_p = Primitive("lu_factor", multiple_results=True, memory="fresh")  # getrf copies a
lu_factor_p.def_impl(lambda a, with_lu_tangent, transposed: stacked(
    lambda a: _lu_factor_one(a, transposed), a))
lu_factor_p.def_abstract_eval(lambda a, with_lu_tangent, transposed: [
    ShapedArray(a.shape, float_dtype(a.dtype)),
    ShapedArray(a.shape[:-2] + (square("lu_factor", a),), np.int32)])
def _lu_factor_jvp(primals, tangents, with_lu_tangent, transposed):
    (a,), (ta,) = primals, tangents
    lu, piv = lu_factor(a, with_lu_tangent, transposed)
    if not with_lu_tangent or type(ta) is Zero:
        return [lu, piv], [Zero.like(lu), Zero.like(piv)]
    # A = P L U: Φ = L⁻¹ Pᵀ dA U⁻¹ = L⁻¹ dL + dU U⁻¹ (strictly lower + upper), and
    # L⁻¹ Pᵀ = U A⁻¹, so Φ = U (A⁻¹ dA) U⁻¹ needs no permutation.
    U, L = tri(lu, False), ops.add(tri(lu, True, -1), eye_like(lu))
    UX = mm(U, lu_solve(a, lu, piv, ta, 0))
    phi = mT(solve_triangular(U, mT(UX), lower=False, trans=1))
    return [lu, piv], [ops.add(mm(L, tri(phi, True, -1)), mm(tri(phi, False), U)),
                       Zero.like(piv)]
lu_factor_p.def_jvp(_lu_factor_jvp)
lu_factor_p.def_batch(lambda vals, dims, with_lu_tangent, transposed: (
    lu_factor(bdim_to_front(vals[0], dims[0]), with_lu_tangent, transposed), [0, 0]))
def lu_factor(a, with_lu_tangent=False, transposed=False):
    assert not (with_lu_tangent and transposed), "the factors of aᵀ have no tangent rule"
    return lu_factor_p.bind(a, with_lu_tangent=bool(with_lu_tangent),
                            transposed=bool(transposed))


lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation")  # a[perm] = l @ u
def _pivots_to_permutation(piv):
    piv = np.asarray(piv)
    n = piv.shape[-1]
    perm = np.broadcast_to(np.arange(n, dtype=np.int32), piv.shape).copy()
    flat_perm, flat_piv = perm.reshape(-1, n), piv.reshape(-1, n)
    for row, swaps in zip(flat_perm, flat_piv):  # LAPACK's row interchanges, in order
        for i, j in enumerate(swaps):
            row[i], row[j] = row[j], row[i]
    return perm
lu_pivots_to_permutation_p.def_impl(_pivots_to_permutation)
lu_pivots_to_permutation_p.def_abstract_eval(lambda piv: ShapedArray(piv.shape, np.int32))
defjvp_zero(lu_pivots_to_permutation_p)  # integer-valued
lu_pivots_to_permutation_p.def_batch(lambda vals, dims: (
    lu_pivots_to_permutation(bdim_to_front(vals[0], dims[0])), 0))
def lu_pivots_to_permutation(piv): return lu_pivots_to_permutation_p.bind(piv)


def lu_reconstruct(lu, piv):
    """a = Pᵀ L U from the factors, differentiable in lu (for a plain (lu, piv) tuple)."""
    n = shape_of(lu)[-1]
    perm = lu_pivots_to_permutation(piv)
    q = ops.convert_element_type(  # q @ a = a[perm]
        ops.eq(ops.reshape(perm, shape_of(perm) + (1,)), np.arange(n)), dtype_of(lu))
    L = ops.add(tri(lu, True, -1), eye_like(lu))
    return mm(mT(q), mm(L, tri(lu, False)))


# lu_solve(a, lu, piv, b, trans, lu_t): op(a)⁻¹ b, a unread;
# (lu, piv) are the factors of a, or of aᵀ if lu_t (then LAPACK solves with the other `trans`)
lu_solve_p = Primitive("lu_solve", memory="fresh")  # LAPACK's getrs writes a new x
lu_solve_p.def_impl(lambda a, lu, piv, b, trans, lu_t: stacked(
    lambda lu, piv, b: _lu_solve_one(lu, piv, b, trans ^ lu_t), lu, piv, b))
lu_solve_p.def_abstract_eval(lambda a, lu, piv, b, trans, lu_t: rhs_aval("lu_solve", lu, b))
def _lu_solve_jvp(primals, tangents, trans, lu_t):
    a, lu, piv, b = primals
    ta, _, _, tb = tangents
    x = lu_solve(a, lu, piv, b, trans, lu_t)
    if type(ta) is Zero and type(tb) is Zero:
        return x, Zero.like(x)
    # op(A) x = b  =>  op(A) dx = db - op(dA) x: one more solve with the same factors.
    dA = None if type(ta) is Zero else op(ta, trans)
    return x, lu_solve(a, lu, piv, minus_dA_x(nonzero(tb), dA, x), trans, lu_t)
lu_solve_p.def_jvp(_lu_solve_jvp)
def _lu_solve_transpose(ct, a, lu, piv, b, trans, lu_t):
    only_b_linear("lu_solve", (a, lu, piv, b))
    return [None, None, None, ct_for(b, transposed_solve(
        lambda rhs, t: lu_solve(a, lu, piv, rhs, t, lu_t), ct, trans))]
lu_solve_p.def_transpose(_lu_solve_transpose)
lu_solve_p.def_batch(lambda vals, dims, trans, lu_t: batch_solve(
    lambda *v: lu_solve(*v, trans=trans, lu_t=lu_t), vals, dims))
def _lu_solve_jet(primals, series, trans, lu_t):
    """op(A(t)) x(t) = b(t): x_k = op(A_0)⁻¹ (b_k - sum_{i=1..k} op(A_i) x_(k-i)), every
    coefficient solved with the one factorization of A_0."""
    a, lu, piv, b = primals
    sa, sb = series[0], series[3]
    x = [lu_solve(a, lu, piv, b, trans, lu_t)]
    for k in range(1, len(sb) + 1):
        rhs = nonzero(sb[k - 1])
        for i in range(1, k + 1):
            if type(sa[i - 1]) is not Zero and type(x[k - i]) is not Zero:
                rhs = minus_dA_x(rhs, op(sa[i - 1], trans), x[k - i])
        x.append(Zero.like(x[0]) if rhs is None else lu_solve(a, lu, piv, rhs, trans, lu_t))
    return x[0], x[1:]
lu_solve_p.def_jet(_lu_solve_jet)
def lu_solve(a, lu, piv, b, trans=0, lu_t=False):
    assert trans in (0, 1) or (trans == 2 and not lu_t), "trans 2 needs a's own factors"
    return lu_solve_p.bind(a, lu, piv, b, trans=int(trans), lu_t=bool(lu_t))


# --- triangular solves ----------------------------------------------------------------------

solve_triangular_p = Primitive("solve_triangular")  # op(tri(a))⁻¹ b, one triangle of a read
solve_triangular_p.def_impl(lambda a, b, lower, trans, unit_diagonal: stacked(
    lambda a, b: empty_solution(a, b) if b.size == 0 else scipy.linalg.solve_triangular(
        a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal, check_finite=False),
    a, b))
solve_triangular_p.def_abstract_eval(
    lambda a, b, **params: rhs_aval("solve_triangular", a, b))
def _solve_triangular_jvp(primals, tangents, lower, trans, unit_diagonal):
    (a, b), (ta, tb) = primals, tangents
    params = dict(lower=lower, trans=trans, unit_diagonal=unit_diagonal)
    x = solve_triangular(a, b, **params)
    if type(ta) is Zero and type(tb) is Zero:
        return x, Zero.like(x)
    dA = None
    if type(ta) is not Zero:  # only the triangle the solve reads moves it
        dA = op(tri(ta, lower, -1 if unit_diagonal else 0), trans)
    return x, solve_triangular(a, minus_dA_x(nonzero(tb), dA, x), **params)
solve_triangular_p.def_jvp(_solve_triangular_jvp)
def _solve_triangular_transpose(ct, a, b, lower, trans, unit_diagonal):
    only_b_linear("solve_triangular", (a, b))
    return [None, ct_for(b, transposed_solve(
        lambda rhs, t: solve_triangular(a, rhs, lower, t, unit_diagonal), ct, trans))]
solve_triangular_p.def_transpose(_solve_triangular_transpose)
solve_triangular_p.def_batch(lambda vals, dims, **params: batch_solve(
    lambda *v: solve_triangular_p.bind(*v, **params), vals, dims))
def solve_triangular(a, b, lower=True, trans=0, unit_diagonal=False):
    return solve_triangular_p.bind(a, b, lower=bool(lower), trans=int(trans),
                                   unit_diagonal=bool(unit_diagonal))


# --- Cholesky -------------------------------------------------------------------------------

cholesky_p = Primitive("cholesky")  # lower factor L, reading the lower triangle of a
cholesky_p.def_impl(lambda a: np.linalg.cholesky(a))
cholesky_p.def_abstract_eval(square_aval("cholesky"))
def _cholesky_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    L = cholesky(a)
    if type(ta) is Zero:
        return L, Zero.like(L)
    # dL = L Φ(L⁻¹ dA L⁻ᴴ), Φ = lower triangle with the diagonal halved; dA Hermitian, so
    # L⁻¹ dA L⁻ᴴ = L⁻¹ (L⁻¹ dA)ᴴ: two triangular solves (ᴴ is ᵀ for real matrices). dA is
    # the tangent of the matrix the impl reads: the lower triangle, mirrored.
    dA = one_triangle_herm(ta, True)
    Y = solve_triangular(L, mH(solve_triangular(L, dA, lower=True)), lower=True)
    n = shape_of(L)[-1]
    phi = np.tri(n, k=-1, dtype=dtype_of(L)) + 0.5 * np.eye(n, dtype=dtype_of(L))
    return L, mm(L, ops.mul(Y, phi))
cholesky_p.def_jvp(_cholesky_jvp)
cholesky_p.def_batch(lambda vals, dims: (cholesky(bdim_to_front(vals[0], dims[0])), 0))
def cholesky(a): return cholesky_p.bind(a)


# cho_solve(a, l, b, lower): (l lᴴ)⁻¹ b for a LOWER factor l of the Hermitian (real: symmetric)
# matrix read from a's lower (lower=True) or upper triangle; a is unread and carries the
# derivative.
cho_solve_p = Primitive("cho_solve")
cho_solve_p.def_impl(lambda a, l, b, lower: stacked(
    lambda l, b: empty_solution(l, b) if b.size == 0 else
    scipy.linalg.cho_solve((l, True), b, check_finite=False), l, b))
cho_solve_p.def_abstract_eval(lambda a, l, b, lower: rhs_aval("cho_solve", l, b))
def _cho_solve_jvp(primals, tangents, lower):
    (a, l, b), (ta, _, tb) = primals, tangents
    x = cho_solve(a, l, b, lower)
    if type(ta) is Zero and type(tb) is Zero:
        return x, Zero.like(x)
    dA = None if type(ta) is Zero else one_triangle_herm(ta, lower)
    return x, cho_solve(a, l, minus_dA_x(nonzero(tb), dA, x), lower)
cho_solve_p.def_jvp(_cho_solve_jvp)
def _cho_solve_transpose(ct, a, l, b, lower):
    only_b_linear("cho_solve", (a, l, b))
    # Aᵀ = conj(A) for Hermitian A, so A⁻ᵀ ct = conj(A⁻¹ conj(ct)) (A⁻¹ ct for real A).
    return [None, None, ct_for(b, ops.conj(cho_solve(a, l, ops.conj(ct), lower)))]
cho_solve_p.def_transpose(_cho_solve_transpose)
cho_solve_p.def_batch(lambda vals, dims, lower: batch_solve(
    lambda *v: cho_solve(*v, lower=lower), vals, dims))
def _cho_solve_jet(primals, series, lower):
    """A(t) x(t) = b(t), every coefficient solved with the Cholesky factor of A_0."""
    (a, l, b), (sa, _, sb) = primals, series
    x = [cho_solve(a, l, b, lower)]
    for k in range(1, len(sb) + 1):
        rhs = nonzero(sb[k - 1])
        for i in range(1, k + 1):
            if type(sa[i - 1]) is not Zero and type(x[k - i]) is not Zero:
                rhs = minus_dA_x(rhs, one_triangle_herm(sa[i - 1], lower), x[k - i])
        x.append(Zero.like(x[0]) if rhs is None else cho_solve(a, l, rhs, lower))
    return x[0], x[1:]
cho_solve_p.def_jet(_cho_solve_jet)
def cho_solve(a, l, b, lower=True): return cho_solve_p.bind(a, l, b, lower=bool(lower))


# --- determinants, from the LU factors ------------------------------------------------------

def _lu_diag_parity(lu, piv):
    d = np.diagonal(lu, axis1=-2, axis2=-1)
    swaps = np.count_nonzero(piv != np.arange(piv.shape[-1], dtype=piv.dtype), axis=-1)
    return d, (1 - 2 * (swaps % 2)).astype(d.dtype)


def _det_impl(a, lu, piv):
    d, parity = _lu_diag_parity(lu, piv)
    return parity * np.prod(d, axis=-1)


def _slogdet_impl(a, lu, piv):
    d, parity = _lu_diag_parity(lu, piv)
    with np.errstate(divide="ignore"):
        return parity * np.prod(np.sign(d), axis=-1), np.sum(np.log(np.abs(d)), axis=-1)


def _dlogdet(ta, a, lu, piv):
    """tr(A⁻¹ dA) = Σ A⁻ᵀ ∘ dA, with A⁻ᵀ from the factors: O(n²) per tangent."""
    nd = ndim_of(ta)
    return ops.reduce_sum(ops.mul(ta, _inv_t(a, lu, piv)), (nd - 2, nd - 1))


def _inv_t(a, lu, piv):
    """A⁻ᵀ from the factors."""
    return lu_solve(a, lu, piv, np.broadcast_to(eye_like(lu), shape_of(lu)), 1)


def _cofactor_svd(a):
    """cof(A) = det(U) det(Vᴴ) conj(U) diag(∏_{j≠i} σ_j) conj(Vᴴ) for A = U Σ Vᴴ: products of
    the other singular values, with no division, so exact at rank n-1 (the rank-one
    adjugate) and 0 at rank n-2 or less, and finite where det under- or overflows."""
    u, s, vh = np.linalg.svd(a)
    ones = np.ones_like(s[..., :1])
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], -1), -1)
    after = np.cumprod(np.concatenate([ones, s[..., :0:-1]], -1), -1)[..., ::-1]
    scale = (np.linalg.det(u) * np.linalg.det(vh))[..., None, None]
    return scale * ((u.conj() * (before * after)[..., None, :]) @ vh.conj())


def _cofactor_impl(a, lu, piv):
    """The cofactor matrix adj(A)ᵀ: det · A⁻ᵀ from the LU factors where det is finite and not
    0 (accurate even close to singular: both come from one factorization), else from the
    SVD (exactly singular, or det under/overflows). Non-finite matrices keep det · A⁻ᵀ."""
    a, lu = np.asarray(a), np.asarray(lu)
    dt = np.asarray(lu).dtype
    out = (_det_impl(a, lu, piv)[..., None, None] * stacked(
        lambda lu, piv: _lu_solve_one(lu, piv, np.eye(lu.shape[-1], dtype=dt), 1), lu, piv))
    d = _det_impl(a, lu, piv)
    redo = (~np.isfinite(d) | (d == 0)) & np.isfinite(a).all(axis=(-2, -1))
    if redo.any():
        out = np.array(out, dtype=dt)
        out[redo] = _cofactor_svd(a[redo].astype(dt, copy=False))
    return out


# cofactor(a, lu, piv) = adj(a)ᵀ, the gradient of det. Its JVP (det's second derivative) is
# d(det A⁻ᵀ) = C tr(A⁻¹ dA) - C dAᵀ A⁻ᵀ: exact for an invertible a, NaN at a singular one.
cofactor_p = Primitive("cofactor", memory="fresh")
cofactor_p.def_impl(_cofactor_impl)
cofactor_p.def_abstract_eval(lambda a, lu, piv: ShapedArray(lu.shape, lu.dtype))
def _cofactor_jvp(primals, tangents):
    (a, lu, piv), ta = primals, tangents[0]
    c = cofactor(a, lu, piv)
    if type(ta) is Zero:
        return c, Zero.like(c)
    tr = ops.reshape(_dlogdet(ta, a, lu, piv), shape_of(c)[:-2] + (1, 1))
    return c, ops.sub(ops.mul(c, tr), mm(c, mm(mT(ta), _inv_t(a, lu, piv))))
cofactor_p.def_jvp(_cofactor_jvp)
cofactor_p.def_batch(lambda vals, dims: batch_all(lambda *v: cofactor(*v), vals, dims))
def cofactor(a, lu, piv): return cofactor_p.bind(a, lu, piv)


det_p = Primitive("det")  # det(a, lu, piv), lu/piv = lu_factor(a)
det_p.def_impl(_det_impl)
det_p.def_abstract_eval(lambda a, lu, piv: ShapedArray(lu.shape[:-2], lu.dtype))
def _det_jvp(primals, tangents):
    (a, lu, piv), ta = primals, tangents[0]
    ans = det(a, lu, piv)
    if type(ta) is Zero:
        return ans, Zero.like(ans)
    # d det = tr(adj(A) dA): right at every rank (det · tr(A⁻¹ dA) is NaN at singular A)
    nd = ndim_of(ta)
    return ans, ops.reduce_sum(ops.mul(ta, cofactor(a, lu, piv)), (nd - 2, nd - 1))
det_p.def_jvp(_det_jvp)
det_p.def_batch(lambda vals, dims: batch_all(lambda *v: det(*v), vals, dims))
def det(a, lu, piv): return det_p.bind(a, lu, piv)


slogdet_p = Primitive("slogdet", multiple_results=True)  # -> (sign, log|det|)
slogdet_p.def_impl(_slogdet_impl)
slogdet_p.def_abstract_eval(lambda a, lu, piv: [  # the sign is complex for complex a
    ShapedArray(lu.shape[:-2], lu.dtype),
    ShapedArray(lu.shape[:-2], np.finfo(lu.dtype).dtype)])  # its real dtype
def _slogdet_jvp(primals, tangents):
    (a, lu, piv), ta = primals, tangents[0]
    sign, logdet = slogdet(a, lu, piv)
    if type(ta) is Zero:
        return [sign, logdet], [Zero.like(sign), Zero.like(logdet)]
    t = _dlogdet(ta, a, lu, piv)  # d log det = tr(A⁻¹ dA)
    if dtype_of(sign).kind != "c":  # a real sign is piecewise constant
        return [sign, logdet], [Zero.like(sign), t]
    # log det = log|det| + i arg(det): the real part moves log|det|, the imaginary the phase.
    return [sign, logdet], [ops.mul(sign, ops.mul(ops.imag(t), 1j)), ops.real(t)]
slogdet_p.def_jvp(_slogdet_jvp)
slogdet_p.def_batch(lambda vals, dims: batch_all(lambda *v: slogdet(*v), vals, dims, 2))
def slogdet(a, lu, piv): return slogdet_p.bind(a, lu, piv)


__all__ = ["lu_factor", "lu_pivots_to_permutation", "lu_reconstruct", "lu_solve",
           "solve_triangular", "cholesky", "cho_solve", "det", "slogdet", "cofactor"]

"""numpy.linalg's names and signatures, differentiable (rules: fxad/rules/linalg/).

solve/inv/det/slogdet factor once with LU (notes/linalg.md). Matrices may carry leading
batch dims, as in NumPy. The symmetric routines (cholesky, eigh, eigvalsh) are functions of
the Hermitian part of their input, as in JAX (`symmetrize_input=True`): NumPy's values on
every Hermitian input, and symmetric gradients; `symmetrize_input=False` reads one triangle
(UPLO), as NumPy does, and differentiates that function.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import lax
from ..core import Tracer, get_aval
from ..errors import FxadValueError
from ..lax.products import canonicalize_precision
from ..rules.linalg import decompositions as _dec, solve as _sol
from ..rules.helpers import dtype_of, shape_of
from .creation import asarray
from .manipulation import diagonal as _diagonal, expand_dims, matrix_transpose, moveaxis, squeeze
from .manipulation import reshape as _reshape
from ._axes import normalize_axes
from .products import cross as _cross, matmul as _matmul, outer as _outer, tensordot as _tensordot
from .reductions import max as _max, min as _min, sum as _sum
from .ufuncs import vecdot as _vecdot
from ._lists import stack_traced_lists

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


def as_float(x):
    """An array or tracer of a float dtype (integers become float64, as in NumPy)."""
    if not isinstance(x, Tracer):
        x = asarray(x)
    if dtype_of(x).kind not in "fc":
        x = lax.convert_element_type(x, np.float64)
    return x


def _bcast(x, shape):
    return x if tuple(shape_of(x)) == tuple(shape) else lax.broadcast_to(x, tuple(shape))


def _matrices(name, a, square=False):
    """a as a float stack of matrices, checked here: eagerly LAPACK would factor a
    rectangular matrix and fail later with its own message (or not at all)."""
    a = as_float(a)
    s = shape_of(a)
    if len(s) < 2:
        raise FxadValueError(f"{name}: expected an array of matrices (..., m, n), got shape "
                             f"{s}")
    if square:
        _sol.square(name, a)
    return a


def solve_operands(a, b, name="solve"):
    """NumPy's rule: b is a vector if 1-d, else a stack of (n, k) matrices; leading dims
    broadcast. Returns a and b with equal leading dims."""
    a, b = _matrices(name, a, square=True), as_float(b)
    sa, sb = shape_of(a), shape_of(b)
    if len(sb) == 1:
        b = _bcast(b, sa[:-2] + sb)
    else:
        lead = np.broadcast_shapes(sa[:-2], sb[:-2])
        a, b = _bcast(a, lead + sa[-2:]), _bcast(b, lead + sb[-2:])
    _sol.rhs_aval(name, get_aval(a), get_aval(b))  # the solves' shape rule checks b's rows
    return a, b


def identity_like(a):
    return np.broadcast_to(np.eye(shape_of(a)[-1], dtype=dtype_of(a)), shape_of(a))


@stack_traced_lists
def solve(a, b):
    """x with a x = b, as `numpy.linalg.solve` (a batch of matrices; b a vector or matrices).
    Differentiable in a and b to any order."""
    a, b = solve_operands(a, b)
    lu, piv = _sol.lu_factor(a, transposed=True)
    return _sol.lu_solve(a, lu, piv, b, 0, lu_t=True)


@stack_traced_lists
def inv(a):
    """The inverse of a (batched over leading axes), as `numpy.linalg.inv`; differentiable."""
    a = _matrices("inv", a, square=True)
    lu, piv = _sol.lu_factor(a, transposed=True)
    return _sol.lu_solve(a, lu, piv, identity_like(a), 0, lu_t=True)


@stack_traced_lists
def det(a):
    """The determinant (batched), as `numpy.linalg.det`; differentiable, also at singular matrices
    (through the LU factors)."""
    a = _matrices("det", a, square=True)
    return _sol.det(a, *_sol.lu_factor(a))


@stack_traced_lists
def slogdet(a):
    """(sign, log |det a|), as `numpy.linalg.slogdet`; differentiable in a (the log-determinant's
    derivative is inv(a) transposed)."""
    a = _matrices("slogdet", a, square=True)
    return SlogdetResult(*_sol.slogdet(a, *_sol.lu_factor(a)))


def hermitian_matrices(name, a, symmetrize_input=True):
    """a as a float stack of square matrices; its Hermitian part (exactly a when a is
    Hermitian) unless symmetrize_input is False."""
    a = _matrices(name, a, square=True)
    return _sol.symmetric_part(a) if symmetrize_input else a


@stack_traced_lists
def cholesky(a, /, *, upper=False, symmetrize_input=True):
    """The lower (or, with upper=True, upper) Cholesky factor of a Hermitian positive definite a,
    as `numpy.linalg.cholesky`. `symmetrize_input` (JAX's) uses (a + a^H) / 2 so the derivative
    is that of a symmetric input. Differentiable."""
    a = hermitian_matrices("cholesky", a, symmetrize_input)
    if upper:  # reads the upper triangle: the lower one of aᴴ
        return _sol.mH(_sol.cholesky(_sol.mH(a)))
    return _sol.cholesky(a)


def _lower(UPLO):
    if UPLO not in ("L", "U", None):
        raise FxadValueError("UPLO argument must be 'L' or 'U'")
    return UPLO != "U"


@stack_traced_lists
def eigh(a, UPLO="L", symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, as `numpy.linalg.eigh`;
    `symmetrize_input` as JAX's. Differentiable where the eigenvalues are distinct (the
    eigenvectors' phase fixed as JAX's)."""
    a = hermitian_matrices("eigh", a, symmetrize_input)
    return EighResult(*_dec.eigh(a, _lower(UPLO)))


@stack_traced_lists
def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """The eigenvalues (ascending) of a Hermitian matrix, as `numpy.linalg.eigvalsh`;
    differentiable where they are distinct."""
    return _dec.eigvalsh(hermitian_matrices("eigvalsh", a, symmetrize_input), _lower(UPLO))


EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])


@stack_traced_lists
def eig(a):
    """Eigenvalues and unit eigenvectors of a general square matrix, always complex (NumPy
    returns real arrays when every eigenvalue is real); derivatives assume distinct
    eigenvalues (notes/linalg.md)."""
    return EigResult(*_dec.eig(_matrices("eig", a, square=True)))


@stack_traced_lists
def eigvals(a):
    """The eigenvalues of a general square matrix (complex), as `numpy.linalg.eigvals`;
    differentiable where they are distinct."""
    return _dec.eig(_matrices("eigvals", a, square=True))[0]


@stack_traced_lists
def qr(a, mode="reduced"):
    """The QR factorization, as `numpy.linalg.qr` (mode "reduced", "complete" or "r");
    differentiable for full-rank input (complete mode of a wide or square matrix)."""
    a = _matrices("qr", a)
    m, n = shape_of(a)[-2:]
    if mode == "complete" and m > n:
        raise FxadValueError("qr: mode='complete' is supported for m <= n only (it equals "
                             "'reduced' there); use mode='reduced'")
    if mode not in ("reduced", "complete", "r"):
        raise FxadValueError(f"qr: mode={mode!r} is not supported; use 'reduced' or 'r'")
    q, r = _dec.qr(a)
    return r if mode == "r" else QRResult(q, r)


@stack_traced_lists
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """The singular value decomposition, as `numpy.linalg.svd`; the singular values are
    differentiable everywhere, the vectors where the singular values are distinct and non-zero."""
    a = _matrices("svd", a)
    m, n = shape_of(a)[-2:]
    u, s, vt = _dec.svd(a)
    if not compute_uv:
        return s
    if full_matrices and m != n:
        raise FxadValueError("svd: full_matrices=True is supported for square matrices "
                             "only; pass full_matrices=False")
    return SVDResult(u, s, vt)


@stack_traced_lists
def svdvals(x, /):
    """The singular values (descending), as `numpy.linalg.svdvals`; differentiable."""
    return _dec.svd(_matrices("svdvals", x))[1]


# --- norms ----------------------------------------------------------------------------------

def _scaled(x, axes, keepdims, power, root):
    """root(Σ power(|x| / m)) * m with m = max |x| over `axes`, a constant. Norms are
    homogeneous, so m changes nothing mathematically, but squares of entries near 1e300 or
    1e-200 do not overflow or underflow: value and derivatives stay finite and right
    (NumPy's unscaled norm of [1e300, 1e300] is inf, whose derivative x/inf = 0 is wrong).
    m is at least tiny**0.75, so tangents divided by it stay finite for subnormal x (and
    subnormal entries over it still square without underflow); a non-finite m is 1, so
    inf and nan propagate. Where the sum is 0 the result is 0 with derivative 0, not nan:
    the unselected branch sees 1."""
    shape = shape_of(x)
    ax = normalize_axes(axes, len(shape))
    m = _max(lax.abs(lax.stop_gradient(x)), axis=ax, keepdims=True)
    floor = float(np.finfo(dtype_of(m)).tiny) ** 0.75
    m = lax.select(lax.isfinite(m), lax.max(m, floor), 1.0)
    s = _sum(power(lax.div(x, m)), axis=ax, keepdims=True)
    zero = lax.eq(s, 0)
    out = lax.mul(lax.select(zero, 0.0, root(lax.select(zero, 1.0, s))), m)
    return out if keepdims else lax.reshape(out, tuple(d for i, d in enumerate(shape)
                                                       if i not in ax))


def _abs2(y):
    """|y|² as a polynomial (y·y for real y, re² + im² for complex): smooth at 0, where
    abs(y)² would have second derivative 0."""
    if np.issubdtype(dtype_of(y), np.complexfloating):
        re, im = lax.real(y), lax.imag(y)
        return lax.add(lax.mul(re, re), lax.mul(im, im))
    return lax.mul(y, y)


def safe_l2(x, axes, keepdims):
    """The 2-norm / Frobenius norm, scaled (see _scaled)."""
    return _scaled(x, axes, keepdims, _abs2, lax.sqrt)


def _vector_norm(x, ord, ax, keepdims):
    if ord is None or ord == 2:
        return safe_l2(x, ax, keepdims)
    a = lax.abs(x)
    if ord == np.inf:
        return _max(a, axis=ax, keepdims=keepdims)
    if ord == -np.inf:
        return _min(a, axis=ax, keepdims=keepdims)
    if ord == 0:  # a count: no derivative
        return _sum(lax.convert_element_type(lax.ne(x, 0), dtype_of(x)), axis=ax,
                    keepdims=keepdims)
    if ord == 1:
        return _sum(a, axis=ax, keepdims=keepdims)
    if isinstance(ord, str):
        raise FxadValueError(f"Invalid norm order '{ord}' for vectors")
    p = float(ord)
    return _scaled(x, ax, keepdims, lambda y: lax.pow(lax.abs(y), p),
                   lambda s: lax.pow(s, 1.0 / p))


def _matrix_norm(x, ord, r, c, keepdims):
    if ord in (None, "fro", "f"):
        return safe_l2(x, (r, c), keepdims)
    if ord in ("nuc", 2, -2):
        s = _dec.svd(moveaxis(x, (r, c), (-2, -1)))[1]
        out = _sum(s, axis=-1) if ord == "nuc" else (_max if ord == 2 else _min)(s, axis=-1)
        return expand_dims(out, tuple(sorted((r, c)))) if keepdims else out
    if ord in (1, -1, np.inf, -np.inf):  # max/min over one axis of sums over the other
        inner, outer = (r, c) if ord in (1, -1) else (c, r)
        red = _max if ord in (1, np.inf) else _min
        out = red(_sum(lax.abs(x), axis=inner, keepdims=True), axis=outer, keepdims=True)
        return out if keepdims else squeeze(out, (r, c))
    raise FxadValueError(f"Invalid norm order {ord!r} for matrices")


@stack_traced_lists
def norm(x, ord=None, axis=None, keepdims=False):
    """A vector or matrix norm, as `numpy.linalg.norm` (`ord` and `axis` as NumPy's);
    differentiable, with the derivative of the 2-norm at 0 taken as 0."""
    x = as_float(x)
    nd = len(shape_of(x))
    if axis is None:
        if ord is None or (ord in ("fro", "f") and nd == 2):
            return safe_l2(x, None, keepdims)
        if nd not in (1, 2):
            raise FxadValueError("Improper number of dimensions to norm.")
        axis = tuple(range(nd))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) == 1:
        return _vector_norm(x, ord, normalize_axes(axes, nd), keepdims)
    if len(axes) == 2:
        r, c = (int(a) % nd for a in axes)
        if r == c:
            raise FxadValueError("Duplicate axes given.")
        return _matrix_norm(x, ord, r, c, keepdims)
    raise FxadValueError("Improper number of dimensions to norm.")


@stack_traced_lists
def outer(x1, x2, /):
    """The outer product of two vectors, as `numpy.linalg.outer`; differentiable."""
    if len(shape_of(x1)) != 1 or len(shape_of(x2)) != 1:
        raise FxadValueError("linalg.outer takes 1-d vectors")
    return _outer(x1, x2)


@stack_traced_lists
def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """The dot product of vectors along `axis` (conjugating x1), as `numpy.vecdot`; `precision`
    and `preferred_element_type` as JAX's. Differentiable."""
    return _vecdot(x1, x2, axis=axis, precision=precision,
                   preferred_element_type=preferred_element_type)


@stack_traced_lists
def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """The matrix product, as `numpy.matmul` (batched, vectors promoted); `precision` and
    `preferred_element_type` as JAX's. Differentiable."""
    return _matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


@stack_traced_lists
def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """The tensor dot product over `axes`, as `numpy.tensordot`; `precision` and
    `preferred_element_type` as JAX's. Differentiable."""
    return _tensordot(x1, x2, axes, precision=precision,
                      preferred_element_type=preferred_element_type)


# --- composed from the above --------------------------------------------------------------

@stack_traced_lists
def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """The pseudo-inverse; its derivative assumes the rank does not change nearby (no
    singular value at the cutoff rcond * largest)."""
    if rcond is not None and rtol is not None:
        raise FxadValueError("pinv: give rcond or rtol, not both")
    cut = rcond if rcond is not None else rtol if rtol is not None else 1e-15
    if isinstance(cut, Tracer) or np.ndim(cut):
        raise FxadValueError("pinv: rcond must be a concrete number")
    return _dec.pinv(_matrices("pinv", a), cut)


LstsqResult = namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


@stack_traced_lists
def lstsq(a, b, rcond=None):
    """x = pinv(a) b, with NumPy's default cutoff (eps * max(m, n)). Unlike NumPy, which
    returns no residuals when the rank is below n (a value fxad cannot know when staging),
    the residuals are returned whenever m > n."""
    a = _matrices("lstsq", a)
    if len(shape_of(a)) != 2:
        raise FxadValueError("lstsq: a must be a 2-d matrix")
    m, n = shape_of(a)
    b = as_float(b)
    if shape_of(b)[0] != m:
        raise FxadValueError(f"lstsq: a has {m} rows but b has {shape_of(b)[0]}")
    if rcond is None:
        rcond = float(np.finfo(dtype_of(a)).eps) * max(m, n)
    x = lax.dot_general(pinv(a, rcond), b, (((1,), (0,)), ((), ())))
    s = svdvals(a)
    rank = lax.convert_element_type(_sum(lax.gt(s, lax.mul(_max(s), rcond))), np.int32)
    if m > n:
        r = lax.sub(b, lax.dot_general(a, x, (((1,), (0,)), ((), ()))))
        resid = _sum(_abs2(r), axis=0, keepdims=len(shape_of(b)) == 1)
    else:
        resid = np.zeros((0,), dtype=np.finfo(dtype_of(a)).dtype)
    return LstsqResult(x, resid, rank, s)


@stack_traced_lists
def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """The number of singular values above the tolerance (an integer: no derivative)."""
    A = as_float(A)
    if len(shape_of(A)) < 2:
        return lax.convert_element_type(_sum(lax.convert_element_type(lax.ne(A, 0), np.int64))
                                        > 0, np.int64)
    s = svdvals(A)
    if tol is None:
        m, n = shape_of(A)[-2:]
        scale = float(np.finfo(dtype_of(s)).eps) * max(m, n) if rtol is None else rtol
        tol = lax.mul(_max(s, axis=-1, keepdims=True), scale)
    else:
        tol = lax.reshape(tol, tuple(shape_of(tol)) + (1,)) if len(shape_of(tol)) else tol
    return _sum(lax.convert_element_type(lax.gt(s, tol), np.int64), axis=-1)


@stack_traced_lists
def cond(x, p=None):
    """The condition number: a ratio of singular values for p in (None, 2, -2), else
    norm(x, p) * norm(inv(x), p)."""
    x = _matrices("cond", x)
    if p in (None, 2, -2):
        s = svdvals(x)
        big, small = _max(s, axis=-1), _min(s, axis=-1)
        r = lax.div(small, big) if p == -2 else lax.div(big, small)
    else:
        r = lax.mul(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))
    # NumPy's convention: a NaN from a singular matrix (0 / 0) is inf, unless x has NaNs
    return lax.select(lax.logical_and(lax.isnan(r), lax.logical_not(
        _max(lax.isnan(x), axis=(-2, -1)))), np.inf, r)


@stack_traced_lists
def matrix_power(a, n):
    """a^n by repeated squaring (n an integer; negative powers invert first)."""
    if not isinstance(n, (int, np.integer)):
        raise FxadValueError("matrix_power: exponent must be an integer")
    a = _matrices("matrix_power", a, square=True)
    if n == 0:
        return identity_like(a).copy()
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else _matmul(result, base)
        n >>= 1
        if n:
            base = _matmul(base, base)
    return result


def multi_dot(arrays, *, out=None, precision=None):
    """A chain of products in the cheapest order (the classic dynamic program over the
    chain's shapes); a 1-d first/last factor is a row/column vector, as in NumPy.
    `precision` is checked and ignored (fxad/lax/products.py)."""
    canonicalize_precision(precision, "multi_dot")
    if out is not None:
        raise FxadValueError("multi_dot: out= is not supported on traced values")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise FxadValueError("Expecting at least two arrays.")
    first_1d, last_1d = len(shape_of(arrays[0])) == 1, len(shape_of(arrays[-1])) == 1
    if first_1d:
        arrays[0] = lax.reshape(arrays[0], (1,) + tuple(shape_of(arrays[0])))
    if last_1d:
        arrays[-1] = lax.reshape(arrays[-1], tuple(shape_of(arrays[-1])) + (1,))
    dims = [shape_of(x)[0] for x in arrays] + [shape_of(arrays[-1])[1]]
    k = len(arrays)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = float("inf")
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def chain(i, j):
        if i == j:
            return arrays[i]
        return _matmul(chain(i, split[i][j]), chain(split[i][j] + 1, j))
    out = chain(0, k - 1)
    if first_1d and last_1d:
        return lax.reshape(out, ())
    if first_1d or last_1d:
        return lax.reshape(out, (shape_of(out)[1],) if first_1d else (shape_of(out)[0],))
    return out


__all__ = ["solve", "inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "qr", "svd",
           "svdvals", "norm", "pinv", "lstsq", "matrix_rank", "cond", "matrix_power",
           "multi_dot", "outer", "matrix_transpose", "vecdot", "eig", "eigvals", "matmul",
           "tensordot"]


__all__ += ["cross", "diagonal", "matrix_norm", "tensorinv", "tensorsolve", "trace",
            "vector_norm"]


# --- the Array API's names (matrix_norm, vector_norm, diagonal, trace, cross), tensor solvers --

@stack_traced_lists
def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The norm of each matrix (the last two axes)."""
    x = as_float(x)
    nd = len(shape_of(x))
    if nd < 2:
        raise FxadValueError("matrix_norm: x must have at least two dimensions")
    return _matrix_norm(x, ord, nd - 2, nd - 1, keepdims)


@stack_traced_lists
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm over `axis` (all axes by default, the array taken as one vector)."""
    x = as_float(x)
    nd = len(shape_of(x))
    if axis is None:
        out = _vector_norm(_reshape(x, (-1,)), ord, (0,), False)
        return lax.reshape(out, (1,) * nd) if keepdims else out
    return _vector_norm(x, ord, normalize_axes(axis, nd), keepdims)


@stack_traced_lists
def diagonal(x, /, *, offset=0):
    """The diagonal of each matrix (the last two axes; numpy.diagonal uses the first two)."""
    return _diagonal(x, offset, -2, -1)


@stack_traced_lists
def trace(x, /, *, offset=0, dtype=None):
    """The sum of each matrix's diagonal (the last two axes; numpy.trace uses the first
    two)."""
    d = _diagonal(x, offset, -2, -1)
    return _sum(d, axis=-1, dtype=dtype)


@stack_traced_lists
def cross(x1, x2, /, *, axis=-1):
    """Cross products of 3-vectors along `axis` (the Array API's: no 2-vectors)."""
    if shape_of(x1)[axis] != 3 or shape_of(x2)[axis] != 3:
        raise FxadValueError("linalg.cross: both inputs need 3 elements along axis")
    return _cross(x1, x2, axis=axis)


@stack_traced_lists
def tensorinv(a, ind=2):
    """The inverse of `a` seen as a linear map from its last dims to its first `ind` dims."""
    s = shape_of(a)
    head, tail = s[:ind], s[ind:]
    n, m = math.prod(map(int, head)), math.prod(map(int, tail))
    if n != m:
        raise FxadValueError(f"tensorinv: the first {ind} dims ({head}) and the rest ({tail}) "
                             "must have equal products")
    return _reshape(inv(_reshape(a, (n, m))), tail + head)


@stack_traced_lists
def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b."""
    a = as_float(a)
    nd = len(shape_of(a))
    if axes is not None:
        axes = [ax % nd for ax in axes]
        a = moveaxis(a, axes, list(range(nd - len(axes), nd)))
    bs = shape_of(b)
    xs = shape_of(a)[len(bs):]
    n = math.prod(map(int, bs))
    m = math.prod(map(int, xs))
    if n != m:
        raise FxadValueError(f"tensorsolve: a's shape {shape_of(a)} does not give a square "
                             f"system for b of shape {bs}")
    return _reshape(solve(_reshape(a, (n, m)), _reshape(b, (n,))), xs)

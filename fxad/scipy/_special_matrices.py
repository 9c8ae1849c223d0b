"""scipy.linalg's special matrices (jax.scipy.linalg has them too).

The ones built from arrays (circulant, hankel, companion, leslie, fiedler,
fiedler_companion, convolution_matrix) are gathers: every entry is an entry of a source
vector made of the inputs (scaled as SciPy scales them) followed by a 0 and a 1, picked by
an index matrix that depends only on the sizes. So they are differentiable in their inputs,
batch over leading axes as SciPy's do, and run under jit and vmap. The ones that depend only
on a size (hilbert, invhilbert, pascal, invpascal, hadamard, dft, helmert) are SciPy's own
arrays, with SciPy's dtypes.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as _sl

from .. import numpy as fnp
from ..core import Tracer
from ..errors import FxadValueError


def _vector_rows(a):
    """a as an array of at least one dimension (the last indexes the vector)."""
    a = fnp.asarray(a)
    if fnp.ndim(a) == 0:
        a = fnp.reshape(a, (1,))
    return a


def _gather(parts, idx):
    """Entries of the concatenation of `parts` (along the last axis), then 0 and 1, at the
    positions `idx` (an integer array of the result's trailing shape)."""
    dt = fnp.result_type(*parts)
    batch = fnp.shape(parts[0])[:-1]
    consts = fnp.broadcast_to(np.array([0, 1], dt), batch + (2,))
    src = fnp.concatenate([fnp.astype(p, dt) for p in parts] + [consts], axis=-1)
    return src[..., idx]


def _nonzero_leading(a, message):
    """SciPy refuses a zero leading coefficient; a traced one cannot be checked."""
    if not isinstance(a, Tracer) and np.any(np.asarray(a)[..., 0] == 0):
        raise FxadValueError(message)


def circulant(c):
    """C[i, j] = c[(i - j) mod n]: c is the first column (leading axes are a batch)."""
    c = _vector_rows(c)
    n = fnp.shape(c)[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def hankel(c, r=None):
    """H[i, j] = c[i + j] while i + j < len(c), then r[i + j - len(c) + 1] (r[0] is ignored;
    r defaults to zeros, so H is zero below the anti-diagonal). c and r are flattened, as in
    SciPy."""
    c = fnp.ravel(fnp.asarray(c))
    n = fnp.shape(c)[0]
    r = fnp.zeros_like(c) if r is None else fnp.ravel(fnp.asarray(r))
    m = fnp.shape(r)[0]
    vals = fnp.concatenate([c, r[1:]]) if m > 1 else c
    return vals[np.arange(n)[:, None] + np.arange(m)[None, :]]


def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest degree first):
    first row -a[1:] / a[0], ones on the subdiagonal; its eigenvalues are the roots."""
    a = _vector_rows(a)
    n = fnp.shape(a)[-1]
    if n < 2:
        raise FxadValueError("companion: the length of `a` must be at least 2")
    _nonzero_leading(a, "companion: the first coefficient(s) of `a` (a[..., 0]) must not be "
                        "zero")
    first = -a[..., 1:] / (1.0 * a[..., :1])
    k = n - 1  # first occupies source positions 0..k-1; the 0 is at k, the 1 at k + 1
    idx = np.full((k, k), k)
    idx[0] = np.arange(k)
    idx[np.arange(1, k), np.arange(k - 1)] = k + 1
    return _gather([first], idx)


def leslie(f, s):
    """The Leslie matrix: fecundities f on the first row, survival rates s on the
    subdiagonal (len(s) == len(f) - 1 >= 1; leading axes are a batch, broadcast between f
    and s)."""
    f, s = _vector_rows(f), _vector_rows(s)
    n = fnp.shape(f)[-1]
    if fnp.shape(s)[-1] != n - 1:
        raise FxadValueError(f"leslie: `s` must have length len(f) - 1 = {n - 1}, got "
                             f"{fnp.shape(s)[-1]}")
    if n < 2:
        raise FxadValueError("leslie: the length of `s` must be at least 1")
    batch = np.broadcast_shapes(fnp.shape(f)[:-1], fnp.shape(s)[:-1])
    f, s = fnp.broadcast_to(f, batch + (n,)), fnp.broadcast_to(s, batch + (n - 1,))
    zero = 2 * n - 1  # f at 0..n-1, s at n..2n-2, then the 0
    idx = np.full((n, n), zero)
    idx[0] = np.arange(n)
    idx[np.arange(1, n), np.arange(n - 1)] = n + np.arange(n - 1)
    return _gather([f, s], idx)


def fiedler(a):
    """F[i, j] = |a[i] - a[j]| (symmetric, zero diagonal; leading axes are a batch)."""
    a = _vector_rows(a)
    if fnp.shape(a)[-1] == 0:
        return fnp.zeros(fnp.shape(a), fnp.result_type(a))
    return fnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients a (highest degree
    first, normalized by a[0]): pentadiagonal, with the companion matrix's eigenvalues."""
    a = _vector_rows(a)
    size = fnp.shape(a)[-1]
    if size < 2:
        return fnp.zeros(fnp.shape(a)[:-1] + (0,), fnp.result_type(a))
    _nonzero_leading(a, "fiedler_companion: the leading coefficient is zero")
    c = -a[..., 1:] / (1.0 * a[..., :1])  # c[k] = -a[k + 1] / a[0], at source position k
    n = size - 1
    zero, one = n, n + 1
    idx = np.full((n, n), zero)
    if n == 1:
        idx[0, 0] = 0
        return _gather([c], idx)
    idx[0, 0], idx[1, 0] = 0, one
    rows = np.arange(0, n - 1, 2)  # superdiagonal entries -a[2], -a[4], ... on even rows
    idx[rows, rows + 1] = rows + 1
    rows = np.arange(2, n, 2)  # subdiagonal entries -a[3], -a[5], ... on even rows
    idx[rows, rows - 1] = rows
    rows = np.arange(0, n - 2, 2)  # ones two to the right of even rows
    idx[rows, rows + 2] = one
    rows = np.arange(3, n, 2)  # ones two to the left of odd rows
    idx[rows, rows - 2] = one
    return _gather([c], idx)


def convolution_matrix(a, n, mode="full"):
    """The matrix A with A @ v == numpy.convolve(a, v, mode) for every v of length n (mode
    'full', 'same' or 'valid', NumPy's rows); leading axes of a are a batch."""
    a = fnp.asarray(a)
    if fnp.ndim(a) < 1 or fnp.shape(a)[-1] == 0:
        raise FxadValueError("convolution_matrix: `a` must be a non-empty 1-d array")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise FxadValueError(f"convolution_matrix: n must be a positive integer, got {n!r}")
    if mode not in ("full", "same", "valid"):
        raise FxadValueError(f"convolution_matrix: mode must be 'full', 'same' or 'valid', "
                             f"got {mode!r}")
    m = fnp.shape(a)[-1]
    lag = np.arange(m + n - 1)[:, None] - np.arange(n)[None, :]
    idx = np.where((lag >= 0) & (lag < m), lag, m)  # a[lag] inside the filter, else the 0
    lo, hi = min(m, n), max(m, n)
    start, rows = {"full": (0, m + n - 1), "same": ((lo - 1) // 2, hi),
                   "valid": (lo - 1, hi - lo + 1)}[mode]
    return _gather([a], idx[start:start + rows])


# Matrices of a size alone: SciPy's arrays (its dtypes), constants under every transformation.

def hilbert(n):
    """The n x n Hilbert matrix, H[i, j] = 1 / (i + j + 1) (SciPy's)."""
    return _sl.hilbert(n)


def invhilbert(n, exact=False):
    """The inverse of the n x n Hilbert matrix (SciPy's; exact=True gives integers)."""
    return _sl.invhilbert(n, exact=exact)


def pascal(n, kind="symmetric", exact=True):
    """The n x n Pascal matrix (SciPy's: integers when exact, as SciPy; JAX's are floats)."""
    return _sl.pascal(n, kind="symmetric" if kind is None else kind, exact=exact)


def invpascal(n, kind="symmetric", exact=True):
    """The inverse of the n x n Pascal matrix (SciPy's)."""
    return _sl.invpascal(n, kind="symmetric" if kind is None else kind, exact=exact)


def hadamard(n, dtype=int):
    """The n x n Hadamard matrix, n a power of 2 (SciPy's)."""
    return _sl.hadamard(n, dtype=dtype)


def dft(n, scale=None, *, dtype=None):
    """The n x n discrete Fourier transform matrix, scale None, 'n' or 'sqrtn' (SciPy's;
    `dtype`, as JAX's, casts it)."""
    m = _sl.dft(n, scale=scale)
    return m if dtype is None else m.astype(dtype)


def helmert(n, full=False):
    """The (n - 1) x n Helmert matrix, or n x n with full=True (SciPy's)."""
    return _sl.helmert(n, full=full)


__all__ = ["circulant", "hankel", "companion", "leslie", "fiedler", "fiedler_companion",
           "convolution_matrix", "hilbert", "invhilbert", "pascal", "invpascal", "hadamard",
           "dft", "helmert"]

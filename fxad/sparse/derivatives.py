"""Sparse Jacobians and Hessians: one batched JVP (VJP, Hessian-vector product) per color of
the pattern, through vmap, and the nonzeros read back from the compressed result."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from .. import extend as fe
from ..api import grad, jvp, vjp, vmap
from .. import numpy as fnp
from ..errors import FxadTypeError, FxadValueError
from .coloring import color_columns, color_rows, star_color, star_sources
from .sparsity import pattern_at

__all__ = ["jacfwd", "jacrev", "hessian"]


def _partial(f, args, argnums):
    if not isinstance(argnums, int):
        raise FxadTypeError("fxad.sparse derivatives take one argument position (an int "
                            f"argnums), got {argnums!r}; concatenate the arguments into one "
                            "array to differentiate with respect to several")
    x = args[argnums]

    def g(v):
        a = list(args)
        a[argnums] = v
        return f(*a)
    return g, x


def _aval(x):
    return fe.ShapedArray(tuple(np.shape(x)), np.result_type(x))


def _pattern(g, x, sparsity, m_of, what):
    n = math.prod(map(int, np.shape(x)))
    if isinstance(sparsity, str):
        if sparsity != "auto":
            raise FxadValueError(f"{what}: sparsity must be 'auto' or a pattern (a scipy.sparse "
                                 f"matrix or a boolean array), got {sparsity!r}")
        p = pattern_at(g, _aval(x))
    else:
        p = sp.csr_array(sparsity, dtype=bool)
    m = m_of(p)
    if p.shape != (m, n):
        raise FxadValueError(f"{what}: the pattern has shape {p.shape}, the derivative "
                             f"{(m, n)}")
    p = sp.csr_array(p, dtype=bool)
    p.sum_duplicates()
    p.eliminate_zeros()
    p.sort_indices()
    return p


def _seeds(colors, n, dtype):
    k = int(colors.max()) + 1 if colors.size else 0
    s = np.zeros((k, n), dtype=dtype)
    s[colors, np.arange(n)] = 1
    return s


def _result(vals, p, fmt):
    if fe.is_traced(vals):
        return vals
    m = sp.csr_array((np.asarray(vals), p.indices.copy(), p.indptr.copy()), shape=p.shape)
    return m.tocsc() if fmt == "csc" else m


def _take(comp, i, j):
    """comp[i, j] for index arrays, as one gather from the flattened array."""
    k = comp.shape[1]
    return fnp.ravel(comp)[np.asarray(i, np.int64) * k + np.asarray(j, np.int64)]


def _float_dtype(x):
    dt = np.result_type(x)
    if dt.kind != "f":
        raise FxadTypeError(f"fxad.sparse derivatives take a real float argument, got {dt}")
    return dt


def jacfwd(f: Callable, sparsity: Any = "auto", argnums: int = 0,
           format: str = "csr") -> Callable:
    """The Jacobian of `f` with respect to argument `argnums` (one real float array), as a
    sparse matrix of shape (f's output size, the argument's size) — both flattened in C
    order, unlike fxad.jacfwd's output-shape + input-shape array — computed with one JVP
    per color of a distance-1 column coloring of the pattern, batched through vmap.

    `sparsity`: "auto" (fxad.sparse.jacobian_sparsity's global pattern) or your pattern
    (anything scipy.sparse.csr_array takes, boolean; entries outside it are not computed —
    it must contain every nonzero). Called eagerly it returns a scipy.sparse matrix
    (`format` "csr" or "csc"); called under a transformation (jit, vmap, grad, ...) it
    returns the nonzero values as an array in the pattern's CSR order (row by row, columns
    increasing); rebuild the matrix with
    `csr_array((values, P.indices, P.indptr), shape=P.shape)` where P is the pattern
    (`fxad.sparse.jacobian_sparsity`, which is the same at every call). The values are
    differentiable like any JVP."""
    def jac(*args):
        g, x = _partial(f, args, argnums)
        dt = _float_dtype(x)
        shape = np.shape(x)
        p = _pattern(g, x, sparsity, lambda p: (p.shape[0]), "fxad.sparse.jacfwd")
        if p.nnz == 0:
            return _result(fnp.zeros(0, dt), p, format)
        colors = color_columns(p)
        seeds = _seeds(colors, p.shape[1], dt)
        comp = vmap(lambda s: fnp.ravel(jvp(g, (x,), (fnp.reshape(s, shape),))[1]))(seeds)
        rows = np.repeat(np.arange(p.shape[0]), np.diff(p.indptr))
        return _result(_take(comp, colors[p.indices], rows), p, format)
    return jac


def jacrev(f: Callable, sparsity: Any = "auto", argnums: int = 0,
           format: str = "csr") -> Callable:
    """The same Jacobian as `fxad.sparse.jacfwd` (same shape, pattern, and results eagerly and
    under transformations), computed with one VJP per color of a distance-1 row coloring:
    cheaper when the pattern has fewer row colors than column colors (few outputs)."""
    def jac(*args):
        g, x = _partial(f, args, argnums)
        dt = _float_dtype(x)
        y, pull = vjp(g, x)
        m = math.prod(map(int, np.shape(y)))
        p = _pattern(g, x, sparsity, lambda p: m, "fxad.sparse.jacrev")
        if p.nnz == 0:
            return _result(fnp.zeros(0, dt), p, format)
        colors = color_rows(p)
        seeds = _seeds(colors, m, np.result_type(y))
        out_shape = np.shape(y)
        comp = vmap(lambda s: fnp.ravel(pull(fnp.reshape(s, out_shape))[0]))(seeds)
        rows = np.repeat(np.arange(p.shape[0]), np.diff(p.indptr))
        return _result(_take(comp, colors[rows], p.indices), p, format)
    return jac


def hessian(f: Callable, sparsity: Any = "auto", argnums: int = 0,
            format: str = "csr") -> Callable:
    """The Hessian of a scalar `f` with respect to argument `argnums` (one real float array),
    as a symmetric sparse matrix of shape (n, n) for an argument of n elements, computed
    with one Hessian-vector product (forward over reverse) per color of a star coloring of
    the pattern, the nonzeros recovered by symmetry. `sparsity`: "auto"
    (fxad.sparse.hessian_sparsity) or your symmetric pattern. Eager and transformed results
    as for fxad.sparse.jacfwd (the values in the pattern's CSR order under a
    transformation)."""
    def hess(*args):
        g, x = _partial(f, args, argnums)
        dt = _float_dtype(x)
        shape = np.shape(x)
        n = math.prod(map(int, shape))
        gf = grad(g)
        p = _pattern(lambda v: gf(v), x, sparsity, lambda p: n, "fxad.sparse.hessian")
        if isinstance(sparsity, str):
            p = sp.csr_array(p + p.T, dtype=bool)
            p.sort_indices()
        if p.nnz == 0:
            return _result(fnp.zeros(0, dt), p, format)
        colors = star_color(p)
        seeds = _seeds(colors, n, dt)
        comp = vmap(lambda s: fnp.ravel(jvp(gf, (x,), (fnp.reshape(s, shape),))[1]))(seeds)
        row, col = star_sources(p, colors)
        return _result(_take(comp, col, row), p, format)
    return hess

"""Coloring a sparsity pattern so that one JVP (VJP, Hessian-vector product) per color
recovers every nonzero: distance-1 coloring of the column (row) intersection graph for
Jacobians, star coloring of the adjacency graph for symmetric Hessians. Greedy, vertices
taken by decreasing degree (ties in index order)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["color_columns", "color_rows", "star_color", "star_recovery_ok"]


def _order(indptr):
    deg = np.diff(indptr)
    return np.argsort(-deg, kind="stable").tolist()


def _greedy(adj):
    """Smallest color not used by a neighbour, in order of decreasing degree."""
    indptr, indices = adj.indptr.tolist(), adj.indices.tolist()
    n = adj.shape[0]
    color = [-1] * n
    mark = [-1] * (n + 1)
    for v in _order(adj.indptr):
        for w in indices[indptr[v]:indptr[v + 1]]:
            c = color[w]
            if c >= 0:
                mark[c] = v
        c = 0
        while mark[c] == v:
            c += 1
        color[v] = c
    return np.asarray(color, dtype=np.int64)


def _no_diagonal(a):
    a = sp.csr_array(a, dtype=bool)
    a.setdiag(False)
    a.eliminate_zeros()
    a.sort_indices()
    return a


def color_columns(pattern) -> np.ndarray:
    """A color per column such that no two columns of one color have a nonzero in the same
    row (structurally orthogonal): J @ seed(color) recovers each column of that color."""
    p = sp.csc_array(pattern, dtype=bool)
    p = sp.csr_array(p)
    if p.shape[1] == 0:
        return np.zeros(0, np.int64)
    gram = _no_diagonal(p.T @ p)
    return _greedy(gram)


def color_rows(pattern) -> np.ndarray:
    """A color per row such that no two rows of one color share a column (for reverse mode:
    seed(color) @ J recovers each row of that color)."""
    return color_columns(sp.csr_array(pattern, dtype=bool).T)


def star_color(pattern) -> np.ndarray:
    """A star coloring of the symmetric pattern's adjacency graph (distance-1, and no path on
    four vertices uses only two colors), so H @ seed(color) recovers H by symmetry; falls back
    to a distance-1 column coloring (direct recovery) if the greedy result fails the check."""
    adj = _no_diagonal(sp.csr_array(pattern, dtype=bool) + sp.csr_array(pattern, dtype=bool).T)
    n = adj.shape[0]
    if n == 0:
        return np.zeros(0, np.int64)
    indptr, indices = adj.indptr.tolist(), adj.indices.tolist()
    nbrs = [indices[indptr[v]:indptr[v + 1]] for v in range(n)]
    color = [-1] * n
    mark = [-1] * (n + 1)
    for v in _order(adj.indptr):
        for w in nbrs[v]:
            cw = color[w]
            if cw >= 0:
                mark[cw] = v
            for x in nbrs[w]:
                if x == v:
                    continue
                cx = color[x]
                if cx < 0:
                    continue
                if cw < 0:
                    mark[cx] = v
                else:
                    for y in nbrs[x]:
                        if y != w and color[y] == cw:
                            mark[cx] = v
                            break
        c = 0
        while mark[c] == v:
            c += 1
        color[v] = c
    colors = np.asarray(color, dtype=np.int64)
    if star_recovery_ok(pattern, colors):
        return colors
    return color_columns(sp.csr_array(pattern, dtype=bool) + sp.csr_array(pattern, dtype=bool).T)


def _neighbour_color_counts(adj, colors):
    k = int(colors.max()) + 1 if colors.size else 0
    onehot = sp.csr_array((np.ones(colors.size), (np.arange(colors.size), colors)),
                          shape=(colors.size, k))
    return (sp.csr_array(adj, dtype=np.float64) @ onehot).toarray()


def star_recovery_ok(pattern, colors) -> bool:
    """Can every nonzero of the symmetric pattern be read from H @ seeds: each diagonal
    entry (no neighbour shares the vertex's color), and each off-diagonal (i, j) from row i
    (j is i's only neighbour of its color) or row j (likewise)?"""
    adj = _no_diagonal(sp.csr_array(pattern, dtype=bool) + sp.csr_array(pattern, dtype=bool).T)
    if adj.nnz == 0:
        return True
    cnt = _neighbour_color_counts(adj, colors)
    coo = adj.tocoo()
    i, j = coo.row, coo.col
    if np.any(colors[i] == colors[j]):
        return False
    by_i = cnt[i, colors[j]] == 1
    by_j = cnt[j, colors[i]] == 1
    return bool(np.all(by_i | by_j))


def star_sources(pattern, colors):
    """For the pattern's CSR nonzeros (i, j) in order: the (row, color) of H @ seeds each is
    read from."""
    p = sp.csr_array(pattern, dtype=bool)
    p.sort_indices()
    coo = p.tocoo()
    i, j = coo.row.astype(np.int64), coo.col.astype(np.int64)
    adj = _no_diagonal(p + p.T)
    cnt = _neighbour_color_counts(adj, colors) if adj.nnz else None
    use_i = i == j
    off = ~use_i
    if cnt is not None and off.any():
        use_i[off] = cnt[i[off], colors[j[off]]] == 1
    row = np.where(use_i, i, j)
    col = np.where(use_i, colors[j], colors[i])
    return row, col

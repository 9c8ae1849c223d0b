"""Dependency patterns: which of the n inputs each element of a value depends on, as a
boolean CSR matrix (one row per element of the value in C order, one column per input
element), and the few operations the detection rules compose them from."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["Dep", "identity", "empty", "take_rows", "union", "gather_union", "everything",
           "canonical"]


class Dep:
    """What the detector knows about one array of the program: its abstract value, its
    pattern (None: it does not depend on the inputs) and, when it does not, its concrete
    value when that is known (None otherwise: a value only known when the program runs)."""
    __slots__ = ("aval", "pattern", "value")

    def __init__(self, aval, pattern=None, value=None):
        self.aval = aval
        self.pattern = pattern
        self.value = value

    def __repr__(self):
        what = "constant" if self.pattern is None else f"nnz={self.pattern.nnz}"
        return f"Dep({self.aval.str_short()}, {what})"


def canonical(p):
    """CSR with sorted, unique column indices and no stored zeros (what the rules return)."""
    p = sp.csr_array(p, dtype=bool)
    p.sum_duplicates()
    p.eliminate_zeros()
    return p


def identity(n):
    """Element i depends on input i."""
    return sp.csr_array((np.ones(n, bool), np.arange(n, dtype=np.int64),
                         np.arange(n + 1, dtype=np.int64)), shape=(n, n))


def empty(m, n):
    return sp.csr_array((m, n), dtype=bool)


def take_rows(p, idx):
    """Rows `idx` of p (an int array; -1 selects an empty row): the pattern of a value whose
    element k is element idx[k] of the value p describes (or a constant where -1)."""
    idx = np.asarray(idx, dtype=np.int64).ravel()
    m = p.shape[0]
    if idx.size == m and np.array_equal(idx, np.arange(m)):
        return p
    indptr = p.indptr.astype(np.int64, copy=False)
    safe = np.where(idx < 0, 0, idx)
    starts = indptr[safe]
    lens = np.where(idx < 0, 0, indptr[safe + 1] - starts)
    new_ptr = np.zeros(idx.size + 1, np.int64)
    np.cumsum(lens, out=new_ptr[1:])
    total = int(new_ptr[-1])
    src = np.repeat(starts - new_ptr[:-1], lens) + np.arange(total, dtype=np.int64)
    return sp.csr_array((np.ones(total, bool), p.indices[src], new_ptr),
                        shape=(idx.size, p.shape[1]))


def union(patterns, m, n):
    """Elementwise OR of patterns of the same shape (None entries skipped)."""
    ps = [p for p in patterns if p is not None]
    if not ps:
        return None
    out = ps[0]
    for p in ps[1:]:
        out = out + p
    return out if len(ps) == 1 else canonical(out)


def gather_union(p, rows, cols, m_out):
    """The pattern whose row r is the union of p's rows src over pairs (r, src): rows and
    cols are equal-length int arrays of (output element, source element) pairs."""
    g = sp.csr_array((np.ones(len(rows), bool), (np.asarray(rows, np.int64),
                                                np.asarray(cols, np.int64))),
                     shape=(m_out, p.shape[0]))
    return canonical(g @ p)


def everything(patterns, m, n):
    """Every one of m elements depends on everything any of the patterns depends on: the
    conservative answer for an operation nothing more is known about."""
    cols = [p.indices for p in patterns if p is not None]
    if not cols:
        return None
    cols = np.unique(np.concatenate(cols)).astype(np.int64)
    k = cols.size
    return sp.csr_array((np.ones(m * k, bool), np.tile(cols, m),
                         np.arange(0, m * k + 1, k, dtype=np.int64) if k else
                         np.zeros(m + 1, np.int64)), shape=(m, n))

"""Colorings are valid: no two columns (rows) of one color share a row (column); star
colorings let every Hessian entry be read from one Hessian-vector product."""
import numpy as np
import pytest
import scipy.sparse as sp

import fxad.sparse as fs
from fxad.sparse.coloring import star_sources


def _patterns():
    rng = np.random.default_rng(3)
    out = [("tridiagonal", sp.diags([1, 1, 1], [-1, 0, 1], shape=(50, 50), dtype=float)),
           ("arrow", sp.csr_array(np.eye(20) + np.eye(20)[[0]] + np.eye(20)[:, [0]])),
           ("empty", sp.csr_array((7, 5))),
           ("dense", sp.csr_array(np.ones((4, 6))))]
    for k in range(6):
        m, n = rng.integers(1, 40, 2)
        out.append((f"random{k}", sp.random(m, n, density=rng.uniform(0.02, 0.3),
                                            random_state=k, format="csr")))
    return out


PATTERNS = _patterns()


def _orthogonal(p, colors):
    p = sp.csr_array(p, dtype=bool).toarray()
    for c in np.unique(colors):
        if (p[:, colors == c].sum(axis=1) > 1).any():
            return False
    return True


@pytest.mark.parametrize("name,p", PATTERNS, ids=[q[0] for q in PATTERNS])
def test_column_and_row_colorings_valid(name, p):
    cols, rows = fs.color_columns(p), fs.color_rows(p)
    assert cols.shape == (p.shape[1],) and rows.shape == (p.shape[0],)
    assert _orthogonal(p, cols) and _orthogonal(sp.csr_array(p).T, rows)


@pytest.mark.parametrize("name,p", PATTERNS, ids=[q[0] for q in PATTERNS])
def test_star_coloring_recovers_every_entry(name, p):
    if p.shape[0] != p.shape[1]:
        p = sp.csr_array(p) @ sp.csr_array(p).T
    sym = sp.csr_array(p, dtype=bool) + sp.csr_array(p, dtype=bool).T
    colors = fs.star_color(sym)
    assert fs.star_recovery_ok(sym, colors)
    # a symmetric matrix with this pattern is recovered from H @ seeds
    H = sp.csr_array(sym, dtype=float)
    H.data = np.random.default_rng(0).uniform(1, 2, H.nnz)
    H = (H + H.T).tocsr()
    H.sort_indices()
    k = int(colors.max()) + 1 if colors.size else 0
    S = np.zeros((H.shape[0], k))
    S[np.arange(H.shape[0]), colors] = 1
    B = H @ S
    row, col = star_sources(H, colors)
    np.testing.assert_allclose(B[row, col], H.data)


def test_few_colors_for_banded():
    tri = sp.diags([1, 1, 1], [-1, 0, 1], shape=(1000, 1000), dtype=float)
    assert fs.color_columns(tri).max() + 1 == 3
    penta = sp.diags([1] * 5, [-2, -1, 0, 1, 2], shape=(1000, 1000), dtype=float)
    assert fs.color_columns(penta).max() + 1 == 5
    # star coloring of a tridiagonal Hessian needs fewer colors than direct recovery
    assert fs.star_color(tri).max() + 1 <= 3
    assert fs.star_color(sp.diags([1] * 5, [-2, -1, 0, 1, 2], shape=(1000, 1000), dtype=float)).max() < 5


def test_star_check_rejects_bicolored_path():
    path = sp.diags([1, 1, 1], [-1, 0, 1], shape=(4, 4), dtype=float)
    assert not fs.star_recovery_ok(path, np.array([0, 1, 0, 1]))
    assert fs.star_recovery_ok(path, np.array([0, 1, 2, 0]))

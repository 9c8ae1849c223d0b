"""Makers: decompositions and matrix equations beyond mk_linalg's: SVD of rectangular matrices,
the general eigendecomposition (real, distinct eigenvalues), the real Schur form, the polar
decomposition, Sylvester equations, the symmetric tridiagonal eigenproblem, determinants,
LU with its pivots as a permutation, banded solves. Each is used through what does not
depend on the factors' arbitrary choices (signs and phases of vectors, the order Schur
leaves its eigenvalues in): sorted eigenvalues, V f(Λ) V⁻¹, Z f(T) Zᵀ, reconstructions. Gaps
between eigenvalues / singular values are guarded, and pivots must not change on the
stencils."""
from __future__ import annotations

import numpy as np

from ..generator import Reject, guard, _size
from ..program import _f
from ..registry import maker
from .linalg import _square_expr


def _gaps_ok(w, gap=0.1):
    """Sorted (real) values along the last axis pairwise at least `gap` apart."""
    return bool(np.all(np.diff(np.sort(w, axis=-1), axis=-1) >= gap))


def _matrix(g, i):
    """A square-matrix expression from node i (at most 2 matrices, n <= 4), with n."""
    sq, n = _square_expr(g, i)
    guard(n <= 4)
    return sq, n


def _node_2d(n):
    return len(n.shape) >= 2 and _size(n.shape[:-2]) <= 2


@maker(weight=1)
def mk_eig_schur(g):
    """eig (non-symmetric real matrices with real, distinct eigenvalues: a symmetric matrix
    times a positive definite one) and the real Schur form."""
    i = g.pick(_node_2d)
    sq, n = _matrix(g, i)
    t = f"fnp.tanh({sq})"
    m = (f"(({sq} + fnp.swapaxes({sq}, -1, -2)) @ ({t} @ fnp.swapaxes({t}, -1, -2) * 0.3 + "
         f"np.eye({n})))")
    w = np.linalg.eigvals(g.evaluate(m, [i]))
    guard(np.all(np.abs(w.imag) <= 1e-9 * np.max(np.abs(w))) and _gaps_ok(w.real, 0.15))
    kind = g.choice(["eigvals", "eig_fun", "schur_eigs", "schur_fun", "schur_square"])
    guard(kind.startswith("eig") or len(g.shape(i)) == 2)  # sla.schur: one matrix
    if kind == "eigvals":
        return "eigvals", f"fnp.sort(fnp.real(fnp.linalg.eigvals({m})), axis=-1)", [i]
    if kind == "eig_fun":  # V diag(sin w) V^-1: free of the eigenvectors' scaling
        return "eig_fun", (f"fnp.real((lambda w, v: (v * fnp.sin(w)[..., None, :]) @ "
                           f"fnp.linalg.inv(v))(*fnp.linalg.eig({m})))"), [i]
    if kind == "schur_eigs":
        return kind, f"fnp.sort(fnp.diagonal(sla.schur({m})[0], 0, -2, -1), axis=-1)", [i]
    if kind == "schur_fun":  # Z diag(tanh(diag T)) Zᵀ: free of the Schur vectors' signs
        return kind, (f"(lambda t, z: (z * fnp.tanh(fnp.diagonal(t, 0, -2, -1))[..., None, :])"
                      f" @ fnp.swapaxes(z, -1, -2))(*sla.schur({m}))"), [i]
    return kind, (f"(lambda t, z: z @ (t @ t) @ fnp.swapaxes(z, -1, -2))"
                  f"(*sla.schur({m}))"), [i]


@maker(weight=1)
def mk_svd_polar(g):
    """SVD of rectangular (and square) matrices, singular values apart and away from 0,
    and the polar decomposition."""
    i = g.pick(lambda n: _node_2d(n) and min(n.shape[-2:]) >= 2 and max(n.shape[-2:]) <= 4)
    base = "@0" if np.max(np.abs(g.vals(i))) <= 2 else "fnp.tanh(@0)"
    r, c = g.shape(i)[-2:]
    eye = f"np.eye({r}, {c})"
    for shift in g.perm([1.5, 3.0, -3.0]):
        m = f"({base} + {_f(shift)} * {eye})"
        sv = np.linalg.svd(g.evaluate(m, [i]), compute_uv=False)
        if np.min(sv) >= 0.2 and np.all(-np.diff(sv, axis=-1) >= 0.2):
            break
    else:
        raise Reject
    kind = g.choice(["svd_vals", "svd_fun", "svd_sla", "polar_u", "polar_p"])
    if kind == "svd_vals":
        return kind, f"fnp.linalg.svd({m}, compute_uv=False)", [i]
    if kind == "svd_fun":  # u diag(sin s) vt on the thin factors: free of sign choices
        return kind, (f"(lambda u, s, vt: (u * fnp.sin(s)[..., None, :]) @ vt)"
                      f"(*fnp.linalg.svd({m}, full_matrices=False))"), [i]
    if kind == "svd_sla":
        guard(len(g.shape(i)) == 2)
        return kind, f"sla.svd({m}, compute_uv=False)", [i]
    guard(len(g.shape(i)) == 2 and r == c)
    side = g.choice(["right", "left"])
    return kind, f"sla.polar({m}, side={side!r})[{0 if kind == 'polar_u' else 1}]", [i]


@maker(weight=1)
def mk_matrix_equations(g):
    """Sylvester equations (spectra of A and -B apart), determinants, LU with pivots that
    stay put (as a permutation of rows, and as the factors)."""
    kind = g.choice(["sylvester", "det", "slogdet", "lu"])
    i = g.pick(_node_2d)
    sq, n = _matrix(g, i)
    dom = f"(fnp.tanh({sq}) * 0.3 + {_f(g.choice([2.0, 3.0]))} * np.eye({n}))"
    if kind == "sylvester":
        guard(g.shape(i) == (n, n))
        return kind, f"sla.solve_sylvester({dom}, fnp.swapaxes({dom}, -1, -2) * 0.5, @0)", [i]
    if kind == "det":
        return kind, g.choice([f"fnp.linalg.det({dom})", f"sla.det({dom})"]) if len(
            g.shape(i)) == 2 else f"fnp.linalg.det({dom})", [i]
    if kind == "slogdet":  # a negative determinant's sign too: A - 2.5 I, kept invertible
        m = f"({dom} - 2.5 * np.eye({n}))"
        guard(np.max(np.linalg.cond(g.evaluate(m, [i]))) <= 30)
        return kind, f"(lambda s, l: s * l)(*fnp.linalg.slogdet({m}))", [i]
    m = f"({sq} + {_f(g.choice([1.0, 2.0]))} * np.eye({n}))"
    perm = g.evaluate(f"lax.linalg.lu({m})[2]", [i])
    guard(np.all(perm[5:] == perm[5]))  # the same pivots on every stencil point
    piv = np.abs(np.diagonal(g.evaluate(f"lax.linalg.lu({m})[0]", [i]), axis1=-2, axis2=-1))
    guard(np.min(piv) >= 0.1)
    if len(g.shape(i)) == 2 and g.coin(0.3):  # scipy's P, L, U (A = P L U)
        return "sla_lu", f"sla.lu({m})[{g.int(0, 2)}] * fnp.tanh({m})", [i]
    if g.coin(0.5):
        return "lu_factors", f"lax.linalg.lu({m})[0]", [i]
    # P A (P the one-hot permutation matrix) next to the packed factors of P A = L U
    return "lu_perm", (f"(lambda lu, piv, p: fnp.where(p[..., :, None] == np.arange({n}), 1.0, "
                       f"0.0) @ {m} * 0.5 + lu)(*lax.linalg.lu({m}))"), [i]


@maker(weight=1)
def mk_tridiagonal(g):
    """The symmetric tridiagonal eigenproblem (diagonal and off-diagonal from a vector),
    eigenvalues apart: the values, and V diag(sin w) Vᵀ."""
    i = g.pick(lambda n: len(n.shape) == 1 and 2 <= n.shape[0] <= 5)
    d = f"({'@0' if np.max(np.abs(g.vals(i))) <= 2 else 'fnp.tanh(@0)'} * 2.0)"
    e = "fnp.sin(@0[1:]) * 0.5"
    t = g.evaluate(f"fnp.diag({d}) + fnp.diag({e}, 1) + fnp.diag({e}, -1)", [i])
    guard(_gaps_ok(np.linalg.eigvalsh(t), 0.15))
    if g.coin(0.5):
        return "eigvalsh_tridiagonal", f"sla.eigh_tridiagonal({d}, {e}, eigvals_only=True)", [i]
    return "eigh_tridiagonal", (f"(lambda w, v: (v * fnp.sin(w)) @ v.T)"
                                f"(*sla.eigh_tridiagonal({d}, {e}))"), [i]

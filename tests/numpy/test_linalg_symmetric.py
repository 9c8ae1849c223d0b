"""Functions whose value reads only part of their input (one triangle, the symmetric part, a
diagonal or band, a packed factor): on inputs that are NOT symmetric or triangular, the
derivative in every mode must be the derivative of the value fxad computes. Finite
differences are taken of fxad's own function, in arbitrary (non-symmetric) directions.

The convention (notes/linalg.md): the symmetric routines are functions of the input's
Hermitian part, as in JAX (`symmetrize_input=True`; SciPy's names too), so their gradients
are symmetric; `symmetrize_input=False` reads one triangle, as NumPy does, and its gradient
lives in that triangle."""
from contextlib import contextmanager

import numpy as np
import pytest
import scipy.linalg as sl

import fxad
import fxad.numpy as fnp
import fxad.scipy.linalg as fsl
from fxad.test_util import check_grads

RNG = np.random.default_rng(8)
N = 4
M = RNG.standard_normal((N, N))
E = RNG.standard_normal((N, N))              # an asymmetric, non-triangular perturbation
W = RNG.standard_normal((N, N))
B = RNG.standard_normal((N, 2))
SPD = M @ M.T + 4 * np.eye(N)
X_PD = SPD + 0.3 * E                         # not symmetric; each triangle's mirror is PD
X_EIG = np.diag([1.0, 2.0, 3.0, 4.0]) + 0.1 * (M + M.T) + 0.05 * E  # distinct eigenvalues
X_GEN = M + 4 * np.eye(N)                    # neither triangle is zero
Z = RNG.standard_normal((N, N)) + 1j * RNG.standard_normal((N, N))
X_HPD = Z @ Z.conj().T + 4 * np.eye(N) + 0.3 * E + 0.2j * W  # neither Hermitian nor triangular
X_BAND = M + np.outer(np.eye(N)[2], np.full(N, 5.0))  # (l, u) = (1, 2): row 2 the diagonal;
# its corners ab[0, :2] and ab[3, -1] are not read (nonzero here)


def _squares(v):
    """|v|² per entry: invariant to each eigenvector's sign (phase), which LAPACK chooses."""
    return fnp.real(v * fnp.conj(v))


def _cho_solve_tuple(lower, c, b):
    """cho_solve given a plain tuple holding a traced factor (its other triangle unread)."""
    return fsl.cho_solve((c, lower), b)


ROWS = [
    # numpy.linalg: the Hermitian part (default) and one triangle
    ("cholesky", lambda a: fnp.linalg.cholesky(a), X_PD),
    ("cholesky_upper", lambda a: fnp.linalg.cholesky(a, upper=True), X_PD),
    ("cholesky_tri", lambda a: fnp.linalg.cholesky(a, symmetrize_input=False), X_PD),
    ("cholesky_upper_tri", lambda a: fnp.linalg.cholesky(a, upper=True,
                                                         symmetrize_input=False), X_PD),
    ("eigvalsh", lambda a: fnp.linalg.eigvalsh(a), X_EIG),
    ("eigvalsh_U", lambda a: fnp.linalg.eigvalsh(a, UPLO="U"), X_EIG),
    ("eigvalsh_tri_L", lambda a: fnp.linalg.eigvalsh(a, symmetrize_input=False), X_EIG),
    ("eigvalsh_tri_U", lambda a: fnp.linalg.eigvalsh(a, "U", symmetrize_input=False), X_EIG),
    ("eigh", lambda a: (lambda w, v: (w, _squares(v)))(*fnp.linalg.eigh(a)), X_EIG),
    ("eigh_tri_L", lambda a: (lambda w, v: (w, _squares(v)))(
        *fnp.linalg.eigh(a, symmetrize_input=False)), X_EIG),
    ("eigh_tri_U", lambda a: (lambda w, v: (w, _squares(v)))(
        *fnp.linalg.eigh(a, "U", symmetrize_input=False)), X_EIG),
    # scipy.linalg
    ("sp_cholesky", lambda a: fsl.cholesky(a), X_PD),
    ("sp_cholesky_lower", lambda a: fsl.cholesky(a, lower=True), X_PD),
    ("cho_factor_solve", lambda a: fsl.cho_solve(fsl.cho_factor(a), B), X_PD),
    ("cho_factor_solve_lower", lambda a: fsl.cho_solve(fsl.cho_factor(a, lower=True), B), X_PD),
    ("cho_solve_tuple_lower", lambda c: _cho_solve_tuple(True, c, B), X_GEN),
    ("cho_solve_tuple_upper", lambda c: _cho_solve_tuple(False, c, B), X_GEN),
    ("lu_solve_tuple", lambda lu: fsl.lu_solve((lu, np.arange(N)), B), X_GEN),
    ("lu_factor_lu", lambda a: fsl.lu_factor(a)[0], X_GEN),
    ("sp_eigh", lambda a: (lambda w, v: (w, _squares(v)))(*fsl.eigh(a)), X_EIG),
    ("sp_eigh_upper", lambda a: (lambda w, v: (w, _squares(v)))(*fsl.eigh(a, lower=False)),
     X_EIG),
    ("sp_eigvalsh", lambda a: fsl.eigh(a, eigvals_only=True), X_EIG),
    ("toeplitz", lambda c: fsl.toeplitz(c[:, 0], c[0]), X_GEN),
    ("solve_banded", lambda ab: fsl.solve_banded((1, 2), ab, B), X_BAND),
] + [
    (f"solve_{kind}_{'lower' if lower else 'upper'}",
     (lambda kind, lower: lambda a: fsl.solve(a, B, assume_a=kind, lower=lower))(kind, lower),
     X_PD)
    for kind in ("gen", "sym", "her", "pos", "banded", "diagonal", "tridiagonal",
                 "lower triangular", "upper triangular") for lower in (False, True)
] + [
    (f"solve_triangular_{lower}_{trans}_{unit}",
     (lambda lower, trans, unit: lambda a: fsl.solve_triangular(
         a, B, trans=trans, lower=lower, unit_diagonal=unit))(lower, trans, unit), X_GEN)
    for lower in (False, True) for trans in (0, 1, 2) for unit in (False, True)
] + [
    (f"solve_transposed_{kind}",
     (lambda kind: lambda a: fsl.solve(a, B, assume_a=kind, transposed=True))(kind), X_PD)
    for kind in ("gen", "sym", "pos", "tridiagonal", "lower triangular")
]

COMPLEX_ROWS = [
    ("cholesky", lambda a: fnp.linalg.cholesky(a), X_HPD),
    ("cholesky_tri", lambda a: fnp.linalg.cholesky(a, symmetrize_input=False), X_HPD),
    ("eigvalsh", lambda a: fnp.linalg.eigvalsh(a), X_HPD),
    ("eigvalsh_tri_U", lambda a: fnp.linalg.eigvalsh(a, "U", symmetrize_input=False), X_HPD),
    ("sp_cholesky", lambda a: fsl.cholesky(a), X_HPD),
    ("cho_factor_solve", lambda a: fsl.cho_solve(fsl.cho_factor(a, lower=True), B), X_HPD),
    ("solve_her", lambda a: fsl.solve(a, B, assume_a="her"), X_HPD),
    ("solve_sym", lambda a: fsl.solve(a, B, assume_a="sym"), X_HPD),
    ("solve_pos", lambda a: fsl.solve(a, B, assume_a="pos"), X_HPD),
    ("solve_triangular_C", lambda a: fsl.solve_triangular(a, B, trans="C"), X_HPD),
    ("eigh", lambda a: (lambda w, v: (w, _squares(v)))(*fnp.linalg.eigh(a)), X_HPD),
    ("eigh_tri_U", lambda a: (lambda w, v: (w, _squares(v)))(
        *fnp.linalg.eigh(a, "U", symmetrize_input=False)), X_HPD),
    ("sp_eigh", lambda a: (lambda w, v: (w, _squares(v)))(*fsl.eigh(a)), X_HPD),
    ("solve_banded", lambda ab: fsl.solve_banded((1, 2), ab, B), X_BAND + 1j * E),
]


def _real_loss(f):
    """A real scalar of f's outputs, with weights that mix every entry."""
    def loss(a):
        outs = f(a)
        outs = outs if isinstance(outs, tuple) else (outs,)
        total = 0.0
        for k, o in enumerate(outs):
            wgt = np.cos(np.arange(np.size(o)) + k).reshape(np.shape(o))
            total = total + fnp.sum(fnp.real(o) * wgt) + fnp.sum(fnp.imag(o) * wgt[::-1])
        return total
    return loss


@pytest.mark.parametrize("name,f,x", ROWS, ids=[r[0] for r in ROWS])
def test_derivatives_are_those_of_the_value(name, f, x):
    """JVP against central differences of f itself, the VJP by the transpose identity, both
    to second order, in arbitrary directions on a non-symmetric, non-triangular input."""
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name,f,x", COMPLEX_ROWS, ids=[r[0] for r in COMPLEX_ROWS])
def test_complex_derivatives_are_those_of_the_value(name, f, x):
    check_grads(_real_loss(f), (x,), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("name,f,x", ROWS, ids=[r[0] for r in ROWS])
def test_every_path_agrees(name, f, x):
    """The eager tape, the staged path, jit and vmap give the same gradient and JVP."""
    loss = _real_loss(f)
    g = fxad.grad(loss)(x)
    with _staged():
        np.testing.assert_allclose(fxad.grad(loss)(x), g, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fxad.jit(fxad.grad(loss))(x), g, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fxad.vmap(fxad.grad(loss))(np.stack([x, x])), [g, g],
                               rtol=1e-10, atol=1e-12)
    _, t = fxad.jvp(loss, (x,), (E,))
    _, t_jit = fxad.jit(lambda a, v: fxad.jvp(loss, (a,), (v,)))(x, E)
    np.testing.assert_allclose(t_jit, t, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t, np.sum(g * E), rtol=1e-10, atol=1e-12)


@contextmanager
def _staged():
    """Eager grad through linearize + transpose instead of the tape of derived pullbacks."""
    old, fxad.config.eager_tape = fxad.config.eager_tape, False
    try:
        yield
    finally:
        fxad.config.eager_tape = old


# --- the convention itself ------------------------------------------------------------------

SYMMETRIZED = [r for r in ROWS if not r[0].endswith(("_tri", "_tri_L", "_tri_U"))
               and r[0].split("_")[0] in ("cholesky", "eigvalsh", "eigh", "sp", "cho")
               and "tuple" not in r[0] and "lu_" not in r[0] and "toeplitz" not in r[0]]


@pytest.mark.parametrize("name,f,x", SYMMETRIZED, ids=[r[0] for r in SYMMETRIZED])
def test_symmetric_routines_are_functions_of_the_symmetric_part(name, f, x):
    loss = _real_loss(f)
    np.testing.assert_allclose(loss(x), loss((x + x.T) / 2), rtol=1e-12)
    g = fxad.grad(loss)(x)
    np.testing.assert_allclose(g, g.T, rtol=1e-12, atol=1e-12)


def test_values_are_numpys_on_symmetric_input_and_of_the_symmetric_part_otherwise():
    for a in (SPD, X_PD):
        sym = (a + a.T) / 2
        for uplo in ("L", "U"):
            np.testing.assert_array_equal(fnp.linalg.eigvalsh(a, uplo),
                                          np.linalg.eigvalsh(sym if a is X_PD else a, uplo))
            np.testing.assert_array_equal(fnp.linalg.eigvalsh(a, uplo, symmetrize_input=False),
                                          np.linalg.eigvalsh(a, uplo))
        np.testing.assert_array_equal(fnp.linalg.cholesky(SPD), np.linalg.cholesky(SPD))
        np.testing.assert_allclose(fsl.cholesky(SPD), sl.cholesky(SPD), rtol=1e-14, atol=1e-15)
        np.testing.assert_array_equal(fnp.linalg.cholesky(X_PD, symmetrize_input=False),
                                      np.linalg.cholesky(X_PD))
    np.testing.assert_allclose(fnp.linalg.cholesky(X_PD), np.linalg.cholesky((X_PD + X_PD.T) / 2),
                               rtol=1e-14, atol=1e-14)
    herm = X_HPD + (X_HPD.conj().T - X_HPD) / 2
    np.testing.assert_array_equal(fnp.linalg.eigvalsh(herm), np.linalg.eigvalsh(herm))


def test_eigenvalue_gradients_are_outer_products():
    w, v = np.linalg.eigh(SPD)
    for i in range(N):
        np.testing.assert_allclose(fxad.grad(lambda a: fnp.linalg.eigvalsh(a)[i])(SPD),
                                   np.outer(v[:, i], v[:, i]), atol=1e-12)


def test_logdet_by_cholesky_has_the_inverse_as_gradient():
    """d log det A = tr(A⁻¹ dA): the gradient is A⁻¹ itself; reading one triangle instead
    gives 2 A⁻¹ - diag(A⁻¹) in that triangle (the derivative of that other function)."""
    f = lambda a: 2 * fnp.sum(fnp.log(fnp.diagonal(fnp.linalg.cholesky(a))))
    inv = np.linalg.inv(SPD)
    np.testing.assert_allclose(fxad.grad(f)(SPD), inv, rtol=1e-12)
    f_tri = lambda a: 2 * fnp.sum(fnp.log(fnp.diagonal(
        fnp.linalg.cholesky(a, symmetrize_input=False))))
    np.testing.assert_allclose(fxad.grad(f_tri)(SPD), np.tril(2 * inv) - np.diag(np.diag(inv)),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(fxad.hessian(f)(SPD).reshape(N * N, N * N) @ np.eye(N).ravel(),
                               -(inv @ inv).ravel(), rtol=1e-10)


def test_complex_hermitian_gradient_is_hermitian():
    f = lambda x: fnp.real(fnp.sum(fnp.linalg.cholesky(x) * (W + 1j)))
    g = fxad.grad(f)(X_HPD)
    np.testing.assert_allclose(g, g.conj().T, atol=1e-12)
    f2 = lambda x: fnp.sum(fnp.linalg.eigvalsh(x) ** 2)
    g2 = fxad.grad(f2)(X_HPD)
    np.testing.assert_allclose(g2, g2.conj().T, atol=1e-12)


def test_unread_entries_may_hold_anything_when_one_triangle_is_read():
    """With symmetrize_input=False, NaN or inf in the unread triangle changes nothing, as in
    NumPy; the band and diagonal solves likewise ignore the entries outside."""
    a = np.tril(SPD) + np.triu(np.full((N, N), np.nan), 1)
    np.testing.assert_array_equal(fnp.linalg.cholesky(a, symmetrize_input=False),
                                  np.linalg.cholesky(a))
    g = fxad.grad(lambda x: fnp.sum(fnp.linalg.eigvalsh(x, symmetrize_input=False) ** 2))(a)
    assert np.isfinite(g).all() and not np.triu(g, 1).any()
    wild = X_PD + np.where(np.abs(np.subtract.outer(np.arange(N), np.arange(N))) > 1, np.inf, 0)
    np.testing.assert_allclose(fsl.solve(wild, B, assume_a="tridiagonal"),
                               np.linalg.solve(np.where(np.isinf(wild), 0, wild), B), rtol=1e-12)
    np.testing.assert_allclose(fsl.solve(wild, B, assume_a="diagonal"),
                               B / np.diag(X_PD)[:, None], rtol=1e-14)


def test_solve_names_scipys_options_when_refusing_one():
    with pytest.raises(ValueError, match="assume_a='spd'.*'positive definite'"):
        fsl.solve(SPD, B, assume_a="spd")


@pytest.mark.parametrize("kind", ["gen", "sym", "her", "pos", "diagonal", "tridiagonal",
                                  "lower triangular", "upper triangular"])
def test_transposed_solves_complex_matrices_too(kind):
    """SciPy refuses complex `a` with transposed=True; fxad solves aᵀ x = b for it."""
    a = X_HPD
    read = {"gen": a, "sym": (a + a.T) / 2, "her": (a + a.conj().T) / 2,
            "pos": (a + a.conj().T) / 2, "diagonal": np.diag(np.diag(a)),
            "tridiagonal": np.triu(np.tril(a, 1), -1), "lower triangular": np.tril(a),
            "upper triangular": np.triu(a)}[kind]
    np.testing.assert_allclose(fsl.solve(a, B, assume_a=kind, transposed=True),
                               np.linalg.solve(read.T, B), rtol=1e-12, atol=1e-13)

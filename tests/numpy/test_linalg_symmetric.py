"""The symmetric-input convention (JAX's, PyTorch's and autograd's) for cholesky, cho_solve,
eigh, eigvalsh and their SciPy names: the input is a point of the symmetric (Hermitian)
matrices, so a tangent counts through its symmetric part and the gradient is symmetric. The
values are still NumPy's (one triangle read), so finite differences are taken along
symmetric directions, where every reading agrees (notes/linalg.md)."""
import numpy as np
import pytest
import scipy.linalg as sl

import fxad
import fxad.numpy as fnp
import fxad.scipy.linalg as fsl

RNG = np.random.default_rng(8)
M = RNG.standard_normal((4, 4))
SPD = M @ M.T + 4 * np.eye(4)
D = np.diag([1.0, 2.0, 3.0, 4.0]) + 0.1 * (M + M.T)  # distinct eigenvalues
W = RNG.standard_normal((4, 4))

FUNCS = [
    ("cholesky", lambda a: fnp.sum(fnp.sin(fnp.linalg.cholesky(a)) * W), SPD),
    ("cholesky_upper", lambda a: fnp.sum(fnp.linalg.cholesky(a, upper=True) * W), SPD),
    ("scipy_cholesky", lambda a: fnp.sum(fsl.cholesky(a) ** 2 * W), SPD),
    ("cho_solve", lambda a: fnp.sum(fsl.cho_solve(fsl.cho_factor(a), W[:, 0]) ** 2), SPD),
    ("solve_pos", lambda a: fnp.sum(fsl.solve(a, W, assume_a="pos") * W), SPD),
    ("eigh_vectors", lambda a: fnp.sum(fnp.abs(fnp.linalg.eigh(a)[1]) * W), D),
    ("eigh_upper", lambda a: fnp.sum(fnp.linalg.eigh(a, UPLO="U")[0] ** 2), D),
    ("eigvalsh", lambda a: fnp.sum(fnp.linalg.eigvalsh(a) * np.arange(4.0)), D),
    ("scipy_eigh", lambda a: fnp.sum(fsl.eigh(a, eigvals_only=True) ** 3), D),
]


@pytest.mark.parametrize("name,f,a", FUNCS, ids=[r[0] for r in FUNCS])
def test_gradient_is_symmetric_and_matches_symmetric_finite_differences(name, f, a):
    g = fxad.grad(f)(a)
    np.testing.assert_allclose(g, g.T, rtol=1e-12, atol=1e-12)
    for _ in range(3):
        v = RNG.standard_normal((4, 4))
        v = v + v.T  # a symmetric direction: every reading of the input agrees on it
        h = 1e-6
        fd = (f(a + h * v) - f(a - h * v)) / (2 * h)
        np.testing.assert_allclose(np.sum(g * v), fd, rtol=1e-6, atol=1e-8)
        _, t = fxad.jvp(f, (a,), (v,))
        np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name,f,a", FUNCS, ids=[r[0] for r in FUNCS])
def test_tangents_count_through_their_symmetric_part(name, f, a):
    v = RNG.standard_normal((4, 4))
    _, t = fxad.jvp(f, (a,), (v,))
    _, t_sym = fxad.jvp(f, (a,), (0.5 * (v + v.T),))
    np.testing.assert_allclose(t, t_sym, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fxad.jit(fxad.grad(f))(a), fxad.grad(f)(a), rtol=1e-12)
    np.testing.assert_allclose(fxad.vmap(fxad.grad(f))(np.stack([a, a])), [fxad.grad(f)(a)] * 2,
                               rtol=1e-12)


def test_eigenvalue_gradients_are_outer_products():
    w, v = np.linalg.eigh(D)
    for i in range(4):
        np.testing.assert_allclose(fxad.grad(lambda a: fnp.linalg.eigvalsh(a)[i])(D),
                                   np.outer(v[:, i], v[:, i]), atol=1e-12)


def test_logdet_by_cholesky_has_the_inverse_as_gradient():
    """d log det A = tr(A⁻¹ dA) on the symmetric matrices: the gradient is A⁻¹ itself (the
    one-triangle convention gave 2 A⁻¹ - diag(A⁻¹) folded onto the lower triangle)."""
    f = lambda a: 2 * fnp.sum(fnp.log(fnp.diagonal(fnp.linalg.cholesky(a))))
    np.testing.assert_allclose(fxad.grad(f)(SPD), np.linalg.inv(SPD), rtol=1e-12)
    np.testing.assert_allclose(fxad.hessian(f)(SPD).reshape(16, 16) @ np.eye(4).ravel(),
                               -(np.linalg.inv(SPD) @ np.linalg.inv(SPD)).ravel(), rtol=1e-10)


def test_complex_hermitian_gradient_is_hermitian():
    a = (M + 1j * W) @ (M + 1j * W).conj().T + 4 * np.eye(4)
    f = lambda x: fnp.real(fnp.sum(fnp.linalg.cholesky(x) * (W + 1j)))
    g = fxad.grad(f)(a)
    np.testing.assert_allclose(g, g.conj().T, atol=1e-12)
    f2 = lambda x: fnp.sum(fnp.linalg.eigvalsh(x) ** 2)
    g2 = fxad.grad(f2)(a)
    np.testing.assert_allclose(g2, g2.conj().T, atol=1e-12)


def test_values_are_still_numpys():
    lower_only = np.tril(SPD) + np.triu(RNG.standard_normal((4, 4)), 1)
    np.testing.assert_allclose(fnp.linalg.cholesky(lower_only), np.linalg.cholesky(lower_only))
    np.testing.assert_allclose(fsl.cholesky(lower_only.T), sl.cholesky(lower_only.T))
    np.testing.assert_allclose(fnp.linalg.eigvalsh(lower_only), np.linalg.eigvalsh(lower_only))

"""fxad.scipy.linalg's lu, sqrtm, schur, polar, solve_sylvester, eigh_tridiagonal, block_diag,
toeplitz: values against SciPy, derivatives to second order in both modes (Schur's complex
form through functions its phase freedom does not change), vmap, jit, and the clear errors."""
import numpy as np
import pytest
import scipy.linalg as sl

import fxad
import fxad.numpy as fnp
from fxad.errors import FxadValueError
from fxad.scipy import linalg as fl
from fxad.test_util import check_grads

rng = np.random.default_rng(0)
A = rng.standard_normal((4, 4))
SPD = A @ A.T + 4 * np.eye(4)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 4)], ids=str)
def test_lu(shape):
    a = rng.standard_normal(shape)
    for got, want in zip(fl.lu(a), sl.lu(a)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    p, l, u = fl.lu(a, p_indices=True)
    np.testing.assert_array_equal(p, sl.lu(a, p_indices=True)[0])
    np.testing.assert_allclose(np.take_along_axis(l @ u, p[..., None], -2) if a.ndim == 3
                               else (l @ u)[p], a, atol=1e-13)
    np.testing.assert_allclose(fl.lu(a, permute_l=True)[0], sl.lu(a, permute_l=True)[0])
    check_grads(lambda a: fl.lu(a)[1:], (a + np.eye(*shape[-2:]) * 3,), order=2)


def test_sqrtm():
    np.testing.assert_allclose(fl.sqrtm(SPD), sl.sqrtm(SPD), rtol=1e-12)
    check_grads(fl.sqrtm, (SPD,), order=2)
    x = fl.sqrtm(A + 5 * np.eye(4))  # non-symmetric, real root
    np.testing.assert_allclose(x @ x, A + 5 * np.eye(4), atol=1e-12)
    c = (A + 1j * A.T).astype(complex)
    np.testing.assert_allclose(fl.sqrtm(c), sl.sqrtm(c), rtol=1e-10)
    with pytest.raises(FxadValueError, match="complex"):
        fl.sqrtm(np.array([[-1.0, 0.0], [0.0, 1.0]]))
    batch = np.stack([SPD, 2 * SPD])
    np.testing.assert_allclose(fxad.vmap(fl.sqrtm)(batch), np.stack([sl.sqrtm(b) for b in batch]),
                               rtol=1e-12)
    np.testing.assert_allclose(fxad.jit(fxad.grad(lambda a: fnp.sum(fl.sqrtm(a))))(SPD),
                               fxad.grad(lambda a: fnp.sum(fl.sqrtm(a)))(SPD), rtol=1e-12)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)], ids=str)
def test_polar(side, shape):
    a = rng.standard_normal(shape)
    for got, want in zip(fl.polar(a, side), sl.polar(a, side)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    if (shape[0] >= shape[1]) == (side == "right") or shape[0] == shape[1]:
        check_grads(lambda a: fl.polar(a, side), (a,), order=2)
    else:
        with pytest.raises(FxadValueError, match="derivatives"):
            fxad.jacfwd(lambda a: fl.polar(a, side)[1])(a)


def test_schur():
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    m = q @ (np.triu(rng.standard_normal((4, 4)), 1) + np.diag([1.0, 2.5, -3.0, 4.0])) @ q.T
    for got, want in zip(fl.schur(m), sl.schur(m)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check_grads(fl.schur, (m,), order=2)
    for got, want in zip(fl.schur(A, "complex"), sl.schur(A, "complex")):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

    def invariant(a):  # unchanged by the columns' phases, which LAPACK picks freely
        t, z = fl.schur(a, "complex")
        return (t * t.conj()).real, fnp.diagonal(t), z @ t @ z.conj().T
    check_grads(invariant, (A,), order=2)
    with pytest.raises(FxadValueError, match="2x2 blocks"):
        fxad.jacfwd(lambda a: fl.schur(a)[0])(np.array([[0.1, -1.0], [1.0, 0.1]]))
    with pytest.raises(FxadValueError, match="sort"):
        fl.schur(A, sort="lhp")


def test_solve_sylvester():
    b = rng.standard_normal((3, 3))
    q = rng.standard_normal((4, 3))
    np.testing.assert_allclose(fl.solve_sylvester(A, b, q), sl.solve_sylvester(A, b, q),
                               rtol=1e-12)
    check_grads(fl.solve_sylvester, (A, b, q), order=2)
    x = fxad.vmap(fl.solve_sylvester, in_axes=(None, None, 0))(A, b, np.stack([q, 2 * q]))
    np.testing.assert_allclose(x[1], 2 * sl.solve_sylvester(A, b, q), rtol=1e-12)


def test_eigh_tridiagonal():
    d, e = rng.standard_normal(6), rng.standard_normal(5)
    w, v = fl.eigh_tridiagonal(d, e)
    ww, vv = sl.eigh_tridiagonal(d, e)
    np.testing.assert_allclose(w, ww, rtol=1e-12)
    np.testing.assert_allclose(np.abs(v), np.abs(vv), atol=1e-12)
    np.testing.assert_allclose(fl.eigh_tridiagonal(d, e, eigvals_only=True), ww, rtol=1e-12)
    check_grads(lambda d, e: fl.eigh_tridiagonal(d, e, True), (d, e), order=2)
    check_grads(lambda d, e: fl.eigh_tridiagonal(d, e), (d, e), order=2)
    # the eigenvalues' gradient against the dense eigh's
    g = fxad.grad(lambda d, e: fnp.sum(fl.eigh_tridiagonal(d, e, True) ** 3), argnums=(0, 1))(d, e)
    dense = lambda d, e: fnp.diag(d) + fnp.diag(e, 1) + fnp.diag(e, -1)  # noqa: E731
    h = fxad.grad(lambda d, e: fnp.sum(fl.eigh(dense(d, e), eigvals_only=True) ** 3),
                  argnums=(0, 1))(d, e)
    np.testing.assert_allclose(g[0], h[0], rtol=1e-10)
    np.testing.assert_allclose(g[1], h[1], rtol=1e-10)
    with pytest.raises(FxadValueError, match="select"):
        fl.eigh_tridiagonal(d, e, select="i", select_range=(0, 2))


def test_block_diag_and_toeplitz():
    b = rng.standard_normal((2, 3))
    np.testing.assert_array_equal(fl.block_diag(A[:2], 3.0, [1, 2], b),
                                  sl.block_diag(A[:2], 3.0, [1, 2], b))
    np.testing.assert_array_equal(fl.block_diag(), sl.block_diag())
    check_grads(lambda x, y: fl.block_diag(x, y), (A, b), order=2)
    c, r = rng.standard_normal(4), rng.standard_normal(3)
    np.testing.assert_array_equal(fl.toeplitz(c, r), sl.toeplitz(c, r))
    np.testing.assert_array_equal(fl.toeplitz(c), sl.toeplitz(c))
    z = c + 1j * np.arange(4.0)
    np.testing.assert_array_equal(fl.toeplitz(z), sl.toeplitz(z))
    check_grads(fl.toeplitz, (c, r), order=2)
    np.testing.assert_allclose(fxad.vmap(fl.toeplitz)(np.stack([c, 2 * c]), np.stack([r, r])),
                               np.stack([sl.toeplitz(c, r), sl.toeplitz(2 * c, r)]))

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
    check_grads(fl.sqrtm, (A + 5 * np.eye(4),), order=2)
    c = (A + 1j * A.T).astype(complex)
    np.testing.assert_allclose(fl.sqrtm(c), sl.sqrtm(c), rtol=1e-10)
    check_grads(fl.sqrtm, (c + 4 * np.eye(4),), order=2)
    batch = np.stack([SPD, 2 * SPD])
    np.testing.assert_allclose(fxad.vmap(fl.sqrtm)(batch), np.stack([sl.sqrtm(b) for b in batch]),
                               rtol=1e-12)
    np.testing.assert_allclose(fxad.jit(fxad.grad(lambda a: fnp.sum(fl.sqrtm(a))))(SPD),
                               fxad.grad(lambda a: fnp.sum(fl.sqrtm(a)))(SPD), rtol=1e-12)


NEG = np.array([[1.0, 2.0, 0.5], [3.0, -4.0, 0.2], [0.1, 0.3, 2.0]])  # an eigenvalue < 0
ROT = np.array([[0.5, -1.0, 0.3], [1.0, 0.5, 0.2], [0.1, 0.2, 2.0]])  # 0.5 ± i: a real root


@pytest.mark.parametrize("a", [NEG, np.diag([-1.0, 4.0]), ROT], ids=["neg", "diag", "pair"])
def test_sqrtm_dtype_is_scipys(a):
    """A real matrix's root is real unless it has a negative eigenvalue, as in SciPy; the
    complex root is differentiable (a real input with a complex output) in every mode."""
    want = sl.sqrtm(a)
    got = fl.sqrtm(a)
    # SciPy >= 1.16's rule (SciPy 1.15 returned complex, with zero imaginary parts, for a
    # real matrix with a complex pair of eigenvalues)
    negative = np.any((np.abs(np.linalg.eigvals(a).imag) < 1e-12)
                      & (np.linalg.eigvals(a).real < 0))
    assert got.dtype == (np.complex128 if negative else np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    check_grads(fl.sqrtm, (a,), order=2)
    loss = lambda a: fnp.sum(fnp.abs(fl.sqrtm(a)) ** 2)  # noqa: E731
    np.testing.assert_allclose(fxad.grad(loss)(a), fxad.jacfwd(loss)(a), rtol=1e-10)


def test_sqrtm_complex_root_under_jit_names_the_fix():
    """Under jit the dtype is fixed before the values exist: a real matrix gets a real root,
    and one whose root is complex is refused with the fix (pass it as complex)."""
    with pytest.raises(FxadValueError, match=r"negative eigenvalue.*astype\(complex\)"):
        fxad.jit(fl.sqrtm)(NEG)
    np.testing.assert_allclose(fxad.jit(fl.sqrtm)(NEG.astype(complex)), sl.sqrtm(NEG),
                               rtol=1e-12)
    np.testing.assert_allclose(fxad.jit(fl.sqrtm)(ROT), sl.sqrtm(ROT), rtol=1e-12)


def test_sqrtm_derivatives_factor_x_once(monkeypatch):
    """The JVP solves X dX + dX X = dA on one Schur factorization of X, which the transpose
    (reverse mode) and the second order reuse."""
    import fxad.rules.linalg.sylvester as lm
    calls = []
    real = lm._schur_one

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(lm, "_schur_one", counting)
    g = fxad.grad(lambda a: fnp.sum(fl.sqrtm(a) * A))(SPD)
    assert len(calls) == 1
    x = sl.sqrtm(SPD)  # <A, dX> = <A, L⁻¹ dA>: the gradient solves Xᵀ G + G Xᵀ = A
    np.testing.assert_allclose(g, sl.solve_sylvester(x.T, x.T, A), rtol=1e-10)
    calls.clear()
    fxad.jvp(lambda a: fxad.jvp(fl.sqrtm, (a,), (A,))[1], (SPD,), (A.T,))
    assert len(calls) == 2  # one per order: each level's JVP of sqrtm factors X once


def _band_of(a, l, u):
    """SciPy's band storage of a, with the unread corners filled with junk."""
    n = a.shape[-1]
    ab = np.full((l + u + 1, n), 7.5)
    for i in range(n):
        for j in range(max(0, i - l), min(n, i + u + 1)):
            ab[u + i - j, j] = a[i, j]
    return ab


BANDED = [(1, 1, (5,)), (2, 1, (5, 2)), (0, 2, (4,)), (1, 0, (4, 3)), (0, 0, (3,)),
          (3, 2, (6, 2)), (2, 3, (3,))]


@pytest.mark.parametrize("l,u,bshape", BANDED, ids=[f"{l}{u}_{b}" for l, u, b in BANDED])
def test_solve_banded(l, u, bshape):
    n = bshape[0]
    a = rng.standard_normal((n, n)) + 5 * np.eye(n)
    a = np.triu(np.tril(a, u), -l)
    ab, b = _band_of(a, l, u), rng.standard_normal(bshape)
    np.testing.assert_allclose(fl.solve_banded((l, u), ab, b), sl.solve_banded((l, u), ab, b),
                               rtol=1e-12)
    np.testing.assert_allclose(fl.solve_banded((l, u), ab, b), np.linalg.solve(a, b),
                               rtol=1e-10)
    np.testing.assert_allclose(fxad.jit(fl.solve_banded, static_argnums=0)((l, u), ab, b),
                               sl.solve_banded((l, u), ab, b), rtol=1e-12)
    f = lambda ab, b: fl.solve_banded((l, u), ab, b)  # noqa: E731
    check_grads(f, (ab, b), order=2)
    # the unread corners: exactly zero derivative, forward and reverse, at every order
    corners = np.array([[not 0 <= j + k - u < n for j in range(n)] for k in range(l + u + 1)])
    loss = lambda ab, b: fnp.sum(f(ab, b) ** 2)  # noqa: E731
    for g in (fxad.grad(loss)(ab, b), fxad.jacfwd(loss)(ab, b),
              fxad.hessian(loss)(ab, b)[corners], fxad.jit(fxad.grad(loss))(ab, b)):
        assert np.all(np.asarray(g)[..., corners] == 0) if g.shape == ab.shape \
            else np.all(g == 0)
    assert np.all(fxad.jvp(f, (ab, b), (corners * 1.0, np.zeros_like(b)))[1] == 0)
    # and the gradient in ab is the dense gradient read through the band
    dense = fxad.grad(lambda a: fnp.sum(fnp.linalg.solve(a, b) ** 2))(a)
    np.testing.assert_allclose(fxad.grad(loss)(ab, b)[~corners], _band_of(dense, l, u)[~corners],
                               rtol=1e-10)


def test_solve_banded_batches_and_complex():
    ab = rng.standard_normal((3, 3, 5)) + np.array([0.0, 5.0, 0.0])[:, None]
    b = rng.standard_normal((3, 5))
    want = np.stack([sl.solve_banded((1, 1), ab[i], b[i]) for i in range(3)])
    np.testing.assert_allclose(fxad.vmap(lambda ab, b: fl.solve_banded((1, 1), ab, b))(ab, b),
                               want, rtol=1e-12)
    np.testing.assert_allclose(fl.solve_banded((1, 1), ab, b[..., None])[..., 0], want,
                               rtol=1e-12)  # leading batch dims, as SciPy takes them
    np.testing.assert_allclose(fxad.vmap(lambda b: fl.solve_banded((1, 1), ab[0], b))(b),
                               np.stack([sl.solve_banded((1, 1), ab[0], x) for x in b]),
                               rtol=1e-12)
    g = fxad.vmap(fxad.grad(lambda ab, b: fnp.sum(fl.solve_banded((1, 1), ab, b) ** 3)))(ab, b)
    for i in range(3):
        np.testing.assert_allclose(g[i], fxad.grad(
            lambda ab: fnp.sum(fl.solve_banded((1, 1), ab, b[i]) ** 3))(ab[i]), rtol=1e-12)
    c = ab[0] + 1j * rng.standard_normal((3, 5))
    bc = b[0] * (1 - 2j)
    np.testing.assert_allclose(fl.solve_banded((1, 1), c, bc), sl.solve_banded((1, 1), c, bc),
                               rtol=1e-12)
    check_grads(lambda c, b: fl.solve_banded((1, 1), c, b), (c, bc), order=2)


def test_solve_banded_errors():
    ab, b = np.ones((3, 4)), np.ones(4)
    with pytest.raises(FxadValueError, match="l \\+ u \\+ 1"):
        fl.solve_banded((1, 2), ab, b)
    with pytest.raises(FxadValueError, match="not compatible"):
        fl.solve_banded((1, 1), ab, np.ones(5))
    with pytest.raises(FxadValueError, match=">= 0"):
        fl.solve_banded((-1, 3), ab, b)


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
    # one gauge (each vector's largest entry positive), whatever LAPACK's signs: a value
    # that keeps LAPACK's would jump under finite differences where they flip
    assert (v[np.abs(v).argmax(axis=0), np.arange(6)] > 0).all()
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

"""Complex matrices through eigh, svd and qr and what is built on them (norms, cond, pinv,
lstsq; scipy.linalg's svd, qr, eigh, polar, sqrtm, solve_banded): values against NumPy/SciPy,
derivatives on complex inputs to order 2 in both modes, vmap against a loop, jit against
eager, and JAX's convention for the gradient of a real-valued function of a complex matrix.

Eigen- and singular vectors have free phases (LAPACK picks one; fxad's derivative fixes its
own gauge, notes/linalg.md), so they are checked through functions the phases do not change,
as autograd's tests do: |v|, v diag(f(w)) vᴴ, u diag(f(s)) vᴴ, u vᴴ. QR's factors are
functions of the matrix (R's diagonal is real), checked as they are. Functions of a Hermitian
matrix are checked along Hermitian directions (`herm`, as in tests/api/test_complex.py)."""
import numpy as np
import pytest
import scipy.linalg as sl

import fxad
import fxad.numpy as fnp
from fxad.numpy import linalg as fla
from fxad.scipy import linalg as fsl
from fxad.test_util import check_grads
from fxad.tree_util import tree_leaves, tree_map

_rng = np.random.default_rng(20)


def _c(*shape, scale=1.0):
    return scale * (_rng.standard_normal(shape) + 1j * _rng.standard_normal(shape))


def _H(x):
    return fnp.conj(fnp.swapaxes(x, -1, -2))


def herm(a):
    return 0.5 * (a + _H(a))


def _eye(m, n=None):
    return np.eye(m, n if n is not None else m)


def _distinct(m, n, lead=()):
    """Complex (..., m, n) with singular values near k, ..., 2, 1 (descending, well apart)."""
    k = min(m, n)
    d = np.zeros((m, n))
    d[np.arange(k), np.arange(k)] = np.arange(k, 0.0, -1)
    return _c(*lead, m, n, scale=0.1) + d


def _hermitian_distinct(n, lead=()):
    """Complex (..., n, n), whose Hermitian part has eigenvalues near 1, 2, ..., n."""
    return _c(*lead, n, n, scale=0.15) + np.diag(np.arange(1.0, n + 1))


def eigh_invariants(w, v):
    """Unchanged by the eigenvectors' phases: w, |v|, v diag(sin w) vᴴ, the first
    eigenvector's projector."""
    first = v[..., :, :1]
    return w, fnp.abs(v), (v * fnp.sin(w)[..., None, :]) @ _H(v), first @ _H(first)


def svd_invariants(u, s, vt):
    """Unchanged by the singular vectors' phases: |u|, s, |vᴴ|, u diag(sin s) vᴴ, u vᴴ."""
    return fnp.abs(u), s, fnp.abs(vt), (u * fnp.sin(s)[..., None, :]) @ vt, u @ vt


A33, A43, A34, A243 = _distinct(3, 3), _distinct(4, 3), _distinct(3, 4), _distinct(4, 3, (2,))
H3, H244 = _hermitian_distinct(3), _hermitian_distinct(4, (2,))
Q33, Q43 = _c(3, 3) + 0.5, _c(4, 3) + 0.5  # generic (never triangular): LAPACK's QR is smooth
BAND = _c(3, 5, scale=0.5) + np.array([[0.0], [4.0], [0.0]])  # (l, u) = (1, 1), dominant
BAND22 = _c(5, 6, scale=0.5) + np.array([[0.0], [0.0], [5.0], [0.0], [0.0]])

# (name, function, complex arguments)
COMPLEX = [
    # eigh: the Hermitian part, both triangles, batched, SciPy's spelling
    ("eigh", lambda a: eigh_invariants(*fla.eigh(herm(a))), (H3,)),
    ("eigh_upper", lambda a: eigh_invariants(*fla.eigh(herm(a), UPLO="U")), (H3,)),
    ("eigh_batched", lambda a: eigh_invariants(*fla.eigh(herm(a))), (H244,)),
    ("eigvalsh", lambda a: fla.eigvalsh(herm(a)), (H3,)),  # second order: through eigh
    ("eigvalsh_upper_batched", lambda a: fla.eigvalsh(herm(a), UPLO="U"), (H244,)),
    ("scipy_eigh", lambda a: eigh_invariants(*fsl.eigh(herm(a), lower=False)), (H3,)),
    ("scipy_eigvalsh", lambda a: fsl.eigh(herm(a), eigvals_only=True), (H3,)),
    # svd: square, tall, wide, batched; singular values alone
    ("svd_square", lambda a: svd_invariants(*fla.svd(a, full_matrices=False)), (A33,)),
    ("svd_tall", lambda a: svd_invariants(*fla.svd(a, full_matrices=False)), (A43,)),
    ("svd_wide", lambda a: svd_invariants(*fla.svd(a, full_matrices=False)), (A34,)),
    ("svd_batched", lambda a: svd_invariants(*fla.svd(a, full_matrices=False)), (A243,)),
    ("svd_full_square", lambda a: svd_invariants(*fla.svd(a)), (A33,)),
    ("svd_values", lambda a: fla.svd(a, compute_uv=False), (A43,)),
    ("svdvals", fla.svdvals, (A243,)),
    ("scipy_svd", lambda a: svd_invariants(*fsl.svd(a, full_matrices=False)), (A34,)),
    # qr: the factors themselves
    ("qr_square", lambda a: tuple(fla.qr(a)), (Q33,)),
    ("qr_tall", lambda a: tuple(fla.qr(a)), (Q43,)),
    ("qr_batched", lambda a: tuple(fla.qr(a)), (np.stack([Q43, Q43.conj() + 0.3]),)),
    ("qr_r", lambda a: fla.qr(a, mode="r"), (Q43,)),
    ("scipy_qr", lambda a: fsl.qr(a, mode="economic"), (Q43,)),
    # built on them
    ("norm_nuc", lambda a: fla.norm(a, "nuc"), (A43,)),
    ("norm_2", lambda a: fla.norm(a, 2), (A34,)),
    ("norm_neg2_axes", lambda a: fla.norm(a, -2, axis=(2, 1), keepdims=True), (A243,)),
    ("matrix_norm_nuc", lambda a: fla.matrix_norm(a, ord="nuc"), (A243,)),
    ("scipy_norm_2", lambda a: fsl.norm(a, 2), (A33,)),
    ("cond", fla.cond, (A33,)),
    ("cond_neg2", lambda a: fla.cond(a, -2), (A43,)),
    ("pinv", fla.pinv, (A34,)),
    ("lstsq", lambda a, b: (lambda r: (r.x, r.residuals, r.s))(fla.lstsq(a, b)),
     (A43, _c(4, 2))),
    # scipy.linalg: polar, sqrtm, solve_banded
    ("polar_right", lambda a: fsl.polar(a), (A43,)),
    ("polar_left", lambda a: fsl.polar(a, "left"), (A34,)),
    ("sqrtm", fsl.sqrtm, (_c(3, 3, scale=0.3) + 2 * _eye(3),)),
    ("solve_banded", lambda ab, b: fsl.solve_banded((1, 1), ab, b), (BAND, _c(5))),
    ("solve_banded_22", lambda ab, b: fsl.solve_banded((2, 2), ab, b), (BAND22, _c(6, 2))),
]


@pytest.mark.parametrize("name,fn,args", COMPLEX, ids=[r[0] for r in COMPLEX])
def test_complex_derivatives(name, fn, args):
    check_grads(fn, args, order=2, modes=("fwd", "rev"))


def _loss(fn):
    """A real scalar of every output: the gradient follows JAX's convention."""
    def loss(*args):
        out = fn(*args)
        return sum(fnp.sum(fnp.real(x) * 0.7 + fnp.imag(x) * 0.3 if fnp.iscomplexobj(x)
                           else x) for x in tree_leaves(out))
    return loss


@pytest.mark.parametrize("name,fn,args", COMPLEX, ids=[r[0] for r in COMPLEX])
def test_complex_jit_matches_eager(name, fn, args):
    for got, want in zip(tree_leaves(fxad.jit(fn)(*args)), tree_leaves(fn(*args))):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    argnums = tuple(range(len(args)))
    g_jit = fxad.jit(fxad.grad(_loss(fn), argnums))(*args)
    g = fxad.grad(_loss(fn), argnums)(*args)
    for got, want, arg in zip(g_jit, g, args):
        assert got.dtype == want.dtype == arg.dtype
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)


VMAP = ["eigh", "eigvalsh", "svd_square", "svd_wide", "svd_values", "qr_tall", "norm_nuc",
        "norm_2", "cond", "lstsq", "polar_right", "sqrtm", "solve_banded"]


@pytest.mark.parametrize("name", VMAP)
def test_complex_vmap_matches_loop(name):
    fn, args = {r[0]: (r[1], r[2]) for r in COMPLEX}[name]
    batch = [np.stack([a, a * (1 + 0.05j) + 0.02, a.conj() * 0.95]) for a in args]
    for f in (fn, fxad.grad(_loss(fn))):
        got = fxad.vmap(f)(*batch)
        want = tree_map(lambda *xs: np.stack(xs), *[f(*[b[i] for b in batch]) for i in range(3)])
        for g, w in zip(tree_leaves(got), tree_leaves(want)):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


# --- values: NumPy's and SciPy's, dtypes included --------------------------------------------

def _phase_fixed(w, v):
    """Each eigenvector with its largest entry made real and positive (drivers differ)."""
    v = np.asarray(v)
    top = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return w, v * (np.abs(top) / top)


VALUES = [  # (name, ours, theirs, args)
    ("eigh", fla.eigh, np.linalg.eigh, (H3 + H3.conj().T,)),
    ("eigh_U", lambda a: fla.eigh(a, "U"), lambda a: np.linalg.eigh(a, "U"),
     (H244 + np.conj(np.swapaxes(H244, -1, -2)),)),
    ("eigvalsh", fla.eigvalsh, np.linalg.eigvalsh, (H244 + np.conj(np.swapaxes(H244, -1, -2)),)),
    ("svd", lambda a: fla.svd(a, False), lambda a: np.linalg.svd(a, False), (A243,)),
    ("svd_square_full", fla.svd, np.linalg.svd, (A33,)),
    ("svdvals", fla.svdvals, lambda a: np.linalg.svd(a, compute_uv=False), (A34,)),
    ("qr", fla.qr, np.linalg.qr, (Q43,)),
    ("qr_r", lambda a: fla.qr(a, "r"), lambda a: np.linalg.qr(a, "r"), (Q43,)),
    *[(f"norm_{o}", lambda a, o=o: fla.norm(a, o), lambda a, o=o: np.linalg.norm(a, o), (A43,))
      for o in ("nuc", 2, -2)],
    ("matrix_norm", lambda a: fla.matrix_norm(a, ord=2),
     lambda a: np.linalg.matrix_norm(a, ord=2), (A243,)),
    *[(f"cond_{p}", lambda a, p=p: fla.cond(a, p), lambda a, p=p: np.linalg.cond(a, p), (A33,))
      for p in (None, 2, -2)],
    ("pinv", fla.pinv, np.linalg.pinv, (A34,)),
    ("lstsq", lambda a, b: fla.lstsq(a, b), lambda a, b: np.linalg.lstsq(a, b), (A43, _c(4, 2))),
    ("matrix_rank", fla.matrix_rank, np.linalg.matrix_rank, (A43,)),
    ("scipy_svd", lambda a: fsl.svd(a, full_matrices=False),
     lambda a: sl.svd(a, full_matrices=False), (A34,)),
    ("scipy_qr", lambda a: fsl.qr(a, mode="economic"), lambda a: sl.qr(a, mode="economic"),
     (Q43,)),
    ("scipy_eigh", lambda a: _phase_fixed(*fsl.eigh(a, lower=False)),  # another LAPACK driver
     lambda a: _phase_fixed(*sl.eigh(a, lower=False)), (H3 + H3.conj().T,)),
    ("polar", fsl.polar, sl.polar, (A43,)),
    ("sqrtm", fsl.sqrtm, sl.sqrtm, (_c(3, 3),)),
    ("solve_banded", lambda ab, b: fsl.solve_banded((2, 2), ab, b),
     lambda ab, b: sl.solve_banded((2, 2), ab, b), (BAND22, _c(6, 2))),
]


@pytest.mark.parametrize("name,ours,theirs,args", VALUES, ids=[r[0] for r in VALUES])
def test_complex_values_match(name, ours, theirs, args):
    got, want = tree_leaves(ours(*args)), tree_leaves(theirs(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype), name
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)


# --- the derivatives that used to be refused, and JAX's gradient convention -------------------

def test_formerly_refused_complex_derivatives_are_the_closed_forms():
    """eigh, qr, svd and the spectral norm of complex matrices raised a TypeError (so did
    eigvalsh's second derivative); now their gradients are the known matrices, in JAX's
    convention for a real f of complex z: df/dx - i df/dy, the conjugate of the Wirtinger
    steepest-ascent direction."""
    h = H3 + H3.conj().T
    w, v = np.linalg.eigh(h)
    for i in range(3):  # dλᵢ = Re vᵢᴴ dA vᵢ: gradient conj(vᵢ vᵢᴴ)
        g = fxad.grad(lambda a: fla.eigh(a)[0][i])(h)
        np.testing.assert_allclose(g, np.conj(np.outer(v[:, i], v[:, i].conj())), atol=1e-12)
    u, s, vt = np.linalg.svd(A43, full_matrices=False)
    np.testing.assert_allclose(fxad.grad(lambda a: fla.norm(a, "nuc"))(A43), np.conj(u @ vt),
                               atol=1e-12)
    np.testing.assert_allclose(fxad.grad(lambda a: fla.norm(a, 2))(A43),
                               np.conj(np.outer(u[:, 0], vt[0])), atol=1e-12)
    np.testing.assert_allclose(fxad.grad(lambda a: fnp.sum(fla.svd(a)[1] ** 2))(A33),
                               2 * np.conj(A33), atol=1e-12)  # Σs² = ‖A‖²_F
    # Q R = A: a loss of Q and R differentiates (it used to raise)
    g = fxad.grad(lambda a: fnp.sum(fnp.abs(fla.qr(a)[0] @ fla.qr(a)[1]) ** 2))(Q33)
    np.testing.assert_allclose(g, 2 * np.conj(Q33), atol=1e-12)
    # eigvalsh's second derivative goes through eigh's rule
    first = fxad.grad(lambda a: fnp.sum(fla.eigvalsh(a) ** 2))
    hess = fxad.grad(lambda a: fnp.real(first(a)[0, 1]))(h)
    assert np.all(np.isfinite(hess))


@pytest.mark.parametrize("name", ["eigh", "svd_tall", "qr_tall", "norm_nuc", "polar_right",
                                  "sqrtm", "lstsq"])
def test_gradient_follows_jax_convention(name):
    """grad f(z) = df/dx - i df/dy: f(z + h dz) - f(z - h dz) = 2h Re Σ grad · dz."""
    fn, args = {r[0]: (r[1], r[2]) for r in COMPLEX}[name]
    loss = _loss(fn)
    grads = fxad.grad(loss, tuple(range(len(args))))(*args)
    dirs = [_c(*np.shape(a)) for a in args]
    h = 1e-6
    plus = loss(*[a + h * d for a, d in zip(args, dirs)])
    minus = loss(*[a - h * d for a, d in zip(args, dirs)])
    want = sum(np.sum(np.real(g * d)) for g, d in zip(grads, dirs))
    np.testing.assert_allclose((plus - minus) / (2 * h), want, rtol=1e-6, atol=1e-8)


def test_gauges_of_the_vector_tangents():
    """The derivative's own gauge (notes/linalg.md): vᴴ dv has a zero diagonal for eigh;
    Vᴴ dV does for svd (U takes the phase); QR's dR has a real diagonal. And each tangent
    reconstructs dA to first order."""
    h = H3 + H3.conj().T
    dh = _c(3, 3)
    dh = dh + dh.conj().T
    (w, v), (dw, dv) = fxad.jvp(lambda a: tuple(fla.eigh(a)), (h,), (dh,))
    np.testing.assert_allclose(np.diag(v.conj().T @ dv), 0, atol=1e-13)
    np.testing.assert_allclose(dv @ np.diag(w) @ v.conj().T + v @ np.diag(dw) @ v.conj().T
                               + v @ np.diag(w) @ dv.conj().T, dh, atol=1e-12)
    for a in (A43, A34, A33):
        da = _c(*a.shape)
        (u, s, vt), (du, ds, dvt) = fxad.jvp(lambda a: tuple(fla.svd(a, False)), (a,), (da,))
        np.testing.assert_allclose(np.diag(vt @ dvt.conj().T), 0, atol=1e-13)
        np.testing.assert_allclose(du @ np.diag(s) @ vt + u @ np.diag(ds) @ vt
                                   + u @ np.diag(s) @ dvt, da, atol=1e-12)
    da = _c(4, 3)
    (q, r), (dq, dr) = fxad.jvp(lambda a: tuple(fla.qr(a)), (Q43,), (da,))
    np.testing.assert_allclose(np.diag(dr).imag, 0, atol=1e-13)
    np.testing.assert_allclose(dq @ r + q @ dr, da, atol=1e-12)
    np.testing.assert_allclose(np.diag(r).imag, 0, atol=0)  # LAPACK's R: a real diagonal

"""Rule table: decompositions and the matrix exponential (fxad.rules.linalg.decompositions):
eigh, eigvalsh, qr, svd, expm and its Fréchet derivative. Each row builds an input with
distinct eigen/singular values (tests/rules/linalg/inputs.py); values against NumPy/SciPy."""
import numpy as np
import pytest
import scipy.linalg as sl

import fxad
import fxad.numpy as fnp
from fxad.errors import FxadValueError
from fxad.numpy import linalg as fla
from fxad.scipy import linalg as fsl
from fxad.test_util import check_grads
from fxad.tree_util import tree_leaves

from ..common import floats, Row, row_tests
from .inputs import (dense, eigh_fixed, np_fix_signs,
                     np_sym, rect_distinct, rng_args, svd_fixed,
                     sym_distinct)

TABLE = [
    ("eigh", lambda x: eigh_fixed(sym_distinct(x)), [(3, 3)]),
    ("eigh_batched", lambda x: eigh_fixed(sym_distinct(x)), [(2, 3, 3)]),
    ("eigh_upper", lambda x: eigh_fixed(sym_distinct(x), UPLO="U"), [(3, 3)]),
    ("eigvalsh", lambda x: fla.eigvalsh(sym_distinct(x)), [(3, 3)]),
    ("scipy_eigh", lambda x: fsl.eigh(sym_distinct(x), eigvals_only=True), [(3, 3)]),
    ("qr_square", lambda x: tuple(fla.qr(dense(x))), [(3, 3)]),
    ("qr_tall", lambda x: tuple(fla.qr(dense(x))), [(4, 3)]),
    ("qr_batched", lambda x: tuple(fla.qr(dense(x))), [(2, 4, 3)]),
    ("qr_r", lambda x: fla.qr(dense(x), mode="r"), [(4, 2)]),
    ("scipy_qr", lambda x: fsl.qr(dense(x), mode="economic"), [(4, 3)]),
    ("svd_square", lambda x: svd_fixed(rect_distinct(x)), [(3, 3)]),
    ("svd_tall", lambda x: svd_fixed(rect_distinct(x)), [(4, 3)]),
    ("svd_wide", lambda x: svd_fixed(rect_distinct(x)), [(2, 4)]),
    ("svd_batched", lambda x: svd_fixed(rect_distinct(x)), [(2, 4, 3)]),
    ("svd_values", lambda x: fla.svd(rect_distinct(x), compute_uv=False), [(3, 4)]),
    ("expm", fsl.expm, [(3, 3)]),
    ("expm_batched", fsl.expm, [(2, 3, 3)]),
    ("expm_frechet", lambda a, e: fsl.expm_frechet(a, e, compute_expm=False), [(3, 3), (3, 3)]),
    ("expm_frechet_with_expm", lambda a, e: fsl.expm_frechet(a, e), [(2, 2), (2, 2)]),
    # batched values (and batched derivative programs) under vmap and jit
    Row("vmap_eigh", lambda x: eigh_fixed(sym_distinct(x)), [(3, 3)], floats(-1, 1), grad=False,
        in_axes=[0], rtol=1e-10),
    Row("vmap_eigvalsh", lambda x: fla.eigvalsh(sym_distinct(x)), [(3, 3)], floats(-1, 1), grad=False,
        in_axes=[1],
        rtol=1e-10),
    Row("vmap_grad_eigvalsh", fxad.grad(lambda x: fnp.sum(fla.eigvalsh(sym_distinct(x)) ** 3)),
        [(3, 3)], floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_qr", lambda x: tuple(fla.qr(dense(x))), [(4, 3)], floats(-1, 1), grad=False, in_axes=[0],
        rtol=1e-10),
    Row("vmap_svd", lambda x: svd_fixed(rect_distinct(x)), [(3, 4)], floats(-1, 1), grad=False,
        in_axes=[0], rtol=1e-10),
    Row("vmap_expm", fsl.expm, [(3, 3)], floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_expm_frechet", lambda a, e: fsl.expm_frechet(a, e, compute_expm=False), [(3, 3), (3, 3)],
        floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_expm_frechet_only_e", lambda a, e: fsl.expm_frechet(a, e, compute_expm=False),
        [(3, 3), (3, 3)], floats(-1, 1), grad=False, in_axes=[(None, 0)], rtol=1e-10),
    Row("vmap_grad_eigh", fxad.grad(lambda x: fnp.sum(eigh_fixed(sym_distinct(x))[1][0] ** 3)),
        [(3, 3)], floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_grad_svd", fxad.grad(lambda x: fnp.sum(svd_fixed(rect_distinct(x))[0] ** 3)), [(4, 3)],
        floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_grad_qr", fxad.grad(lambda x: fnp.sum(fla.qr(dense(x))[0] ** 3)), [(4, 3)], floats(-1, 1),
        grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_grad_expm", fxad.grad(lambda x: fnp.sum(fsl.expm(x) ** 2)), [(2, 2)], floats(-1, 1),
        grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_hessian_expm", fxad.hessian(lambda x: fnp.sum(fsl.expm(x))), [(2, 2)], floats(-1, 1),
        grad=False, in_axes=[0], rtol=1e-10),
]
TABLE = [r if isinstance(r, Row) else Row(*r, floats(-1, 1), rtol=1e-10) for r in TABLE]
test_row = row_tests(TABLE)


VALUES = [  # (name, ours, theirs, shapes, input builders)
    ("eigh", fla.eigh, np.linalg.eigh, [(2, 3, 3)], [np_sym]),
    ("eigh_nonsym", lambda a: np_fix_signs(*fla.eigh(a)),
     lambda a: np_fix_signs(*np.linalg.eigh(np_sym(a))), [(2, 3, 3)], [None]),
    ("eigh_U_tri", lambda a: fla.eigh(a, "U", symmetrize_input=False),
     lambda a: np.linalg.eigh(a, "U"), [(3, 3)], [None]),
    ("eigh_L_tri", lambda a: fla.eigh(a, symmetrize_input=False), np.linalg.eigh, [(2, 3, 3)],
     [None]),
    ("qr", fla.qr, np.linalg.qr, [(2, 4, 3)], [None]),
    ("qr_r", lambda a: fla.qr(a, "r"), lambda a: np.linalg.qr(a, "r"), [(4, 3)], [None]),
    ("svd", lambda a: fla.svd(a, False), lambda a: np.linalg.svd(a, False), [(2, 3, 5)], [None]),
    ("svdvals", lambda a: fla.svd(a, compute_uv=False),
     lambda a: np.linalg.svd(a, compute_uv=False), [(4, 3)], [None]),
    ("scipy_eigh_upper", lambda a: np_fix_signs(*fsl.eigh(a, lower=False)),  # other driver
     lambda a: np_fix_signs(*sl.eigh(np_sym(a), lower=False)), [(3, 3)], [None]),
    ("expm", fsl.expm, sl.expm, [(2, 3, 3)], [None]),
    ("expm_frechet", fsl.expm_frechet, sl.expm_frechet, [(3, 3), (3, 3)], [None, None]),
]

@pytest.mark.parametrize("name,ours,theirs,shapes,builders", VALUES,
                         ids=[r[0] for r in VALUES])
def test_values_match(name, ours, theirs, shapes, builders):
    args = [b(x) if b else x for b, x in zip(builders, rng_args(shapes))]
    got, want = ours(*args), theirs(*args)
    for g, w in zip(tree_leaves(got), tree_leaves(tuple(want) if isinstance(want, tuple)
                                                   else want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_eigh_eigenvalue_gradient_is_outer_product_of_eigenvector():
    a = sym_distinct(np.random.default_rng(5).uniform(-1, 1, (4, 4)))
    w, v = np.linalg.eigh(a)
    for i in range(4):
        g = fxad.grad(lambda a: fla.eigh(a)[0][i])(a)
        # the symmetric convention (JAX's, PyTorch's): dw_i/dA = v_i v_iᵀ
        np.testing.assert_allclose(g, np.outer(v[:, i], v[:, i]), atol=1e-12)


def test_svd_singular_value_gradient():
    a = rect_distinct(np.random.default_rng(6).uniform(-1, 1, (4, 3)))
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    for i in range(3):
        g = fxad.grad(lambda a: fla.svd(a, compute_uv=False)[i])(a)
        np.testing.assert_allclose(g, np.outer(u[:, i], vt[i]), atol=1e-12)


def test_eigh_vectors_reconstruct_and_stay_orthonormal_to_first_order():
    a = sym_distinct(np.random.default_rng(7).uniform(-1, 1, (3, 3)))
    da = np.random.default_rng(8).uniform(-1, 1, (3, 3))
    da = da + da.T
    (w, v), (dw, dv) = fxad.jvp(lambda a: fla.eigh(a), (a,), (da,))
    np.testing.assert_allclose(v.T @ dv + dv.T @ v, 0, atol=1e-12)  # skew: stays orthonormal
    np.testing.assert_allclose(dv @ np.diag(w) @ v.T + v @ np.diag(dw) @ v.T
                               + v @ np.diag(w) @ dv.T, da, atol=1e-12)


def test_wide_qr_and_full_svd_are_refused():
    x = np.random.default_rng(9).uniform(-1, 1, (2, 3))
    with pytest.raises(FxadValueError, match="m >= n"):
        fxad.jvp(lambda a: fla.qr(a)[0], (x,), (x,))
    with pytest.raises(FxadValueError, match="full_matrices"):
        fla.svd(x)


def test_expm_jvp_is_the_frechet_derivative():
    rng = np.random.default_rng(10)
    a, e = rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, (3, 3))
    val, tan = fxad.jvp(fsl.expm, (a,), (e,))
    want_val, want_tan = sl.expm_frechet(a, e)
    np.testing.assert_allclose(val, want_val, rtol=1e-13)
    np.testing.assert_allclose(tan, want_tan, rtol=1e-12)
    # and the vjp is the adjoint Fréchet derivative L(Aᵀ, C)
    _, f_vjp = fxad.vjp(fsl.expm, a)
    np.testing.assert_allclose(f_vjp(e)[0], sl.expm_frechet(a.T, e, compute_expm=False),
                               rtol=1e-12)


def test_expm_third_order_2x2():
    a = np.array([[0.3, -0.7], [0.5, 0.1]])
    check_grads(fsl.expm, (a,), order=3, modes=("fwd",))


def test_expm_second_derivative_matches_block_formula():
    """d²expm(A)[E, F] is the top-right block of L([[A, E], [0, A]], [[F, 0], [0, F]])."""
    rng = np.random.default_rng(11)
    a, e, f = (rng.uniform(-1, 1, (3, 3)) for _ in range(3))
    got = fxad.jvp(lambda a: fxad.jvp(fsl.expm, (a,), (e,))[1], (a,), (f,))[1]
    z = np.zeros((3, 3))
    big = sl.expm_frechet(np.block([[a, e], [z, a]]), np.block([[f, z], [z, f]]),
                          compute_expm=False)
    np.testing.assert_allclose(got, big[:3, 3:], rtol=1e-11)

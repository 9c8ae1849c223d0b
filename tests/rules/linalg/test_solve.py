"""Rule table: linear solves that factor once (fxad.rules.linalg.solve): LU and Cholesky
(numpy.linalg's and scipy.linalg's spellings), triangular solves, det and slogdet. Each row
builds a well-conditioned input (tests/rules/linalg/inputs.py); values against NumPy/SciPy."""
import numpy as np
import pytest
import scipy.linalg as sl

import fxad
import fxad.numpy as fnp
from fxad.numpy import linalg as fla
from fxad.scipy import linalg as fsl
from fxad.tree_util import tree_leaves

from ..common import floats, Row, row_tests
from .inputs import (flip_first_row, gen, np_gen, np_spd, np_sym, pivoting, rng_args, spd, symm)

TABLE = [
    ("solve_vec", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3,)]),
    ("solve_mat", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3, 2)]),
    ("solve_batched", lambda x, b: fla.solve(gen(x), b), [(2, 3, 3), (2, 3, 2)]),
    ("solve_batched_vec", lambda x, b: fla.solve(gen(x), b), [(2, 3, 3), (3,)]),
    ("inv", lambda x: fla.inv(gen(x)), [(3, 3)]),
    ("inv_batched", lambda x: fla.inv(gen(x)), [(2, 3, 3)]),
    ("det", lambda x: fla.det(gen(x)), [(3, 3)]),
    ("det_batched", lambda x: fla.det(gen(x)), [(2, 3, 3)]),
    ("grad_det", fxad.grad(lambda x: fla.det(gen(x))), [(3, 3)]),
    ("slogdet", lambda x: tuple(fla.slogdet(flip_first_row(gen(x)))), [(3, 3)]),
    ("slogdet_batched", lambda x: tuple(fla.slogdet(gen(x))), [(2, 3, 3)]),
    ("scipy_solve_T", lambda x, b: fsl.solve(gen(x), b, transposed=True), [(3, 3), (3,)]),
    ("scipy_solve_sym", lambda x, b: fsl.solve(gen(x), b, assume_a="sym"), [(3, 3), (3,)]),
    ("scipy_solve_pos", lambda x, b: fsl.solve(spd(x), b, assume_a="pos"), [(3, 3), (3, 2)]),
    ("scipy_solve_pos_lower", lambda x, b: fsl.solve(symm(gen(x)) + 2 * np.eye(3), b,
                                                     assume_a="pos", lower=True),
     [(3, 3), (3,)]),
    ("lu_solve", lambda x, b: fsl.lu_solve(fsl.lu_factor(gen(x)), b), [(3, 3), (3, 2)]),
    ("lu_solve_T", lambda x, b: fsl.lu_solve(fsl.lu_factor(gen(x)), b, trans=1),
     [(3, 3), (3,)]),
    ("lu_factor_lu", lambda x: fsl.lu_factor(pivoting(x))[0], [(3, 3)]),
    ("lu_factor_lu_batched", lambda x: fsl.lu_factor(pivoting(x))[0], [(2, 3, 3)]),
    ("lu_solve_plain_tuple", lambda x, b: fsl.lu_solve(tuple(fsl.lu_factor(pivoting(x))), b),
     [(3, 3), (3,)]),
    ("lu_solve_plain_tuple_T", lambda x, b: fsl.lu_solve(tuple(fsl.lu_factor(pivoting(x))), b,
                                                         trans=1), [(3, 3), (3, 2)]),
    ("scipy_inv_det", lambda x: (fsl.inv(gen(x)), fsl.det(gen(x))), [(3, 3)]),
    ("solve_triangular_lower", lambda x, b: fsl.solve_triangular(gen(x), b, lower=True),
     [(3, 3), (3,)]),
    ("solve_triangular_upper_T", lambda x, b: fsl.solve_triangular(gen(x), b, trans="T"),
     [(3, 3), (3, 2)]),
    ("solve_triangular_unit", lambda x, b: fsl.solve_triangular(x, b, lower=True,
                                                                unit_diagonal=True),
     [(3, 3), (3,)]),
    ("solve_triangular_batched", lambda x, b: fsl.solve_triangular(gen(x), b, lower=True),
     [(2, 3, 3), (2, 3, 2)]),
    ("cholesky", lambda x: fla.cholesky(spd(x)), [(3, 3)]),
    ("cholesky_batched", lambda x: fla.cholesky(spd(x)), [(2, 3, 3)]),
    ("cholesky_symmetric", lambda x: fla.cholesky(symm(gen(x)) + 2 * np.eye(3)), [(3, 3)]),
    ("cholesky_upper", lambda x: fla.cholesky(spd(x), upper=True), [(3, 3)]),
    ("scipy_cholesky", lambda x: fsl.cholesky(symm(gen(x)) + 2 * np.eye(3)), [(3, 3)]),
    ("cho_solve", lambda x, b: fsl.cho_solve(fsl.cho_factor(spd(x)), b), [(3, 3), (3,)]),
    ("cho_solve_lower", lambda x, b: fsl.cho_solve(fsl.cho_factor(spd(x), lower=True), b),
     [(3, 3), (3, 2)]),
    ("cho_solve_plain_tuple", lambda x, b: fsl.cho_solve(tuple(fsl.cho_factor(spd(x))), b),
     [(3, 3), (3,)]),
    ("cho_factor", lambda x: fsl.cho_factor(spd(x))[0], [(3, 3)]),
    # batched values (and batched derivative programs) under vmap and jit
    Row("vmap_solve", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3,)], floats(-1, 1), grad=False,
        in_axes=[0],
        rtol=1e-10),
    Row("vmap_solve_mat", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3, 2)], floats(-1, 1),
        grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_solve_only_b", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3,)], floats(-1, 1),
        grad=False, in_axes=[(None, 0)], rtol=1e-10),
    Row("vmap_solve_only_b_mat", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3, 2)], floats(-1, 1),
        grad=False, in_axes=[(None, 0)], rtol=1e-10),
    Row("vmap_solve_only_A", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3,)], floats(-1, 1),
        grad=False, in_axes=[(0, None)], rtol=1e-10),
    Row("vmap_solve_axis1", lambda x, b: fla.solve(gen(x), b), [(3, 3), (3,)], floats(-1, 1),
        grad=False, in_axes=[(1, 1)], rtol=1e-10),
    Row("vmap_inv", lambda x: fla.inv(gen(x)), [(3, 3)], floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_det", lambda x: fla.det(gen(x)), [(3, 3)], floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_slogdet", lambda x: tuple(fla.slogdet(gen(x))), [(3, 3)], floats(-1, 1), grad=False,
        in_axes=[0],
        rtol=1e-10),
    Row("vmap_lu_solve_T_only_b", lambda x, b: fsl.lu_solve(fsl.lu_factor(gen(x)), b, trans=1),
        [(3, 3), (3, 2)], floats(-1, 1), grad=False, in_axes=[(None, 0)], rtol=1e-10),
    Row("vmap_lu_factor", lambda x: tuple(fsl.lu_factor(pivoting(x))), [(3, 3)], floats(-1, 1),
        grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_lu_solve_plain_tuple", lambda x, b: fsl.lu_solve(tuple(fsl.lu_factor(pivoting(x))), b),
        [(3, 3), (3,)], floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_grad_lu_factor", fxad.grad(lambda x: fnp.sum(fsl.lu_factor(pivoting(x))[0] ** 2)),
        [(3, 3)], floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_solve_triangular", lambda x, b: fsl.solve_triangular(gen(x), b, lower=True),
        [(3, 3), (3,)], floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_solve_triangular_only_b", lambda x, b: fsl.solve_triangular(gen(x), b, trans=1),
        [(3, 3), (3,)], floats(-1, 1), grad=False, in_axes=[(None, 0)], rtol=1e-10),
    Row("vmap_cholesky", lambda x: fla.cholesky(spd(x)), [(3, 3)], floats(-1, 1), grad=False,
        in_axes=[0], rtol=1e-10),
    Row("vmap_cho_solve", lambda x, b: fsl.cho_solve(fsl.cho_factor(spd(x)), b), [(3, 3), (3,)],
        floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_cho_solve_only_b", lambda x, b: fsl.cho_solve(fsl.cho_factor(spd(x)), b),
        [(3, 3), (3, 2)], floats(-1, 1), grad=False, in_axes=[(None, 0)], rtol=1e-10),
    Row("vmap_scipy_solve_pos", lambda x, b: fsl.solve(spd(x), b, assume_a="pos"), [(3, 3), (3,)],
        floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_grad_solve", fxad.grad(lambda x, b: fnp.sum(fla.solve(gen(x), b) ** 2), (0, 1)),
        [(3, 3), (3,)], floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_grad_logdet", fxad.grad(lambda x: fla.slogdet(spd(x))[1]), [(3, 3)], floats(-1, 1),
        grad=False, in_axes=[0], rtol=1e-10),
    Row("vmap_grad_det", fxad.grad(lambda x: fla.det(gen(x))), [(3, 3)], floats(-1, 1), grad=False,
        in_axes=[0],
        rtol=1e-10),
    Row("vmap_grad_cholesky", fxad.grad(lambda x: fnp.sum(fla.cholesky(spd(x)) ** 2)), [(3, 3)],
        floats(-1, 1), grad=False, in_axes=[0], rtol=1e-10),
]
TABLE = [r if isinstance(r, Row) else Row(*r, floats(-1, 1), rtol=1e-10) for r in TABLE]
test_row = row_tests(TABLE)


VALUES = [  # (name, ours, theirs, shapes, input builders)
    ("solve", fla.solve, np.linalg.solve, [(3, 3), (3,)], [np_gen, None]),
    ("solve_mat", fla.solve, np.linalg.solve, [(3, 3), (3, 2)], [np_gen, None]),
    ("solve_batch", fla.solve, np.linalg.solve, [(2, 3, 3), (2, 3, 2)], [np_gen, None]),
    ("solve_bcast", fla.solve, np.linalg.solve, [(2, 3, 3), (3,)], [np_gen, None]),
    ("inv", fla.inv, np.linalg.inv, [(2, 3, 3)], [np_gen]),
    ("det", fla.det, np.linalg.det, [(2, 3, 3)], [np_gen]),
    ("det_neg", fla.det, np.linalg.det, [(4, 4)], [lambda x: x * 3]),
    ("slogdet", fla.slogdet, np.linalg.slogdet, [(2, 4, 4)], [lambda x: x * 3]),
    ("cholesky", fla.cholesky, np.linalg.cholesky, [(2, 3, 3)], [np_spd]),
    ("cholesky_nonsym", fla.cholesky, lambda a: np.linalg.cholesky(np_sym(a)), [(3, 3)],
     [lambda x: np_gen(x) + 2]),
    ("cholesky_nonsym_tri", lambda a: fla.cholesky(a, symmetrize_input=False),
     np.linalg.cholesky, [(3, 3)], [lambda x: np_gen(x) + 2]),
    ("cholesky_upper", lambda a: fla.cholesky(a, upper=True),
     lambda a: np.linalg.cholesky(a, upper=True), [(3, 3)], [np_spd]),
    ("scipy_solve", fsl.solve, sl.solve, [(3, 3), (3, 2)], [np_gen, None]),
    ("scipy_solve_pos", lambda a, b: fsl.solve(a, b, assume_a="pos"),
     lambda a, b: sl.solve(a, b, assume_a="pos"), [(3, 3), (3,)], [np_spd, None]),
    ("scipy_solve_sym_lower", lambda a, b: fsl.solve(a, b, assume_a="sym", lower=True),
     lambda a, b: sl.solve(np_sym(a), b, assume_a="sym", lower=True), [(3, 3), (3,)],
     [np_gen, None]),
    ("scipy_solve_T", lambda a, b: fsl.solve(a, b, transposed=True),
     lambda a, b: sl.solve(a, b, transposed=True), [(3, 3), (3,)], [np_gen, None]),
    ("lu_factor", lambda a: tuple(fsl.lu_factor(a)), sl.lu_factor, [(4, 4)], [None]),
    ("lu_solve", lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b, trans=1),
     lambda a, b: sl.lu_solve(sl.lu_factor(a), b, trans=1), [(3, 3), (3, 2)], [np_gen, None]),
    ("cho_solve", lambda a, b: fsl.cho_solve(fsl.cho_factor(a), b),
     lambda a, b: sl.cho_solve(sl.cho_factor(a), b), [(3, 3), (3,)], [np_spd, None]),
    ("scipy_cholesky", fsl.cholesky, lambda a: sl.cholesky(np_sym(a)), [(3, 3)],
     [lambda x: np_gen(x) + 2]),
    ("solve_triangular", lambda a, b: fsl.solve_triangular(a, b, trans=1, unit_diagonal=True),
     lambda a, b: sl.solve_triangular(a, b, trans=1, unit_diagonal=True), [(3, 3), (3, 2)],
     [None, None]),
]

@pytest.mark.parametrize("name,ours,theirs,shapes,builders", VALUES,
                         ids=[r[0] for r in VALUES])
def test_values_match(name, ours, theirs, shapes, builders):
    args = [b(x) if b else x for b, x in zip(builders, rng_args(shapes))]
    got, want = ours(*args), theirs(*args)
    for g, w in zip(tree_leaves(got), tree_leaves(tuple(want) if isinstance(want, tuple)
                                                   else want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def _count_calls(monkeypatch, name):
    """Count the LU factorizations / solves: fxad's impls run them (on LAPACK) only here."""
    import fxad.rules.linalg.solve as ls
    calls = []
    real = getattr(ls, f"_{name}_one")

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(ls, f"_{name}_one", counting)
    return calls


def test_grad_of_solve_factors_once(monkeypatch):
    rng = np.random.default_rng(2)
    A, b = np_gen(rng.uniform(-1, 1, (5, 5))), rng.uniform(-1, 1, 5)
    factors, solves = _count_calls(monkeypatch, "lu_factor"), _count_calls(monkeypatch, "lu_solve")
    gA, gb = fxad.grad(lambda A, b: fnp.sum(fla.solve(A, b)), (0, 1))(A, b)
    assert len(factors) == 1 and len(solves) == 2  # x, then one adjoint solve for both
    y = np.linalg.solve(A.T, np.ones(5))
    np.testing.assert_allclose(gb, y, rtol=1e-12)
    np.testing.assert_allclose(gA, -np.outer(y, np.linalg.solve(A, b)), rtol=1e-12)


def test_jacobian_of_solve_factors_once(monkeypatch):
    rng = np.random.default_rng(3)
    A, b = np_gen(rng.uniform(-1, 1, (4, 4))), rng.uniform(-1, 1, 4)
    factors, solves = _count_calls(monkeypatch, "lu_factor"), _count_calls(monkeypatch, "lu_solve")
    J = fxad.jacrev(lambda b: fla.solve(A, b))(b)
    assert len(factors) == 1 and len(solves) == 2  # the cotangent basis is one solve
    np.testing.assert_allclose(J, np.linalg.inv(A), rtol=1e-12)


def test_lu_factors_reconstruct_the_matrix():
    a = np.random.default_rng(13).uniform(-1, 1, (2, 5, 5))
    lu, piv = sl.lu_factor(a[0])
    from fxad.rules.linalg.solve import lu_pivots_to_permutation, lu_reconstruct
    perm = lu_pivots_to_permutation(piv)
    assert sorted(perm) == list(range(5))
    l, u = np.tril(lu, -1) + np.eye(5), np.triu(lu)
    np.testing.assert_allclose(a[0][perm], l @ u, atol=1e-12)
    lus, pivs = fsl.lu_factor(a)
    np.testing.assert_allclose(lu_reconstruct(lus, pivs), a, atol=1e-12)


def test_grad_through_scipy_lu_idioms_agrees_with_solve():
    rng = np.random.default_rng(14)
    x, b = rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, 3)
    want = fxad.grad(lambda x: fnp.sum(fla.solve(pivoting(x), b)))(x)

    def unpacked(x):
        lu, piv = fsl.lu_factor(pivoting(x))
        return fnp.sum(fsl.lu_solve((lu, piv), b))
    for f in (unpacked, lambda x: fnp.sum(fsl.lu_solve(fsl.lu_factor(pivoting(x)), b))):
        np.testing.assert_allclose(fxad.grad(f)(x), want, rtol=1e-12)
    # the determinant from the factors' diagonal (a 3-cycle of rows: an even permutation)
    det_lu = lambda x: fnp.prod(fnp.sum(fsl.lu_factor(pivoting(x))[0] * np.eye(3), axis=0))
    np.testing.assert_allclose(fxad.grad(det_lu)(x),
                               fxad.grad(lambda x: fla.det(pivoting(x)))(x), rtol=1e-12)


def test_cho_factor_then_solve_differentiates_through_a():
    rng = np.random.default_rng(4)
    x, b = rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, 3)
    f1 = lambda x: fnp.sum(fsl.cho_solve(fsl.cho_factor(spd(x)), b))
    f2 = lambda x: fnp.sum(fla.solve(spd(x), b))
    np.testing.assert_allclose(fxad.grad(f1)(x), fxad.grad(f2)(x), rtol=1e-12)


def test_linear_primitives_refuse_nonlinear_transpose():
    rng = np.random.default_rng(12)
    a = np_gen(rng.uniform(-1, 1, (3, 3)))
    from fxad.rules.linalg.solve import lu_solve_p
    from fxad.interpreters.transpose import UndefinedPrimal
    from fxad.core import ShapedArray
    with pytest.raises(TypeError, match="right-hand side"):
        lu_solve_p.transpose(np.ones(3), UndefinedPrimal(ShapedArray((3, 3), np.float64)),
                             *sl.lu_factor(a), np.ones(3), trans=0, lu_t=False)


def test_singular_and_empty_solves_behave_like_scipy():
    """The LU impls call LAPACK directly; a singular matrix still warns as SciPy does (and
    gives non-finite values, as SciPy's lu_solve would), and empty systems still work."""
    from scipy.linalg import LinAlgWarning
    with pytest.warns(LinAlgWarning, match="Singular matrix"):
        x = fla.solve(np.zeros((2, 2)), np.ones(2))
    assert not np.isfinite(x).all()
    assert fla.solve(np.zeros((0, 0)), np.ones(0)).shape == (0,)
    a = np.array([[2.0, 1.0], [1.0, 3.0]]) * (1 + 1j)
    np.testing.assert_allclose(fsl.lu_solve(fsl.lu_factor(a), np.ones(2), trans=1),
                               sl.lu_solve(sl.lu_factor(a), np.ones(2), trans=1), rtol=1e-14)


_EMPTY_SOLVES = {
    "solve": fla.solve,
    "lu_solve": lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b),
    "solve_triangular": fsl.solve_triangular,
    "cho_solve": lambda a, b: fsl.cho_solve(fsl.cho_factor(a), b),
}


@pytest.mark.parametrize("name,dtype", [
    (name, dtype) for name in _EMPTY_SOLVES
    for dtype in (np.float64, np.float32, np.float16, np.int64, np.complex64)
    if (name, dtype) != ("cho_solve", np.float16)])  # fxad's cholesky has no float16 yet
def test_empty_systems_have_the_shape_rules_dtype(name, dtype):
    """Empty systems (no unknowns, or no right-hand sides) never reach LAPACK (SciPy < 1.14
    rejects n = 0): the solution has b's shape and the dtype a 1x1 system of the same dtypes
    gets, eagerly and staged, batched or not."""
    fn = _EMPTY_SOLVES[name]
    want = fn(2 * np.eye(1, dtype=dtype), np.ones(1, dtype)).dtype
    for a, b in [(np.zeros((0, 0)), np.ones(0)), (np.zeros((0, 0)), np.ones((0, 3))),
                 (2 * np.eye(3), np.ones((3, 0))), (np.zeros((2, 0, 0)), np.ones((2, 0, 3)))]:
        a, b = a.astype(dtype), b.astype(dtype)
        for got in (fn(a, b), fxad.jit(fn)(a, b)):
            assert (got.shape, got.dtype) == (b.shape, want), (a.shape, b.shape, got.dtype)
    lu, piv = fsl.lu_factor(np.zeros((0, 0), dtype))
    assert (lu.shape, lu.dtype, piv.shape, piv.dtype) == ((0, 0), want, (0,), np.int32)


@pytest.mark.parametrize("name,fn", [
    ("solve", lambda a: fla.solve(a, np.ones(3, np.float16))), ("inv", fla.inv),
    ("det", fla.det), ("slogdet", lambda a: fla.slogdet(a)[1]), ("expm", fsl.expm),
    ("solve_triangular", lambda a: fsl.solve_triangular(a, np.ones(3, np.float16)))])
def test_half_precision_computes_in_float32_eagerly_and_staged(name, fn):
    """LAPACK has no float16: SciPy computes in float32, and the shape rules say so too."""
    a = (np.eye(3) * 2 + 0.1).astype(np.float16)
    assert fn(a).dtype == np.float32
    assert fxad.make_jaxpr(fn)(a).out_avals[0].dtype == np.float32
    assert fxad.jit(fn)(a).dtype == np.float32


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_solve_and_inv_for_every_memory_layout(layout):
    """solve/inv factor aᵀ (LAPACK's column-major view of a row-major a); the answer and its
    gradient must not depend on how `a` lies in memory."""
    rng = np.random.default_rng(5)
    base = np_gen(rng.uniform(-1, 1, (8, 8)))
    a = {"C": base[:4, :4].copy(), "F": np.asfortranarray(base[:4, :4]),
         "strided": base[::2, ::2]}[layout]
    b = rng.uniform(-1, 1, 4)
    np.testing.assert_allclose(fnp.linalg.solve(a, b), np.linalg.solve(a, b), rtol=1e-12)
    np.testing.assert_allclose(fnp.linalg.inv(a), np.linalg.inv(a), rtol=1e-12)
    np.testing.assert_allclose(fxad.jit(fnp.linalg.solve)(a, b), np.linalg.solve(a, b),
                               rtol=1e-12)
    ga, gb = fxad.grad(lambda a, b: fnp.sum(fnp.linalg.solve(a, b)), argnums=(0, 1))(a, b)
    y = np.linalg.solve(a.T, np.ones(4))
    np.testing.assert_allclose(gb, y, rtol=1e-12)
    np.testing.assert_allclose(ga, -np.outer(y, np.linalg.solve(a, b)), rtol=1e-12)


def test_transposed_lu_factors_are_those_of_the_transpose():
    from fxad.rules.linalg.solve import _lu_factor_one
    a = np_gen(np.random.default_rng(6).uniform(-1, 1, (5, 5)))
    lu, piv = _lu_factor_one(a, transposed=True)
    lu_ref, piv_ref = sl.lu_factor(a.T)
    np.testing.assert_allclose(lu, lu_ref, rtol=1e-14)
    np.testing.assert_array_equal(piv, piv_ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (0, 0)])
def test_lu_impls_return_fresh_arrays(shape, dtype):
    """lu_factor and lu_solve are declared memory="fresh", so compiled programs (the eager
    tape's forwards, jit's results) return their outputs without a copy: their impls must
    never return an operand or a view of one, whatever the operands' layout, the factored
    side (transposed) and the solve's trans."""
    from fxad.rules.linalg.solve import lu_factor_p, lu_solve_p
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shape) + 4 * np.eye(shape[-1])).astype(dtype)
    for a_ in (a, np.swapaxes(np.swapaxes(a, -1, -2).copy(), -1, -2)):  # C- and F-ordered
        for transposed in (False, True):
            lu, piv = lu_factor_p.impl(a_, with_lu_tangent=False, transposed=transposed)
            assert not np.shares_memory(lu, a_) and not np.shares_memory(piv, a_)
            for b in (rng.standard_normal(shape[:-1]).astype(dtype),
                      rng.standard_normal(shape[:-1] + (2,)).astype(dtype)):
                for trans in (0, 1):
                    x = lu_solve_p.impl(a_, lu, piv, b, trans=trans, lu_t=transposed)
                    assert not any(np.shares_memory(x, y) for y in (a_, lu, piv, b))
                    if shape[-1]:
                        op = np.swapaxes(a_, -1, -2) if trans else a_
                        np.testing.assert_allclose(np.einsum("...ij,...j->...i", op, x)
                                                   if b.ndim == a_.ndim - 1 else op @ x, b,
                                                   rtol=1e-4, atol=1e-4)
    f = fxad.jit(fxad.grad(lambda A, b: fnp.sum(fnp.linalg.solve(A, b)), (0, 1)))
    assert "_copy(" not in f.lower(np.eye(3), np.ones(3)).as_text()

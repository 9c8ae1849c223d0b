"""Rule table: dot_general and the products built on it (fxad.rules.contraction.dot)."""
import numpy as np
import pytest

import fxad.numpy as fnp
from fxad import lax

from fxad.test_util import check_grads

from ..common import T3D, VEC, floats, Row, row_tests, run_row

TABLE = [
    ("matmul-2d", fnp.matmul, [(2, 3), (3, 4)]),
    ("matmul-vec-mat", fnp.matmul, [(3,), (3, 2)]),
    ("matmul-mat-vec", fnp.matmul, [(2, 3), (3,)]),
    ("matmul-batched", fnp.matmul, [(2, 2, 3), (2, 3, 2)]),
    ("matmul-broadcast", fnp.matmul, [(2, 1, 2, 3), (3, 3, 2)]),
    ("@", lambda a, b: a @ b, [(2, 3), (3,)]),
    ("dot-1d", fnp.dot, [(3,), (3,)]),
    ("dot-nd", fnp.dot, [(2, 2, 3), (4, 3, 2)]),
    ("dot-scalar", fnp.dot, [(), (3,)]),
    ("tensordot", lambda a, b: fnp.tensordot(a, b, axes=([0, 2], [2, 0])), [(2, 3, 4), (4, 2, 2)]),
    ("tensordot-int", lambda a, b: fnp.tensordot(a, b, 1), [(2, 3), (3, 2)]),
    # past rank 2, one matrix product of the reshaped operands (dot.matrix_form)
    ("dg-3d-ab", lambda a, b: fnp.tensordot(a, b, axes=([2], [0])), [(2, 3, 4), (4, 2)]),
    ("dg-3d-abT", lambda a, b: fnp.tensordot(a, b, axes=([2], [1])), [(2, 3, 4), (2, 4)]),
    ("dg-two-contracted", lambda a, b: fnp.tensordot(a, b, axes=2), [(2, 3, 2), (3, 2, 2)]),
    ("dg-rhs-3d", lambda a, b: fnp.tensordot(a, b, axes=1), [(2, 3), (3, 2, 2)]),
    ("dg-batched-3d-ab", lambda a, b: lax.dot_general(a, b, (((3,), (1,)), ((0,), (0,)))),
     [(2, 2, 3, 2), (2, 2, 3)]),
    ("dg-batched-3d-abT", lambda a, b: lax.dot_general(a, b, (((3,), (2,)), ((0,), (0,)))),
     [(2, 2, 3, 2), (2, 3, 2)]),
    # the lhs's contracted dims leading it: one product with the lhs read transposed (the
    # weight cotangent x.T @ ct of x @ W for x of rank 3, which the rows above exercise too)
    ("dg-3d-aTb", lambda a, b: lax.dot_general(a, b, (((0, 1), (0, 1)), ((), ()))),
     [(2, 3, 4), (2, 3, 2)]),
    ("dg-3d-aTb-rhs-T", lambda a, b: lax.dot_general(a, b, (((0,), (1,)), ((), ()))),
     [(3, 2, 2), (2, 3)]),
    ("dg-batched-aTb", lambda a, b: lax.dot_general(a, b, (((1,), (1,)), ((0,), (0,)))),
     [(2, 3, 4), (2, 3, 2)]),
    ("dg-lead-and-trail-mixed", lambda a, b: lax.dot_general(a, b, (((0, 2), (0, 1)), ((), ()))),
     [(2, 3, 2), (2, 2, 3)]),  # contracted dims neither lead nor trail: the tensordot path
    ("inner", fnp.inner, [(2, 3), (4, 3)]),
    ("outer", fnp.outer, [(3,), (2,)]),
    ("vdot", fnp.vdot, [(2, 3), (2, 3)]),
    ("einsum-ij,jk", lambda a, b: fnp.einsum("ij,jk->ki", a, b), [(2, 3), (3, 2)]),
    ("einsum-batch", lambda a, b: fnp.einsum("bij,bjk->bik", a, b), [(2, 2, 3), (2, 3, 2)]),
    ("einsum-3ops", lambda a, b, c: fnp.einsum("ij,jk,k->i", a, b, c), [(2, 3), (3, 4), (4,)]),
    ("einsum-implicit-sumout", lambda a, b: fnp.einsum("ij,k", a, b), [(2, 3), (2,)]),
    ("einsum-unary", lambda a: fnp.einsum("ijk->ki", a), [(2, 3, 2)]),
    ("einsum-ellipsis", lambda a, b: fnp.einsum("...ij,...jk->...ik", a, b), [(2, 2, 3), (2, 3, 2)]),
    ("einsum-ellipsis-bcast", lambda a, b: fnp.einsum("...i,...i", a, b), [(1, 3), (2, 3)]),
    ("einsum-diagonal", lambda a: fnp.einsum("iij->ji", a), [(3, 3, 2)]),
    ("einsum-trace", lambda a: fnp.einsum("ii", a), [(3, 3)]),
    ("einsum-sublists", lambda a, b: fnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), [(2, 3), (3, 2)]),
    ("einsum-sublists-implicit", lambda a, b: fnp.einsum(a, [5, 1], b, [1, 0]), [(2, 3), (3, 2)]),
    ("einsum-sublists-ellipsis", lambda a, b: fnp.einsum(a, [..., 0, 1], b, [1, 2], [2, ...]),
     [(2, 2, 3), (3, 2)]),
]


TABLE = [Row(n, f, s, floats(-2, 2)) for n, f, s in TABLE]
TABLE += [  # lax's forms: their values under vmap and jit
    Row("dot_general_batch", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
        [T3D, (2, 5, 4)], floats(-2, 2), grad=False),
    Row("dot_general_free_only", lambda a, b: lax.dot_general(a, b, (((), ()), ((), ()))), [(2,), VEC],
        floats(-2, 2), grad=False),
]
test_row = row_tests(TABLE)


def test_blas_fast_forms_match_tensordot_eager_and_jit():
    """dot_general's matrix-product fast paths (a@b, a@b.T, a.T@b, outer) agree with
    tensordot for every contraction of 1-d/2-d operands, eagerly and in generated code."""
    import itertools

    import fxad
    from fxad.rules.contraction.dot import fast_form
    rng = np.random.default_rng(0)
    seen = set()
    for lnd, rnd in itertools.product((1, 2), (1, 2)):
        for nc in (0, 1):
            for lc in itertools.combinations(range(lnd), nc):
                for rc in itertools.combinations(range(rnd), nc):
                    a, b = rng.normal(size=(3,) * lnd), rng.normal(size=(3,) * rnd)
                    dn = ((lc, rc), ((), ()))
                    want = np.tensordot(a, b, (lc, rc))
                    np.testing.assert_allclose(lax.dot_general(a, b, dn), want, rtol=1e-13)
                    np.testing.assert_allclose(
                        fxad.jit(lambda a, b: lax.dot_general(a, b, dn))(a, b), want, rtol=1e-13)
                    seen.add(fast_form(dn, lnd, rnd))
    assert seen == {"ab", "abT", "aTb", "outer", None}


@pytest.mark.parametrize("dn,ls,rs,spec", [
    ((((), ()), ((0,), (0,))), (5, 3), (5, 4), "bi,bj->bij"),
    ((((), ()), ((1,), (0,))), (3, 5), (5, 2, 4), "ib,bjk->bijk"),
    ((((), ()), ((0, 1), (1, 0))), (2, 3, 4), (3, 2), "abi,ba->abi"),
])
def test_batched_dot_general_without_contraction(dn, ls, rs, spec):
    """The broadcasting-multiply path of dot_general (batch dims, nothing contracted)."""
    import fxad
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=ls), rng.normal(size=rs)
    want = np.einsum(spec, a, b)
    np.testing.assert_allclose(lax.dot_general(a, b, dn), want, rtol=1e-13)
    np.testing.assert_allclose(fxad.jit(lambda a, b: lax.dot_general(a, b, dn))(a, b), want,
                               rtol=1e-13)
    run_row(lambda a, b: lax.dot_general(a, b, dn), [ls, rs], floats(-2, 2))


@pytest.mark.parametrize("spec,shapes", [
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("ij...,j...->i...", [(3, 4, 2), (4, 2)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("...ii->...i", [(2, 3, 3)]), ("iij->j", [(3, 3, 2)]),
    ("...i,...i", [(1, 3), (4, 3)]), ("...", [(2, 3)]), ("i...->...", [(3, 2, 2)]),
    ("bij,bjk", [(2, 3, 4), (2, 4, 5)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
])
def test_einsum_matches_numpy(spec, shapes):
    rng = np.random.default_rng(2)
    args = [rng.normal(size=s) for s in shapes]
    want = np.einsum(spec, *args)
    got = fnp.einsum(spec, *args)
    assert np.shape(got) == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


SUBLISTS = [  # NumPy's interleaved form: operands and integer (or Ellipsis) sublists
    ([(2, 3), [0, 1], (3, 4), [1, 2], [0, 2]]), ([(2, 3), [0, 1], (3, 4), [1, 2]]),
    ([(5, 2, 3), [..., 1, 2], (3, 4), [2, 3], [..., 1, 3]]),
    ([(5, 2, 3), [..., 2], (3, 4), [2, 3]]), ([(2, 3), [1, 0]]), ([(3, 3), [7, 7]]),
    ([(2, 3), [30, 4], (3, 2), [4, 2]]), ([(5, 2, 3), [..., 1, 2], [1, ...]]),
    ([(2, 3), [0, 1], (3,), [1], (2,), [0], []]),
]


def _sublist_args(form, rng):
    return [rng.normal(size=f) if isinstance(f, tuple) else f for f in form]


@pytest.mark.parametrize("form", SUBLISTS, ids=str)
def test_einsum_sublists_match_numpy(form):
    """Values and shapes against NumPy; vmap against a loop and jit against eager over the
    operands; plain np.einsum on traced values dispatches the same form."""
    import fxad
    rng = np.random.default_rng(3)
    args = _sublist_args(form, rng)
    want = np.einsum(*args)
    got = fnp.einsum(*args)
    assert np.shape(got) == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    pos = [i for i, f in enumerate(form) if isinstance(f, tuple)]

    def f(*ops):
        full = list(args)
        for i, o in zip(pos, ops):
            full[i] = o
        return np.einsum(*full)  # plain NumPy: dispatched on tracers
    ops = [args[i] for i in pos]
    np.testing.assert_allclose(fxad.jit(f)(*ops), want, rtol=1e-13, atol=1e-14)
    batched = [np.stack([o, 2 * o, -o]) for o in ops]
    np.testing.assert_allclose(fxad.vmap(f)(*batched),
                               np.stack([f(*[b[i] for b in batched]) for i in range(3)]),
                               rtol=1e-13, atol=1e-14)
    check_grads(f, ops, order=2, modes=("fwd", "rev"))


def test_einsum_sublist_errors():
    with pytest.raises(ValueError, match="integers in"):
        fnp.einsum(np.ones(3), [52])
    with pytest.raises(ValueError, match="integers in"):
        fnp.einsum(np.ones(3), ["i"])


def test_einsum_mismatched_sizes_raise():
    with pytest.raises(ValueError, match="subscript 'i' has sizes 3 and 4"):
        fnp.einsum("i,i", np.ones(3), np.ones(4))


@pytest.mark.parametrize("form,dn", [("ab", (((1,), (0,)), ((), ()))),
                                     ("abT", (((1,), (1,)), ((), ()))),
                                     ("aTb", (((0,), (0,)), ((), ())))])
def test_products_with_a_diagonal_factor(form, dn):
    """The eager shortcut for a diagonal factor (row/column scaling) gives the matrix product
    for every form and side; almost-diagonal matrices, non-float ones and products with a
    non-finite other factor take the BLAS path, so 0 * inf still makes NaN."""
    from fxad.rules.contraction.dot import diagonal_of
    rng = np.random.default_rng(2)
    n = 20
    A, d = rng.normal(size=(n, n)), rng.normal(size=n)
    D = np.diag(d)
    want = lambda a, b: np.tensordot(a, b, dn[0])
    for a, b in ((D, A), (A, D), (D, D), (np.eye(n), A)):
        np.testing.assert_allclose(lax.dot_general(a, b, dn), want(a, b), rtol=1e-14, atol=0)
    assert diagonal_of(D) is not None and diagonal_of(A) is None
    near = D.copy()
    near[3, 5] = 1e-300  # one off-diagonal entry inside, corners zero
    assert diagonal_of(near) is None
    np.testing.assert_allclose(lax.dot_general(near, A, dn), want(near, A), rtol=1e-14)
    nan_off = D.copy()
    nan_off[2, 7] = np.nan
    assert diagonal_of(nan_off) is None
    assert diagonal_of(np.eye(n, dtype=np.int64)) is None
    A_inf = A.copy()
    A_inf[4, 4] = np.inf
    with np.errstate(invalid="ignore"):
        got, ref = lax.dot_general(D, A_inf, dn), want(D, A_inf)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    assert np.isnan(got).any()
    out = lax.dot_general(D.astype(np.float32), A, dn)
    assert out.dtype == np.float64 and not np.shares_memory(out, A)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128, np.int64])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("dn,ls,rs", [
    ((((0, 1), (0, 1)), ((), ())), (3, 4, 5), (3, 4, 2)),      # lhs (K, M) read transposed
    ((((0,), (0,)), ((), ())), (3, 4, 5), (3, 2, 2)),           # ... against a 3-d rhs
    ((((0,), (1,)), ((), ())), (3, 4, 5), (2, 3)),              # ... against rhs.T
    ((((1,), (1,)), ((0,), (0,))), (2, 3, 4, 5), (2, 3, 6)),    # batched
    ((((1, 2), (0, 1)), ((), ())), (3, 4, 5), (4, 5, 2)),       # lhs (M, K), for contrast
    ((((0, 2), (0, 1)), ((), ())), (3, 4, 5), (3, 5, 2)),       # no single product
])
def test_products_past_rank_2_match_numpy_on_any_layout(dn, ls, rs, dtype, layout):
    """dot_general past rank 2 (one matmul of reshaped operands where the contracted dims
    lead or trail the lhs; tensordot otherwise) against np.einsum, for operands that are
    C-contiguous, transposed views or strided views, eagerly and under jit."""
    import fxad
    rng = np.random.default_rng(4)

    def make(shape):
        if layout == "transposed":
            x = rng.normal(size=shape[::-1]).T
        elif layout == "strided":
            x = rng.normal(size=shape[:-1] + (2 * shape[-1],))[..., ::2]
        else:
            x = rng.normal(size=shape)
        x = x.astype(dtype) if dtype != np.int64 else np.round(4 * x).astype(dtype)
        return x * (1 + 1j) if dtype == np.complex128 else x
    a, b = make(ls), make(rs)
    (lc, rc), (lb, rb) = dn
    la = list(range(len(ls)))
    lr = [10 + i for i in range(len(rs))]
    for i, j in zip(lc + lb, rc + rb):
        lr[j] = la[i]
    out = [la[i] for i in lb] + [d for i, d in enumerate(la) if i not in lc + lb] + \
        [d for j, d in enumerate(lr) if j not in rc + rb]
    want = np.einsum(a, la, b, lr, out)
    for got in (lax.dot_general(a, b, dn), fxad.jit(lambda a, b: lax.dot_general(a, b, dn))(a, b)):
        assert got.shape == want.shape and got.dtype == want.dtype
        tol = 1e-5 if dtype == np.float32 else 1e-12  # sums of 3-20 products
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("dn,ls,rs", [
    ((((2,), (0,)), ((), ())), (2, 3, 4), (4, 5)),              # x @ W, x of rank 3
    ((((3,), (1,)), ((0,), (0,))), (2, 2, 3, 4), (2, 4, 5)),    # batched
    ((((2,), (1,)), ((), ())), (2, 3, 4), (5, 4)),              # x @ W.T
])
def test_weight_cotangent_is_one_product_without_transposes(dn, ls, rs):
    """The rhs cotangent of x @ W (x of rank 3 or more, batch dims leading) is the one
    product x.T @ ct of the reshaped operands: no transpose of ct before the product (a
    copy of the cotangent) and, for W's own layout, none after it. Values by check_grads."""
    import fxad
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=ls), rng.normal(size=rs)
    f = lambda a, b: lax.dot_general(a, b, dn)  # noqa: E731
    pb = fxad.make_jaxpr(lambda a, b, ct: fxad.vjp(f, a, b)[1](ct))(a, b, f(a, b))
    eqns = [e for e in pb.jaxpr.eqns]
    ct_b = [e for e in eqns if e.primitive.name == "dot_general" and
            e.outvars[0].aval.shape in (rs, rs[::-1])]
    assert len(ct_b) == 1
    assert not [e for e in eqns if e.primitive.name == "transpose" and
                e.outvars[0] in ct_b[0].invars]
    if dn[0][1] == (len(rs) - 2,):  # W's contracted dim first: the product is W's layout
        assert not [e for e in eqns if e.primitive.name == "transpose"]
    check_grads(f, (a, b), order=2)

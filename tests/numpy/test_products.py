"""Rule table: fxad.numpy.products beyond dot_general's own rows (kron, cross, vdot): values
against NumPy (complex ones too: vdot conjugates its first argument), derivatives to second
order in both modes, vmap against a loop."""
import numpy as np
import pytest

import fxad.numpy as fnp

from ..rules.common import (MAT, T3D, VEC, check_values_match_numpy, floats, grid, Row,
                            row_tests)

R = np.random.default_rng(7)
Z = R.standard_normal((3, 4)) + 1j * R.standard_normal((3, 4))
W = R.standard_normal((3, 4)) + 1j * R.standard_normal((3, 4))

# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("complex", lambda m, a, b: [
        m.vdot(a, b), m.vdot(a.real, b), m.vdot(a, b.real), m.dot(a, b.T), m.inner(a, b),
        m.outer(a[0], b[0]), m.matmul(a, b.T), m.tensordot(a, b, ([1], [1])),
        m.einsum("ij,ij->", a, b), m.kron(a[0], b[0]), m.cross(a[:, :3], b[:, :3])],
     [(Z, W), (Z.astype(np.complex64), W.astype(np.complex64))], [{}]),
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


def test_vdot_derivatives_complex():
    from fxad.test_util import check_grads
    check_grads(lambda a, b: fnp.vdot(a, b), (Z, W), order=2)


TABLE = [
    Row("kron", lambda x, y: fnp.kron(x, y), [(2, 2), (2, 3)], grid(-2, 2), unique=True),
    Row("cross", lambda x, y: fnp.cross(x, y), [(2, 3), (3,)], grid(-2, 2), unique=True),
    Row("vdot", lambda x, y: fnp.vdot(x, y), [(2, 3), (2, 3)], grid(-2, 2), unique=True),
    # NumPy's calling forms: their values under vmap and jit
    Row("dot_mm", fnp.dot, [MAT, (5, 2)], floats(-2, 2), grad=False),
    Row("dot_mv", fnp.dot, [MAT, VEC], floats(-2, 2), grad=False),
    Row("dot_vm", fnp.dot, [(4,), MAT], floats(-2, 2), grad=False),
    Row("dot_vv", fnp.dot, [VEC, VEC], floats(-2, 2), grad=False),
    Row("dot_nd", fnp.dot, [T3D, (4, 5, 2)], floats(-2, 2), grad=False),
    Row("dot_scalar", fnp.dot, [(), MAT], floats(-2, 2), grad=False),
    Row("dot_method", lambda x, y: x.dot(y), [MAT, VEC], floats(-2, 2), grad=False, traced_first=True),
    Row("np_dispatch_dot", np.dot, [MAT, VEC], floats(-2, 2), grad=False),
    Row("matmul_mm", fnp.matmul, [MAT, (5, 2)], floats(-2, 2), grad=False),
    Row("matmul_op", lambda x, y: x @ y, [MAT, (5, 2)], floats(-2, 2), grad=False),
    Row("matmul_batch", fnp.matmul, [T3D, (5, 2)], floats(-2, 2), grad=False),
    Row("matmul_batch_both", fnp.matmul, [T3D, (2, 5, 4)], floats(-2, 2), grad=False),
    Row("matmul_bcast_batch", fnp.matmul, [(2, 1, 4, 5), (4, 5, 2)], floats(-2, 2), grad=False),
    Row("matmul_vm", fnp.matmul, [(4,), MAT], floats(-2, 2), grad=False),
    Row("matmul_mv", fnp.matmul, [MAT, VEC], floats(-2, 2), grad=False),
    Row("matmul_v_batch", fnp.matmul, [(4,), T3D], floats(-2, 2), grad=False),
    Row("matmul_batch_v", fnp.matmul, [T3D, VEC], floats(-2, 2), grad=False),
    Row("matmul_vv", fnp.matmul, [VEC, VEC], floats(-2, 2), grad=False),
    Row("tensordot_2", fnp.tensordot, [T3D, MAT], floats(-2, 2), grad=False),
    Row("tensordot_1", lambda a, b: fnp.tensordot(a, b, 1), [T3D, (5, 2)], floats(-2, 2), grad=False),
    Row("tensordot_0", lambda a, b: fnp.tensordot(a, b, 0), [(2,), VEC], floats(-2, 2), grad=False),
    Row("tensordot_pairs", lambda a, b: fnp.tensordot(a, b, ([0, 2], [1, 0])), [T3D, (5, 2)],
        floats(-2, 2), grad=False),
    Row("tensordot_ints", lambda a, b: fnp.tensordot(a, b, (1, -1)), [T3D, (2, 4)], floats(-2, 2),
        grad=False),
    Row("einsum_matmul", lambda a, b: fnp.einsum("ij,jk->ik", a, b), [MAT, (5, 2)], floats(-2, 2),
        grad=False),
    Row("einsum_implicit", lambda a, b: fnp.einsum("ij,jk", a, b), [MAT, (5, 2)], floats(-2, 2), grad=False),
    Row("einsum_full_contract", lambda a, b: fnp.einsum("ij,ij->", a, b), [MAT, MAT], floats(-2, 2),
        grad=False),
    Row("einsum_batch", lambda a, b: fnp.einsum("bij,bjk->bik", a, b), [T3D, (2, 5, 4)], floats(-2, 2),
        grad=False),
    Row("einsum_transpose_out", lambda a, b: fnp.einsum("ij,kj->jki", a, b), [MAT, (2, 5)],
        floats(-2, 2), grad=False),
    Row("einsum_sum_axis", lambda a, b: fnp.einsum("ijk,k->i", a, b), [T3D, VEC], floats(-2, 2), grad=False),
    Row("einsum_outer", lambda a, b: fnp.einsum("i,j->ij", a, b), [(4,), VEC], floats(-2, 2), grad=False),
    Row("einsum_unary", lambda a: fnp.einsum("ijk->kj", a), [T3D], floats(-2, 2), grad=False),
    Row("einsum_3_chain", lambda a, b, c: fnp.einsum("ij,jk,kl->il", a, b, c), [MAT, (5, 2), (2, 4)],
        floats(-2, 2), grad=False),
    Row("einsum_3_quadratic", lambda a, b, c: fnp.einsum("i,ij,j->", a, b, c), [(4,), MAT, VEC],
        floats(-2, 2), grad=False),
    Row("einsum_3_batch", lambda a, b, c: fnp.einsum("bi,bij,bj->b", a, b, c), [(2, 4), T3D, (2, 5)],
        floats(-2, 2), grad=False),
    Row("inner_vv", fnp.inner, [VEC, VEC], floats(-2, 2), grad=False),
    Row("inner_mm", fnp.inner, [MAT, (2, 5)], floats(-2, 2), grad=False),
    Row("inner_scalar", fnp.inner, [(), VEC], floats(-2, 2), grad=False),
    Row("outer_vv", fnp.outer, [(4,), VEC], floats(-2, 2), grad=False),
    Row("outer_mv", fnp.outer, [MAT, (2,)], floats(-2, 2), grad=False),
    Row("vdot_vv", fnp.vdot, [VEC, VEC], floats(-2, 2), grad=False),
    Row("vdot_mm", fnp.vdot, [MAT, MAT], floats(-2, 2), grad=False),
]
test_row = row_tests(TABLE)




_MATMUL_SHAPES = [((3, 4), (4, 2)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)),
                  ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 5))]


@pytest.mark.parametrize("sa,sb", _MATMUL_SHAPES)
def test_the_matmul_operator_on_traced_values_is_matmul(sa, sb):
    """`a @ b` and `b.__rmatmul__` with traced operands (the operator's own path) give
    numpy.matmul's values and the same gradients as fnp.matmul, eagerly and under jit."""
    import fxad
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    ops = {"op": lambda x, y: x @ y, "fn": fnp.matmul,
           "ndarray @ traced": lambda x, y: a @ y, "traced @ ndarray": lambda x, y: x @ b}
    for name, op in ops.items():
        np.testing.assert_allclose(fxad.jit(op)(a, b), np.matmul(a, b), rtol=1e-13)
        loss = lambda x, y, op=op: fnp.sum(op(x, y) ** 2)  # noqa: E731
        got = fxad.grad(loss, argnums=(0, 1))(a, b)
        want = fxad.grad(lambda x, y: fnp.sum(fnp.matmul(x, y) ** 2), argnums=(0, 1))(a, b)
        for g, w in zip(got, want):
            if name == "ndarray @ traced" and g is got[0] or name == "traced @ ndarray" and \
                    g is got[1]:
                assert not np.any(g)  # the operand not traced has no gradient
            else:
                np.testing.assert_allclose(g, w, rtol=1e-13)
        np.testing.assert_allclose(fxad.jit(fxad.grad(loss))(a, b), got[0], rtol=1e-13)


def test_the_matmul_operator_stacks_lists_of_traced_values():
    import fxad
    w = np.arange(6.0).reshape(3, 2)

    def f(x):
        return fnp.sum([x[0], x[1], x[2]] @ (x[:, None] * w)) + fnp.sum(
            (x[:, None] * w).T @ [x[0], 2.0, x[1]])
    x = np.array([0.5, -1.0, 2.0])
    ref = lambda v: np.sum(v @ (v[:, None] * w)) + np.sum((v[:, None] * w).T @ [v[0], 2.0, v[1]])  # noqa: E731
    np.testing.assert_allclose(f(x), ref(x), rtol=1e-14)
    eps = 1e-6
    num = [(ref(x + eps * e) - ref(x - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(fxad.grad(f)(x), num, rtol=1e-7)

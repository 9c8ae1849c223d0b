"""fxad.sparse.jacobian_sparsity / hessian_sparsity: exact where exactness is claimed (the
pattern is exactly the nonzeros of the dense Jacobian at a generic point), a superset where
it over-approximates, conservative for primitives it does not know, and written on the
public API alone."""
import ast
import pathlib

import numpy as np
import pytest
import scipy.sparse as sp

import fxad
import fxad.extend as fe
import fxad.numpy as fnp
import fxad.sparse as fs
from fxad import lax

RNG = np.random.default_rng(0)
X6 = RNG.uniform(0.5, 1.5, 6)
A = np.zeros((6, 6))
A[np.arange(6), (np.arange(6) * 2) % 6] = 2.0
A[0, 5] = -1.0


def lap(u):
    return fnp.concatenate([u[1:2] - 2 * u[:1], u[2:] - 2 * u[1:-1] + u[:-2],
                            u[-2:-1] - 2 * u[-1:]])


EXACT = [
    ("elementwise", lambda x: fnp.sin(x) * x + 2.0, X6),
    ("broadcast", lambda x: x[:, None] * x[None, :3], X6),
    ("stencil", lambda x: fnp.exp(lap(x)) * x, X6),
    ("reshape_transpose", lambda x: fnp.cos(x.reshape(2, 3).T), X6),
    ("reduce", lambda x: fnp.sum(x.reshape(2, 3) ** 2, axis=1), X6),
    ("dot_const_sparse", lambda x: A @ x, X6),
    ("dot_xx", lambda x: x.reshape(2, 3) @ x.reshape(3, 2), X6),
    ("einsum_batch", lambda x: fnp.einsum("bij,bj->bi", x.reshape(2, 1, 3),
                                          x.reshape(2, 3)), X6),
    ("scatter", lambda x: fnp.zeros(4).at[np.array([0, 0, 3])].add(x[:3] ** 2), X6),
    ("index_array", lambda x: x[np.array([5, 0, 0, 2])] * x[:4], X6),
    ("pad_flip", lambda x: fnp.flip(fnp.pad(x, 2)) * 3.0, X6),
    ("where", lambda x: fnp.where(x > 1.0, x ** 2, -x), X6),
    ("jit_inside", lambda x: fxad.jit(lambda v: v[1:] * v[:-1])(x), X6),
    ("dynamic_slice_const", lambda x: lax.dynamic_slice(x, (2,), (3,)) * 2.0, X6),
    ("cond_known", lambda x: lax.cond(True, lambda v: v[::-1], lambda v: v, x), X6),
    ("custom_jvp", lambda x: fxad.nn.softplus(x[1:] - x[:-1]), X6),
    ("matrix_arg", lambda x: fnp.sum(x * x.T, axis=0), RNG.uniform(0.5, 1.5, (3, 3))),
]


def _dense_nonzeros(f, x):
    J = np.asarray(fxad.jacfwd(f)(x))
    out = np.shape(f(x))
    return J.reshape(int(np.prod(out)), x.size) != 0


@pytest.mark.parametrize("name,f,x", EXACT, ids=[e[0] for e in EXACT])
def test_exact_patterns(name, f, x):
    P = fs.jacobian_sparsity(f, x)
    assert isinstance(P, sp.csr_array) and P.dtype == bool
    np.testing.assert_array_equal(P.toarray(), _dense_nonzeros(f, x))


OVER = [  # value-dependent zeros (max, relu) or structure known only at run time
    ("max", lambda x: fnp.max(x.reshape(3, 2), axis=0), X6),
    ("relu", lambda x: fxad.nn.relu(x[1:] - x[:-1]), X6),
    ("cumsum_whole_line", lambda x: fnp.cumsum(x), X6),
    ("traced_index", lambda x: x[fnp.argmax(x)] * x, X6),
    ("cond_unknown", lambda x: lax.cond(x[0] > 1, lambda v: v[::-1], lambda v: v * 2, x), X6),
    ("scan", lambda x: lax.scan(lambda c, xi: (c * xi, c + xi), 1.0, x)[1], X6),
    ("while", lambda x: lax.fori_loop(0, 2, lambda i, v: fnp.roll(v, 1) * v, x), X6),
    ("linalg", lambda x: fnp.linalg.solve(fnp.eye(3) * 4 + x.reshape(2, 3)[:1].T, x[:3]), X6),
]


@pytest.mark.parametrize("name,f,x", OVER, ids=[e[0] for e in OVER])
def test_over_approximations_contain_every_nonzero(name, f, x):
    P = fs.jacobian_sparsity(f, x).toarray()
    D = _dense_nonzeros(f, x)
    assert P.shape == D.shape and not np.any(D & ~P)


def test_known_over_approximations():
    assert fs.jacobian_sparsity(lambda x: fnp.cumsum(x), X6).nnz == 36  # whole line
    assert fs.jacobian_sparsity(lambda x: x[fnp.argmax(x)] + 0 * x, X6).nnz == 36


def test_unknown_primitive_is_conservative():
    p = fe.Primitive("test_sparse_opaque")
    p.def_impl(lambda x: x[::-1] * 1.0)
    p.def_abstract_eval(lambda x: fe.ShapedArray(x.shape, x.dtype))
    P = fs.jacobian_sparsity(lambda x: p.bind(fnp.sin(x[:3])), X6).toarray()
    want = np.zeros((3, 6), bool)
    want[:, :3] = True
    np.testing.assert_array_equal(P, want)


def test_pytrees_and_integer_arguments():
    def f(a, i, b):
        return {"u": a * b[0], "v": fnp.sum(b) + a[i]}
    P = fs.jacobian_sparsity(f, np.ones(2), 1, np.ones(3))
    # rows: u (2), v (1); columns: a (2), b (3), the integer i has none
    want = np.array([[1, 0, 1, 0, 0], [0, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    np.testing.assert_array_equal(P.toarray(), want)


HESS = [
    ("chain", lambda x: fnp.sum(x[1:] ** 2 * x[:-1]) + fnp.sum(fnp.sin(x))),
    ("separable", lambda x: fnp.sum(fnp.exp(x) * 3.0)),
    ("linear_part", lambda x: fnp.sum(x * 2.0) + x[0] * x[5]),
    ("stencil_energy", lambda x: fnp.sum(lap(x) ** 2)),
]


@pytest.mark.parametrize("name,f", HESS, ids=[h[0] for h in HESS])
def test_hessian_patterns_exact(name, f):
    P = fs.hessian_sparsity(f, X6).toarray()
    np.testing.assert_array_equal(P, np.asarray(fxad.hessian(f)(X6)) != 0)
    np.testing.assert_array_equal(P, P.T)


def test_hessian_falls_back_through_while_loop():
    def f(x):
        return fnp.sum(lax.while_loop(lambda s: s[1] < 2, lambda s: (s[0] * s[0], s[1] + 1),
                                      (x[:3], 0))[0]) + fnp.sum(x[3:] ** 3)
    P = fs.hessian_sparsity(f, X6).toarray()
    assert not np.any((np.asarray(fxad.hessian(f)(X6)) != 0) & ~P)


def test_detection_in_the_small_and_large():
    n = 10_000
    P = fs.jacobian_sparsity(lambda x: fnp.exp(lap(x)) * x ** 2, np.ones(n))
    assert P.nnz == 3 * n - 2


# the public faces (fxad.api is what `fxad.grad` & co. are re-exported from)
ALLOWED = {"fxad", "fxad.extend", "fxad.api", "fxad.numpy", "fxad.errors", "fxad.tree_util",
           "fxad.flatten_util"}


def test_sparse_uses_public_api_only():
    root = pathlib.Path(fs.__file__).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                mod = node.module or ""
                if node.level == 1:  # within fxad.sparse
                    continue
                target = "fxad" + ("." + mod if mod else "")
                assert target in ALLOWED, f"{path.name} imports {target}"
                for a in node.names:
                    assert not a.name.startswith("_"), f"{path.name} imports {a.name}"
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) \
                    else [node.module]
                for nm in names:
                    assert not nm.startswith("fxad") or nm in ALLOWED, nm


def test_a_handler_that_cannot_apply_is_conservative(monkeypatch):
    from fxad.sparse import detect

    def broken(interp, eqn, ins):
        raise ValueError("labels refused")
    monkeypatch.setitem(detect.__dict__, "_move", broken)
    P = fs.jacobian_sparsity(lambda x: x[::-1][:3] * 2.0, X6).toarray()
    want = np.zeros((3, 6), bool)
    want[:, :] = True
    np.testing.assert_array_equal(P, want)


def test_callbacks_are_not_run_by_the_analysis():
    calls = []

    def cb(v):
        calls.append(1)
        return np.asarray(v) * 2

    def f(x):
        c = fxad.pure_callback(cb, fxad.ShapeDtypeStruct((2,), np.float64), np.ones(2))
        return x[:2] * c
    closed_calls = len(calls)
    P = fs.jacobian_sparsity(f, X6)
    assert len(calls) == closed_calls and P.nnz == 2

"""fxad.sparse.jacfwd / jacrev / hessian equal the dense derivatives: eagerly as scipy.sparse
matrices, under jit / vmap / grad as the values in the pattern's order."""
import numpy as np
import pytest
import scipy.sparse as sp

import fxad
import fxad.numpy as fnp
import fxad.sparse as fs

RNG = np.random.default_rng(1)


def lap(u):
    return fnp.concatenate([u[1:2] - 2 * u[:1], u[2:] - 2 * u[1:-1] + u[:-2],
                            u[-2:-1] - 2 * u[-1:]])


FUNS = [
    ("stencil", lambda x: fnp.sin(lap(x)) * x + x ** 2, RNG.uniform(0.1, 1, 9)),
    ("rect", lambda x: fnp.concatenate([x[:3] * x[3:6], fnp.sum(x.reshape(3, 3), 0)]),
     RNG.uniform(0.1, 1, 9)),
    ("matrix_in_out", lambda x: fnp.tanh(x @ x) * 2.0, RNG.uniform(0.1, 1, (3, 3))),
    ("dense_row", lambda x: x * fnp.sum(x ** 2), RNG.uniform(0.1, 1, 5)),
]


def _dense(f, x):
    J = np.asarray(fxad.jacfwd(f)(x))
    return J.reshape(-1, x.size)


@pytest.mark.parametrize("name,f,x", FUNS, ids=[q[0] for q in FUNS])
@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_sparse_jacobian_equals_dense(name, f, x, mode):
    jac = getattr(fs, mode)
    J = jac(f)(x)
    assert isinstance(J, sp.csr_array)
    np.testing.assert_allclose(J.toarray(), _dense(f, x), rtol=1e-13, atol=1e-14)
    P = fs.jacobian_sparsity(f, x)
    vals = fxad.jit(jac(f))(x)
    np.testing.assert_allclose(sp.csr_array((np.asarray(vals), P.indices, P.indptr),
                                            shape=P.shape).toarray(), _dense(f, x),
                               rtol=1e-13, atol=1e-14)
    assert jac(f, format="csc")(x).format == "csc"


def test_user_pattern_and_vmap_grad():
    f, x = FUNS[0][1], FUNS[0][2]
    P = sp.diags([1, 1, 1], [-1, 0, 1], shape=(9, 9), dtype=bool)
    np.testing.assert_allclose(fs.jacfwd(f, sparsity=P)(x).toarray(), _dense(f, x),
                               rtol=1e-13)
    xs = np.stack([x, x * 0.5])
    got = fxad.vmap(fs.jacfwd(f, sparsity=P))(xs)
    for k in range(2):
        want = _dense(f, xs[k])[P.toarray()]
        np.testing.assert_allclose(np.asarray(got[k]), want, rtol=1e-13)
    # the values are differentiable: d/dx sum(J) matches the dense path
    g = fxad.grad(lambda v: fnp.sum(fs.jacfwd(f, sparsity=P)(v)))(x)
    np.testing.assert_allclose(g, fxad.grad(lambda v: fnp.sum(fxad.jacfwd(f)(v)))(x),
                               rtol=1e-12)


HESS = [
    ("chain", lambda x: fnp.sum(x[1:] ** 2 * x[:-1]) + fnp.sum(fnp.sin(x)),
     RNG.uniform(0.1, 1, 8)),
    ("energy", lambda x: fnp.sum(lap(x) ** 2) + fnp.sum(fnp.exp(x)), RNG.uniform(0.1, 1, 8)),
    ("arrow", lambda x: x[0] * fnp.sum(x ** 2) + fnp.sum(fnp.cos(x)), RNG.uniform(0.1, 1, 8)),
    ("matrix", lambda x: fnp.sum(fnp.tanh(x * x.T)), RNG.uniform(0.1, 1, (3, 3))),
]


@pytest.mark.parametrize("name,f,x", HESS, ids=[q[0] for q in HESS])
def test_sparse_hessian_equals_dense(name, f, x):
    H = fs.hessian(f)(x)
    want = np.asarray(fxad.hessian(f)(x)).reshape(x.size, x.size)
    np.testing.assert_allclose(H.toarray(), want, rtol=1e-12, atol=1e-14)
    P = fs.hessian_sparsity(f, x)
    vals = fxad.jit(fs.hessian(f))(x)
    np.testing.assert_allclose(np.asarray(vals), want[P.toarray()], rtol=1e-12, atol=1e-14)


def test_errors_name_the_fix():
    f = FUNS[0][1]
    x = FUNS[0][2]
    with pytest.raises(fxad.errors.FxadValueError, match="'auto' or a pattern"):
        fs.jacfwd(f, sparsity="dense")(x)
    with pytest.raises(fxad.errors.FxadValueError, match="shape"):
        fs.jacfwd(f, sparsity=np.ones((3, 3), bool))(x)
    with pytest.raises(fxad.errors.FxadTypeError, match="real float"):
        fs.jacfwd(lambda v: v * 2)(np.arange(3))
    with pytest.raises(fxad.errors.FxadTypeError, match="one argument position"):
        fs.jacfwd(f, argnums=(0,))(x)

"""fxad.laplacian, weighted_laplacian, biharmonic: the methods agree with trace(hessian) and
with each other, compose with grad, vmap and jit; the stochastic estimator is unbiased."""
from __future__ import annotations

import numpy as np
import pytest

import fxad
import fxad.numpy as jnp
from fxad import lax
from fxad.errors import FxadValueError

RNG = np.random.default_rng(3)
W1, B1, W2 = RNG.standard_normal((4, 6)), RNG.standard_normal(6), RNG.standard_normal((6, 2))
X = RNG.standard_normal(4)
METHODS = ["nested", "taylor", "collapsed"]


def mlp(x):
    return jnp.tanh(jnp.tanh(x @ W1 + B1) @ W2)


FUNCTIONS = [
    ("mlp (vector output)", mlp),
    ("scalar", lambda x: jnp.sum(jnp.sin(x) ** 3 * jnp.exp(-x * x)) + jnp.prod(x)),
    ("pytree output", lambda x: {"a": jnp.sum(jnp.log1p(x * x)), "b": (x * jnp.cos(x),)}),
    ("matrix argument", lambda m: jnp.sum(jnp.tanh(m @ m.T))),
    ("control flow", lambda x: lax.fori_loop(0, 2, lambda i, c: jnp.sin(c) * x, x).sum()
     + lax.cond(x[0] > 0, jnp.sum, lambda y: jnp.sum(y ** 3), x)),
    ("linear", lambda x: 3.0 * x + 1.0),
    ("complex intermediates", lambda x: jnp.sum(jnp.real(jnp.exp(1j * x) * x) ** 2)
     + jnp.sum(jnp.abs(x + 0j))),
]


def _trace_of_hessian(f, x):
    h = fxad.hessian(f)(x)
    n = x.size
    return fxad.tree_util.tree_map(
        lambda t: np.trace(np.reshape(t, np.shape(t)[:np.ndim(t) - 2 * x.ndim] + (n, n)),
                           axis1=-2, axis2=-1), h)


def _close(a, b, rtol=1e-12):
    for u, v in zip(fxad.tree_util.tree_leaves(a), fxad.tree_util.tree_leaves(b)):
        assert np.shape(u) == np.shape(v)
        np.testing.assert_allclose(u, v, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name,f", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_every_method_is_the_trace_of_the_hessian(name, f, method):
    x = RNG.standard_normal((3, 2)) if name == "matrix argument" else X
    _close(fxad.laplacian(f, method=method)(x), _trace_of_hessian(f, x))


@pytest.mark.parametrize("method", METHODS)
def test_argnums_and_float32(method):
    f = lambda a, x: jnp.sum(jnp.sin(a * x))
    got = fxad.laplacian(f, argnums=1, method=method)(2.0, X.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.sum(-4.0 * np.sin(2.0 * X)), rtol=1e-5)


@pytest.mark.parametrize("method", METHODS)
def test_grad_of_a_laplacian_loss_agrees_across_methods(method):
    """A physics-informed loss: gradient in the weights of (Laplacian - source)^2."""
    def loss(w, x):
        u = lambda y: jnp.sum(jnp.tanh(y @ w))
        return (fxad.laplacian(u, method=method)(x) - 1.0) ** 2
    want = fxad.grad(lambda w, x: (np.trace(fxad.hessian(
        lambda y: jnp.sum(jnp.tanh(y @ w)))(x)) - 1.0) ** 2)(W1, X)
    np.testing.assert_allclose(fxad.grad(loss)(W1, X), want, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_vmap_and_jit(method):
    xs = RNG.standard_normal((3, 4))
    lap = fxad.laplacian(mlp, method=method)
    want = np.stack([_trace_of_hessian(mlp, x) for x in xs])
    _close(fxad.vmap(lap)(xs), want)
    _close(fxad.jit(fxad.vmap(lap))(xs), want)


def test_stochastic_estimator_is_unbiased():
    """Rademacher and Gaussian directions: the mean over a fixed key's samples is within
    four standard errors of the exact Laplacian, and every method gives the same estimate."""
    f = lambda x: jnp.sum(jnp.sin(x) * jnp.roll(x, 1)) + jnp.sum(jnp.tanh(x @ W1))
    exact = fxad.laplacian(f)(X)
    key = fxad.random.key(0)
    for dist in ("rademacher", "normal"):
        ests = fxad.vmap(lambda k: fxad.laplacian(f, samples=1, key=k,
                                                  distribution=dist)(X))(
            fxad.random.split(key, 1000))
        mean, se = np.mean(ests), np.std(ests) / np.sqrt(len(ests))
        assert abs(mean - exact) < 4 * se, (dist, mean, exact, se)
        batch = [fxad.laplacian(f, method=m, samples=50, key=key, distribution=dist)(X)
                 for m in METHODS]
        np.testing.assert_allclose(batch, batch[0], rtol=1e-12)


@pytest.mark.parametrize("method", ["taylor", "collapsed"])
def test_weighted_laplacian_is_the_trace_of_c_times_the_hessian(method):
    a = RNG.standard_normal((4, 4))
    c = a + a.T  # indefinite: both signs of eigenvalues
    f = lambda x: jnp.sum(jnp.sin(x) * jnp.exp(x[::-1]))
    want = np.trace(c @ fxad.hessian(f)(X))
    np.testing.assert_allclose(fxad.weighted_laplacian(f, c, method=method)(X), want,
                               rtol=1e-12)


def test_biharmonic():
    f = lambda x: jnp.sum(jnp.sin(x) * x[0] ** 3)
    x = X[:3]
    h4 = fxad.hessian(fxad.hessian(f))(x)
    want = np.einsum("iijj->", h4)
    for m in ("taylor", "collapsed"):
        np.testing.assert_allclose(fxad.biharmonic(f, method=m)(x), want, rtol=1e-11)


@pytest.mark.parametrize("call,match", [
    (lambda: fxad.laplacian(mlp, method="fast"), "method must be one of"),
    (lambda: fxad.laplacian(mlp, samples=3), "needs a key"),
    (lambda: fxad.weighted_laplacian(mlp, np.ones((4, 3))), "symmetric square"),
])
def test_errors(call, match):
    with pytest.raises(FxadValueError, match=match):
        call()


def test_a_pytree_argument_is_refused_with_the_fix():
    with pytest.raises(fxad.errors.FxadTypeError, match="ravel_pytree"):
        fxad.laplacian(lambda p: jnp.sum(p["a"] ** 3))({"a": X})

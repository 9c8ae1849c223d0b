"""Nothing fxad returns shares memory with anything fxad keeps (caches, constants, residuals,
closed-over arrays): every kind of returned array is updated in place, and the next call must
give the same answer as before. Closed-over arrays are snapshotted when a program is traced
(JAX's rule), for every program that outlives its call."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.tree_util import tree_leaves

X = np.array([0.5, -1.5, 2.0])
W = np.array([1.0, 2.0, 3.0])  # tests that close over an array use a copy of it


def _clobber(tree):
    """Overwrite every array leaf of a result in place (as `H += 10 * I` would)."""
    n = 0
    for leaf in tree_leaves(tree):
        if isinstance(leaf, np.ndarray) and leaf.flags.writeable:
            leaf[...] = 12345.0 if leaf.dtype.kind in "fc" else 7
            n += 1
    return n


def _same(a, b):
    la, lb = tree_leaves(a), tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def _quadratic(x):
    return fnp.sum(x ** 2) + fnp.sum(3.0 * x)


def _linear(x):
    return fnp.sum(3.0 * x)


def _const_branches(x):
    return lax.cond(x[0] > 0, lambda v: v * 0.0 + np.arange(3.0),
                    lambda v: v * 0.0 + np.ones(3), x)


# Each case builds a fresh function (so its caches are empty) and returns a caller.
CASES = {
    "jit(grad) folded to a constant": lambda: (lambda f: lambda: f(X))(
        fxad.jit(fxad.grad(_linear))),
    "jit(hessian) folded to a constant": lambda: (lambda f: lambda: f(X))(
        fxad.jit(fxad.hessian(_quadratic))),
    "jit(value_and_grad)": lambda: (lambda f: lambda: f(X))(
        fxad.jit(fxad.value_and_grad(_quadratic))),
    "jit identity": lambda: (lambda f: lambda: f(X))(fxad.jit(lambda x: x)),
    "jit view of input": lambda: (lambda f: lambda: f(X))(
        fxad.jit(lambda x: (x.reshape(3, 1), x.T, x[1:], lax.stop_gradient(x)))),
    "jit returns a closed-over array": lambda: (lambda w: (lambda f: lambda: f(X))(
        fxad.jit(lambda x: (w, w.reshape(1, 3), x + 0.0))))(W.copy()),
    "jit returns a folded constant": lambda: (lambda w: (lambda f: lambda: f(X))(
        fxad.jit(lambda x: (w * 2.0, x))))(W.copy()),
    "jit with a static argument": lambda: (lambda f: lambda: f(X, 2))(
        fxad.jit(lambda x, n: (x * n, np.ones(n)), static_argnums=1)),
    "jit of cond with constant branches": lambda: (lambda f: lambda: f(X))(
        fxad.jit(_const_branches)),
    "eager cond with constant branches": lambda: lambda: _const_branches(X),
    "jit of scan with a constant carry": lambda: (lambda f: lambda: f(X))(fxad.jit(
        lambda x: lax.scan(lambda c, xi: (c * 0.0 + np.ones(3), xi * 2.0), x, x))),
    "jit of fori_loop": lambda: (lambda f: lambda: f(X))(fxad.jit(
        lambda x: lax.fori_loop(0, 3, lambda i, c: c * 0.0 + np.full(3, 4.0), x))),
    "jit of while_loop": lambda: (lambda f: lambda: f(X))(fxad.jit(
        lambda x: lax.while_loop(lambda c: c[0] < 3.0, lambda c: c + 1.0, x))),
    "vmap(jit(grad))": lambda: (lambda f: lambda: f(np.stack([X, 2 * X])))(
        fxad.vmap(fxad.jit(fxad.grad(_linear)))),
    "grad(jit)": lambda: (lambda f: lambda: fxad.grad(lambda x: fnp.sum(f(x)))(X))(
        fxad.jit(lambda x: 3.0 * x)),
    "jacfwd, jacrev, hessian": lambda: lambda: (
        fxad.jacfwd(lambda x: 2.0 * x)(X), fxad.jacrev(lambda x: 2.0 * x)(X),
        fxad.hessian(_quadratic)(X)),
    "grad and value_and_grad": lambda: lambda: (
        fxad.grad(_linear)(X), fxad.value_and_grad(_quadratic)(X)),
    # Eager transformations may return the caller's own inputs (as NumPy's asarray does),
    # so these get fresh inputs per call; what they must not return is anything fxad keeps.
    "jvp": lambda: lambda: fxad.jvp(lambda x: (x, 2.0 * x), (X.copy(),), (W.copy(),)),
    "vmap": lambda: lambda: fxad.vmap(lambda x: (x, x * 2.0))(np.stack([X, W])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_updating_a_result_in_place_changes_no_later_result(name):
    call = CASES[name]()
    first = call()
    want = [np.array(leaf, copy=True) for leaf in tree_leaves(first)]
    assert _clobber(first) > 0 or not any(isinstance(v, np.ndarray) for v in want)
    _same(call(), want)
    _same(call(), want)  # jit's fast path (the second call) as well


def test_jit_results_share_no_memory_with_inputs_or_constants():
    w = W.copy()
    f = fxad.jit(lambda x: (x, x.reshape(3, 1), w, x[::2]))
    x = X.copy()
    for _ in range(2):
        for out in f(x):
            assert not np.shares_memory(out, x) and not np.shares_memory(out, w)


def test_debug_nans_path_also_returns_copies():
    f = fxad.jit(fxad.grad(_linear))
    with fxad.debug_nans():
        g = f(X)
        g[...] = 0.0
        np.testing.assert_array_equal(f(X), np.full(3, 3.0))


# --- closed-over arrays: one rule, snapshot at trace time --------------------------------------

@pytest.mark.parametrize("body", [lambda x, w: x * w, lambda x, w: x + w * 2.0,
                                  lambda x, w: fnp.sum(w) * x, lambda x, w: x * 0.0 + w],
                         ids=["x*W", "x+W*2", "sum(W)*x", "returns W"])
def test_jit_snapshots_closed_over_arrays_when_traced(body):
    w = np.ones(3)
    f = fxad.jit(lambda x: body(x, w))
    before = f(X)
    w[:] = 0.0  # a later change to the closed-over array is not seen (as in JAX)
    np.testing.assert_array_equal(f(X), before)
    np.testing.assert_array_equal(f.lower(X).jaxpr(X)[0], before)


def test_make_jaxpr_and_linear_transpose_snapshot_their_constants():
    w = np.ones(3)
    jaxpr = fxad.make_jaxpr(lambda x: x * w)(X)
    f_t = fxad.linear_transpose(lambda x: x * w, X)
    w[:] = 5.0
    np.testing.assert_array_equal(jaxpr(X)[0], X)
    np.testing.assert_array_equal(f_t(np.ones(3))[0], np.ones(3))


def test_vjp_keeps_its_residuals_when_inputs_and_outputs_are_updated():
    x = X.copy()
    out, f_vjp = fxad.vjp(lambda x: fnp.exp(x) * x, x)  # exp(x) is both output part and residual
    want = f_vjp(np.ones(3))[0].copy()
    x[:] = 100.0  # the input was a residual (the product's other factor)
    out[:] = 100.0
    g = f_vjp(np.ones(3))[0]
    np.testing.assert_allclose(g, want, rtol=0, atol=0)
    g[:] = 0.0
    np.testing.assert_allclose(f_vjp(np.ones(3))[0], want, rtol=0, atol=0)


def test_linearize_keeps_its_residuals_when_inputs_and_outputs_are_updated():
    x = X.copy()
    y, f_jvp = fxad.linearize(lambda x: fnp.sin(x) * x, x)
    want = f_jvp(np.ones(3)).copy()
    x[:] = 7.0
    y[:] = 7.0
    t = f_jvp(np.ones(3))
    np.testing.assert_array_equal(t, want)
    t[:] = 0.0
    np.testing.assert_array_equal(f_jvp(np.ones(3)), want)

"""What users expect without asking: copies of traced values keep their derivatives; caches
are safe under threads and keep no user objects alive; keyword and default arguments work
through custom rules, checkpoint and jit's static arguments; very deep pytrees flatten."""
import copy
import gc
import weakref

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.tree_util import tree_flatten, tree_map, tree_structure, tree_unflatten

from tests.racing import race

X = np.array([0.5, -1.5, 2.0])


# --- copies of traced values -------------------------------------------------------------------

@pytest.mark.parametrize("cp", [copy.copy, copy.deepcopy, lambda x: copy.deepcopy([x])[0]],
                         ids=["copy", "deepcopy", "deepcopy of a list"])
def test_copies_of_traced_values_are_the_same_traced_value(cp):
    f = lambda x: fnp.sum(cp(x) ** 2)
    np.testing.assert_allclose(fxad.grad(f)(X), 2 * X)
    np.testing.assert_allclose(fxad.jvp(lambda x: cp(x) * 3.0, (X,), (X,))[1], 3 * X)
    np.testing.assert_allclose(fxad.jit(lambda x: cp(x) + 1.0)(X), X + 1.0)
    np.testing.assert_allclose(fxad.vmap(lambda x: cp(x) * 2.0)(X), 2 * X)
    np.testing.assert_allclose(fxad.hessian(f)(X), 2 * np.eye(3))
    got = fxad.jit(fxad.grad(f))(X)
    assert type(got) is np.ndarray
    np.testing.assert_allclose(got, 2 * X)


def test_a_traced_value_cannot_be_pickled():
    import pickle
    with pytest.raises(TypeError, match="cannot be pickled"):
        fxad.grad(lambda x: pickle.dumps(x) and x)(1.0)


# --- threads ---------------------------------------------------------------------------------

def test_one_jit_function_shared_by_threads_with_more_signatures_than_its_cache(monkeypatch):
    monkeypatch.setattr(type(fxad.jit(lambda x: x)), "CACHE_SIZE", 4)  # evictions all the time
    f = fxad.jit(lambda x, scale=2.0: fnp.sum(x * scale))
    xs = [np.linspace(0.0, 1.0, n) for n in range(1, 7)]

    def work(offset):
        for k in range(1500):
            x = xs[(k + offset) % len(xs)]
            # by keyword (the signature cache) and by position (the fast path's)
            got = f(x=x) if k % 2 else f(x, 3.0)
            assert got == np.sum(x * (2.0 if k % 2 else 3.0))
    race(work, range(8))
    assert len(f.cache) <= 4


# --- caches keep no user objects alive -------------------------------------------------------

class _Big:
    """Something a user's closure captures; we watch whether fxad keeps it alive."""
    def __init__(self):
        self.data = np.ones(3)


def _collected(make_and_use):
    big = _Big()
    ref = weakref.ref(big)
    make_and_use(big)
    del big
    gc.collect()
    return ref() is None


def test_checkpoint_keeps_no_user_closure_alive():
    def use(big):
        f = fxad.checkpoint(lambda x: fnp.sum(fnp.sin(x) * big.data))
        fxad.grad(f)(X)
    assert _collected(use)


def test_custom_rules_inside_loops_keep_no_user_closure_alive():
    def use(big):
        @fxad.custom_jvp
        def g(x):
            return fnp.sin(x) * big.data

        @g.defjvp
        def g_jvp(p, t):
            return g(p[0]), fnp.cos(p[0]) * big.data * t[0]

        fxad.grad(lambda x: fnp.sum(lax.scan(lambda c, _: (g(c), None), x, None,
                                             length=3)[0]))(X)
    assert _collected(use)


def test_jit_keeps_nothing_alive_once_the_jitted_function_is_gone():
    def use(big):
        f = fxad.jit(lambda x: x * big.data)
        f(X)
        fxad.grad(lambda x: fnp.sum(f(x)))(X)
    assert _collected(use)


def test_derived_program_caches_are_bounded():
    f = fxad.jit(lambda x: fnp.sum(x * 2.0))
    for n in range(1, 200):
        f(np.ones(n))
    assert len(f.cache) <= f.CACHE_SIZE and len(f.fast) <= f.CACHE_SIZE


# --- keyword and default arguments -------------------------------------------------------------

def _softclip_jvp_rule():
    @fxad.custom_jvp
    def softclip(x, scale=2.0, shift=0.0):
        return scale * fnp.tanh(x / scale) + shift

    @softclip.defjvp
    def _(primals, tangents):
        x, scale, shift = primals
        tx, ts, tsh = tangents
        y = softclip(x, scale, shift)
        dy = (1 - fnp.tanh(x / scale) ** 2) * tx
        return y, dy + tsh
    return softclip


def _softclip_vjp_rule():
    @fxad.custom_vjp
    def softclip(x, scale=2.0):
        return scale * fnp.tanh(x / scale)

    def fwd(x, scale=2.0):
        return softclip(x, scale), (x, scale)

    def bwd(res, ct):
        x, scale = res
        return (ct * (1 - fnp.tanh(x / scale) ** 2), fnp.zeros_like(scale))
    softclip.defvjp(fwd, bwd)
    return softclip


def _expected(x, scale):
    return 1 - np.tanh(x / scale) ** 2


@pytest.mark.parametrize("make", [_softclip_jvp_rule, _softclip_vjp_rule], ids=["jvp", "vjp"])
def test_custom_rules_take_keyword_and_default_arguments(make):
    f = make()
    g = fxad.grad(lambda x: fnp.sum(f(x)))(X)
    np.testing.assert_allclose(g, _expected(X, 2.0))
    g = fxad.grad(lambda x: fnp.sum(f(x, scale=3.0)))(X)
    np.testing.assert_allclose(g, _expected(X, 3.0))
    g = fxad.grad(lambda x: fnp.sum(f(scale=4.0, x=x)))(X)
    np.testing.assert_allclose(g, _expected(X, 4.0))
    np.testing.assert_allclose(fxad.jit(lambda x: f(x, scale=3.0))(X), 3.0 * np.tanh(X / 3.0))
    with pytest.raises(TypeError, match="softclip"):
        f(X, bogus=1.0)


def test_checkpoint_takes_keyword_and_default_arguments():
    def block(x, w=2.0, power=2):
        return fnp.sum((w * fnp.sin(x)) ** power)
    f = fxad.checkpoint(block)
    for call, w in [(lambda x: f(x), 2.0), (lambda x: f(x, w=3.0), 3.0),
                    (lambda x: f(w=0.5, x=x), 0.5)]:
        np.testing.assert_allclose(fxad.grad(call)(X),
                                   2 * w ** 2 * np.sin(X) * np.cos(X), rtol=1e-12)


def test_jit_static_arguments_by_position_or_keyword():
    calls = []

    def f(x, n, scale=1.0):
        calls.append(n)
        return x * n * scale
    g = fxad.jit(f, static_argnames="n")
    np.testing.assert_allclose(g(X, 3), 3 * X)  # static_argnames given by position
    np.testing.assert_allclose(g(X, n=3), 3 * X)
    h = fxad.jit(f, static_argnums=1)
    np.testing.assert_allclose(h(X, n=4), 4 * X)  # static_argnums given by keyword
    np.testing.assert_allclose(h(X, 4, scale=2.0), 8 * X)
    # n was never traced (a traced n could not be used as `calls.append(n)` meaningfully)
    assert all(type(n) is int for n in calls)


@pytest.mark.parametrize("kw, error, match", [
    (dict(static_argnums=5), ValueError, "takes 1 positional argument"),
    (dict(static_argnums=-2), ValueError, "takes 1 positional argument"),
    (dict(static_argnames="y"), ValueError, "not a named parameter"),
    (dict(static_argnums=1.0), TypeError, "must be ints"),
])
def test_jit_rejects_static_arguments_that_do_not_exist(kw, error, match):
    with pytest.raises(error, match=match):
        fxad.jit(lambda x: x, **kw)


def test_jit_static_argnums_beyond_a_varargs_call():
    f = fxad.jit(lambda *args: args[0] * 2.0, static_argnums=2)
    with pytest.raises(ValueError, match="passed 1 positional"):
        f(X)


def test_jit_of_a_method_binds_self():
    class Model:
        def __init__(self, w):
            self.w = w

        @fxad.jit
        def apply(self, x):
            return x * 2.0

        def calc(self, x):
            return x * self.w
        calc = fxad.jit(calc, static_argnums=0)

        def __hash__(self):
            return id(self)

    m = Model(3.0)
    np.testing.assert_allclose(m.apply(X), 2 * X)
    np.testing.assert_allclose(m.calc(X), 3 * X)
    assert "mul" in m.apply.lower(X).as_text() or "*" in m.apply.lower(X).as_text()


# --- deep pytrees ------------------------------------------------------------------------------

def test_pytrees_thousands_of_levels_deep():
    depth = 3000
    tree = X
    for i in range(depth):
        tree = [tree, float(i)] if i % 2 else {"a": tree, "b": (float(i),)}
    leaves, td = tree_flatten(tree)
    assert len(leaves) == depth + 1
    rebuilt = tree_unflatten(td, leaves)
    assert tree_structure(rebuilt) == td and hash(tree_structure(rebuilt)) == hash(td)
    assert len(repr(td)) > depth
    doubled = tree_map(lambda v: v * 2, tree)
    assert tree_flatten(doubled)[0][-1] == 2 * leaves[-1]

    def loss(t):
        inner = t
        for i in reversed(range(depth)):
            inner = inner[0] if i % 2 else inner["a"]
        return fnp.sum(inner ** 2)
    g = fxad.grad(loss)(tree)
    inner = g
    for i in reversed(range(depth)):
        inner = inner[0] if i % 2 else inner["a"]
    np.testing.assert_allclose(inner, 2 * X)
    np.testing.assert_allclose(fxad.jit(loss)(tree), np.sum(X ** 2))

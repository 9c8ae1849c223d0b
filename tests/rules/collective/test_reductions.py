"""psum, pmean, pmax, pmin, axis_index, axis_size under vmap(axis_name=...): the table's
cases (tests/rules/collective/_cases.py), nested names, the transpose convention, jit's
cache, errors."""
import numpy as np
import pytest

import fxad
from fxad import jit, lax, vmap
from fxad.errors import FxadValueError, UnboundAxisError

from ._cases import CASES, REDUCTIONS, _inputs, case_tests

test_case = case_tests([c for c in CASES if c[0] in REDUCTIONS])


def test_nested_names():
    X = _inputs((2,), 6).reshape(2, 3, 2)
    both = vmap(vmap(lambda x: lax.psum(x, ("i", "j")), axis_name="j"), axis_name="i")(X)
    np.testing.assert_allclose(both, np.broadcast_to(X.sum((0, 1)), X.shape))
    inner = vmap(vmap(lambda x: lax.psum(x, "j"), axis_name="j"), axis_name="i")(X)
    np.testing.assert_allclose(inner, np.broadcast_to(X.sum(1, keepdims=True), X.shape))
    outer = vmap(vmap(lambda x: lax.pmean(x, "i"), axis_name="j"), axis_name="i")(X)
    np.testing.assert_allclose(outer, np.broadcast_to(X.mean(0, keepdims=True), X.shape))
    idx = vmap(vmap(lambda x: lax.axis_index(("i", "j")), axis_name="j"), axis_name="i")(X)
    np.testing.assert_array_equal(idx, np.arange(6).reshape(2, 3))
    sizes = vmap(vmap(lambda x: x * 0 + lax.axis_size(("i", "j")), axis_name="j"),
                 axis_name="i")(X)
    np.testing.assert_array_equal(sizes, np.full(X.shape, 6.0))
    # the same name nested: the inner binding shadows the outer (JAX's rule)
    shadow = vmap(vmap(lambda x: lax.psum(x, "i"), axis_name="i"), axis_name="i")(X)
    np.testing.assert_allclose(shadow, inner)


def test_psum_transpose_convention():
    """psum's transpose is psum: per index, the gradient of the sum over indices of each
    index's output (JAX's pmap convention), so pmap of grad equals grad of the summed map."""
    X = _inputs((), 4)
    got = vmap(fxad.grad(lambda x: lax.psum(x, "i") ** 2), axis_name="i")(X)
    want = fxad.grad(lambda X: vmap(lambda x: lax.psum(x, "i") ** 2, axis_name="i")(X).sum())(X)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(got, np.full(4, 4 * 2 * X.sum()))


def test_jit_cache_keeps_axis_sizes_apart():
    g = jit(lambda v: v * lax.psum(1.0, "i") + lax.all_gather(v, "i").sum(0))
    for n in (2, 4):
        X = _inputs((3,), n)
        np.testing.assert_allclose(vmap(g, axis_name="i")(X), X * n + X.sum(0))


def test_batched_bodies_keep_named_and_unnamed_axes_apart():
    """One body (a jit, a scan, a pmap) batched along the named axis and then, inside it,
    along an unnamed one: psum reduces over the named axis only. The batched programs are
    cached on the body, so the second batching must not reuse the first."""
    X = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    want = np.broadcast_to(X.sum(0) * np.array([1.0, 2.0])[:, None], (2, 2, 3))
    jf = jit(lambda v: lax.psum(v, "a"))
    sf = lambda v: lax.scan(lambda c, x: (c, lax.psum(x, "a")), 0.0, v[None])[1][0]  # noqa: E731
    pf = fxad.pmap(lambda v: lax.psum(v, "a"), axis_name="b")
    for f in (jf, sf, lambda v: pf(v[None])[0]):
        def g(x):
            f(x)  # batched along "a" first
            return vmap(f)(np.array([1.0, 2.0])[:, None] * x)  # then along an unnamed axis
        np.testing.assert_allclose(vmap(g, axis_name="a")(X), want, err_msg=str(f))


@pytest.mark.parametrize("call", [
    lambda: lax.psum(np.ones(2), "k"),
    lambda: lax.axis_index("k"),
    lambda: lax.axis_size("k"),
    lambda: vmap(lambda x: lax.all_gather(x, "k"), axis_name="i")(np.ones(3)),
    lambda: jit(lambda x: lax.pmean(x, "k"))(np.ones(3)),
    lambda: fxad.grad(lambda x: lax.psum(x, "k"))(1.0),
])
def test_unbound_axis_names_the_axis(call):
    with pytest.raises(UnboundAxisError, match="unbound axis name 'k'"):
        call()


@pytest.mark.parametrize("call,match", [
    (lambda: lax.psum(np.ones(2), "i", axis_index_groups=((0,), (1, 2))), "groups of one"),
    (lambda: lax.ppermute(np.ones(2), "i", ((0, 1), (1, 1))), "once as a destination"),
    (lambda: lax.psum_scatter(np.ones(2), "i"), "must be equal"),
    (lambda: lax.all_to_all(np.ones((2, 2)), "i", 0, 1), "must be equal"),
    (lambda: lax.psum(np.ones(2, bool), "i"), "take numbers"),
])
def test_bad_arguments(call, match):
    with pytest.raises((FxadValueError, fxad.errors.FxadTypeError), match=match):
        vmap(lambda x: call(), axis_name="i")(np.ones(3))

"""pmap and shard_map run in process: equal to vmap with the same axis name (the reference),
in every composition: grad of pmap, pmap of grad, jit around and inside, vmap of pmap, nested
maps, checkpoint and custom_vjp inside; shard_map's blocks against NumPy slicing."""
import numpy as np
import pytest

import fxad
from fxad import grad, jit, lax, pmap, shard_map, vmap
from fxad.errors import FxadValueError, UnboundAxisError
from fxad.sharding import Mesh, NamedSharding, P, make_mesh
from tests.rules.collective._cases import _inputs

_TOL = dict(rtol=1e-12, atol=1e-12)


def _model(w, x):
    return np.tanh(x @ w).sum() * lax.pmean(np.cos(x).sum(), "b")


def test_grad_of_pmap_and_pmap_of_grad():
    r = np.random.default_rng(0)
    W, X = r.normal(size=3), r.normal(size=(4, 5, 3))
    ref = vmap(grad(_model), in_axes=(None, 0), axis_name="b")(W, X)
    got = pmap(grad(_model), "b", in_axes=(None, 0))(W, X)
    np.testing.assert_allclose(got, ref, **_TOL)
    np.testing.assert_allclose(jit(pmap(grad(_model), "b", in_axes=(None, 0)))(W, X), ref,
                               **_TOL)
    total = lambda w, X: pmap(_model, "b", in_axes=(None, 0))(w, X).sum()  # noqa: E731
    want = grad(lambda w, X: vmap(_model, (None, 0), axis_name="b")(w, X).sum())(W, X)
    np.testing.assert_allclose(grad(total)(W, X), want, **_TOL)
    np.testing.assert_allclose(jit(grad(total))(W, X), want, **_TOL)
    # the shared argument's cotangent is the sum over indices of every index's gradient
    np.testing.assert_allclose(grad(total)(W, X), ref.sum(0), **_TOL)
    fxad.test_util.check_grads(lambda w: total(w, X), (W,), order=2)


def test_axes_and_static_arguments():
    r = np.random.default_rng(1)
    X, Y = r.normal(size=(2, 3)), r.normal(size=(2,))
    f = lambda x, y, k: x * y * k + lax.psum(x, "i")  # noqa: E731
    got = pmap(f, "i", in_axes=(1, None), out_axes=1, static_broadcasted_argnums=2)(X, Y, 3.0)
    want = vmap(lambda x, y: f(x, y, 3.0), in_axes=(1, None), out_axes=1, axis_name="i")(X, Y)
    np.testing.assert_allclose(got, want, **_TOL)
    tree = pmap(lambda d: {"s": lax.psum(d["a"], "i"), "t": d["b"]}, "i")(
        {"a": X, "b": 2 * X})
    np.testing.assert_allclose(tree["s"], np.broadcast_to(X.sum(0), X.shape), **_TOL)
    np.testing.assert_allclose(tree["t"], 2 * X, **_TOL)
    # no mapped input: axis_size
    np.testing.assert_array_equal(pmap(lambda: lax.axis_index("i"), "i", axis_size=3)(),
                                  np.arange(3))


def test_nested_pmaps_and_collectives_over_both():
    Y = _inputs((2,), 6).reshape(2, 3, 2)
    h = lambda x: lax.psum(x, ("i", "j")) * lax.axis_index("j") + lax.pmax(x, "i")  # noqa
    ref = vmap(vmap(h, axis_name="j"), axis_name="i")
    np.testing.assert_allclose(pmap(pmap(h, "j"), "i")(Y), ref(Y), **_TOL)
    np.testing.assert_allclose(pmap(vmap(h, axis_name="j"), "i")(Y), ref(Y), **_TOL)
    L = lambda m: lambda Y: (m(Y) ** 2).sum()  # noqa: E731
    np.testing.assert_allclose(grad(L(pmap(pmap(h, "j"), "i")))(Y), grad(L(ref))(Y), **_TOL)


def test_checkpoint_and_custom_vjp_inside():
    @fxad.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda _, g: (np.clip(g, -0.1, 0.1),))

    def f(x):
        y = fxad.checkpoint(lambda x: np.sin(x) * lax.psum(x, "i"))(x)
        return clip_grad(y).sum()
    X = _inputs((3,), 4)
    want = vmap(grad(f), axis_name="i")(X)
    np.testing.assert_allclose(pmap(grad(f), "i")(X), want, **_TOL)
    assert np.abs(want).max() > 0
    total = lambda X: pmap(f, "i")(X).sum()  # noqa: E731
    np.testing.assert_allclose(grad(total)(X),
                               grad(lambda X: vmap(f, axis_name="i")(X).sum())(X), **_TOL)


def test_staged_once_per_signature():
    calls = []

    def f(x):
        calls.append(1)
        return lax.psum(x, "i")
    p = pmap(f, "i")
    for _ in range(3):
        p(np.ones((2, 3)))
    assert len(calls) == 1
    p(np.ones((4, 3)))
    assert len(calls) == 2


@pytest.mark.parametrize("call,err,match", [
    (lambda: pmap(lambda x, y: x + y)(np.ones((2, 3)), np.ones((3, 3))), FxadValueError,
     "inconsistent sizes"),
    (lambda: pmap(lambda x: lax.psum(x, "j"), "i")(np.ones((2, 3))), UnboundAxisError,
     "unbound axis name 'j'"),
    (lambda: pmap(lambda x: lax.psum(x, "i"))(np.ones((2, 3))), UnboundAxisError,
     "unbound axis name 'i'"),
    (lambda: pmap(lambda x: x, "i", out_axes=None)(np.ones((2, 3))), FxadValueError,
     "out_axes=None for output leaf 0, which may differ"),
    (lambda: pmap(lambda: 1.0)(), FxadValueError, "axis_size"),
    (lambda: pmap(lambda x, s: x * s, static_broadcasted_argnums=2)(np.ones((2, 3)), 2.0),
     FxadValueError, r"static_broadcasted_argnums \[2\] out of range"),
    (lambda: pmap(lambda: 1.0, static_broadcasted_argnums=0)(), FxadValueError, "out of range"),
    (lambda: pmap(lambda x: x, axis_size=3)(np.ones((2, 3))), FxadValueError,
     "axis_size=3 but the mapped axis has size 2"),
])
def test_pmap_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()


# --- shard_map ---------------------------------------------------------------------------------

MESH = make_mesh((2, 3), ("x", "y"))
A = np.random.default_rng(3).normal(size=(4, 6))


def _blocks(a):  # block (ix, iy) of A split (x over rows, y over columns)
    return a.reshape(2, 2, 3, 2).transpose(0, 2, 1, 3)  # (x, y, 2, 2)


SHARD_CASES = [
    ("psum_x", lambda a: lax.psum(a, "x"), P("x", "y"), P(None, "y"),
     lambda A: A[:2] + A[2:]),
    ("blocks", lambda a: a.sum(1, keepdims=True), P("x", "y"), P("x", "y"),
     lambda A: A.reshape(4, 3, 2).sum(2)),
    ("flat_both", lambda a: lax.psum(a.sum(), ("x", "y")), P(None, ("x", "y")), P(),
     lambda A: A.sum()),
    ("index", lambda a: a * lax.axis_index("y") + lax.axis_index("x"), P("x", "y"),
     P("x", "y"), lambda A: A * np.repeat(np.arange(3), 2) + np.repeat(np.arange(2), 2)[:, None]),
    ("replicated_in", lambda a: a * lax.axis_size("x"), P(), P(), lambda A: 2 * A),
    ("gather", lambda a: lax.all_gather(a, "y", axis=1, tiled=True), P("x", "y"), P("x"),
     lambda A: A),
    ("transpose_y", lambda a: lax.pmean(a, "y"), P(None, "y"), P(None, "y"),
     lambda A: np.tile(A.reshape(4, 3, 2).mean(1), (1, 3))),
]


@pytest.mark.parametrize("name,f,ins,outs,ref", SHARD_CASES, ids=[c[0] for c in SHARD_CASES])
def test_shard_map_against_numpy(name, f, ins, outs, ref):
    sm = shard_map(f, mesh=MESH, in_specs=ins, out_specs=outs)
    np.testing.assert_allclose(sm(A), ref(A), **_TOL)
    np.testing.assert_allclose(jit(sm)(A), ref(A), **_TOL)
    fxad.test_util.check_grads(sm, (A,), order=1)


def test_shard_map_grad_and_trees():
    mesh = Mesh(np.arange(4), ("d",))
    W, X = np.random.default_rng(4).normal(size=3), np.random.default_rng(5).normal(size=(8, 3))

    def step(w, x):  # a data-parallel gradient: local gradient, averaged
        return lax.pmean(grad(lambda w: ((x @ w) ** 2).mean())(w), "d")
    sm = shard_map(step, mesh=mesh, in_specs=(P(), P("d")), out_specs=P())
    np.testing.assert_allclose(sm(W, X), grad(lambda w: ((X @ w) ** 2).mean())(W), **_TOL)
    out = shard_map(lambda t: {"a": t["a"] * 2, "b": lax.psum(t["b"], "d")}, mesh=mesh,
                    in_specs=({"a": P("d"), "b": P("d")},), out_specs={"a": P("d"), "b": P()})(
        {"a": X, "b": X})
    np.testing.assert_allclose(out["a"], 2 * X, **_TOL)
    np.testing.assert_allclose(out["b"], X.reshape(4, 2, 3).sum(0), **_TOL)
    assert NamedSharding(mesh, P("d")).spec == P("d")


@pytest.mark.parametrize("kw,match", [
    (dict(in_specs=P("z"), out_specs=P()), "not an axis of the mesh"),
    (dict(in_specs=P("x", "x"), out_specs=P()), "twice"),
    (dict(in_specs=P(None, None, "x"), out_specs=P()), "rank 2"),
    (dict(in_specs=P(("x", "y")), out_specs=P()), "not a multiple"),
    (dict(in_specs="x", out_specs=P()), "PartitionSpec"),
])
def test_shard_map_errors(kw, match):
    with pytest.raises(FxadValueError, match=match):
        shard_map(lambda a: a, mesh=MESH, **kw)(A)


def test_closing_over_values_of_enclosing_transformations():
    X, w = _inputs((3,), 4), 0.7
    f = lambda w: pmap(lambda x: np.sin(x * w) * lax.psum(x, "i"), "i")(X).sum()  # noqa
    g = lambda w: vmap(lambda x: np.sin(x * w) * lax.psum(x, "i"), axis_name="i")(X).sum()  # noqa
    np.testing.assert_allclose(grad(f)(w), grad(g)(w), **_TOL)
    np.testing.assert_allclose(vmap(f)(np.array([0.1, 0.2])), vmap(g)(np.array([0.1, 0.2])),
                               **_TOL)
    fxad.test_util.check_grads(f, (w,), order=2)


def test_closed_over_arrays_are_snapshotted_as_jit_does():
    w = np.ones(3)
    p = pmap(lambda x: x * w, "i")
    X = _inputs((3,), 2)
    first = p(X)
    w[:] = 5.0  # the cached body keeps the value it was staged with
    np.testing.assert_allclose(p(X), first, **_TOL)


def test_dask_executor_without_the_extra_says_what_to_install(monkeypatch):
    import sys
    from fxad.distributed import DaskExecutor, DistributedError
    for name in ("dask", "dask.array", "distributed"):  # as if not installed
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(DistributedError, match=r"pip install 'fxad\[distributed\]'"):
        DaskExecutor()


# --- replicated outputs: pmap(out_axes=None) and shard_map's unnamed out_specs axes -----------

X3 = np.random.default_rng(9).normal(size=(3, 2))
PERM3 = ((0, 1), (1, 2), (2, 0))

# (per-index function of (x, w), is its output the same at every index?)
REPLICATION = [
    (lambda x, w: lax.psum(x, "i"), True),
    (lambda x, w: lax.pmax(x, "i") * w + lax.all_gather(x, "i").sum(0), True),
    (lambda x, w: np.sin(lax.pmean(x * w, "i")) + w, True),
    (lambda x, w: w * 2.0, True),
    (lambda x, w: lax.axis_size("i") * w, True),
    (lambda x, w: lax.psum(x, "i") + x, False),
    (lambda x, w: lax.ppermute(lax.psum(x, "i"), "i", PERM3), False),
    (lambda x, w: lax.axis_index("i") * w, False),
    (lambda x, w: lax.psum_scatter(lax.all_gather(x, "i"), "i"), False),
    (lambda x, w: lax.fori_loop(0, 2, lambda k, c: c + lax.psum(x, "i"), w), True),  # hoisted
    (lambda x, w: lax.fori_loop(0, 2, lambda k, c: lax.psum(c, "i"), w), True),
    # data-parallel descent inside the map: the carry stays replicated
    (lambda x, w: lax.fori_loop(0, 3, lambda k, c: c - 0.1 * lax.pmean(x * c, "i"), w), True),
    (lambda x, w: lax.fori_loop(0, 3, lambda k, c: c - 0.1 * x * c, w), False),
    (lambda x, w: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, lax.psum(c[1] * x, "i")),
                                 (0, w))[1], True),
    (lambda x, w: lax.while_loop(lambda c: c.sum() < 10.0 + x.sum(), lambda c: c + 1.0, w),
     False),  # shards may loop different numbers of times
    (lambda x, w: lax.cond(w.sum() > 0, lambda: lax.psum(x, "i"), lambda: w), True),
    (lambda x, w: lax.cond(x.sum() > 0, lambda: w, lambda: 2.0 * w), False),
    (lambda x, w: jit(lambda w: lax.pmean(w * x, "i"))(w), True),
    (lambda x, w: fxad.checkpoint(lambda w: lax.pmean(np.sin(w * x), "i"))(w), False),  # opaque
]
_STAGED_WHILE = {k for k, (f, _) in enumerate(REPLICATION) if "while_loop" in
                 f.__code__.co_names}


@pytest.mark.parametrize("k", range(len(REPLICATION)))
def test_pmap_out_axes_none_takes_a_replicated_output(k):
    """Accepted exactly where the output is the same at every index (then: index 0 of the
    mapped result, in every mode); refused with an error otherwise (never one shard's value
    passed off as everyone's). Loops, branches and staged calls are followed; a custom
    rule's function is opaque, so the checkpoint case is refused (conservative)."""
    f, same = REPLICATION[k]
    w = np.array([0.5, -1.5])
    mapped = pmap(f, "i", in_axes=(0, None))
    unmapped = pmap(f, "i", in_axes=(0, None), out_axes=None)
    if not same:
        with pytest.raises(FxadValueError, match="out_axes=None for output leaf 0"):
            unmapped(X3, w)
        return
    full = mapped(X3, w)
    np.testing.assert_array_equal(full, np.broadcast_to(full[0], full.shape))
    np.testing.assert_allclose(unmapped(X3, w), full[0], **_TOL)
    np.testing.assert_allclose(jit(unmapped)(X3, w), full[0], **_TOL)
    if k in _STAGED_WHILE:  # no reverse mode through a staged while_loop (its trip count)
        return
    g = grad(lambda X, w: (unmapped(X, w) ** 2).sum(), argnums=(0, 1))(X3, w)
    want = grad(lambda X, w: (mapped(X, w)[0] ** 2).sum(), argnums=(0, 1))(X3, w)
    for a, b in zip(g, want):
        np.testing.assert_allclose(a, b, **_TOL)


def test_shard_map_checks_replicated_out_specs():
    """An out spec that leaves a mesh axis out says the output is the same on it: checked
    per mesh axis when staged (psum over both axes inside the inner axis counts); refused
    with the axis named; check_vma=False takes the first shard unchecked, as before."""
    sm = lambda f, spec, **kw: shard_map(f, mesh=MESH, in_specs=P("x", "y"),  # noqa: E731
                                         out_specs=spec, **kw)(A)
    np.testing.assert_allclose(sm(lambda a: lax.psum(a, ("x", "y")), P()),
                               _blocks(A).sum((0, 1)), **_TOL)
    np.testing.assert_allclose(sm(lambda a: lax.psum(a, "x"), P(None, "y")),
                               _blocks(A).sum(0).transpose(1, 0, 2).reshape(2, 6), **_TOL)
    with pytest.raises(FxadValueError, match="mesh axis 'y'"):
        sm(lambda a: lax.psum(a, "x"), P())
    with pytest.raises(FxadValueError, match="mesh axis 'x'"):
        sm(lambda a: a * 2.0, P(None, "y"))
    np.testing.assert_allclose(sm(lambda a: a * 2.0, P(None, "y"), check_vma=False),
                               2.0 * A[:2], **_TOL)

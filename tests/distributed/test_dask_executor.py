"""DaskExecutor on a LocalCluster of 2 worker processes: pmap/shard_map equal to the
in-process executor (the collectives' table, the fuzzer's programs wrapped in a map with
collectives), grad through them, dask.array inputs used chunk-wise, outputs kept on the
cluster, a failing task and a killed worker. Skipped only when the `distributed` extra is not
installed (CI installs it)."""
import os

import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask.array")

import dask.array as da  # noqa: E402

import fxad  # noqa: E402
from fxad import grad, jit, lax, pmap, shard_map, vmap  # noqa: E402
from fxad.distributed import DaskExecutor, DistributedError  # noqa: E402
from fxad.sharding import P, make_mesh  # noqa: E402
from tests.rules.collective._cases import CASES, IDS, _inputs  # noqa: E402

_TOL = dict(rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def ex(client):
    return DaskExecutor(client)


@pytest.mark.parametrize("name,f,ref,shape,n", CASES, ids=IDS)
def test_collectives_equal_in_process(ex, name, f, ref, shape, n):
    X = _inputs(shape, n)
    np.testing.assert_allclose(pmap(f, "i", executor=ex)(X), ref(X), **_TOL)


def _model(w, x):
    return np.tanh(x @ w).sum() * lax.pmean(np.cos(x).sum(), "b")


def test_grad_through_and_inside(ex):
    r = np.random.default_rng(0)
    W, X = r.normal(size=3), r.normal(size=(4, 5, 3))
    ref = pmap(grad(_model), "b", in_axes=(None, 0))(W, X)
    np.testing.assert_allclose(pmap(grad(_model), "b", in_axes=(None, 0), executor=ex)(W, X),
                               ref, **_TOL)
    total = lambda m: lambda w: m(w, X).sum()  # noqa: E731
    want = grad(total(pmap(_model, "b", in_axes=(None, 0))))(W)
    got = grad(total(pmap(_model, "b", in_axes=(None, 0), executor=ex)))(W)
    np.testing.assert_allclose(got, want, **_TOL)
    got = jit(grad(total(pmap(_model, "b", in_axes=(None, 0), executor=ex))))(W)
    np.testing.assert_allclose(got, want, **_TOL)
    # jit inside the body (inlined into the stages)
    got = pmap(jit(grad(_model)), "b", in_axes=(None, 0), executor=ex)(W, X)
    np.testing.assert_allclose(got, ref, **_TOL)


def _fuzz_programs(n):
    """The first n programs of the fuzzer's pinned makers (the families added later draw
    while_loops and nested maps, whose reverse mode inside pmap's staged body is refused)."""
    from tests.audits.test_fuzz import _generated, _pinned_makers
    return _generated(n, _pinned_makers())


def test_fuzzer_programs_in_a_map(ex):
    """The fuzzer's programs, each output plus its pmean and an all_gather, mapped over the
    fuzzer's batch: Dask equals in process (vmap), values and gradients."""
    checked = 0
    for p in _fuzz_programs(3):
        f = p.build()

        def g(*a):
            out = f(*a)
            leaves = out if isinstance(out, tuple) else (out,)
            return tuple(o + lax.pmean(o, "i") + lax.all_gather(o, "i").sum(0)
                         for o in leaves)
        args = p.batched()
        want = vmap(g, in_axes=p.in_axes, axis_name="i")(*args)
        got = pmap(g, "i", in_axes=p.in_axes, executor=ex)(*args)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
        floats = [i for i, x in enumerate(args) if np.asarray(x).dtype.kind == "f"]
        if floats:
            k = floats[0]

            def loss(m):
                def h(x):
                    a = list(args)
                    a[k] = x
                    return sum(np.sum(np.sin(o)) for o in m(*a))
                return h
            gw = grad(loss(vmap(g, in_axes=p.in_axes, axis_name="i")))(args[k])
            gg = grad(loss(pmap(g, "i", in_axes=p.in_axes, executor=ex)))(args[k])
            np.testing.assert_allclose(gg, gw, rtol=1e-9, atol=1e-9)
        checked += 1
    assert checked == 3


def test_shard_map_on_dask(ex):
    mesh = make_mesh((4,), ("d",))
    W, X = np.random.default_rng(4).normal(size=3), np.random.default_rng(5).normal(size=(8, 3))

    def step(w, x):
        return lax.pmean(grad(lambda w: ((x @ w) ** 2).mean())(w), "d")
    sm = shard_map(step, mesh=mesh, in_specs=(P(), P("d")), out_specs=P(), executor=ex)
    np.testing.assert_allclose(sm(W, X), grad(lambda w: ((X @ w) ** 2).mean())(W), **_TOL)


def test_dask_array_input_used_chunk_wise(ex, client):
    r = np.random.default_rng(6)
    data = r.normal(size=(4, 50, 3))
    D = client.persist(da.from_array(data, chunks=(1, 50, 3)))
    w = r.normal(size=3)
    local = grad(lambda w, x: ((x @ w) ** 2).mean())
    got = pmap(local, "b", in_axes=(None, 0), executor=ex)(w, D)
    want = vmap(local, in_axes=(None, 0))(w, data)
    np.testing.assert_allclose(got, want, **_TOL)
    # chunks laid out otherwise are regrouped on the cluster, one shard per chunk
    D2 = da.from_array(data, chunks=(2, 25, 3))
    np.testing.assert_allclose(pmap(local, "b", in_axes=(None, 0), executor=ex)(w, D2), want,
                               **_TOL)
    with pytest.raises(fxad.errors.FxadValueError, match="distributed executor"):
        pmap(local, "b", in_axes=(None, 0))(w, D)


def test_outputs_kept_on_the_cluster(client):
    X = _inputs((3,), 4)
    out = pmap(lambda x: lax.psum(x, "i") * x, "i",
               executor=DaskExecutor(client, outputs="dask"))(X)
    assert isinstance(out, da.Array)
    np.testing.assert_allclose(out.compute(), X.sum(0) * X, **_TOL)


def test_a_failing_task_names_the_step(client):
    def boom(x):
        raise ValueError("bad shard")
    f = lambda x: lax.psum(fxad.pure_callback(boom, x, x), "i")  # noqa: E731
    with pytest.raises(DistributedError, match="stage 0.*ValueError.*bad shard"):
        pmap(f, "i", executor=DaskExecutor(client, retries=0))(np.ones((2, 3)))


def test_a_killed_worker_is_retried(ex, tmp_path):
    """The first worker to run a shard's stage dies (its process exits); Dask reruns the
    (pure) task on a live worker and the step completes with the right values. (Exactly one
    dies: when both did, a check-then-write race, the cluster lost every copy of the stage
    programs and the step failed.)"""
    marker = str(tmp_path / "died")

    def die_once(x):
        try:  # created by exactly one process (two shards' tasks start at the same time)
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return x
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os._exit(1)
    f = lambda x: lax.psum(fxad.pure_callback(die_once, x, x) * 2, "i")  # noqa: E731
    X = _inputs((3,), 2)
    np.testing.assert_allclose(pmap(f, "i", executor=ex)(X), 2 * np.broadcast_to(X.sum(0),
                                                                                 X.shape))
    with open(marker) as fh:  # a worker process died, not this one
        assert int(fh.read()) != os.getpid()


def test_executor_and_transformations_pickle():
    import pickle

    import cloudpickle
    X = _inputs((3,), 2)
    p = pmap(lambda x: lax.psum(x, "i"), "i")
    np.testing.assert_allclose(pickle.loads(cloudpickle.dumps(p))(X), p(X))


def test_a_tiny_step_runs_as_one_task_with_the_same_numbers(client, monkeypatch):
    """A step that computes next to nothing runs spread once, then as one task (the same
    functions: bit for bit the same values); coalesce=False keeps it spread; a step that
    grows slow is spread again on its next call."""
    import fxad.distributed.dask_executor as de
    monkeypatch.setattr(de, "TINY", 0.05)  # robust to a loaded machine
    marker = os.path.join(os.path.dirname(__file__), f".slow-{os.getpid()}")

    def maybe_slow(x):
        if os.path.exists(marker):
            import time
            time.sleep(0.3)  # > 4 x TINY
        return x

    def step(x):
        y = fxad.pure_callback(maybe_slow, x, x, vmap_method="sequential")
        return lax.psum(np.sin(y), "i") * y + lax.all_gather(y, "i").sum(0)
    X = np.random.default_rng(7).normal(size=(5, 3))
    want = pmap(step, "i")(X)
    ex = DaskExecutor(client)
    f = pmap(step, "i", executor=ex)
    first = f(X)
    assert ex.last_mode == "spread"
    second = f(X)
    assert ex.last_mode == "whole"
    np.testing.assert_array_equal(second, first)
    np.testing.assert_allclose(second, want, **_TOL)
    try:
        open(marker, "w").close()
        np.testing.assert_array_equal(f(X), first)
        assert ex.last_mode == "whole"  # it ran as one task, slowly: next call spreads
    finally:
        os.remove(marker)
    np.testing.assert_array_equal(f(X), first)
    assert ex.last_mode == "spread"
    spread = DaskExecutor(client, coalesce=False)
    g = pmap(step, "i", executor=spread)
    for _ in range(2):
        np.testing.assert_array_equal(g(X), first)
        assert spread.last_mode == "spread"


def test_a_large_collective_gets_a_task_of_its_own(ex, client):
    """Four chunk-wise shards (four groups) and a psum whose operands exceed the size
    computed inside the tasks that use it: one exchange task, the same values."""
    data = np.random.default_rng(8).normal(size=(4, 200, 200))  # 4 x 320 KB
    D = da.from_array(data, chunks=(1, 200, 200))
    step = lambda x: lax.psum(np.tanh(x), "i") * x + lax.pmax(x, "i")  # noqa: E731
    want = pmap(step, "i")(data)
    np.testing.assert_allclose(pmap(step, "i", executor=ex)(D), want, **_TOL)


def test_vmap_chunks_maps_where_the_chunks_lie(client):
    """vmap over a dask.array with uneven chunks, a NumPy mapped argument cut to match, an
    unmapped one, several outputs and out_axes: lazy dask.arrays equal to vmap's."""
    from fxad.distributed import vmap_chunks
    r = np.random.default_rng(10)
    data, noise, w = r.normal(size=(70, 4)), r.normal(size=(3, 70)), r.normal(size=4)
    X = da.from_array(data, chunks=(30, 2))

    def per_row(x, e, w):
        g = grad(lambda w: np.tanh(x @ w) ** 2 + e.sum() * w[0])(w)
        return g, (x * w).sum()
    want = vmap(per_row, in_axes=(0, 1, None))(data, noise, w)
    got = vmap_chunks(per_row, in_axes=(0, 1, None))(X, noise, w)
    assert all(isinstance(g, da.Array) for g in got)
    assert got[0].chunks[0] == (30, 30, 10)
    for g, v in zip(got, want):
        np.testing.assert_allclose(g.compute(), v, **_TOL)
    moved = vmap_chunks(lambda x: x * 2.0, out_axes=1)(X)
    np.testing.assert_allclose(moved.compute(), 2.0 * data.T, **_TOL)
    with pytest.raises(fxad.errors.FxadValueError, match="no mapped argument is a dask"):
        vmap_chunks(lambda x: x)(data)


def test_stage_programs_are_sent_again_after_every_worker_restarted(client):
    """A restart loses every copy of the programs the executor sent to the workers; the next
    step sends them again instead of failing on the forgotten copies."""
    ex = DaskExecutor(client, coalesce=False)
    f = pmap(lambda x: lax.psum(np.sin(x), "i") * x, "i", executor=ex)
    X = _inputs((3,), 2)
    want = pmap(lambda x: lax.psum(np.sin(x), "i") * x, "i")(X)
    np.testing.assert_allclose(f(X), want, **_TOL)
    client.restart()
    np.testing.assert_allclose(f(X), want, **_TOL)

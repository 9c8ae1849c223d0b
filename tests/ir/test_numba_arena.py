"""The numba backend's workspace arena (fxad/ir/numba_backend/arena.py): large intermediates
of a compiled segment are slices of a workspace kept between calls. Values bit for bit
against the NumPy backend, call after call; results never alias a kept workspace; threads
and nested calls never share one; the kept bytes are capped and released with the program.
The threshold is lowered so that small programs use the arena."""
import gc
import threading
import weakref

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.tree_util import tree_flatten

pytest.importorskip("numba")
from fxad.ir.numba_backend import arena  # noqa: E402

_R = np.random.default_rng(11)
_W = _R.normal(size=(8, 8)) / 3
_W2 = _R.normal(size=(8, 5)) / 3


@pytest.fixture(autouse=True)
def small_threshold(monkeypatch):
    monkeypatch.setattr(arena, "MIN_BYTES", 64)


def _mlp(x):
    return fnp.tanh(fnp.tanh(x @ _W) @ _W) @ _W2


def _laplacian(x):
    u = lambda v: fnp.sum(fnp.tanh(fnp.tanh(v @ _W[:4]) @ _W))  # noqa: E731
    return fxad.vmap(lambda v: fnp.trace(fxad.hessian(u)(v)))(x)


def _scan(x):
    big = fnp.tanh(x @ _W) * 2.0

    def step(c, row):
        return c * 0.5 + row, fnp.sum(c)
    return lax.scan(step, big[0], big)


def _two_dtypes(x):
    a = fnp.tanh(x.astype(np.float32) @ _W.astype(np.float32))
    b = (x @ _W) > 0.1
    return fnp.where(b, a.astype(np.float64) * 3.0, x @ _W) @ _W2


PROGRAMS = [  # (name, f, args): each has intermediates above the lowered threshold
    ("mlp", _mlp, (_R.normal(size=(16, 8)),)),
    ("mlp-grad", fxad.grad(lambda x: fnp.sum(_mlp(x) ** 2)), (_R.normal(size=(16, 8)),)),
    ("laplacian", _laplacian, (_R.normal(size=(6, 4)),)),
    ("view-of-intermediate-returned", lambda x: fnp.reshape(fnp.tanh(x @ _W) * 2.0, (8, 32)).T,
     (_R.normal(size=(32, 8)),)),
    ("intermediate-returned-twice", lambda x: (lambda a: (a, a[:, :3], fnp.sum(a @ _W)))(
        fnp.exp(fnp.tanh(x @ _W))), (_R.normal(size=(16, 8)),)),
    ("reduction", lambda x: fnp.sum(fnp.tanh(x @ _W) * x, axis=0), (_R.normal(size=(32, 8)),)),
    ("scan", _scan, (_R.normal(size=(16, 8)),)),
    ("float32-and-bool", _two_dtypes, (_R.normal(size=(16, 8)),)),
    ("complex", lambda z: fnp.real((z @ _W.astype(np.complex128)) * z), (
        (_R.normal(size=(16, 8)) + 1j * _R.normal(size=(16, 8))),)),
]
IDS = [p[0] for p in PROGRAMS]


def _flat(out):
    return [np.asarray(o) for o in tree_flatten(out)[0]]


def _same(got, want):
    g, w = _flat(got), _flat(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def _compiled(f, *args):
    jf = fxad.jit(f, backend="numba")
    low = jf.lower(*args)
    return jf, low.compiled


@pytest.mark.parametrize("name,f,args", PROGRAMS, ids=IDS)
def test_values_bit_for_bit_call_after_call(name, f, args):
    jf, prog = _compiled(f, *args)
    assert prog.arena is not None and prog.arena.nbytes > 0, prog.describe()
    want = fxad.jit(f)(*args)
    for _ in range(3):  # the second and third calls run on the kept workspace
        _same(jf(*args), want)
    assert prog.arena.kept_bytes() == prog.arena.nbytes
    assert prog.arena.copies == 0  # nothing arena-backed reached a segment's outputs


@pytest.mark.parametrize("name,f,args", PROGRAMS, ids=IDS)
def test_results_do_not_alias_the_kept_workspace(name, f, args):
    jf, prog = _compiled(f, *args)
    first = _flat(jf(*args))
    saved = [a.copy() for a in first]
    for a in first:
        for ws in prog.arena.workspaces():
            assert not np.may_share_memory(a, ws)
        if a.size:
            a[...] = 7  # the caller owns its results
    second = _flat(jf(*args))
    for a, b, s in zip(first, second, saved):
        assert (a == 7).all()
        np.testing.assert_array_equal(b, s)


def test_segments_never_return_workspace_memory():
    """The driver's last check copies a segment output that overlaps the workspace; the
    analysis leaves none (copies stays 0) while a workspace was used."""
    f = lambda x: fnp.reshape(fnp.tanh(x @ _W) * 2.0, (8, 32)).T  # noqa: E731
    x = _R.normal(size=(32, 8))
    jf, prog = _compiled(f, x)
    assert "_ws[" in prog.numba_source and "_arena.fresh" in prog.source
    jf(x)
    assert prog.arena.copies == 0


def test_lifetimes_that_do_not_overlap_share_bytes():
    x = _R.normal(size=(16, 8))
    f = lambda x: fnp.sum(fnp.tanh(fnp.tanh(fnp.tanh(x @ _W) @ _W) @ _W) @ _W)  # noqa: E731
    _, prog = _compiled(f, x)
    slots = prog.numba_source.count("_ws[")
    assert slots >= 3
    assert prog.arena.nbytes < slots * 16 * 8 * 8, prog.numba_source


def test_two_threads_at_once_get_their_own_workspace():
    w = _R.normal(size=(64, 64)) / 8
    f = lambda x: fnp.tanh(fnp.tanh(x @ w) @ w) @ w  # noqa: E731  (long enough to overlap)
    xs = [_R.normal(size=(512, 64)) for _ in range(4)]
    jf, prog = _compiled(f, xs[0])
    want = [fxad.jit(f)(x) for x in xs]
    start = threading.Barrier(4)
    bad = []

    def work(k):
        start.wait()
        for _ in range(50):
            if not np.array_equal(jf(xs[k]), want[k]):
                bad.append(k)
    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad
    assert 1 <= len(prog.arena.workspaces()) <= 4


def test_a_nested_call_takes_a_workspace_of_its_own():
    x = _R.normal(size=(16, 8))
    seen = []

    def inner(v):
        if not seen:  # (one level of nesting)
            # the running call holds this thread's workspace: not on offer to a nested call
            seen.append(prog.arena.kept_bytes())
            seen.append(np.asarray(jf(np.asarray(v))))
        return np.asarray(v)

    def f(x):
        a = fnp.tanh(x @ _W) @ _W
        b = fxad.pure_callback(inner, fxad.ShapeDtypeStruct(a.shape, a.dtype), a)
        return fnp.tanh(b @ _W) @ _W
    jf = fxad.jit(f, backend="numba")
    prog = jf.lower(x).compiled
    assert prog.arena is not None
    seen.append(None)  # (no nesting yet)
    want = fxad.jit(f, backend="numpy")
    want_outer, want_nested = want(x), want(np.asarray(fnp.tanh(x @ _W) @ _W))
    jf(x)  # this thread's workspace is kept now
    seen.clear()
    out = jf(x)
    assert seen[0] == 0
    _same(out, want_outer)
    _same(seen[1], want_nested)
    assert prog.arena.kept_bytes() == prog.arena.nbytes  # one per thread, the other dropped


def test_kept_bytes_are_capped(monkeypatch):
    x = _R.normal(size=(64, 8))
    jf, prog = _compiled(_mlp, x)
    n = prog.arena.nbytes
    monkeypatch.setattr(arena, "CAP_BYTES", 2 * n)
    start, done = threading.Barrier(5), threading.Barrier(5)

    def work():
        start.wait()
        jf(x)
        done.wait()  # all alive together: five threads, five thread ids
    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    work()
    for t in ts:
        t.join()
    assert prog.arena.kept_bytes() <= 2 * n
    assert prog.arena.kept_bytes() == sum(w.nbytes for w in prog.arena.workspaces())


def test_all_programs_together_keep_at_most_the_total_cap(monkeypatch):
    x = _R.normal(size=(64, 8))
    progs = [_compiled(lambda x, k=k: _mlp(x) * k, x) for k in (1.0, 2.0, 3.0)]
    n = progs[0][1].arena.nbytes
    assert all(p.arena.nbytes == n for _, p in progs)
    gc.collect()  # (earlier tests' programs: gone now, not during the test)
    monkeypatch.setattr(arena, "TOTAL_CAP_BYTES", arena.total_kept_bytes() + 2 * n)
    for jf, _ in progs:
        jf(x)
    assert [p.arena.kept_bytes() for _, p in progs] == [n, n, 0]
    before = arena.total_kept_bytes()
    del progs[0], jf
    gc.collect()
    assert arena.total_kept_bytes() == before - n  # a collected program's bytes are free


def test_a_thread_that_will_not_call_again_releases_its_workspace():
    x = _R.normal(size=(16, 8))
    jf, prog = _compiled(lambda x: _mlp(x) * 4.0, x)
    jf(x)
    before = arena.total_kept_bytes()
    assert prog.arena.kept_bytes() == prog.arena.nbytes
    prog.arena.release()
    assert prog.arena.kept_bytes() == 0
    assert arena.total_kept_bytes() == before - prog.arena.nbytes
    _same(jf(x), fxad.jit(lambda x: _mlp(x) * 4.0)(x))


def test_a_segment_past_the_cap_allocates_as_before(monkeypatch):
    monkeypatch.setattr(arena, "CAP_BYTES", 1000)  # below one 64 x 8 float64 intermediate
    x = _R.normal(size=(64, 8))
    jf, prog = _compiled(lambda x: _mlp(x), x)  # (a new function: not a cached program)
    assert prog.arena is None and "_ws" not in prog.numba_source
    _same(jf(x), fxad.jit(_mlp)(x))


def test_small_intermediates_stay_with_numbas_allocator(monkeypatch):
    monkeypatch.setattr(arena, "MIN_BYTES", 1 << 20)
    x = _R.normal(size=(16, 8))
    _, prog = _compiled(lambda x: _mlp(x), x)
    assert prog.arena is None


def test_the_workspace_is_released_with_the_program():
    x = _R.normal(size=(16, 8))
    jf = fxad.jit(lambda x: _mlp(x) * 1.0, backend="numba")
    jf(x)
    jf(x)
    ref = weakref.ref(jf.lower(x).compiled.arena.workspaces()[0])
    del jf
    gc.collect()
    assert ref() is None


ALIASES = [  # (line, targets): what the text analysis counts as a new name for a buffer
    ("a = b.reshape((2, 3))", ["a"]),
    ("a, (c) = f(b)", ["a", "c"]),
    ("a[i, j] = b[i, j]", []),
    ("for r in b:", ["r"]),
    ("if a == b:", None),
    ("x += b", ["x"]),
    ("y = a <= b", ["y"]),
]


@pytest.mark.parametrize("line,targets", ALIASES)
def test_the_alias_analysis_reads_assignments(line, targets):
    got = arena._assignment(line)
    assert (got if got is None else got[0]) == targets

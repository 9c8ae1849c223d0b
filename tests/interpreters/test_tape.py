"""Eager reverse mode on the tape of derived pullbacks (fxad/interpreters/tape.py) against the
staged path (linearize, then transpose), the reference: the same values and gradients on
every rule-table row; each primitive's JVP rule runs once per signature; the derivation cache
is thread-safe, bounded and keeps no user objects alive."""
import gc
import tracemalloc
import weakref
from contextlib import contextmanager

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.interpreters import tape
from fxad.tree_util import tree_leaves

from tests.racing import race
from tests.rules.test_coverage import table_modules


@contextmanager
def staged():
    fxad.config.eager_tape = False
    try:
        yield
    finally:
        fxad.config.eager_tape = True


def _tables():
    """Every row of every rule table with derivatives (found as the coverage test finds
    them)."""
    rows = []
    for name, mod in table_modules().items():
        rows += [(f"{name.split('.')[-1]}:{r.id}", r) for r in mod.TABLE if r.grad]
    return rows


ROWS = _tables()


def _close_to_the_ulp(a, b):
    """Equal, or within a few ulps (the tape may sum contributions in another order)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    scale = np.maximum(np.abs(a), np.abs(b))
    tol = 4 * np.finfo(a.dtype).eps * np.maximum(scale, np.max(scale, initial=0.0) * 1e-3)
    assert np.all((a == b) | (np.abs(a - b) <= tol) | (np.isnan(a) & np.isnan(b))), (a, b)


@pytest.mark.parametrize("name,row", ROWS, ids=[r[0] for r in ROWS])
def test_tape_agrees_with_the_staged_path(name, row):
    fn, args = row.fn, row.args()  # inside the row's domain
    def scalar(*a):
        return sum(fnp.sum(fnp.real(o)) for o in tree_leaves(fn(*a))
                   if np.issubdtype(o.dtype, np.inexact))
    g = fxad.grad(scalar, argnums=tuple(i for i, a in enumerate(args) if a.dtype.kind == "f"))
    with np.errstate(all="ignore"):
        got = g(*args)
        with staged():
            want = g(*args)
    for x, y in zip(got, want):
        _close_to_the_ulp(x, y)


def test_each_jvp_rule_runs_once_per_signature(monkeypatch):
    monkeypatch.setattr(tape, "_cache", {})
    from fxad.rules.elementwise.transcendental import sin_p
    calls = []
    rule = sin_p.jvp
    monkeypatch.setattr(sin_p, "jvp", lambda p, t, **kw: calls.append(1) or rule(p, t, **kw))
    f = fxad.grad(lambda x: fnp.sum(fnp.sin(fnp.sin(x) * 2.0)))
    x = np.linspace(0.1, 1.0, 7)
    for _ in range(5):
        np.testing.assert_allclose(f(x), 2 * np.cos(np.sin(x) * 2.0) * np.cos(x))
    assert len(calls) == 1  # one signature: sin of f64[7], its input tracked
    f(np.ones(3))
    assert len(calls) == 2  # a new signature


def test_a_replaced_rule_is_not_served_from_the_cache(monkeypatch):
    """What was derived from a JVP rule (eager pullbacks, loop bodies' derived programs) is
    forgotten when the rule is replaced, and again when it is put back."""
    from fxad.rules.elementwise.transcendental import sin_p
    f = fxad.grad(lambda x: fnp.sum(fnp.sin(x)))
    g = fxad.grad(lambda x: lax.scan(lambda c, v: (c + fnp.sin(v), None), 0.0, x)[0])
    x = np.linspace(0.1, 1.0, 4)
    np.testing.assert_allclose(f(x), np.cos(x))
    np.testing.assert_allclose(g(x), np.cos(x))
    rule = sin_p.jvp
    monkeypatch.setattr(sin_p, "jvp", lambda p, t: (rule(p, t)[0], lax.mul(rule(p, t)[1], 2.0)))
    np.testing.assert_allclose(f(x), 2 * np.cos(x))
    np.testing.assert_allclose(g(x), 2 * np.cos(x))
    monkeypatch.undo()
    np.testing.assert_allclose(f(x), np.cos(x))
    np.testing.assert_allclose(g(x), np.cos(x))


def test_vjp_on_the_tape_can_be_pulled_back_many_times_and_under_vmap():
    x = np.linspace(0.1, 1.0, 4)
    out, f_vjp = fxad.vjp(lambda v: fnp.tanh(v) * v, x)
    ct = np.arange(4.0)
    first = f_vjp(ct)[0].copy()
    np.testing.assert_allclose(f_vjp(ct)[0], first)
    rows = fxad.vmap(lambda c: f_vjp(c)[0])(np.eye(4))  # traced cotangents: programs
    np.testing.assert_allclose(rows @ ct, first)
    np.testing.assert_allclose(fxad.jacrev(lambda v: fnp.tanh(v) * v)(x), rows)


def test_grad_of_grad_and_hvp_compose_with_the_tape():
    x = np.linspace(-1.0, 1.0, 5)
    f = lambda v: fnp.sum(fnp.sin(v) ** 3)  # noqa: E731
    h = fxad.grad(lambda v: fnp.sum(fxad.grad(f)(v) * v))(x)
    with staged():
        h_ref = fxad.grad(lambda v: fnp.sum(fxad.grad(f)(v) * v))(x)
    np.testing.assert_allclose(h, h_ref, rtol=1e-14)
    np.testing.assert_allclose(fxad.hvp(f, (x,), (np.ones(5),))[0],
                               fxad.hessian(f)(x) @ np.ones(5), rtol=1e-12)


def test_python_control_flow_and_loops_on_the_tape():
    def f(x):
        h, total = x, 0.0
        for i in range(6):
            h = fnp.tanh(h * 1.5) if float(fnp.sum(h)) > 0 else fnp.sin(h)
            total = total + fnp.mean(h)
        return total + lax.fori_loop(0, 3, lambda i, c: c * fnp.cos(c), h)[0]
    x = np.linspace(-0.5, 0.8, 3)
    with pytest.raises(TypeError):  # float() of a tracked value would drop its derivative
        fxad.grad(f)(x)
    f2 = lambda x: f(x) if False else _f2(x)  # noqa: E731

    def _f2(x):
        h, total = x, 0.0
        for i in range(6):
            h = fnp.tanh(h * 1.5) if fnp.sum(h) > 0 else fnp.sin(h)  # bool() is concrete
            total = total + fnp.mean(h)
        return total + lax.fori_loop(0, 3, lambda i, c: c * fnp.cos(c), h)[0]
    got = fxad.grad(f2)(x)
    with staged():
        want = fxad.grad(f2)(x)
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_the_derivation_cache_is_thread_safe(monkeypatch):
    monkeypatch.setattr(tape, "_cache", {})

    def work(k):
        for n in range(1, 25):
            x = np.linspace(0.1, 1.0, n + k)
            g = fxad.grad(lambda v: fnp.sum(fnp.exp(v) * fnp.sin(v)))(x)
            np.testing.assert_allclose(g, np.exp(x) * (np.sin(x) + np.cos(x)),
                                       rtol=1e-13)
    race(work, [k % 3 for k in range(8)])


def _deep_chain(h, W):
    for _ in range(30):
        h = fnp.tanh(h @ W + 0.1)
    return fnp.sum(h)


def test_the_backward_pass_drops_each_cotangent_once_its_node_used_it():
    """Only the inputs' cotangents outlive the pass: each intermediate one goes as soon as the
    node that made its value has pulled it back (not at the end, which held one array per
    layer of a deep chain on top of the residuals)."""
    W = np.eye(16) * 0.9
    x = np.linspace(-1.0, 1.0, 8 * 16).reshape(8, 16)
    vjp = tape.TapeVJP(lambda h: [_deep_chain(h, W)], [x])
    cts = tape.backward(vjp.trace, vjp.outs, [np.array(1.0)])
    assert cts[0] is not None and all(c is None for c in cts[1:])
    # and the peak memory of grad is that of the residuals, as on the staged path
    W = np.eye(256) * 0.9
    x = np.linspace(-1.0, 1.0, 64 * 256).reshape(64, 256)
    g = fxad.grad(lambda h: _deep_chain(h, W))

    def peak():
        g(x)
        tracemalloc.start()
        try:
            g(x)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    on_tape = peak()
    with staged():
        off_tape = peak()
    assert on_tape < 1.25 * off_tape, (on_tape, off_tape)


def test_the_derivation_cache_is_bounded_and_keeps_no_user_objects(monkeypatch):
    monkeypatch.setattr(tape, "_cache", {})
    monkeypatch.setattr(tape, "_CACHE_SIZE", 16)
    def use():
        w = np.linspace(1.0, 2.0, 50)
        for n in range(1, 50):
            fxad.grad(lambda v: fnp.sum(v * w[:n]))(np.ones(n))
        return weakref.ref(w)
    ref = use()
    assert len(tape._cache) <= 16
    gc.collect()
    assert ref() is None


def test_unused_outputs_of_a_node_get_symbolic_zero_cotangents():
    """Only s of svd(a) is used: u's and vᵀ's cotangents are absent, not arrays of zeros, as
    in the staged path. The rule's factor 1 / (s_j² - s_i²) is inf at 1e300 and 1e-300, and
    inf · 0 made the eager 2-norm's and nuclear norm's gradients NaN (jit's were right)."""
    a = np.array([[4.0, 1.0, 2.0], [1.0, 3.0, 1.0], [2.0, 1.0, 5.0]])
    for scale in (1e300, 1e-300):
        for ord in (2, "nuc"):
            f = fxad.grad(lambda x, ord=ord: fnp.linalg.norm(x, ord))
            with np.errstate(all="ignore"):
                got, want = f(a * scale), fxad.jit(f)(a * scale)
            np.testing.assert_allclose(got, f(a), rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    # u and s both used: the full pullback, unchanged
    g = fxad.grad(lambda x: fnp.sum(fnp.linalg.svd(x)[0][:, 0] ** 3) + fnp.sum(
        fnp.linalg.svd(x)[1]))
    with staged():
        want = g(a)
    np.testing.assert_allclose(g(a), want, rtol=1e-12)


def test_tape_tracers_abstract_values_are_their_values():
    """A tape tracer's aval (read by shape-dependent code such as matmul) is its value's,
    for arrays, NumPy scalars and 0-d results alike."""
    from fxad.core import get_aval
    seen = []

    def f(x):
        for v in (x, fnp.sin(x), fnp.sum(x), x[0], fnp.sum(x * x, axis=0), x @ x):
            if isinstance(v, tape.TapeTracer):
                a, want = v.aval, get_aval(v.val)
                assert (a.shape, a.dtype, a.weak) == (want.shape, want.dtype, want.weak)
                assert v.shape == want.shape and v.ndim == len(want.shape)
                seen.append(type(v.val))
        return fnp.sum(x @ x) + fnp.sum(x[0])
    x = np.arange(4.0).reshape(2, 2) / 3
    g = fxad.grad(f)(x)
    assert len(seen) == 6
    np.testing.assert_allclose(g, fxad.jit(fxad.grad(f))(x), rtol=1e-14)


def test_programs_holding_user_functions_are_never_cache_keys(monkeypatch):
    """A scan whose body calls a custom_jvp function holds the user's rule in its program:
    such an application takes the staged path on every call, is never stored in the
    derivation cache, and the cache keeps the function alive no longer than the caller."""
    from fxad.ir.jaxpr import ClosedJaxpr, holds_user_functions
    monkeypatch.setattr(tape, "_cache", {})

    def make():
        @fxad.custom_jvp
        def softplus(x):
            return fnp.log1p(fnp.exp(x))

        @softplus.defjvp
        def _(primals, tangents):
            (x,), (t,) = primals, tangents
            return softplus(x), t / (1 + fnp.exp(-x))
        return softplus

    def loss(sp, v):
        def body(c, _):
            return sp(c) * 0.5, None
        return fnp.sum(lax.scan(body, v, None, length=3)[0])
    def run(sp):
        x = np.array([0.5, -1.0, 2.0])
        want = fxad.jit(fxad.grad(lambda v: loss(sp, v)))(x)
        for _ in range(3):
            np.testing.assert_allclose(fxad.grad(lambda v: loss(sp, v))(x), want, rtol=1e-13)
    sp = make()
    run(sp)
    for key in tape._cache:
        params = key[-1] if type(key[-1]) is tuple else ()
        for item in params:
            v = item[1] if type(item) is tuple and len(item) == 2 else None
            assert not (type(v) is ClosedJaxpr and holds_user_functions(v)), key
    ref = weakref.ref(sp)
    del sp
    gc.collect()
    assert ref() is None

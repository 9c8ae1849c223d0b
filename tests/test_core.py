"""Trace state: exactly restored after exceptions, and per thread."""
import sys
import threading

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.core import trace_stack
from fxad.errors import ConcretizationError, EscapedTracerError


@pytest.fixture(autouse=True)
def _clean_stack():
    assert trace_stack() == [], "a previous test left traces behind"
    yield
    assert trace_stack() == []


class Boom(ValueError):
    pass


class HardStop(BaseException):
    """Not an Exception: like KeyboardInterrupt, it must unwind the trace stack too."""


X = np.array([0.3, -0.7, 1.2])


def _scalar_f(seen, exc=Boom):
    def f(x):
        fnp.sum(fnp.sin(x) * x)  # some traced work before the failure
        seen.append(len(trace_stack()))
        raise exc("inside f")
    return f


# each entry runs a transformation of a scalar function f of a vector at X
TRANSFORMS = {
    "grad": lambda f: fxad.grad(f)(X),
    "value_and_grad": lambda f: fxad.value_and_grad(f)(X),
    "vjp": lambda f: fxad.vjp(f, X),
    "linearize": lambda f: fxad.linearize(f, X),
    "jvp": lambda f: fxad.jvp(f, (X,), (X,)),
    "vmap": lambda f: fxad.vmap(f)(np.stack([X, X])),
    "make_jaxpr": lambda f: fxad.make_jaxpr(f)(X),
    "jacfwd": lambda f: fxad.jacfwd(f)(X),
    "jacrev": lambda f: fxad.jacrev(f)(X),
    "hessian": lambda f: fxad.hessian(f)(X),
    "hvp": lambda f: fxad.hvp(f, (X,), (X,)),
    "grad(grad)": lambda f: fxad.grad(lambda x: fnp.sum(fxad.grad(f)(x)))(X),
    "jvp(grad)": lambda f: fxad.jvp(fxad.grad(f), (X,), (X,)),
    "vmap(grad)": lambda f: fxad.vmap(fxad.grad(f))(np.stack([X, X])),
    "grad(vmap)": lambda f: fxad.grad(lambda x: fnp.sum(fxad.vmap(f)(fnp.stack([x, x]))))(X),
    "make_jaxpr(grad(jvp))": lambda f: fxad.make_jaxpr(fxad.grad(
        lambda x: fxad.jvp(f, (x,), (x,))[1]))(X),
    "vmap(jvp(grad))": lambda f: fxad.vmap(
        lambda x: fxad.jvp(fxad.grad(f), (x,), (x,))[1])(np.stack([X, X])),
    "linearize(vmap)": lambda f: fxad.linearize(
        lambda x: fxad.vmap(f)(fnp.stack([x, 2 * x])), X),
    "make_jaxpr(vmap(grad))": lambda f: fxad.make_jaxpr(fxad.vmap(fxad.grad(f)))(
        np.stack([X, X])),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_stack_empty_after_exception(name):
    seen = []
    with pytest.raises(Boom):
        TRANSFORMS[name](_scalar_f(seen))
    assert seen and seen[0] >= 1, "f must have run under at least one trace"
    assert trace_stack() == []
    # and the machinery still works afterwards
    np.testing.assert_allclose(fxad.grad(lambda x: fnp.sum(fnp.sin(x)))(X), np.cos(X))
    assert trace_stack() == []


@pytest.mark.parametrize("name", ["grad", "jvp", "vmap", "make_jaxpr", "grad(grad)",
                                  "vmap(jvp(grad))"])
def test_stack_empty_after_base_exception(name):
    seen = []
    with pytest.raises(HardStop):
        TRANSFORMS[name](_scalar_f(seen, HardStop))
    assert seen
    assert trace_stack() == []


@pytest.mark.parametrize("name", ["grad", "jvp", "vmap", "make_jaxpr", "jvp(grad)"])
def test_stack_empty_after_fxad_error(name):
    def f(x):
        if fnp.sum(x) > 0:  # fine under grad/jvp, ConcretizationError under vmap/make_jaxpr
            pass
        return float(fnp.sum(x))  # a ConcretizationError everywhere (float of traced float)
    with pytest.raises(ConcretizationError):
        TRANSFORMS[name](f)
    assert trace_stack() == []


def test_exception_raised_between_nested_transformations():
    depths = {}

    def outer(x):
        depths["outer"] = len(trace_stack())
        g = fxad.grad(lambda y: fnp.sum(fnp.sin(y)))(x)  # inner completes normally
        depths["after_inner"] = len(trace_stack())
        raise Boom(g)
    with pytest.raises(Boom):
        fxad.jvp(outer, (X,), (X,))
    assert depths["after_inner"] == depths["outer"] >= 1
    assert trace_stack() == []


def test_exception_caught_inside_outer_transformation():
    depths = []

    def inner(y):
        depths.append(("inner", len(trace_stack())))
        raise Boom()

    def outer(x):
        d = len(trace_stack())
        for t in ("grad", "jvp", "vmap", "make_jaxpr", "hessian"):
            try:
                TRANSFORMS[t](inner)
            except Boom:
                pass
            assert len(trace_stack()) == d, t
        depths.append(("outer", d))
        return fnp.sum(fnp.exp(x))
    g = fxad.grad(outer)(X)
    np.testing.assert_allclose(g, np.exp(X), rtol=1e-12)
    outer_depth = [d for k, d in depths if k == "outer"][0]
    assert outer_depth >= 1
    assert all(d > outer_depth for k, d in depths if k == "inner")
    assert trace_stack() == []


def test_tracers_of_a_failed_transformation_are_dead():
    leaked = []

    def f(x):
        leaked.append(x)
        raise Boom()
    for name in ("grad", "jvp", "vmap", "make_jaxpr"):
        leaked.clear()
        with pytest.raises(Boom):
            TRANSFORMS[name](f)
        assert leaked
        with pytest.raises(EscapedTracerError):
            fnp.sin(leaked[0])
    assert trace_stack() == []


def test_stack_depth_grows_with_nesting_and_levels_are_ordered():
    records = {}

    def probe(key):
        def f(x):
            st = trace_stack()
            records[key] = st
            return fnp.sum(fnp.sin(x))
        return f
    fxad.grad(probe("grad"))(X)
    fxad.jvp(probe("jvp"), (X,), (X,))
    fxad.grad(lambda x: fnp.sum(fxad.grad(probe("grad2"))(x)))(X)
    fxad.vmap(fxad.grad(probe("vmap_grad")))(np.stack([X, X]))
    assert len(records["jvp"]) >= 1
    assert len(records["grad2"]) > len(records["grad"]) >= 1
    # eager grad is one trace (the tape); under vmap it is staged (linearize's two)
    assert len(records["vmap_grad"]) >= len(records["grad"]) + 1
    for st in records.values():
        assert [t.level for t in st] == list(range(len(st)))
    for st in records.values():  # all ended
        assert not any(t.active for t in st)


# --- threads ----------------------------------------------------------------------------------

def _sech2(x):
    return 1.0 - np.tanh(x) ** 2


# (name, run(f_user, x) -> result, f_user written in fxad, analytic result(x))
# f_user receives a `probe` callback to call on each invocation.
def _thread_configs():
    return [
        ("grad sin",
         lambda f, x: fxad.grad(f)(x),
         lambda x, p: (p(), fnp.sum(fnp.sin(x)))[1],
         lambda x: np.cos(x)),
        ("grad cube",
         lambda f, x: fxad.grad(f)(x),
         lambda x, p: (p(), fnp.sum(x ** 3))[1],
         lambda x: 3 * x ** 2),
        ("grad grad exp2x",
         lambda f, x: fxad.grad(lambda y: fnp.sum(fxad.grad(f)(y)))(x),
         lambda x, p: (p(), fnp.sum(fnp.exp(2 * x)))[1],
         lambda x: 4 * np.exp(2 * x)),
        ("jvp grad tanh",
         lambda f, x: fxad.jvp(fxad.grad(f), (x,), (np.ones_like(x),))[1],
         lambda x, p: (p(), fnp.sum(fnp.tanh(x)))[1],
         lambda x: -2 * np.tanh(x) * _sech2(x)),
        ("vmap grad x*sin",
         lambda f, x: fxad.vmap(fxad.grad(f))(np.stack([x, 2 * x])),
         lambda x, p: (p(), fnp.sum(x * fnp.sin(x)))[1],
         lambda x: np.stack([np.sin(x) + x * np.cos(x), np.sin(2 * x) + 2 * x * np.cos(2 * x)])),
        ("make_jaxpr grad cube",
         lambda f, x: fxad.make_jaxpr(fxad.grad(f))(x)(x)[0],
         lambda x, p: (p(), fnp.sum(x ** 3 * 0.5))[1],
         lambda x: 1.5 * x ** 2),
        ("jvp log1p",
         lambda f, x: fxad.jvp(f, (x,), (np.ones_like(x),))[1],
         lambda x, p: (p(), fnp.log(1.0 + x * x))[1],
         lambda x: 2 * x / (1 + x * x)),
        ("hessian quartic",
         lambda f, x: fxad.hessian(f)(x),
         lambda x, p: (p(), fnp.sum(x ** 4))[1],
         lambda x: np.diag(12 * x ** 2)),
        ("grad grad grad sin*x",
         lambda f, x: fxad.grad(fxad.grad(fxad.grad(f)))(x),
         lambda x, p: (p(), fnp.sin(x) * x)[1],
         lambda x: -3 * np.sin(x) - x * np.cos(x)),
    ]


def _inputs(i):
    return np.float64(0.1 + 0.15 * i) if i == 8 else np.linspace(-0.5, 0.9, 3) + 0.05 * i


def _baseline_depths():
    """Depths seen inside f for each config, measured single-threaded in this thread."""
    out = []
    for i, (name, run, f, _) in enumerate(_thread_configs()):
        depths = []
        run(lambda x: f(x, lambda: depths.append(len(trace_stack()))), _inputs(i))
        assert depths and len(set(depths)) == 1, (name, depths)
        out.append(depths[0])
    return out


def test_threads_compute_correct_results_and_see_only_their_own_traces():
    configs = _thread_configs()
    n = len(configs)
    expected_depth = _baseline_depths()
    assert min(expected_depth) >= 1
    assert len(set(expected_depth)) > 1  # the configs really nest differently
    iters = 200
    start = threading.Barrier(n, timeout=60)
    middle = threading.Barrier(n + 1, timeout=60)  # all threads inside f at once, plus main
    release = threading.Barrier(n + 1, timeout=60)
    errors = []
    seen_traces = [[] for _ in range(n)]
    main_stack_during = []

    def worker(i):
        name, run, f, expected = configs[i]
        x = _inputs(i)
        want = expected(x)
        try:
            start.wait()
            for it in range(iters):
                def probe():
                    st = trace_stack()
                    assert len(st) == expected_depth[i], (name, len(st), expected_depth[i])
                    assert [t.level for t in st] == list(range(len(st))), (name, st)
                    assert all(t.active for t in st), (name, st)
                    seen_traces[i].extend(st)
                    if it == 0 and not probe.done:
                        probe.done = True
                        middle.wait()   # every thread holds active traces right now
                        release.wait()
                        st2 = trace_stack()
                        assert len(st2) == expected_depth[i] and all(
                            a is b for a, b in zip(st, st2)), (name, st, st2)
                    if it % 25 == 13:
                        raise Boom(it)
                probe.done = False
                try:
                    got = run(lambda x: f(x, probe), x)
                except Boom:
                    assert it % 25 == 13
                    assert trace_stack() == [], (name, trace_stack())
                    continue
                assert trace_stack() == [], (name, trace_stack())
                np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)
        except BaseException as e:  # noqa: BLE001  (reported by the main thread)
            errors.append((i, name, repr(e)))
            for b in (start, middle, release):
                b.abort()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        try:
            middle.wait()
            main_stack_during.append(trace_stack())
            release.wait()
        except threading.BrokenBarrierError:
            pass
        for t in threads:
            t.join(timeout=300)
        assert not any(t.is_alive() for t in threads), "a worker thread hung"
    finally:
        sys.setswitchinterval(old)

    assert not errors, errors
    assert main_stack_during == [[]], "the main thread saw another thread's traces"
    assert trace_stack() == []
    # no trace object appears in two threads (all kept alive, so ids are unique)
    owners = {}
    for i, traces in enumerate(seen_traces):
        assert traces, configs[i][0]
        for t in traces:
            assert owners.setdefault(id(t), i) == i, "a trace was shared between threads"


def test_trace_stack_of_a_fresh_thread_is_empty_while_main_is_tracing():
    seen = {}

    def other():
        seen["other"] = trace_stack()

    def f(x):
        seen["main"] = len(trace_stack())
        t = threading.Thread(target=other)
        t.start()
        t.join()
        return fnp.sum(fnp.sin(x))
    fxad.grad(f)(X)
    assert seen["main"] >= 1
    assert seen["other"] == []


def test_transformation_started_in_one_thread_works_in_another():
    """A thread doing grad inside another thread's transformed function gets its own stack."""
    res = {}

    def other():
        res["g"] = fxad.grad(lambda y: fnp.sum(y ** 2))(X)
        res["stack_after"] = trace_stack()

    def f(x):
        t = threading.Thread(target=other)
        t.start()
        t.join()
        return fnp.sum(fnp.exp(x))
    np.testing.assert_allclose(fxad.grad(f)(X), np.exp(X), rtol=1e-12)
    np.testing.assert_allclose(res["g"], 2 * X, rtol=1e-12)
    assert res["stack_after"] == []


def test_sizes_of_shapes_past_int64_are_exact():
    """An aval's size is a Python int: a product past 2**63 does not wrap (NumPy's int64
    product of (2**40, 2**40) is 0)."""
    from fxad.core import ShapedArray
    shape = (2**40, 2**40)
    assert ShapedArray(shape, np.float32).size == 2**80
    assert ShapedArray((np.int64(3), 5), np.float32).size == 15
    assert type(ShapedArray((np.int64(3), 5), np.float32).size) is int
    assert fxad.ShapeDtypeStruct(shape, np.float32).size == 2**80
    assert ShapedArray((), np.float32).size == 1

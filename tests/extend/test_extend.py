"""fxad.extend: a primitive defined on the public API works under every transformation; the
Interpreter runs programs with per-primitive handlers; a Trace written on the API composes
with grad, vmap and jit and leaves the trace stack as it found it."""
import inspect
import threading

import numpy as np
import pytest

import fxad
import fxad.extend as fe
import fxad.numpy as fnp
from fxad.errors import EscapedTracerError, RuleNotImplementedError
from fxad.test_util import check_grads

# --- a primitive defined with the public API ------------------------------------------------
cube = fe.elementwise_primitive("test_extend_cube", lambda x: x * x * x)
fe.defderiv(cube, lambda x: 3.0 * x * x)


def test_public_names_documented():
    for name in fe.__all__:
        obj = getattr(fe, name)
        assert inspect.ismodule(obj) or obj.__doc__, name
    for mod in (fe.core, fe.interpreters, fe.rules, fe.trace):
        for name in mod.__all__:
            assert getattr(mod, name).__doc__, f"{mod.__name__}.{name}"


def test_new_primitive_everywhere():
    x = np.array([0.5, -1.2, 2.0])
    np.testing.assert_allclose(cube.bind(x), x ** 3)
    np.testing.assert_allclose(fxad.jit(lambda v: cube.bind(v))(x), x ** 3)
    np.testing.assert_allclose(fxad.vmap(lambda v: cube.bind(v))(x[:, None]), x[:, None] ** 3)
    np.testing.assert_allclose(fxad.grad(lambda v: cube.bind(v).sum())(x), 3 * x ** 2)
    check_grads(lambda v: cube.bind(v), (x,), order=2, modes=("fwd", "rev"))
    assert cube.elementwise
    assert fe.primitive("test_extend_cube") is cube
    assert cube in fe.primitives()


def test_unknown_primitive_name():
    with pytest.raises(fxad.errors.FxadValueError, match="primitives()"):
        fe.primitive("no such primitive")


def test_def_jet_reports_availability():
    if fe.has_jet():
        return
    with pytest.raises(fxad.errors.FxadTypeError, match="Taylor"):
        fe.def_jet(cube, lambda *a, **k: None)


# --- interpreters ------------------------------------------------------------------------------
def _counter():
    counts = {}

    def default(interp, eqn, ins):
        counts[eqn.primitive.name] = counts.get(eqn.primitive.name, 0) + 1
        for sub in fe.subjaxprs(eqn):
            interp.run(sub, *[None] * len(sub.jaxpr.invars))
        return [None] * len(eqn.outvars)
    return fe.Interpreter(default=default), counts


def test_interpreter_counts_and_recurses():
    def f(x):
        y = fxad.jit(lambda z: fnp.sin(z) * z)(x)
        return fnp.sum(y * 2.0)
    interp, counts = _counter()
    closed = fxad.make_jaxpr(f)(np.ones(3))
    interp.run(closed, None)
    assert counts.get("sin") == 1 and counts.get("reduce_sum") == 1
    assert counts.get("mul") == 2


def test_interpreter_evaluates_like_eval_jaxpr():
    ev = fe.Interpreter(default=lambda interp, eqn, ins: (
        eqn.primitive.bind(*ins, **eqn.params) if eqn.primitive.multiple_results
        else [eqn.primitive.bind(*ins, **eqn.params)]))
    f = lambda x: fnp.cos(x[1:] * x[:-1]).sum() + x @ x  # noqa: E731
    x = np.linspace(0.1, 1.0, 5)
    closed = fxad.make_jaxpr(f)(x)
    np.testing.assert_allclose(ev.run(closed, x)[0], f(x))
    np.testing.assert_allclose(fe.jaxpr_as_fun(closed)(x)[0], f(x))


def test_interpreter_missing_rule_names_primitive():
    closed = fxad.make_jaxpr(lambda x: fnp.sin(x))(1.0)
    with pytest.raises(RuleNotImplementedError, match="'sin'"):
        fe.Interpreter(name="mine").run(closed, 1.0)


def test_interpreter_checks_rule_arity():
    closed = fxad.make_jaxpr(lambda x: fnp.sin(x))(1.0)
    bad = fe.Interpreter(default=lambda i, e, ins: [])
    with pytest.raises(fxad.errors.JaxprTypeError, match="returned 0 values"):
        bad.run(closed, 1.0)


def test_stage_under_transformation():
    def f(x):
        closed = fe.stage(lambda y: [y * x], [fe.ShapedArray((), np.float64)])
        fe.check_jaxpr(closed.jaxpr)
        return fe.jaxpr_as_fun(closed)(2.0)[0]
    np.testing.assert_allclose(fxad.grad(f)(3.0), 2.0)
    with pytest.raises(fxad.errors.FxadValueError, match="list or tuple"):
        fe.stage(lambda y: y, [fe.ShapedArray((), np.float64)])


# --- traces ------------------------------------------------------------------------------------
class CountTrace(fe.Trace):
    def __init__(self, level, name, counts):
        super().__init__(level, name)
        self.counts = counts

    def process_primitive(self, prim, args, params):
        self.counts[prim.name] = self.counts.get(prim.name, 0) + 1
        out = prim.bind(*[self.unbox(a) for a in args], **params)
        return [self.box(o) for o in out] if prim.multiple_results else self.box(out)

    def box(self, x):
        return CountTracer(self, x)

    def unbox(self, x):
        return x.val if isinstance(x, CountTracer) and x._trace is self else x


class CountTracer(fe.Tracer):
    __slots__ = ("val",)

    def __init__(self, trace, val):
        self._trace, self.val = trace, val

    aval = property(lambda self: fe.get_aval(self.val))


def count(f):
    def wrapped(x):
        counts = {}
        with fe.new_trace(CountTrace, "count", counts=counts) as trace:
            out = f(trace.box(x))
            return trace.unbox(out), counts
    return wrapped


def f_test(x):
    return fnp.sum(fnp.sin(x) * x)


def test_trace_counts_and_values():
    x = np.array([0.3, 1.1])
    out, counts = count(f_test)(x)
    np.testing.assert_allclose(out, f_test(x))
    assert counts == {"sin": 1, "mul": 1, "reduce_sum": 1}


@pytest.mark.parametrize("outer", ["grad", "vmap", "jit"])
def test_trace_composes(outer):
    x = np.array([0.3, 1.1])
    g = lambda v: count(f_test)(v)[0]  # noqa: E731
    want = {"grad": lambda v: np.sin(v) + v * np.cos(v),
            "vmap": lambda v: np.sin(v) * v,
            "jit": lambda v: np.sum(np.sin(v) * v)}[outer]
    if outer == "grad":
        got = fxad.grad(g)(x)
    elif outer == "vmap":
        got = fxad.vmap(g)(x[:, None])
    else:
        got = fxad.jit(g)(x)
    np.testing.assert_allclose(got, want(x))


def test_trace_inside_grad_sees_tangent_program():
    x = np.array([0.3, 1.1])
    (g, counts) = count(fxad.grad(f_test))(x)
    np.testing.assert_allclose(g, np.sin(x) + x * np.cos(x))
    assert counts["sin"] >= 1 and counts["cos"] >= 1


def test_inline_call_and_non_call():
    seen = []

    class Inline(CountTrace):
        def process_primitive(self, prim, args, params):
            if prim.inline is not None:
                return fe.inline_call(prim, args, params)
            seen.append(prim.name)
            return super().process_primitive(prim, args, params)
    x = np.array([0.3, 1.1])
    with fe.new_trace(Inline, "inline", counts={}) as trace:
        out = trace.unbox(fxad.jit(f_test)(trace.box(x)))
    np.testing.assert_allclose(out, f_test(x))
    assert "sin" in seen
    with pytest.raises(fxad.errors.FxadTypeError, match="not a call"):
        fe.inline_call(fe.primitive("sin"), [x], {})


def test_new_trace_restores_stack_and_escape():
    before = fe.trace_stack()
    kept = []
    with pytest.raises(ZeroDivisionError):
        with fe.new_trace(CountTrace, "count", counts={}) as trace:
            kept.append(trace.box(np.ones(2)))
            assert fe.is_traced()
            1 / 0
    assert fe.trace_stack() == before and not fe.is_traced()
    with pytest.raises(EscapedTracerError):
        fnp.sin(kept[0])


def test_trace_stack_is_per_thread():
    seen = []
    with fe.new_trace(CountTrace, "count", counts={}):
        t = threading.Thread(target=lambda: seen.append(fe.trace_stack()))
        t.start()
        t.join()
    assert seen == [[]]

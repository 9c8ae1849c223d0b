"""make_jaxpr: the staged program's printed equations, types and shapes; staging a derivative
(no tracers left, evaluates at other inputs); static arguments."""
import re

import numpy as np

import fxad
import fxad.numpy as fnp

RTOL = 1e-10
ATOL = 1e-12


def close(a, b, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, np.float64),
                               rtol=rtol, atol=atol)


def _sech2(x):
    return 1.0 - np.tanh(x) ** 2


# --- make_jaxpr -------------------------------------------------------------------------------

def test_make_jaxpr_prints_equations():
    jaxpr = fxad.make_jaxpr(lambda a, b: a * b)(np.ones(3), np.ones(3))
    text = str(jaxpr)
    lines = [ln.strip() for ln in text.splitlines()]
    assert "c:f64[3] = mul a b" in lines, text
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["mul"]


def test_make_jaxpr_types_and_shapes():
    def f(x, y):
        return fnp.sum(fnp.sin(x) + y, axis=0)
    text = str(fxad.make_jaxpr(f)(np.ones((2, 3), np.float32), np.ones(3, np.float32)))
    assert re.search(r"\w+:f32\[2,3\] = sin a\b", text), text
    assert re.search(r"\w+:f32\[2,3\] = add \w+ b\b", text), text
    assert re.search(r"\w+:f32\[3\] = reduce_sum", text), text
    lines = [ln.strip() for ln in text.splitlines()]
    eq_lines = [ln for ln in lines if re.match(r"^\w+:\w+\[[\d,]*\] = ", ln)]
    assert len(eq_lines) >= 3


def test_make_jaxpr_of_grad_has_no_tracers_and_evaluates():
    f = lambda x: fnp.sum(fnp.tanh(x) ** 2)  # noqa: E731
    x = np.array([0.2, -0.4])
    closed = fxad.make_jaxpr(fxad.grad(f))(x)
    text = str(closed)
    assert "Tracer" not in text
    assert "tanh" in text
    (res,) = closed(x + 1.0)  # the staged program works at other inputs of this type
    close(res, 2 * np.tanh(x + 1.0) * _sech2(x + 1.0))


def test_make_jaxpr_static_argnums():
    def f(x, n):
        for _ in range(n):
            x = fnp.sin(x)
        return x
    names = [e.primitive.name for e in fxad.make_jaxpr(f, static_argnums=1)(1.0, 3).jaxpr.eqns]
    assert names == ["sin", "sin", "sin"]

"""linearize is JVP followed by partial evaluation: the linearized program agrees with jvp, is
linear in the tangent and holds only linear primitives; linear_transpose transposes such a
program (vjp = linearize + transpose).

Every expected value is computed by hand (analytic derivatives evaluated with plain NumPy)."""
import re

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp

RTOL = 1e-10
ATOL = 1e-12


def close(a, b, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, np.float64),
                               rtol=rtol, atol=atol)


def _sech2(x):
    return 1.0 - np.tanh(x) ** 2


# --- linearize --------------------------------------------------------------------------------

LINEAR_NAMES = {"mul", "div", "neg", "add", "sub", "reduce_sum", "broadcast_to", "reshape",
                "transpose", "convert_element_type", "dot_general", "getitem", "scatter_add",
                "select", "concatenate", "flip"}


def _eqn_names(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


@pytest.mark.parametrize("f,df", [
    (lambda x: fnp.sum(fnp.sin(x) * fnp.exp(x)),
     lambda x: (np.cos(x) + np.sin(x)) * np.exp(x)),
    (lambda x: fnp.sum(fnp.tanh(x) ** 2),
     lambda x: 2 * np.tanh(x) * _sech2(x)),
    (lambda x: fnp.sum(fnp.log(1.0 + x * x) * fnp.cos(x)),
     lambda x: 2 * x / (1 + x * x) * np.cos(x) - np.log(1 + x * x) * np.sin(x)),
    (lambda x: fnp.sqrt(fnp.sum(fnp.exp(x) ** 2)),
     lambda x: np.exp(2 * x) / np.sqrt(np.sum(np.exp(2 * x)))),
], ids=["sin*exp", "tanh^2", "log*cos", "sqrt-sum-exp2"])
def test_linearize_matches_jvp_and_is_linear(f, df):
    x = np.array([-0.8, 0.1, 0.5, 1.3])
    v = np.array([0.3, -1.0, 2.0, 0.25])
    y, f_jvp = fxad.linearize(f, x)
    close(y, f(x))
    expected = np.sum(df(x) * v)
    close(f_jvp(v), expected)
    close(fxad.jvp(f, (x,), (v,))[1], expected)
    # linear in v: f_jvp(a v + b w) = a f_jvp(v) + b f_jvp(w)
    w = np.array([1.0, 0.5, -0.5, 0.0])
    close(f_jvp(2.0 * v - 3.0 * w), 2.0 * f_jvp(v) - 3.0 * f_jvp(w))
    names = _eqn_names(f_jvp.jaxpr)
    assert names, "the linear program should not be empty"
    assert set(names) <= LINEAR_NAMES, f"nonlinear primitives in linear program: {names}"
    text = str(f_jvp.jaxpr)
    for bad in ("sin", "cos", "tanh", "exp", "log", "sqrt", "integer_pow", "pow", "rsqrt"):
        assert not re.search(rf"=\s*{bad}\b", text), text


def test_linearize_pytree_and_multiple_args():
    def f(p, s):
        return {"out": p["a"] * fnp.sin(p["b"]) * s}
    p = {"a": np.array([1.0, 2.0]), "b": np.array([0.3, -0.4])}
    s = 1.5
    y, f_jvp = fxad.linearize(f, p, s)
    close(y["out"], p["a"] * np.sin(p["b"]) * s)
    tp = {"a": np.array([0.1, 0.2]), "b": np.array([-1.0, 1.0])}
    ts = np.float64(0.5)
    t = f_jvp(tp, ts)
    expected = (tp["a"] * np.sin(p["b"]) * s + p["a"] * np.cos(p["b"]) * tp["b"] * s
                + p["a"] * np.sin(p["b"]) * ts)
    close(t["out"], expected)


def test_linear_transpose_matches_matrix_transpose():
    A = np.array([[1.0, 2.0, -1.0], [0.0, 3.0, 4.0], [5.0, -2.0, 0.5], [1.0, 1.0, 1.0]])
    f = lambda x: A @ x  # noqa: E731
    ft = fxad.linear_transpose(f, np.zeros(3))
    ct = np.array([1.0, -1.0, 2.0, 0.5])
    (res,) = ft(ct)
    close(res, A.T @ ct)

    B = np.array([[1.0, 2.0, 0.0], [-1.0, 0.5, 3.0], [2.0, 2.0, -4.0]])
    g = lambda x: B @ x + 2 * x  # noqa: E731
    gt = fxad.linear_transpose(g, np.zeros(3))
    for c in (np.array([1.0, 0.0, 0.0]), np.array([0.3, -2.0, 1.5])):
        (r,) = gt(c)
        close(r, (B.T + 2 * np.eye(3)) @ c)


def test_linear_transpose_two_inputs_and_structure():
    A = np.array([[1.0, 2.0], [3.0, 4.0], [-1.0, 0.0]])
    f = lambda x, y: {"u": A @ x - 3.0 * y, "v": fnp.sum(x)}  # noqa: E731
    ft = fxad.linear_transpose(f, np.zeros(2), np.zeros(3))
    cu, cv = np.array([1.0, 2.0, -1.0]), 0.5
    tx, ty = ft({"u": cu, "v": np.float64(cv)})
    close(tx, A.T @ cu + cv)
    close(ty, -3.0 * cu)

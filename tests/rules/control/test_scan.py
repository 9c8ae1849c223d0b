"""Rule table: `scan` (fxad.rules.control.scan), and its bodies' hoisting plan
(fxad.rules.control._scan_plan): carry-independent work is hoisted before the loop, work
whose results only leave as stacked outputs is sunk after it, pass-through carries become
constants and accumulators of stacked outputs become one sum. Each case is checked against
the same loop in Python, eagerly, under jit, and differentiated."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.rules.control._scan_plan import plan_scan
from fxad.test_util import check_grads

from ..common import Row, floats, row_tests

R = np.random.default_rng(0)
W = R.normal(size=(3, 3)) * 0.5
XS = R.normal(size=(6, 3))


def _rnn(h0, xs):
    """An RNN over xs (its steps stacked), the hidden states as outputs."""
    return lax.scan(lambda h, x: (fnp.tanh(W @ h + W @ x), fnp.sin(h) * x), h0, xs)


TABLE = [
    Row("scan", lambda h0, xs: _rnn(h0, xs), [(3,), (4, 3)], floats(-1, 1)),
    Row("scan_reverse", lambda h0, xs: lax.scan(lambda h, x: (h * fnp.cos(x), h + x), h0, xs,
                                                reverse=True), [(3,), (4, 3)], floats(-1, 1)),
]
test_row = row_tests(TABLE)


def python_scan(f, init, xs, reverse=False):
    carry, ys = init, []
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for i in order:
        carry, y = f(carry, xs[i])
        ys.append((i, y))
    ys.sort(key=lambda p: p[0])
    return carry, fxad.tree_util.tree_map(lambda *a: fnp.stack(a), *[y for _, y in ys])


BODIES = {
    # hoisted: W @ x and sin(x) do not depend on the carry; sunk: the ys-only work on h
    "rnn": lambda c, x: ((fnp.tanh(W @ c + W @ x), c),
                         (fnp.sum(fnp.tanh(W @ c + W @ x) ** 2), fnp.sin(x) * 2.0)),
    # a carry passed through unchanged, one that swaps, an accumulator of a stacked output
    "passthrough-accumulate": lambda c, x: ((c[0], c[2] * fnp.cos(x), c[1] + 0.5,
                                             c[3] + fnp.sin(c[1] * x)),
                                            (fnp.sin(c[1] * x), x, c[0])),
    # the accumulator is also an output, so it must stay a carry
    "accumulator-also-output": lambda c, x: ((c[0] + fnp.sin(x * c[1]), c[1] * 0.9),
                                             (c[0], fnp.sin(x * c[1]))),
    # ys that are literals / constants / old carries
    "odd-outputs": lambda c, x: (c * fnp.cos(x), (0.0 * x, c, W[0] * 1.0)),
}
INITS = {
    "rnn": (np.ones(3) * 0.1, np.zeros(3)),
    "passthrough-accumulate": (np.ones(3), np.full(3, 0.3), np.full(3, 0.7), np.zeros(3)),
    "accumulator-also-output": (np.zeros(3), np.ones(3)),
    "odd-outputs": np.ones(3),
}


def _run(name, reverse, use_lax):
    def f(init, xs):
        body = BODIES[name]
        if name == "rnn":  # carry is a tuple (h, h_prev); keep it a pair
            body = lambda c, x: BODIES["rnn"](c[0], x)  # noqa: E731
        if use_lax:
            return lax.scan(body, init, xs, reverse=reverse)
        return python_scan(body, init, xs, reverse)
    return f


def _total(out):
    return sum(fnp.sum(fnp.sin(leaf)) for leaf in fxad.tree_util.tree_leaves(out))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("name", list(BODIES))
def test_scan_plan_matches_python_loop(name, reverse):
    init = INITS[name]
    want = _run(name, reverse, False)(init, XS)
    for f in (_run(name, reverse, True), fxad.jit(_run(name, reverse, True))):
        got = f(init, XS)
        for a, b in zip(fxad.tree_util.tree_leaves(got), fxad.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    loss = lambda use_lax: lambda i, x: _total(_run(name, reverse, use_lax)(i, x))  # noqa
    g_want = fxad.grad(loss(False), argnums=(0, 1))(init, XS)
    for g in (fxad.grad(loss(True), argnums=(0, 1)),
              fxad.jit(fxad.grad(loss(True), argnums=(0, 1)))):
        for a, b in zip(fxad.tree_util.tree_leaves(g(init, XS)),
                        fxad.tree_util.tree_leaves(g_want)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    check_grads(lambda x: _total(_run(name, reverse, True)(init, x)), (XS,), order=2)


def test_rnn_reverse_mode_forms_the_weight_cotangent_outside_the_loop():
    """The transposed loop of an RNN has no outer product: dW is one matrix product."""
    def loss(W, xs):
        h, _ = lax.scan(lambda h, x: (fnp.tanh(W @ h + x), None), np.zeros(3), xs)
        return fnp.sum(h)
    text = fxad.jit(fxad.grad(loss)).lower(W, XS).as_text()
    jaxpr = fxad.jit(fxad.grad(loss)).lower(W, XS).jaxpr
    from fxad.ir.simplify import simplify
    scans = [e for e in simplify(jaxpr).jaxpr.eqns if e.primitive.name == "scan"]
    assert len(scans) == 2, text
    for e in scans:
        body = {q.primitive.name for q in e.params["jaxpr"].jaxpr.eqns}
        assert not any(q.primitive.name == "dot_general" and not q.params["dimension_numbers"]
                       [0][0] for q in e.params["jaxpr"].jaxpr.eqns), body
    # the loop bodies are small: one matvec and a few elementwise ops each
    assert max(len(e.params["jaxpr"].jaxpr.eqns) for e in scans) <= 5, text


def test_plan_leaves_a_body_alone_when_nothing_moves():
    from fxad.control_flow import _trace
    from fxad.tree_util import tree_flatten
    from fxad.core import ShapedArray
    def body(c, x):
        t = c * x  # the output is also what the next carry needs: everything stays
        return t + c, t
    jaxpr, consts, _ = _trace(body, tree_flatten((0, 0))[1],
                              [ShapedArray((3,), np.float64)] * 2, "body")
    assert plan_scan(jaxpr, 0, 1) is None

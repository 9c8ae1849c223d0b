"""fxad.jet: JAX's signature and conventions, pytrees, errors, control flow, custom rules, and
composition with grad, vmap and jit (both backends)."""
from __future__ import annotations

from math import factorial

import numpy as np
import pytest

import fxad
import fxad.numpy as jnp
from fxad import lax
from fxad.errors import FxadTypeError, FxadValueError
from fxad.test_util import check_jet

X = np.array([0.3, -0.7, 1.1])
V = np.array([1.0, 0.5, -2.0])


def _terms(v, order):
    return (v,) + (np.zeros_like(v),) * (order - 1)


def nested(f, x, v, order):
    out, g = [], f
    for _ in range(order):
        g = (lambda h: lambda y: fxad.jvp(h, (y,), (v,))[1])(g)
        out.append(g(x))
    return out


# --- the signature and the convention ------------------------------------------------------

def test_terms_are_derivatives_along_the_path_and_raw_gives_taylor_coefficients():
    f = lambda x: jnp.sin(x) * jnp.exp(x)
    y, terms = fxad.jet(f, (X,), (_terms(V, 6),))
    np.testing.assert_allclose(y, f(X), rtol=1e-15)
    want = nested(f, X, V, 6)
    for k in range(6):
        np.testing.assert_allclose(terms[k], want[k], rtol=1e-12, atol=1e-12)
    _, raw = fxad.jet(f, (X,), (_terms(V, 6),), raw=True)
    for k in range(6):
        np.testing.assert_allclose(raw[k] * factorial(k + 1), want[k], rtol=1e-12, atol=1e-12)


def test_a_curved_path_gives_the_chain_rule_of_faa_di_bruno():
    """x(t) = x + t v + t^2/2 w: the second term is f'' v v + f' w."""
    w = np.array([0.2, -1.0, 0.4])
    _, terms = fxad.jet(jnp.tanh, (X,), ((V, w),))
    t = np.tanh(X)
    np.testing.assert_allclose(terms[1], -2 * t * (1 - t ** 2) * V ** 2 + (1 - t ** 2) * w,
                               rtol=1e-13)


def test_high_order_raw_coefficients_do_not_overflow():
    """exp along t: raw coefficients 1/k! underflow gracefully; scaled ones would need k!."""
    _, raw = fxad.jet(jnp.exp, (0.0,), ((1.0,) + (0.0,) * 199,), raw=True)
    assert np.isfinite(raw).all()
    np.testing.assert_allclose(raw[9], 1 / factorial(10), rtol=1e-13)
    with pytest.raises(FxadValueError, match="raw=True"):
        fxad.jet(jnp.exp, (0.0,), ((1.0,) + (0.0,) * 199,))


def test_scaled_terms_are_refused_where_they_overflow_the_dtype():
    """float32's last finite factorial is 34!: a scaled term beyond it would come out as
    0 (going in) or inf (coming out), so it is refused with the fix; order 34 still works."""
    x32 = np.float32(0.3)
    terms = (np.float32(1.0),) + (np.float32(0.0),) * 33
    _, out = fxad.jet(jnp.sin, (x32,), (terms,))
    assert out[-1].dtype == np.float32 and np.isfinite(out).all()
    np.testing.assert_allclose(out[3], np.sin(np.float32(0.3)), rtol=1e-6)  # 4th derivative
    with pytest.raises(FxadValueError, match=r"float32.*raw=True"):
        fxad.jet(jnp.sin, (x32,), (terms + (np.float32(0.0),),))
    with pytest.raises(FxadValueError, match=r"float32.*raw=True"):  # a float32 output
        fxad.jet(lambda x: jnp.sin(x).astype(np.float32), (0.3,), ((1.0,) + (0.0,) * 40,))


def test_pytrees_in_and_out():
    def f(p):
        return {"s": jnp.sum(p["a"] * p["b"][0]), "t": (p["a"] ** 2,)}
    p = {"a": X, "b": [V]}
    dp = {"a": V, "b": [X]}
    zero = fxad.tree_util.tree_map(np.zeros_like, dp)
    y, terms = fxad.jet(f, (p,), ((dp, zero),))
    assert set(terms) == {"s", "t"} and len(terms["s"]) == 2 and len(terms["t"][0]) == 2
    np.testing.assert_allclose(terms["s"][0], np.sum(V * V + X * X), rtol=1e-14)
    np.testing.assert_allclose(terms["s"][1], 2 * np.sum(V * X), rtol=1e-14)
    np.testing.assert_allclose(terms["t"][0][1], 2 * V ** 2, rtol=1e-14)


def test_experimental_jet_is_the_same_function():
    from fxad.experimental.jet import jet
    assert jet is fxad.jet


@pytest.mark.parametrize("call,err,match", [
    (lambda: fxad.jet(jnp.sin, (X, X), (_terms(V, 2),)), FxadTypeError, "one sequence"),
    (lambda: fxad.jet(lambda a, b: a * b, (X, X), (_terms(V, 2), _terms(V, 3))),
     FxadValueError, "same number of terms"),
    (lambda: fxad.jet(jnp.sin, (X,), (V,)), FxadTypeError, "tuple or list of terms"),
    (lambda: fxad.jet(jnp.sin, (X,), ((V[:2],),)), FxadTypeError, "shape and dtype"),
])
def test_errors_name_the_fix(call, err, match):
    with pytest.raises(err, match=match):
        call()


def test_integer_arguments_have_no_path_and_integer_outputs_zero_terms():
    y, terms = fxad.jet(lambda x, n: (x ** n, n * 2), (X, 3), (_terms(V, 3), (0, 0, 0)))
    np.testing.assert_allclose(terms[0][1], 6 * X * V ** 2, rtol=1e-14)
    assert all(np.all(t == 0) for t in terms[1])


# --- control flow and custom rules ---------------------------------------------------------

def _while(x):
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) + c[1]),
                          (0, x))[1]


CONTROL = [
    ("cond", lambda x: lax.cond(jnp.sum(x) > 0, lambda y: jnp.sin(y) * y, jnp.cos, x)),
    ("switch", lambda x: lax.switch(1, [jnp.sin, jnp.tanh, jnp.exp], x)),
    ("scan", lambda x: lax.scan(lambda c, a: (jnp.sin(c) * a + c, c * c), x,
                                jnp.arange(3.0))),
    ("fori_loop", lambda x: lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c) * 1.5 + c * 0.1, x)),
    ("while_loop", _while),
    ("jit", fxad.jit(lambda x: jnp.exp(jnp.sin(x)))),
    ("checkpoint", fxad.checkpoint(lambda x: jnp.exp(jnp.sin(x)) * x)),
    ("custom_jvp (softplus, relu, gelu)",
     lambda x: fxad.nn.softplus(x) * fxad.nn.gelu(x) + fxad.nn.relu(x) ** 3),
    ("custom_vjp", fxad.checkpoint(lambda x: jnp.logaddexp(x, 2 * x))),
]


@pytest.mark.parametrize("name,f", CONTROL, ids=[c[0] for c in CONTROL])
def test_control_flow_and_custom_rules(name, f):
    check_jet(f, (X,), order=5)


@pytest.mark.parametrize("name,f", CONTROL, ids=[c[0] for c in CONTROL])
def test_control_flow_under_jit_matches_eager(name, f):
    """Under jit the predicate and trip counts are traced: the rules stage programs."""
    g = lambda x, v: fxad.jet(f, (x,), (_terms(v, 4),))[1]
    want = g(X, V)
    got = fxad.jit(g)(X, V)
    for a, b in zip(fxad.tree_util.tree_leaves(got), fxad.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_custom_vjp_function_through_its_forward_rule():
    @fxad.custom_vjp
    def f(x):
        return jnp.sin(x) * x

    f.defvjp(lambda x: (f(x), x), lambda x, g: (g * (jnp.cos(x) * x + jnp.sin(x)),))
    check_jet(f, (X,), order=4)


def test_custom_jvp_rule_is_used_not_the_function_body():
    """A custom_jvp whose body is not differentiable (a callback) gets its jet from the rule."""
    @fxad.custom_jvp
    def f(x):
        return fxad.pure_callback(np.sin, fxad.ShapeDtypeStruct(x.shape, x.dtype), x)

    f.defjvp(lambda p, t: (f(p[0]), jnp.cos(p[0]) * t[0]))
    _, terms = fxad.jet(f, (X,), (_terms(V, 3),))
    want = nested(jnp.sin, X, V, 3)
    for k in range(3):
        np.testing.assert_allclose(terms[k], want[k], rtol=1e-13, atol=1e-13)


# --- composition ----------------------------------------------------------------------------

def _second_term(x, v):
    return fxad.jet(lambda y: jnp.sum(jnp.tanh(y) * jnp.exp(y)), (x,), (_terms(v, 3),))[1][2]


def test_grad_of_a_jet_output():
    fxad.test_util.check_grads(_second_term, (X, V), order=1, modes=("fwd", "rev"))


def test_vmap_of_jet_matches_a_loop():
    xs = np.stack([X, X + 0.5, -X])
    got = fxad.vmap(_second_term, in_axes=(0, None))(xs, V)
    np.testing.assert_allclose(got, [_second_term(x, V) for x in xs], rtol=1e-13)


def test_jet_of_a_vmapped_function():
    f = fxad.vmap(lambda x: jnp.sin(x) * x)
    check_jet(f, (np.stack([X, -X]),), order=4)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_jit_of_jet_matches_eager(backend):
    got = fxad.jit(_second_term, backend=backend)(X, V)
    np.testing.assert_allclose(got, _second_term(X, V), rtol=1e-13)


def test_jet_inside_jvp_and_jvp_inside_jet():
    f = lambda x: jnp.sin(x) ** 2
    # d/dx of the 2nd derivative along v = the 3rd derivative along v
    _, t = fxad.jvp(lambda x: fxad.jet(f, (x,), (_terms(V, 2),))[1][1], (X,), (V,))
    np.testing.assert_allclose(t, nested(f, X, V, 3)[2], rtol=1e-12, atol=1e-12)
    g = lambda x: fxad.jvp(f, (x,), (V,))[1]
    _, terms = fxad.jet(g, (X,), (_terms(V, 2),))
    np.testing.assert_allclose(terms[1], nested(f, X, V, 3)[2], rtol=1e-12, atol=1e-12)


# --- extreme inputs and dtypes ---------------------------------------------------------------

@pytest.mark.parametrize("name,f,x", [
    ("tanh saturated", jnp.tanh, np.array([-40.0, 40.0])),
    ("logistic saturated", fxad.nn.sigmoid, np.array([-800.0, 800.0])),
    ("exp near overflow", jnp.exp, np.array([700.0, -700.0])),
    ("log of tiny", jnp.log, np.array([1e-300, 1e300])),
    ("sqrt of huge", jnp.sqrt, np.array([1e300, 1e-300])),
])
def test_extreme_inputs_match_nested_jvps(name, f, x):
    """Finite where nested jvps are finite, to rounding (no 0 * inf, no overflow in k!)."""
    v = np.ones_like(x)
    _, terms = fxad.jet(f, (x,), (_terms(v, 4),))
    want = nested(f, x, v, 4)
    for k in range(4):
        assert np.all(np.isfinite(terms[k]) == np.isfinite(want[k])), (k, terms[k], want[k])
        np.testing.assert_allclose(terms[k], want[k], rtol=1e-12, atol=0)


def test_float32_in_float32_out():
    x32, v32 = X.astype(np.float32), V.astype(np.float32)
    y, terms = fxad.jet(lambda x: jnp.tanh(x) * jnp.exp(x), (x32,), (_terms(v32, 3),))
    assert y.dtype == np.float32 and all(t.dtype == np.float32 for t in terms)


def test_thirty_raw_coefficients_of_sin():
    _, raw = fxad.jet(jnp.sin, (0.0,), ((1.0,) + (0.0,) * 29,), raw=True)
    want = [0.0 if k % 2 == 0 else (-1) ** (k // 2) / factorial(k) for k in range(1, 31)]
    np.testing.assert_allclose(raw, want, rtol=1e-13, atol=1e-40)

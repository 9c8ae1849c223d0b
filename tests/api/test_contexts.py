"""JAX's top-level context managers a ported program uses (named_scope,
ensure_compile_time_eval, default_matmul_precision, numpy_dtype_promotion,
numpy_rank_promotion), clear_caches, and custom_gradient: what they accept, what they refuse,
and that values and derivatives are what they should be."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.errors import FxadTypeError, FxadValueError
from fxad.test_util import check_grads

X = np.array([0.3, -1.2, 2.0])


def f(x):
    return fnp.sum(fnp.sin(x) * x)


def test_named_scope_is_a_context_manager_and_a_decorator():
    with fxad.named_scope("layer1"):
        v = fxad.jit(f)(X)
    assert v == f(X)
    g = fxad.named_scope("block")(f)
    assert g(X) == f(X)
    np.testing.assert_array_equal(fxad.grad(g)(X), fxad.grad(f)(X))
    with pytest.raises(FxadValueError, match="string"):
        fxad.named_scope(3)


def test_ensure_compile_time_eval_computes_constants_at_once_under_jit():
    @fxad.jit
    def h(x):
        with fxad.ensure_compile_time_eval():
            n = fnp.sum(fnp.arange(4))  # a concrete value even while tracing
            assert isinstance(n, (np.ndarray, np.generic))
            k = int(n)
        return x * k
    np.testing.assert_array_equal(h(X), X * 6)


@pytest.mark.parametrize("name", [None, "default", "high", "highest", "bfloat16",
                                  "tensorfloat32", "float32", "F32_F32_F32", "BF16_BF16_F32_X3"])
def test_default_matmul_precision_accepts_jax_names_and_changes_no_value(name):
    a, b = np.arange(6.0).reshape(2, 3) / 7, np.arange(12.0).reshape(3, 4) / 3
    with fxad.default_matmul_precision(name):
        got = fxad.jit(fnp.matmul)(a, b)
    np.testing.assert_array_equal(got, fnp.matmul(a, b))
    np.testing.assert_array_equal(fxad.default_matmul_precision(name)(fnp.matmul)(a, b), got)


def test_promotion_modes_fxad_does_not_implement_are_refused():
    with fxad.numpy_dtype_promotion("standard"), fxad.numpy_rank_promotion("allow"):
        assert (fnp.ones(3, np.float32) + np.ones((2, 3))).shape == (2, 3)
    with pytest.raises(FxadValueError, match="'strict' is not available"):
        fxad.numpy_dtype_promotion("strict")
    for mode in ["warn", "raise"]:
        with pytest.raises(FxadValueError, match="only 'allow'"):
            fxad.numpy_rank_promotion(mode)
    with pytest.raises(FxadValueError, match="not one of JAX's precisions"):
        fxad.default_matmul_precision("bf16")


def test_clear_caches_makes_jit_trace_again():
    traces = []

    def body(x):
        traces.append(1)
        return x * 2
    g = fxad.jit(body)
    g(X)
    g(X)
    assert len(traces) == 1
    fxad.clear_caches()
    np.testing.assert_array_equal(g(X), X * 2)
    assert len(traces) == 2
    g(X)
    assert len(traces) == 2


@fxad.custom_gradient
def clipped_log(x):
    """log x, with gradient 1/x clipped to at most 10."""
    return fnp.log(x), lambda g: (g * fnp.minimum(1.0 / x, 10.0),)


@fxad.custom_gradient
def prod_scaled(x, y):
    return x * y, lambda g: (2.0 * g * y, 3.0 * g * x)


@fxad.custom_gradient
def bare(x):  # one argument: the rule may return its cotangent alone
    return x ** 2, lambda g: g * fnp.cos(x)


def test_custom_gradient_uses_the_rule_in_reverse_mode():
    x = np.array([0.05, 0.5, 2.0])
    np.testing.assert_array_equal(clipped_log(x), np.log(x))
    want = np.minimum(1 / x, 10.0)
    for run in (lambda h: h, fxad.jit):
        np.testing.assert_allclose(run(fxad.grad(lambda v: fnp.sum(clipped_log(v))))(x), want,
                                   rtol=1e-15)
    np.testing.assert_allclose(fxad.vmap(fxad.grad(clipped_log))(x), want, rtol=1e-15)
    gx, gy = fxad.grad(lambda a, b: fnp.sum(prod_scaled(a, b)), argnums=(0, 1))(x, x + 1)
    np.testing.assert_allclose(gx, 2 * (x + 1), rtol=1e-15)
    np.testing.assert_allclose(gy, 3 * x, rtol=1e-15)
    np.testing.assert_allclose(fxad.grad(lambda v: fnp.sum(bare(v)))(x), np.cos(x), rtol=1e-15)
    assert bare.__name__ == "bare"


def test_custom_gradient_higher_order_and_forward_mode():
    """The rule is differentiated through (its second derivative is the rule's derivative);
    forward mode differentiates the function's value."""
    x = 0.7
    np.testing.assert_allclose(fxad.grad(fxad.grad(bare))(x), -np.sin(x), rtol=1e-14)
    np.testing.assert_allclose(fxad.jvp(bare, (x,), (1.0,))[1], 2 * x, rtol=1e-15)
    # a rule that is the true gradient passes the derivative checks
    exact = fxad.custom_gradient(lambda v: (fnp.sin(v) * v, lambda g: (g * (fnp.cos(v) * v
                                                                           + fnp.sin(v)),)))
    check_grads(exact, (X,), order=2, modes=("rev",))


def test_custom_gradient_refuses_a_function_that_is_not_a_pair():
    h = fxad.custom_gradient(lambda v: fnp.sin(v))
    with pytest.raises(FxadTypeError, match=r"must return a pair \(value, vjp\)"):
        fxad.grad(h)(1.0)

"""fxad.pure_callback: values, jit (called on every run, never folded, merged or dropped),
vmap by each vmap_method, scan bodies, errors, and differentiation through custom rules."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.errors import FxadTypeError, FxadValueError, OpaqueFunctionError
from fxad.test_util import check_grads


class Counter:
    """A callback that records the shapes it was called with."""

    def __init__(self, fn=np.sin):
        self.fn, self.calls = fn, []

    def __call__(self, *xs):
        self.calls.append(tuple(np.shape(x) for x in xs))
        return self.fn(*xs)


def sds(x, dtype=np.float64):
    return fxad.ShapeDtypeStruct(np.shape(x), dtype)


def test_values_pytrees_and_declarations():
    x = np.array([0.1, 0.2, 0.3])
    out = fxad.pure_callback(lambda a, b, c=None: {"s": a + b["k"], "p": (a * c,)},
                             {"s": sds(x), "p": (np.zeros(3),)}, x, {"k": 2.0}, c=3.0)
    np.testing.assert_array_equal(out["s"], x + 2.0)
    np.testing.assert_array_equal(out["p"][0], x * 3.0)
    # a Python number where a scalar is declared; the declaration may be any .shape/.dtype
    assert fxad.pure_callback(lambda: 2, fxad.ShapeDtypeStruct((), np.float64)) == 2.0
    got = fxad.pure_callback(lambda v: v.sum(), np.float64(0.0), x)
    assert got.dtype == np.float64 and got == x.sum()
    assert repr(fxad.ShapeDtypeStruct((2,), np.float32)) == \
        "ShapeDtypeStruct(shape=(2,), dtype=float32)"


def test_results_are_fresh_and_inputs_read_only():
    keep = np.arange(3.0)
    got = fxad.pure_callback(lambda: keep, sds(keep))
    got[0] = 99.0
    assert keep[0] == 0.0  # the result is a copy, not the callback's array
    x = np.ones(3)
    with pytest.raises(ValueError, match="read-only"):
        fxad.pure_callback(lambda v: v.__setitem__(0, 5.0) or v, sds(x), x)
    assert x[0] == 1.0


def test_jit_calls_it_on_every_run():
    cb = Counter()
    f = fxad.jit(lambda x: fxad.pure_callback(cb, sds(x), x) * 2)
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(f(x), 2 * np.sin(x))
    np.testing.assert_allclose(f(x + 1), 2 * np.sin(x + 1))
    assert len(cb.calls) == 2


def test_constant_arguments_are_staged_not_folded():
    cb = Counter()
    c = np.array([0.25, 0.5])
    f = fxad.jit(lambda x: x + fxad.pure_callback(cb, sds(c), c))
    f(np.ones(2))
    f(np.ones(2))
    assert len(cb.calls) == 2  # once per run, none while tracing
    jaxpr = fxad.make_jaxpr(lambda x: x + fxad.pure_callback(cb, sds(c), c))(np.ones(2))
    assert "pure_callback" in str(jaxpr)
    assert len(cb.calls) == 2


def test_simplification_never_merges_or_drops_it():
    cb = Counter()

    def f(x):
        a = fxad.pure_callback(cb, sds(x), x)
        b = fxad.pure_callback(cb, sds(x), x)  # identical: not merged
        fxad.pure_callback(cb, sds(x), x)      # unused: not dropped
        return a + b
    np.testing.assert_allclose(fxad.jit(f)(np.ones(2)), 2 * np.sin(np.ones(2)))
    assert len(cb.calls) == 3


def test_scan_body_calls_it_once_per_step():
    cb = Counter()

    def step(c, x):
        y = fxad.pure_callback(cb, sds(x), x)  # depends only on xs: still not hoisted
        return c + y, y
    xs = np.arange(4.0)
    c, ys = lax.scan(step, 0.0, xs)
    np.testing.assert_allclose(ys, np.sin(xs))
    np.testing.assert_allclose(c, np.sin(xs).sum())
    assert cb.calls == [((),)] * 4
    c2, _ = fxad.jit(lambda xs: lax.scan(step, 0.0, xs))(xs)
    np.testing.assert_allclose(c2, c)
    assert len(cb.calls) == 8


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims",
                                    "broadcast_all"])
@pytest.mark.parametrize("jit", [False, True])
def test_vmap_methods(method, jit):
    cb = Counter(lambda a, b: a * b)

    def f(x, y):
        return fxad.pure_callback(cb, sds(x), x, y, vmap_method=method)
    xs, y = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 3.0])
    g = fxad.vmap(f, in_axes=(0, None))
    got = (fxad.jit(g) if jit else g)(xs, y)
    np.testing.assert_allclose(got, xs * y)
    if method.startswith("sequential"):
        assert cb.calls == [((3,), (3,))] * 2
    else:
        assert cb.calls == [((2, 3), (1 if method == "expand_dims" else 2, 3))]


def test_vmap_batch_axis_not_first_and_nested():
    f = lambda x: fxad.pure_callback(np.cumsum, sds(x), x, vmap_method="sequential")  # noqa
    x = np.arange(24.0).reshape(2, 3, 4)
    got = fxad.vmap(fxad.vmap(f, in_axes=1), in_axes=2)(x)
    want = np.stack([np.stack([np.cumsum(x[:, j, k]) for j in range(3)]) for k in range(4)])
    np.testing.assert_allclose(got, want)


def test_vmap_without_method_names_the_choices():
    f = lambda x: fxad.pure_callback(np.sin, sds(x), x)  # noqa: E731
    with pytest.raises(FxadValueError, match="vmap_method='sequential'"):
        fxad.vmap(f)(np.ones((2, 3)))


@pytest.mark.parametrize("callback, decl, match", [
    (lambda x: x.astype(np.float32), np.zeros(3), "dtype float32.*declares float64"),
    (lambda x: x[:2], np.zeros(3), r"shape \(2,\).*declares \(3,\)"),
    (lambda x: (x, x), np.zeros(3), "structure"),
    (lambda x: x, object(), "need .shape and .dtype"),
])
def test_bad_results_are_clear_errors(callback, decl, match):
    with pytest.raises(FxadTypeError, match=match):
        fxad.pure_callback(callback, decl, np.ones(3))


def test_bad_arguments():
    with pytest.raises(FxadValueError, match="vmap_method must be one of"):
        fxad.pure_callback(np.sin, np.zeros(3), np.ones(3), vmap_method="loop")
    with pytest.raises(FxadTypeError, match="expects a function"):
        fxad.pure_callback(3, np.zeros(3), np.ones(3))


def test_differentiating_it_names_the_fix():
    f = lambda x: fnp.sum(fxad.pure_callback(np.sin, sds(x), x))  # noqa: E731
    with pytest.raises(OpaqueFunctionError, match="custom_jvp or fxad.custom_vjp"):
        fxad.grad(f)(np.ones(2))
    with pytest.raises(OpaqueFunctionError):
        fxad.jvp(f, (np.ones(2),), (np.ones(2),))


# sin and cos as callbacks with custom JVPs that call each other: every order works
@fxad.custom_jvp
def cb_sin(x):
    return fxad.pure_callback(np.sin, sds(x), x, vmap_method="expand_dims")


@fxad.custom_jvp
def cb_cos(x):
    return fxad.pure_callback(np.cos, sds(x), x, vmap_method="sequential")


cb_sin.defjvp(lambda p, t: (cb_sin(p[0]), cb_cos(p[0]) * t[0]))
cb_cos.defjvp(lambda p, t: (cb_cos(p[0]), -cb_sin(p[0]) * t[0]))


def test_custom_jvp_callback_in_every_mode():
    x = np.array([0.3, -1.2, 2.0])
    check_grads(cb_sin, (x,), order=3, modes=("fwd", "rev"))
    f = lambda x: fnp.sum(cb_sin(x) ** 2)  # noqa: E731
    np.testing.assert_allclose(fxad.grad(f)(x), np.sin(2 * x))
    np.testing.assert_allclose(fxad.hessian(f)(x), np.diag(2 * np.cos(2 * x)), atol=1e-14)
    np.testing.assert_allclose(fxad.jit(fxad.grad(f))(x), np.sin(2 * x))
    np.testing.assert_allclose(fxad.vmap(fxad.grad(f))(np.stack([x, x + 1])),
                               np.sin(2 * np.stack([x, x + 1])))
    np.testing.assert_allclose(fxad.jit(fxad.hessian(f))(x), np.diag(2 * np.cos(2 * x)),
                               atol=1e-14)


def raw_exp(x):
    return fxad.pure_callback(np.exp, sds(x), x, vmap_method="sequential")


@fxad.custom_vjp
def cb_exp(x):
    return raw_exp(x)


def _cb_exp_fwd(x):  # (calling cb_exp itself here would recurse in forward mode)
    y = raw_exp(x)
    return y, y


cb_exp.defvjp(_cb_exp_fwd, lambda y, ct: (ct * y,))


def test_custom_vjp_callback_forward_mode_transposes_bwd():
    x = np.array([0.1, 0.7])
    check_grads(cb_exp, (x,), order=1, modes=("fwd", "rev"))
    np.testing.assert_allclose(fxad.jvp(cb_exp, (x,), (np.ones(2),))[1], np.exp(x))
    np.testing.assert_allclose(fxad.jacfwd(cb_exp)(x), np.diag(np.exp(x)))
    np.testing.assert_allclose(fxad.jit(fxad.grad(lambda x: fnp.sum(cb_exp(x))))(x), np.exp(x))
    np.testing.assert_allclose(fxad.vmap(fxad.grad(lambda x: fnp.sum(cb_exp(x))))(
        np.stack([x, 2 * x])), np.exp(np.stack([x, 2 * x])))
    # second order differentiates fwd's residuals, and fwd is opaque: a clear error
    # (cb_sin above, a custom_jvp whose rule calls callbacks, has every order)
    with pytest.raises(OpaqueFunctionError):
        fxad.hessian(lambda x: fnp.sum(cb_exp(x)))(x)
    with pytest.raises(OpaqueFunctionError):
        fxad.grad(lambda x: fnp.sum(fxad.grad(lambda y: fnp.sum(cb_exp(y)))(x)))(x)

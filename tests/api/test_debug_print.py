"""fxad.debug.print and fxad.debug.callback: concrete values, in program order, under every
transformation; derivatives untouched; the effect survives simplification."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.test_util import check_grads

X = np.array([1.0, 2.0, 3.0])


def printed(capsys):
    return capsys.readouterr().out.splitlines()


def f(x):
    fxad.debug.print("x={x} s={s}", x=x, s=fnp.sum(x))
    return fnp.sum(x ** 2)


@pytest.mark.parametrize("transform", ["eager", "grad", "jvp", "jit", "jit_grad", "grad_jit",
                                       "linearize", "vjp", "hessian"])
def test_prints_the_primal_values_once(transform, capsys):
    run = {"eager": lambda: f(X), "grad": lambda: fxad.grad(f)(X),
           "jvp": lambda: fxad.jvp(f, (X,), (np.ones(3),)), "jit": lambda: fxad.jit(f)(X),
           "jit_grad": lambda: fxad.jit(fxad.grad(f))(X),
           "grad_jit": lambda: fxad.grad(fxad.jit(f))(X),
           "linearize": lambda: fxad.linearize(f, X)[1](np.ones(3)),
           "vjp": lambda: fxad.vjp(f, X)[1](1.0),
           "hessian": lambda: fxad.hessian(f)(X)}[transform]
    run()
    assert printed(capsys) == ["x=[1. 2. 3.] s=6.0"]


def test_jit_prints_at_run_time_every_call(capsys):
    g = fxad.jit(f)
    g(X)
    g(2 * X)
    assert printed(capsys) == ["x=[1. 2. 3.] s=6.0", "x=[2. 4. 6.] s=12.0"]
    assert "debug_callback" in str(fxad.make_jaxpr(f)(X))


def test_vmap_prints_each_example_in_order(capsys):
    fxad.vmap(f)(np.stack([X, -X]))
    fxad.jit(fxad.vmap(f))(np.stack([X, 10 * X]))
    assert printed(capsys) == ["x=[1. 2. 3.] s=6.0", "x=[-1. -2. -3.] s=-6.0",
                               "x=[1. 2. 3.] s=6.0", "x=[10. 20. 30.] s=60.0"]


def test_loops_print_every_step_in_order(capsys):
    def body(c, x):
        fxad.debug.print("x={} c={}", x, c)
        return c + x, c * x
    lax.scan(body, 0.0, np.arange(3.0))
    expected = ["x=0.0 c=0.0", "x=1.0 c=0.0", "x=2.0 c=1.0"]
    assert printed(capsys) == expected
    fxad.jit(lambda c: lax.scan(body, c, np.arange(3.0)))(0.0)
    assert printed(capsys) == expected
    fxad.grad(lambda c: lax.scan(body, c, np.arange(3.0))[0])(0.0)
    assert printed(capsys) == expected
    lax.fori_loop(0, 2, lambda i, v: (fxad.debug.print("i={}", i), v + 1)[1], 0)
    assert printed(capsys) == ["i=0", "i=1"]
    lax.cond(True, lambda v: (fxad.debug.print("yes {}", v), v)[1],
             lambda v: (fxad.debug.print("no {}", v), v)[1], 5.0)
    assert printed(capsys) == ["yes 5.0"]


def test_derivatives_are_unchanged():
    g = lambda x: (fxad.debug.callback(lambda *a: None, x, fnp.sin(x)), fnp.sin(x) * x)[1]
    check_grads(g, (X,), order=2)
    np.testing.assert_allclose(fxad.grad(lambda x: fnp.sum(g(x)))(X),
                               np.cos(X) * X + np.sin(X))


def test_callback_gets_numpy_values_and_static_leaves():
    got = []
    fxad.jit(lambda x: (fxad.debug.callback(lambda a, tag, k: got.append((type(a), tag, k)),
                                            x, "tag", k=3), x)[1])(X)
    assert got == [(np.ndarray, "tag", 3)]
    assert fxad.debug.print("{}", 1.0) is None
    with pytest.raises(TypeError, match="format must be a string"):
        fxad.debug.print(3)
    with pytest.raises(TypeError, match="expects a function"):
        fxad.debug.callback(3, X)


def test_effect_is_not_removed_by_simplification(capsys):
    # unused result, constant arguments, two identical calls: all three print
    def h(x):
        fxad.debug.print("const {}", 2.0)
        fxad.debug.print("const {}", 2.0)
        return x * 1.0
    fxad.jit(h)(X)
    assert printed(capsys) == ["const 2.0", "const 2.0"]


def test_nan_and_config_still_work_beside_printing():
    assert fxad.config.debug_nans is False
    with fxad.debug_nans():
        with pytest.raises(FloatingPointError):
            fnp.log(np.array(-1.0))
    assert fxad.debug.debug_nans is fxad.debug_nans

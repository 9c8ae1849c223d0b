"""custom_vjp, custom_jvp and stop_gradient.

The first block follows seed 001 ("double backward with custom functions"): a custom rule that
saves an input, one that saves its output, one that saves intermediates, and one whose backward
pass calls opaque NumPy code made differentiable by a second, nested custom_vjp. Each must pass
`check_grads(order=2)` in both modes. Then: pytrees, nondiff_argnums, a `fwd` that differs from
`fun`, forward mode through custom_vjp (JAX raises there; fxad must not), composition with vmap
and jit, error messages, custom_jvp, and stop_gradient.

Every expected value is an analytic derivative evaluated with plain NumPy, or the same function
written without custom rules.
"""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.test_util import check_grads

RTOL = 1e-10
ATOL = 1e-12


def close(a, b, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, np.float64),
                               rtol=rtol, atol=atol)


def np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


X = np.array([0.3, -1.2, 2.1, 0.75])
Y = np.array([-0.4, 0.9, 1.3, -2.2])


# --- seed 001: the four ways a custom rule can get what its backward pass needs ----------------

# 1. saves an INPUT: f(x) = x sin x
@fxad.custom_vjp
def xsin(x):
    return x * fnp.sin(x)


def _xsin_fwd(x):
    return x * fnp.sin(x), x


def _xsin_bwd(x, ct):
    return (ct * (fnp.sin(x) + x * fnp.cos(x)),)


xsin.defvjp(_xsin_fwd, _xsin_bwd)


def xsin_d1(x):
    return np.sin(x) + x * np.cos(x)


def xsin_d2(x):
    return 2 * np.cos(x) - x * np.sin(x)


def xsin_d3(x):
    return -3 * np.sin(x) - x * np.cos(x)


# 2. saves its OUTPUT: f = exp, bwd uses y
@fxad.custom_vjp
def cexp(x):
    return fnp.exp(x)


def _cexp_fwd(x):
    y = fnp.exp(x)
    return y, y


cexp.defvjp(_cexp_fwd, lambda y, ct: (ct * y,))


# 3a. saves INTERMEDIATES only: sinh(x) = (e^x - e^-x)/2 saving e^x and e^-x (seed 001's
#     sinh; in fxad the saved intermediates keep their dependence on x, so no trick is needed)
@fxad.custom_vjp
def csinh(x):
    return (fnp.exp(x) - fnp.exp(-x)) / 2


def _csinh_fwd(x):
    ex, enx = fnp.exp(x), fnp.exp(-x)
    return (ex - enx) / 2, (ex, enx)


def _csinh_bwd(res, ct):
    ex, enx = res
    return (ct * (ex + enx) / 2,)


csinh.defvjp(_csinh_fwd, _csinh_bwd)


# 3b. f(a, x) = tanh(a x), saving the intermediate a*x and the tanh (and the inputs)
@fxad.custom_vjp
def tanh_ax(a, x):
    return fnp.tanh(a * x)


def _tanh_ax_fwd(a, x):
    ax = a * x
    t = fnp.tanh(ax)
    return t, {"a": a, "x": x, "ax": ax, "t": t}


def _sum_to(g, like):
    """Undo broadcasting of a scalar argument (bwd must return the argument's shape)."""
    return fnp.sum(g) if fnp.ndim(like) == 0 and fnp.ndim(g) > 0 else g


def _tanh_ax_bwd(res, ct):
    # d tanh(u)/du = 1 - tanh(u)^2; use both saved intermediates: t for the derivative, and
    # ax / a  (= x) for the a-cotangent (a is never 0 in these tests)
    dt = ct * (1 - res["t"] * res["t"])
    return (_sum_to(dt * (res["ax"] / res["a"]), res["a"]),
            _sum_to(dt * res["a"], res["x"]))


tanh_ax.defvjp(_tanh_ax_fwd, _tanh_ax_bwd)


def np_sech2(u):
    return 1.0 / np.cosh(u) ** 2


# 4. bwd calls OPAQUE NumPy code. cube(x) = x^3; its bwd calls cube_backward(ct, x) = 3 ct x^2,
#    computed with plain NumPy on concrete arrays (np.asarray would fail on a traced value), and
#    cube_backward is itself a custom_vjp whose bwd is written in fxad ops.
OPAQUE_CALLS = []


def _cube_backward_numpy(ct, x):
    ct, x = np.asarray(ct), np.asarray(x)  # opaque: only concrete arrays get through
    OPAQUE_CALLS.append(1)
    return ct * 3.0 * x ** 2


@fxad.custom_vjp
def cube_backward(ct, x):
    return _cube_backward_numpy(ct, x)


def _cube_backward_fwd(ct, x):
    return _cube_backward_numpy(ct, x), (ct, x)


def _cube_backward_bwd(res, g):
    ct, x = res
    return g * 3.0 * x ** 2, g * ct * 6.0 * x  # d/dct, d/dx of 3 ct x^2, in fxad ops


cube_backward.defvjp(_cube_backward_fwd, _cube_backward_bwd)


@fxad.custom_vjp
def cube(x):
    return x ** 3


cube.defvjp(lambda x: (x ** 3, x), lambda x, ct: (cube_backward(ct, x),))


SEED_CASES = [
    ("saves_input_xsin", xsin, (X,)),
    ("saves_output_exp", cexp, (X,)),
    ("saves_intermediates_sinh", csinh, (X,)),
    ("saves_intermediates_tanh_ax", tanh_ax, (Y, X)),
    ("opaque_numpy_bwd_cube", cube, (X,)),
]


@pytest.mark.parametrize("name,f,args", SEED_CASES, ids=[c[0] for c in SEED_CASES])
def test_seed001_check_grads_order2_both_modes(name, f, args):
    check_grads(f, args, order=2)


def test_saves_input_derivatives_analytic():
    g = fxad.grad(lambda x: fnp.sum(xsin(x)))
    close(g(X), xsin_d1(X))
    close(fxad.grad(lambda x: fnp.sum(g(x)))(X), xsin_d2(X))
    close(fxad.hessian(lambda x: fnp.sum(xsin(x)))(X), np.diag(xsin_d2(X)))
    # third order, scalar
    d3 = fxad.grad(fxad.grad(fxad.grad(xsin)))
    for x0 in X:
        close(d3(x0), xsin_d3(x0))


def test_saves_output_derivatives_analytic():
    for order_fn in [fxad.grad, lambda f: fxad.grad(fxad.grad(f)),
                     lambda f: fxad.grad(fxad.grad(fxad.grad(f)))]:
        for x0 in X:
            close(order_fn(cexp)(x0), np.exp(x0))
    close(fxad.hessian(lambda x: fnp.sum(cexp(x)))(X), np.diag(np.exp(X)))


def test_saves_intermediates_derivatives_analytic():
    # sinh'' = sinh: the saved intermediates e^x, e^-x carry their dependence on x
    for x0 in X:
        close(fxad.grad(csinh)(x0), np.cosh(x0))
        close(fxad.grad(fxad.grad(csinh))(x0), np.sinh(x0))
        close(fxad.grad(fxad.grad(fxad.grad(csinh)))(x0), np.cosh(x0))
    close(fxad.hessian(lambda x: fnp.sum(csinh(x)))(X), np.diag(np.sinh(X)))


def test_tanh_ax_hessian_analytic():
    a, x = 0.7, 1.3
    u = a * x
    s2 = np_sech2(u)
    d2 = -2 * np.tanh(u) * s2  # tanh''(u)
    # d/da = x s2, d/dx = a s2
    ga, gx = fxad.grad(tanh_ax, argnums=(0, 1))(a, x)
    close(ga, x * s2)
    close(gx, a * s2)
    H = fxad.hessian(lambda v: tanh_ax(v[0], v[1]))(np.array([a, x]))
    want = np.array([[x * x * d2, s2 + u * d2],
                     [s2 + u * d2, a * a * d2]])
    close(H, want)
    close(fxad.jacrev(fxad.jacrev(lambda v: tanh_ax(v[0], v[1])))(np.array([a, x])), want)


def test_opaque_numpy_bwd_double_backward():
    g = fxad.grad(lambda x: fnp.sum(cube(x)))
    OPAQUE_CALLS.clear()
    close(g(X), 3 * X ** 2)
    assert OPAQUE_CALLS, "the opaque NumPy code should run in the backward pass"
    # reverse over reverse: cube_backward's own bwd (fxad ops) supplies the derivative
    close(fxad.grad(lambda x: fnp.sum(g(x)))(X), 6 * X)
    for x0 in X:
        close(fxad.grad(fxad.grad(cube))(x0), 6.0 * x0)


def test_opaque_numpy_bwd_forward_over_reverse():
    # hvp = jvp of grad: the backward pass runs on JVP tracers and calls the opaque code
    v = np.array([1.0, -2.0, 0.5, 3.0])
    hv = fxad.hvp(lambda x: fnp.sum(cube(x)), (X,), (v,))
    close(hv[0], 6 * X * v)


# --- pytrees and nondiff_argnums --------------------------------------------------------------

@fxad.custom_vjp
def polar(p):
    """dict in, dict out, dict residuals: (r, theta) -> {x, y}."""
    return {"x": p["r"] * fnp.cos(p["theta"]), "y": p["r"] * fnp.sin(p["theta"])}


def _polar_fwd(p):
    c, s = fnp.cos(p["theta"]), fnp.sin(p["theta"])
    return {"x": p["r"] * c, "y": p["r"] * s}, {"c": c, "s": s, "r": p["r"]}


def _polar_bwd(res, ct):
    c, s, r = res["c"], res["s"], res["r"]
    return ({"r": ct["x"] * c + ct["y"] * s,
             "theta": -ct["x"] * r * s + ct["y"] * r * c},)


polar.defvjp(_polar_fwd, _polar_bwd)


def test_pytree_custom_vjp_values_and_grads():
    r, th = 1.7, 0.6
    p = {"r": np.float64(r), "theta": np.float64(th)}
    out = polar(p)
    assert set(out) == {"x", "y"}
    close(out["x"], r * np.cos(th))
    close(out["y"], r * np.sin(th))
    J = fxad.jacrev(polar)(p)
    close(J["x"]["r"], np.cos(th))
    close(J["x"]["theta"], -r * np.sin(th))
    close(J["y"]["r"], np.sin(th))
    close(J["y"]["theta"], r * np.cos(th))
    Jf = fxad.jacfwd(polar)(p)
    for o in "xy":
        for i in ("r", "theta"):
            close(Jf[o][i], J[o][i])
    # d^2 (x + 2y) / d theta^2 = -r cos - 2 r sin
    g2 = fxad.grad(lambda t: fxad.grad(
        lambda tt: (lambda o: o["x"] + 2 * o["y"])(polar({"r": r, "theta": tt})))(t))(th)
    close(g2, -r * np.cos(th) - 2 * r * np.sin(th))


def test_pytree_custom_vjp_check_grads():
    p = {"r": np.array([1.7, 0.4]), "theta": np.array([0.6, -2.0])}
    check_grads(polar, (p,), order=2)


_power = fxad.custom_vjp(lambda n, x: x ** n, nondiff_argnums=(0,))
_power.defvjp(lambda n, x: (x ** n, x), lambda n, x, ct: (ct * n * x ** (n - 1),))


def test_nondiff_argnums_int():
    for n in (2, 3, 5):
        f = lambda x: fnp.sum(_power(n, x))  # noqa: E731
        close(fxad.grad(f)(X), n * X ** (n - 1))
        close(fxad.hessian(f)(X), np.diag(n * (n - 1) * X ** (n - 2)))
        check_grads(lambda x: _power(n, x), (X,), order=2)


def _apply_twice(fn, x):
    return fn(fn(x))


apply_twice = fxad.custom_vjp(_apply_twice, nondiff_argnums=(0,))


def _apply_twice_fwd(fn, x):
    y = fn(x)
    return fn(y), (x, y)


def _apply_twice_bwd(fn, res, ct):
    x, y = res
    _, pull_y = fxad.vjp(fn, y)
    _, pull_x = fxad.vjp(fn, x)
    return pull_x(pull_y(ct)[0])


apply_twice.defvjp(_apply_twice_fwd, _apply_twice_bwd)


def test_nondiff_argnums_callable():
    # d/dx sin(sin x) = cos(sin x) cos x
    g = fxad.grad(lambda x: apply_twice(fnp.sin, x))
    for x0 in X:
        close(g(x0), np.cos(np.sin(x0)) * np.cos(x0))
    check_grads(lambda x: apply_twice(fnp.sin, x), (X,), order=2)


_mid = fxad.custom_vjp(lambda x, k, y: k * x * y, nondiff_argnums=(1,))
_mid.defvjp(lambda x, k, y: (k * x * y, (x, y)),
            lambda k, res, ct: (ct * k * res[1], ct * k * res[0]))


def test_nondiff_argnum_in_the_middle():
    gx, gy = fxad.grad(lambda x, y: fnp.sum(_mid(x, 3.0, y)), argnums=(0, 1))(X, Y)
    close(gx, 3.0 * Y)
    close(gy, 3.0 * X)
    check_grads(lambda x, y: _mid(x, 2.5, y), (X, Y), order=2)


_none_ct = fxad.custom_vjp(lambda x, y: x * y)
_none_ct.defvjp(lambda x, y: (x * y, (x, y)), lambda res, ct: (ct * res[1], None))


def test_bwd_none_means_zero_cotangent():
    gx, gy = fxad.grad(lambda x, y: fnp.sum(_none_ct(x, y)), argnums=(0, 1))(X, Y)
    close(gx, Y)
    close(gy, np.zeros_like(Y))


# --- fwd computes the primal differently from fun ----------------------------------------------

def _stable_softplus(x):
    return fnp.maximum(x, 0.0) + fnp.log1p(fnp.exp(-fnp.abs(x)))


def _make_softplus(factor):
    @fxad.custom_vjp
    def softplus_naive(x):
        return fnp.log(1 + fnp.exp(x))  # overflows for large x

    def fwd(x):
        return _stable_softplus(x), fxad.nn.sigmoid(x)

    def bwd(s, ct):
        return (factor * ct * s,)
    softplus_naive.defvjp(fwd, bwd)
    return softplus_naive


def test_fwd_differs_from_fun_grad_uses_stable_fwd():
    sp = _make_softplus(1.0)
    with np.errstate(over="ignore"):
        assert np.isinf(sp(np.float64(1000.0)))  # not differentiated: fun runs
    v, g = fxad.value_and_grad(sp)(1000.0)
    assert v == 1000.0  # the primal under differentiation comes from fwd
    assert g == 1.0
    close(fxad.grad(lambda x: fnp.sum(sp(x)))(X), np_sigmoid(X))
    check_grads(sp, (X,), order=2)


def test_grad_uses_bwd_jvp_uses_fwd():
    """bwd deliberately returns 2x the true gradient: reverse mode must return exactly that,
    while forward mode differentiates fwd and returns the true derivative."""
    sp2 = _make_softplus(2.0)
    s = np_sigmoid(X)
    g = fxad.grad(lambda x: fnp.sum(sp2(x)))(X)
    np.testing.assert_array_equal(g, 2.0 * fxad.nn.sigmoid(X))
    close(g, 2 * s)
    close(fxad.vjp(sp2, X)[1](np.ones_like(X))[0], 2 * s)
    close(np.diag(fxad.jacrev(sp2)(X)), 2 * s)
    # forward mode: the derivative of fwd
    _, t = fxad.jvp(sp2, (X,), (np.ones_like(X),))
    close(t, s)
    close(fxad.jacfwd(sp2)(X), np.diag(s))
    _, f_jvp = fxad.linearize(sp2, X)
    close(f_jvp(np.ones_like(X)), s)


# --- forward mode through custom_vjp (JAX raises here) ----------------------------------------

FWD_CASES = [
    ("xsin", xsin, lambda x: x * fnp.sin(x)),
    ("exp", cexp, fnp.exp),
    ("sinh", csinh, lambda x: (fnp.exp(x) - fnp.exp(-x)) / 2),
    ("tanh_ax", lambda x: tanh_ax(0.8, x), lambda x: fnp.tanh(0.8 * x)),
]


@pytest.mark.parametrize("name,f,plain", FWD_CASES, ids=[c[0] for c in FWD_CASES])
def test_forward_mode_through_custom_vjp_matches_plain(name, f, plain):
    v = np.array([0.5, -1.0, 2.0, 0.25])
    y, t = fxad.jvp(f, (X,), (v,))
    y0, t0 = fxad.jvp(plain, (X,), (v,))
    close(y, y0)
    close(t, t0)
    close(fxad.jacfwd(f)(X), fxad.jacfwd(plain)(X))
    close(fxad.jacfwd(f)(X), fxad.jacrev(plain)(X))
    s = lambda g: (lambda x: fnp.sum(g(x) * fnp.cos(x)))  # noqa: E731
    close(fxad.hessian(s(f))(X), fxad.hessian(s(plain))(X))
    close(fxad.jacfwd(fxad.jacfwd(s(f)))(X), fxad.jacrev(fxad.jacrev(s(plain)))(X))


def test_forward_mode_through_custom_vjp_analytic():
    # hessian = forward over reverse of sum(xsin): diag(f'')
    close(fxad.jacfwd(fxad.jacfwd(lambda x: fnp.sum(xsin(x))))(X), np.diag(xsin_d2(X)))
    close(fxad.jvp(fxad.grad(xsin), (1.1,), (1.0,))[1], xsin_d2(1.1))
    close(fxad.jvp(lambda x: fxad.jvp(xsin, (x,), (1.0,))[1], (1.1,), (1.0,))[1],
          xsin_d2(1.1))


# --- composition with vmap and jit ------------------------------------------------------------

def test_vmap_of_grad_custom_vjp():
    close(fxad.vmap(fxad.grad(xsin))(X), xsin_d1(X))
    close(fxad.vmap(fxad.grad(tanh_ax, argnums=(0, 1)))(Y, X)[1], Y * np_sech2(Y * X))
    close(fxad.vmap(fxad.grad(tanh_ax, argnums=(0, 1)))(Y, X)[0], X * np_sech2(Y * X))
    # one unbatched argument: its cotangent is not summed away per example
    close(fxad.vmap(fxad.grad(tanh_ax, argnums=(0, 1)), in_axes=(None, 0))(0.7, X)[0],
          X * np_sech2(0.7 * X))


def test_grad_of_vmap_custom_vjp():
    close(fxad.grad(lambda x: fnp.sum(fxad.vmap(xsin)(x)))(X), xsin_d1(X))
    # an unbatched argument: its gradient sums over the batch
    ga = fxad.grad(lambda a: fnp.sum(fxad.vmap(tanh_ax, in_axes=(None, 0))(a, X)))(0.7)
    close(ga, np.sum(X * np_sech2(0.7 * X)))
    M = np.arange(12.0).reshape(3, 4) / 10 - 0.5
    close(fxad.grad(lambda m: fnp.sum(fxad.vmap(xsin)(m) ** 2))(M),
          2 * M * np.sin(M) * xsin_d1(M))
    # mapped over axis 1: the cotangent goes back to axis 1
    close(fxad.grad(lambda m: fnp.sum(fxad.vmap(xsin, in_axes=1)(m) ** 2))(M),
          2 * M * np.sin(M) * xsin_d1(M))
    a = Y  # example i is (a[i], M[:, i])
    f = lambda m: fnp.sum(fxad.vmap(tanh_ax, in_axes=(0, 1))(a, m))  # noqa: E731
    close(fxad.grad(f)(M), a * np_sech2(a * M))


def test_custom_rules_keep_float32():
    x32 = X.astype(np.float32)
    for f in (xsin, jsin, csinh):
        g = fxad.grad(lambda x: fnp.sum(f(x)))(x32)
        assert np.asarray(g).dtype == np.float32
        close(g, fxad.grad(lambda x: fnp.sum(f(x)))(X), rtol=1e-5, atol=1e-6)
        assert np.asarray(fxad.hessian(lambda x: fnp.sum(f(x)))(x32)).dtype == np.float32


def test_jit_of_grad_and_grad_of_jit_custom_vjp():
    close(fxad.jit(fxad.grad(lambda x: fnp.sum(xsin(x))))(X), xsin_d1(X))
    close(fxad.grad(fxad.jit(lambda x: fnp.sum(xsin(x))))(X), xsin_d1(X))
    close(fxad.grad(lambda x: fnp.sum(fxad.jit(xsin)(x)))(X), xsin_d1(X))
    close(fxad.jit(fxad.hessian(lambda x: fnp.sum(csinh(x))))(X), np.diag(np.sinh(X)))
    close(fxad.hessian(fxad.jit(lambda x: fnp.sum(csinh(x))))(X), np.diag(np.sinh(X)))


def test_jit_grad_uses_bwd():
    sp2 = _make_softplus(2.0)
    close(fxad.jit(fxad.grad(lambda x: fnp.sum(sp2(x))))(X), 2 * np_sigmoid(X))
    close(fxad.grad(fxad.jit(lambda x: fnp.sum(sp2(x))))(X), 2 * np_sigmoid(X))
    close(fxad.vmap(fxad.grad(sp2))(X), 2 * np_sigmoid(X))


def test_vmap_of_jacfwd_custom_vjp():
    B = np.stack([X, Y, X * Y])  # (3, 4)
    J = fxad.vmap(fxad.jacfwd(lambda v: tanh_ax(0.8, v)))(B)
    assert J.shape == (3, 4, 4)
    for b in range(3):
        close(J[b], np.diag(0.8 * np_sech2(0.8 * B[b])))
    Jr = fxad.vmap(fxad.jacrev(lambda v: tanh_ax(0.8, v)))(B)
    close(Jr, J)
    H = fxad.vmap(fxad.hessian(lambda v: fnp.sum(xsin(v))))(B)
    for b in range(3):
        close(H[b], np.diag(xsin_d2(B[b])))


# --- errors -----------------------------------------------------------------------------------

def _two_arg(bwd):
    @fxad.custom_vjp
    def mulsum(x, y):
        return fnp.sum(x * y)
    mulsum.defvjp(lambda x, y: (fnp.sum(x * y), (x, y)), bwd)
    return mulsum


def test_bwd_wrong_number_of_cotangents():
    f = _two_arg(lambda res, ct: (ct * res[1],))
    with pytest.raises(TypeError, match=r"mulsum") as e:
        fxad.grad(f)(X, Y)
    assert "2" in str(e.value) and "1" in str(e.value)  # expected vs received
    f3 = _two_arg(lambda res, ct: (ct * res[1], ct * res[0], ct))
    with pytest.raises(TypeError, match=r"mulsum.*\(2\).*got 3"):
        fxad.grad(f3)(X, Y)


def test_bwd_not_a_tuple():
    f = _two_arg(lambda res, ct: ct * res[1])
    with pytest.raises(TypeError, match="mulsum"):
        fxad.grad(f)(X, Y)


def test_bwd_wrong_shape():
    f = _two_arg(lambda res, ct: (ct * res[1], np.ones(2)))
    with pytest.raises(TypeError, match=r"mulsum") as e:
        fxad.grad(f, argnums=(0, 1))(X, Y)
    msg = str(e.value)
    assert "(2,)" in msg and "(4,)" in msg, msg


def test_bwd_wrong_structure():
    @fxad.custom_vjp
    def dictfun(d):
        return fnp.sum(d["a"] * d["b"])
    dictfun.defvjp(lambda d: (fnp.sum(d["a"] * d["b"]), d),
                   lambda d, ct: ((ct * d["b"], ct * d["a"]),))  # tuple, not dict
    with pytest.raises(TypeError, match="dictfun") as e:
        fxad.grad(dictfun)({"a": X, "b": Y})
    msg = str(e.value)
    assert "expected" in msg and "'a'" in msg and "'b'" in msg, msg


def test_fwd_not_a_pair():
    @fxad.custom_vjp
    def badfwd(x):
        return fnp.sin(x)
    badfwd.defvjp(lambda x: fnp.sin(x), lambda r, ct: (ct,))
    with pytest.raises(TypeError, match="badfwd"):
        fxad.grad(badfwd)(1.0)


def test_custom_vjp_without_rule_raises():
    @fxad.custom_vjp
    def norule_vjp(x):
        return fnp.sin(x)
    with pytest.raises(TypeError, match="norule_vjp"):
        fxad.grad(norule_vjp)(1.0)


def test_custom_jvp_without_rule_raises():
    @fxad.custom_jvp
    def norule(x):
        return fnp.sin(x)
    with pytest.raises(TypeError, match="norule"):
        norule(1.0)
    with pytest.raises(TypeError, match="norule"):
        fxad.grad(norule)(1.0)


@fxad.custom_jvp
def nonlinear_rule(x):
    return x ** 2


@nonlinear_rule.defjvp
def _nonlinear_rule_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x ** 2, t ** 2  # not linear in t


def test_nonlinear_custom_jvp_rule_raises_under_grad_but_jvp_works():
    y, t = fxad.jvp(nonlinear_rule, (3.0,), (2.0,))
    close(y, 9.0)
    close(t, 4.0)  # forward mode just runs the rule
    with pytest.raises(TypeError, match=r"nonlinear_rule[\s\S]*linear"):
        fxad.grad(nonlinear_rule)(3.0)
    with pytest.raises(TypeError, match=r"nonlinear_rule[\s\S]*linear"):
        fxad.jacrev(nonlinear_rule)(np.array([1.0, 2.0]))


def test_custom_jvp_rule_wrong_tangent_shape():
    @fxad.custom_jvp
    def badtan(x):
        return fnp.sin(x)

    @badtan.defjvp
    def _(p, t):
        return fnp.sin(p[0]), np.ones(3)
    with pytest.raises(TypeError, match="badtan"):
        fxad.jvp(badtan, (X,), (X,))


# --- custom_jvp -------------------------------------------------------------------------------

@fxad.custom_jvp
def jsin(x):
    return fnp.sin(x)


@jsin.defjvp
def _jsin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jsin(x), fnp.cos(x) * t


def test_custom_jvp_defjvp_all_orders():
    check_grads(jsin, (X,), order=2)
    close(fxad.grad(lambda x: fnp.sum(jsin(x)))(X), np.cos(X))
    close(fxad.hessian(lambda x: fnp.sum(jsin(x)))(X), np.diag(-np.sin(X)))
    for x0 in X:
        close(fxad.grad(fxad.grad(fxad.grad(jsin)))(x0), -np.cos(x0))
    close(fxad.jacfwd(jsin)(X), np.diag(np.cos(X)))
    close(fxad.jacrev(jsin)(X), np.diag(np.cos(X)))


def test_custom_jvp_rule_is_used_by_both_modes():
    @fxad.custom_jvp
    def twice(x):
        return fnp.sin(x)

    @twice.defjvp
    def _(p, t):
        return fnp.sin(p[0]), 2.0 * fnp.cos(p[0]) * t[0]  # deliberately 2x
    close(fxad.jvp(twice, (X,), (np.ones_like(X),))[1], 2 * np.cos(X))
    close(fxad.grad(lambda x: fnp.sum(twice(x)))(X), 2 * np.cos(X))
    close(fxad.hessian(lambda x: fnp.sum(twice(x)))(X), np.diag(-2 * np.sin(X)))


@fxad.custom_jvp
def xsiny(x, y):
    return x * fnp.sin(y)


xsiny.defjvps(lambda t, ans, x, y: t * fnp.sin(y),
              lambda t, ans, x, y: t * x * fnp.cos(y))


def test_custom_jvp_defjvps():
    gx, gy = fxad.grad(lambda x, y: fnp.sum(xsiny(x, y)), argnums=(0, 1))(X, Y)
    close(gx, np.sin(Y))
    close(gy, X * np.cos(Y))
    _, t = fxad.jvp(xsiny, (X, Y), (np.ones_like(X), np.zeros_like(Y)))
    close(t, np.sin(Y))
    check_grads(xsiny, (X, Y), order=2)
    # d2/dy2 = -x sin y
    close(fxad.hessian(lambda y: fnp.sum(xsiny(X, y)))(Y), np.diag(-X * np.sin(Y)))


def test_rules_run_the_function_as_often_as_jax_does():
    """A rule that calls its custom function (JAX's pattern) makes it run once per
    evaluation: the check of the rule's primal output reuses that run instead of running the
    function again (its side effects show as many times as in JAX)."""
    calls = []

    @fxad.custom_jvp
    def f(x):
        calls.append("f")
        return fnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        calls.append("f_jvp")
        return f(primals[0]), fnp.cos(primals[0]) * tangents[0]

    @fxad.custom_vjp
    def g(x):
        calls.append("g")
        return fnp.sin(x)
    assert g.defvjp(lambda x: (calls.append("g_fwd"), (g(x), fnp.cos(x)))[1],
                    lambda c, ct: (calls.append("g_bwd"), (c * ct,))[1]) is None
    assert f.defjvps(lambda t, ans, x: fnp.cos(x) * t) is None  # (JAX's: returns None)
    f.defjvp(f_jvp)
    for h, want in [(lambda: fxad.jvp(f, (3.0,), (1.0,)), ["f_jvp", "f"]),
                    (lambda: fxad.grad(f)(3.0), ["f_jvp", "f"]),
                    (lambda: fxad.grad(g)(3.0), ["g_fwd", "g", "g_bwd"]),
                    (lambda: fxad.vjp(g, 3.0)[1](1.0), ["g_fwd", "g", "g_bwd"])]:
        calls.clear()
        h()
        assert calls == want
    close(fxad.grad(g)(3.0), np.cos(3.0))
    close(fxad.jvp(f, (3.0,), (2.0,))[1], 2 * np.cos(3.0))


def test_custom_jvp_defjvps_none_means_no_dependence():
    @fxad.custom_jvp
    def only_x(x, y):
        return x * fnp.sin(y)
    only_x.defjvps(lambda t, ans, x, y: t * fnp.sin(y), None)
    gx, gy = fxad.grad(lambda x, y: fnp.sum(only_x(x, y)), argnums=(0, 1))(X, Y)
    close(gx, np.sin(Y))
    close(gy, np.zeros_like(Y))


_jpow = fxad.custom_jvp(lambda n, x: x ** n, nondiff_argnums=(0,))


@_jpow.defjvp
def _jpow_jvp(n, primals, tangents):
    (x,), (t,) = primals, tangents
    return x ** n, n * x ** (n - 1) * t


def test_custom_jvp_nondiff_argnums():
    for n in (2, 3, 4):
        close(fxad.grad(lambda x: fnp.sum(_jpow(n, x)))(X), n * X ** (n - 1))
        close(fxad.hessian(lambda x: fnp.sum(_jpow(n, x)))(X),
              np.diag(n * (n - 1) * X ** (n - 2)))
        check_grads(lambda x: _jpow(n, x), (X,), order=2)


@fxad.custom_jvp
def jpolar(p):
    return (p["r"] * fnp.cos(p["theta"]), p["r"] * fnp.sin(p["theta"]))


@jpolar.defjvp
def _jpolar_jvp(primals, tangents):
    (p,), (t,) = primals, tangents
    c, s = fnp.cos(p["theta"]), fnp.sin(p["theta"])
    out = (p["r"] * c, p["r"] * s)
    tout = (t["r"] * c - p["r"] * s * t["theta"], t["r"] * s + p["r"] * c * t["theta"])
    return out, tout


def test_custom_jvp_pytrees():
    r, th = 1.7, 0.6
    J = fxad.jacrev(jpolar)({"r": r, "theta": th})
    close(J[0]["r"], np.cos(th))
    close(J[0]["theta"], -r * np.sin(th))
    close(J[1]["r"], np.sin(th))
    close(J[1]["theta"], r * np.cos(th))
    p = {"r": np.array([1.7, 0.4]), "theta": np.array([0.6, -2.0])}
    check_grads(jpolar, (p,), order=2)


def test_custom_jvp_vmap_jit():
    close(fxad.vmap(fxad.grad(jsin))(X), np.cos(X))
    close(fxad.grad(lambda x: fnp.sum(fxad.vmap(jsin)(x)))(X), np.cos(X))
    close(fxad.jit(fxad.grad(lambda x: fnp.sum(jsin(x))))(X), np.cos(X))
    close(fxad.grad(fxad.jit(lambda x: fnp.sum(jsin(x))))(X), np.cos(X))
    close(fxad.vmap(fxad.hessian(jsin))(X), -np.sin(X))
    close(fxad.jit(fxad.hessian(lambda x: fnp.sum(jsin(x))))(X), np.diag(-np.sin(X)))
    B = np.stack([X, Y])
    J = fxad.vmap(fxad.jacfwd(jsin))(B)
    for b in range(2):
        close(J[b], np.diag(np.cos(B[b])))
    close(fxad.vmap(lambda n: fxad.grad(lambda x: _jpow(3, x))(n))(X), 3 * X ** 2)


@fxad.custom_jvp
def log1pexp(x):
    return fnp.log(1.0 + fnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * fxad.nn.sigmoid(x)


def test_custom_jvp_for_numerical_stability():
    naive = lambda x: fnp.log(1.0 + fnp.exp(x))  # noqa: E731
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isnan(fxad.grad(naive)(1000.0))  # inf / inf
        g = fxad.grad(log1pexp)(1000.0)
        h = fxad.grad(fxad.grad(log1pexp))(1000.0)
        gf = fxad.jvp(log1pexp, (1000.0,), (1.0,))[1]
    assert g == 1.0
    assert gf == 1.0
    assert h == 0.0  # sigmoid'(1000) underflows to exactly 0
    close(fxad.grad(log1pexp)(0.0), 0.5)
    close(fxad.grad(lambda x: fnp.sum(log1pexp(x)))(X), np_sigmoid(X))
    s = np_sigmoid(X)
    close(fxad.hessian(lambda x: fnp.sum(log1pexp(x)))(X), np.diag(s * (1 - s)))
    check_grads(log1pexp, (X,), order=2)


# --- stop_gradient ----------------------------------------------------------------------------

def _ste(x):
    return x + fxad.stop_gradient(fnp.round(x) - x)


def test_straight_through_estimator():
    x = np.array([0.2, 1.7, -2.4, 3.5001])
    close(_ste(x), np.round(x))
    g = fxad.grad(lambda x: fnp.sum(_ste(x) * 3.0))(x)
    np.testing.assert_array_equal(g, np.full_like(x, 3.0))
    close(fxad.jit(fxad.grad(lambda x: fnp.sum(_ste(x))))(x), np.ones_like(x))
    close(fxad.vmap(fxad.grad(_ste))(x), np.ones_like(x))
    close(fxad.jacfwd(_ste)(x), np.eye(4))
    close(fxad.jvp(_ste, (x,), (np.arange(4.0),))[1], np.arange(4.0))
    # the quantized value flows into the rest of the computation: d/dx ste(x)^2 = 2 round(x)
    close(fxad.grad(lambda x: fnp.sum(_ste(x) ** 2))(x), 2 * np.round(x))


def test_stop_gradient_hessian():
    f = lambda x: fnp.sum(fxad.stop_gradient(x) * x ** 2)  # noqa: E731
    close(fxad.grad(f)(X), 2 * X * X)
    close(fxad.hessian(f)(X), np.diag(2 * X))
    close(fxad.jacrev(fxad.jacrev(f))(X), np.diag(2 * X))
    close(fxad.jit(fxad.hessian(f))(X), np.diag(2 * X))


def test_stop_gradient_third_order():
    # f(x) = c x^3 with c = x0 held constant: f' = 3 c x^2, f'' = 6 c x, f''' = 6 c
    f = lambda x: fxad.stop_gradient(x) * x ** 3  # noqa: E731
    for x0 in [0.7, -1.3, 2.0]:
        close(fxad.grad(f)(x0), 3 * x0 ** 3)
        close(fxad.grad(fxad.grad(f))(x0), 6 * x0 ** 2)
        close(fxad.grad(fxad.grad(fxad.grad(f)))(x0), 6 * x0)
        d3_fwd = fxad.jacfwd(fxad.jacfwd(fxad.jacfwd(f)))(x0)
        close(d3_fwd, 6 * x0)


def test_stop_gradient_pytree_and_vmap():
    d = fxad.stop_gradient({"a": X, "b": (Y,)})
    close(d["a"], X)
    close(d["b"][0], Y)
    g = fxad.grad(lambda x: fnp.sum(fxad.stop_gradient(x) * x))(X)
    close(g, X)
    close(fxad.vmap(fxad.grad(lambda x: fxad.stop_gradient(x ** 2) * x))(X), X ** 2)


# --- a rule's function closing over a traced value -------------------------------------------
# Under a staged transformation the call is recorded with the user's function; a traced value
# it closes over was dead when the call ran (jit) or was taken for a constant, its derivative
# silently zero (jit of grad with respect to that value). Both are refused now, with the fix;
# where the value lives on (an outer jit's argument, eager grad) the call works as before.

def _closing(kind, x):
    if kind == "jvp":
        @fxad.custom_jvp
        def f(w):
            return fnp.sin(w * x)

        @f.defjvp
        def f_jvp(p, t):
            return fnp.sin(p[0] * x), fnp.cos(p[0] * x) * x * t[0]
        return f

    @fxad.custom_vjp
    def g(w):
        return fnp.sin(w * x)
    g.defvjp(lambda w: (fnp.sin(w * x), w), lambda w, ct: (fnp.cos(w * x) * x * ct,))
    return g


@pytest.mark.parametrize("kind", ["jvp", "vjp"])
def test_rule_closing_over_a_traced_value(kind):
    x, w = np.array([1.0, 2.0, -0.5]), np.array([0.5, -1.5, 0.25])
    loss = lambda x, w: fnp.sum(_closing(kind, x)(w))  # noqa: E731
    ref = lambda x, w: fnp.sum(fnp.sin(w * x))  # noqa: E731
    for got, want in [(fxad.grad(loss, 1)(x, w), fxad.grad(ref, 1)(x, w)),
                      (fxad.jit(fxad.grad(loss, 1))(x, w), fxad.grad(ref, 1)(x, w)),
                      (fxad.grad(loss, 0)(x, w), fxad.grad(ref, 0)(x, w))]:
        close(got, want)
    for call in (lambda: fxad.jit(loss)(x, w), lambda: fxad.jit(fxad.grad(loss, 0))(x, w),
                 lambda: fxad.grad(fxad.jit(loss), 1)(x, w)):
        with pytest.raises(fxad.errors.FxadTypeError, match="closes over a value that a "
                           "transformation traces.*Pass the value as an argument"):
            call()

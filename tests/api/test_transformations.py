"""Public API: jvp and vjp with aux, Python control flow, reverse mode (vjp, grad, argnums,
value_and_grad), pytrees, output types, Hessians, dtypes, stop_gradient and NumPy dispatch.
(Nesting of transformations, linearize and linear_transpose: tests/interpreters/; make_jaxpr:
test_make_jaxpr.py.)

Every expected value is computed by hand (analytic derivatives evaluated with plain NumPy)."""
import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.core import Tracer

RTOL = 1e-10
ATOL = 1e-12


def close(a, b, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, np.float64),
                               rtol=rtol, atol=atol)


def _sech2(x):
    return 1.0 - np.tanh(x) ** 2


def test_jvp_has_aux():
    x, v = np.array([0.2, 1.0]), np.array([1.0, -1.0])
    y, t, aux = fxad.jvp(lambda x: (fnp.exp(x), {"sq": x ** 2}), (x,), (v,), has_aux=True)
    close(y, np.exp(x))
    close(t, np.exp(x) * v)
    close(aux["sq"], x ** 2)
    assert not isinstance(aux["sq"], Tracer)


# --- Python control flow ----------------------------------------------------------------------

def _branchy(x):
    if x > 0:
        return fnp.sin(x)
    else:
        return x ** 3


@pytest.mark.parametrize("x", [-1.5, -0.3, 0.4, 2.2])
def test_grad_through_if_else(x):
    close(fxad.grad(_branchy)(x), np.cos(x) if x > 0 else 3 * x ** 2)
    close(fxad.grad(fxad.grad(_branchy))(x), -np.sin(x) if x > 0 else 6 * x)


def _squaring_loop(x):
    y = x
    while y < 10.0:
        y = y * y
    return y


def _squaring_steps(x):
    n = 0
    while x < 10.0:
        x = x * x
        n += 1
    return n


@pytest.mark.parametrize("x", [1.5, 2.0, 3.5, 11.0])
def test_grad_through_while_loop_with_data_dependent_trip_count(x):
    n = _squaring_steps(x)  # y = x ** (2 ** n)
    p = 2 ** n
    close(_squaring_loop(x), x ** p)
    close(fxad.grad(_squaring_loop)(x), p * x ** (p - 1))
    close(fxad.grad(fxad.grad(_squaring_loop))(x), p * (p - 1) * x ** (p - 2) if p > 1 else 0.0)


def _halving(x):
    """sin for |x| < 1, else 2 * _halving(x / 2): equals 2**k sin(x / 2**k)."""
    if fnp.abs(x) < 1.0:
        return fnp.sin(x)
    return 2.0 * _halving(x / 2.0)


@pytest.mark.parametrize("x", [0.3, -0.9, 1.7, -5.0, 13.0])
def test_grad_through_recursion(x):
    k = 0
    while abs(x / 2 ** k) >= 1.0:
        k += 1
    close(fxad.grad(_halving)(x), np.cos(x / 2 ** k))
    close(fxad.grad(fxad.grad(_halving))(x), -np.sin(x / 2 ** k) / 2 ** k)


def test_grad_through_recursion_on_python_int():
    def power(x, n):
        return 1.0 if n == 0 else x * power(x, n - 1)
    for x in (-1.2, 0.5, 3.0):
        close(fxad.grad(power)(x, 5), 5 * x ** 4)
        close(fxad.grad(fxad.grad(power))(x, 5), 20 * x ** 3)


def test_grad_through_data_dependent_indexing():
    # picks the element at the argmax position via Python control flow
    def f(x):
        best = 0
        for i in range(1, len(x)):
            if x[i] > x[best]:
                best = i
        return x[best] ** 2
    x = np.array([0.2, 1.5, -0.3, 0.9])
    close(fxad.grad(f)(x), [0.0, 3.0, 0.0, 0.0])


# --- reverse mode -----------------------------------------------------------------------------

def test_vjp_basic_and_has_aux():
    x = np.array([0.2, -0.7, 1.1])
    A = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0]])

    def f(x):
        y = fnp.dot(A, fnp.sin(x))
        return y, {"norm": fnp.sum(y * y), "raw": x}
    y, f_vjp, aux = fxad.vjp(f, x, has_aux=True)
    close(y, A @ np.sin(x))
    close(aux["norm"], np.sum((A @ np.sin(x)) ** 2))
    close(aux["raw"], x)
    assert not isinstance(aux["norm"], Tracer) and not isinstance(aux["raw"], Tracer)
    ct = np.array([1.0, -2.0])
    (g,) = fxad.vjp(f, x, has_aux=True)[1](ct)
    close(g, np.cos(x) * (A.T @ ct))
    res = f_vjp(ct)
    assert isinstance(res, tuple) and len(res) == 1
    close(res[0], np.cos(x) * (A.T @ ct))


@pytest.mark.parametrize("where", ["eager", "jit"])
def test_vjp_function_is_a_pytree_of_its_residuals(where):
    """As JAX's: the function vjp returns flattens to the residuals and unflattens to a
    function giving the same cotangents; it can leave a jitted function, be rebuilt from
    traced residuals, and be differentiated through."""
    from fxad.tree_util import tree_flatten, tree_unflatten
    f = lambda w, x: fnp.sin(fnp.dot(w, x)) * x[0]  # noqa: E731
    w, x, ct = np.arange(6.0).reshape(3, 2) / 7, np.array([0.4, -1.1]), np.array([1., 2., -1.])
    make = (lambda w, x: fxad.vjp(f, w, x)) if where == "eager" else \
        fxad.jit(lambda w, x: fxad.vjp(f, w, x))
    y, f_vjp = make(w, x)
    want = fxad.vjp(f, w, x)[1](ct)
    leaves, tree = tree_flatten(f_vjp)
    assert leaves and all(isinstance(a, (np.ndarray, np.generic)) for a in leaves)
    for got in (f_vjp(ct), tree_unflatten(tree, leaves)(ct),
                fxad.jit(lambda res, c: tree_unflatten(tree, res)(c))(leaves, ct)):
        for g, w_ in zip(got, want):
            np.testing.assert_allclose(g, w_, rtol=1e-13)
    # differentiating through a pullback rebuilt from residuals (which depend on w)
    gw = fxad.grad(lambda w: fnp.sum(tree_unflatten(
        tree, tree_flatten(fxad.vjp(f, w, x)[1])[0])(ct)[1]))(w)
    np.testing.assert_allclose(gw, fxad.grad(lambda w: fnp.sum(fxad.vjp(f, w, x)[1](ct)[1]))(w),
                               rtol=1e-12)
    with pytest.raises(TypeError, match="structure"):
        tree_unflatten(tree, leaves)((ct, ct))


def test_vjp_multiple_primals_returns_tuple():
    x, y = np.array([1.0, 2.0]), np.array([0.5, -0.5])
    out, f_vjp = fxad.vjp(lambda a, b: a * b + fnp.exp(b), x, y)
    close(out, x * y + np.exp(y))
    ct = np.array([3.0, -1.0])
    gx, gy = f_vjp(ct)
    close(gx, ct * y)
    close(gy, ct * (x + np.exp(y)))


def test_grad_argnums_tuple_and_has_aux():
    def f(x, n, y, z):
        val = fnp.sum(x * y ** 2) + n * fnp.sum(fnp.sin(z))
        return val, {"n": n, "y2": y ** 2}
    x, y, z = np.array([1.0, 2.0]), np.array([0.5, -1.5]), np.array([0.3, 0.9])
    (gx, gz), aux = fxad.grad(f, argnums=(0, 3), has_aux=True)(x, 3.0, y, z)
    close(gx, y ** 2)
    close(gz, 3.0 * np.cos(z))
    close(aux["y2"], y ** 2)
    close(aux["n"], 3.0)
    # argnums int, negative, and reordered tuple
    g_y = fxad.grad(lambda *a: f(*a)[0], argnums=2)(x, 3.0, y, z)
    close(g_y, 2 * x * y)
    g_last = fxad.grad(lambda *a: f(*a)[0], argnums=-1)(x, 3.0, y, z)
    close(g_last, 3.0 * np.cos(z))
    gz2, gx2 = fxad.grad(lambda *a: f(*a)[0], argnums=(3, 0))(x, 3.0, y, z)
    close(gz2, 3.0 * np.cos(z))
    close(gx2, y ** 2)


def test_value_and_grad():
    def f(w, b):
        return fnp.sum((w * 2.0 + b) ** 2)
    w, b = np.array([1.0, -2.0, 0.5]), 0.25
    val, g = fxad.value_and_grad(f)(w, b)
    close(val, np.sum((2 * w + b) ** 2))
    close(g, 4 * (2 * w + b))
    val, (gw, gb) = fxad.value_and_grad(f, argnums=(0, 1))(w, b)
    close(gb, np.sum(2 * (2 * w + b)))
    close(gw, 4 * (2 * w + b))
    (val2, aux), g2 = fxad.value_and_grad(lambda w: (f(w, b), w * 3), has_aux=True)(w)
    close(val2, val)
    close(aux, 3 * w)
    close(g2, 4 * (2 * w + b))


def test_grad_kwargs_are_not_differentiated():
    def f(x, scale=1.0):
        return fnp.sum(fnp.sin(x)) * scale
    x = np.array([0.1, 0.2])
    close(fxad.grad(f)(x, scale=3.0), 3.0 * np.cos(x))


# --- pytrees ----------------------------------------------------------------------------------

Pair = namedtuple("Pair", ["w", "b"])


@dataclasses.dataclass
class Params:
    w: object
    b: object


def test_pytrees_through_grad():
    x = np.array([1.0, -2.0])

    def loss_dict(p):
        return fnp.sum(p["w"] ** 2 * x) + p["b"][0] * p["b"][1]
    p = {"w": np.array([0.5, 1.5]), "b": (2.0, np.array(3.0))}
    g = fxad.grad(loss_dict)(p)
    assert set(g) == {"w", "b"} and isinstance(g["b"], tuple) and len(g["b"]) == 2
    close(g["w"], 2 * p["w"] * x)
    close(g["b"][0], 3.0)
    close(g["b"][1], 2.0)

    def loss_nt(p):
        return fnp.sum(fnp.tanh(p.w * x + p.b))
    nt = Pair(np.array([0.1, 0.2]), 0.3)
    g = fxad.grad(loss_nt)(nt)
    assert type(g) is Pair
    s = _sech2(nt.w * x + nt.b)
    close(g.w, s * x)
    close(g.b, np.sum(s))

    def loss_dc(p):
        return fnp.sum(fnp.exp(p.w) * p.b)
    dc = Params(np.array([0.0, 1.0]), np.array([2.0, 3.0]))
    g = fxad.grad(loss_dc)(dc)
    assert type(g) is Params
    close(g.w, np.exp(dc.w) * dc.b)
    close(g.b, np.exp(dc.w))


def test_pytrees_through_jvp_and_vjp():
    def f(p):
        return Pair(w=p["a"] * p["c"].b, b=(fnp.sin(p["c"].w), fnp.sum(p["a"])))
    p = {"a": np.array([1.0, 2.0]), "c": Params(w=np.array([0.5]), b=3.0)}
    t = {"a": np.array([0.1, -0.1]), "c": Params(w=np.array([2.0]), b=0.5)}
    out, tout = fxad.jvp(f, (p,), (t,))
    assert type(out) is Pair and type(tout) is Pair and isinstance(tout.b, tuple)
    close(out.w, p["a"] * 3.0)
    close(tout.w, t["a"] * 3.0 + p["a"] * 0.5)
    close(tout.b[0], np.cos(0.5) * 2.0)
    close(tout.b[1], 0.0)

    out, f_vjp = fxad.vjp(f, p)
    ct = Pair(w=np.array([1.0, 1.0]), b=(np.array([2.0]), np.float64(4.0)))
    (g,) = f_vjp(ct)
    assert isinstance(g, dict) and type(g["c"]) is Params
    close(g["a"], 3.0 * ct.w + 4.0)
    close(g["c"].b, np.sum(p["a"] * ct.w))
    close(g["c"].w, np.cos(0.5) * 2.0)


def test_integer_arguments_to_vjp_get_zero_cotangents():
    x = np.array([0.5, 1.5, -2.0])
    n = np.array([1, 2, 3])
    out, f_vjp = fxad.vjp(lambda x, n, k: x * n + k, x, n, 4)
    close(out, x * n + 4)
    gx, gn, gk = f_vjp(np.array([1.0, -1.0, 2.0]))
    close(gx, n * np.array([1.0, -1.0, 2.0]))
    assert np.shape(gn) == n.shape and np.all(np.asarray(gn) == 0)
    assert np.shape(gk) == () and np.all(np.asarray(gk) == 0)


def test_integer_primal_in_jvp_has_no_effect_on_tangent():
    x = np.array([1.0, 2.0])
    n = np.array([3, 4])
    _, t = fxad.jvp(lambda x, n: x * n, (x, n), (np.ones(2), np.array([7, 7])))
    close(t, n)


# --- output types -----------------------------------------------------------------------------

def _check_plain(v):
    for leaf in fxad.tree_util.tree_leaves(v):
        assert not isinstance(leaf, Tracer), type(leaf)
        assert isinstance(leaf, (np.ndarray, np.generic)), type(leaf)
        if isinstance(leaf, np.ndarray):
            assert leaf.flags.writeable, "output array is read-only"
            leaf[...] = leaf  # really writeable


def test_outputs_are_plain_writeable_numpy():
    x = np.array([0.3, -0.2, 1.0])
    v = np.array([1.0, 0.0, 2.0])
    s = lambda x: fnp.sum(x)  # noqa: E731  (cotangent is a broadcast, read-only view)
    m = lambda x: fnp.mean(fnp.sin(x))  # noqa: E731
    bc = lambda x: fnp.broadcast_to(x, (2, 3))  # noqa: E731
    _check_plain(fxad.grad(s)(x))
    _check_plain(fxad.grad(m)(x))
    _check_plain(fxad.grad(lambda x: 3.0)(x))  # output independent of x
    _check_plain(fxad.grad(lambda x: fnp.sum(x * 0.0))(x))
    _check_plain(fxad.grad(lambda x: x[1] ** 2)(x))
    _check_plain(fxad.grad(lambda x: x ** 2)(0.5))
    _check_plain(fxad.value_and_grad(m)(x))
    _check_plain(fxad.jvp(bc, (x,), (v,)))
    _check_plain(fxad.jvp(lambda x: (x, 2.0 * x, fnp.ones(3)), (x,), (v,)))
    y, f_jvp = fxad.linearize(bc, x)
    _check_plain(y)
    _check_plain(f_jvp(v))
    _check_plain(fxad.linearize(lambda x: fnp.zeros(2) + 1.0, x)[1](v))
    out, f_vjp = fxad.vjp(bc, x)
    _check_plain(out)
    _check_plain(f_vjp(np.ones((2, 3))))
    _check_plain(fxad.vjp(lambda x: fnp.ones(2), x)[1](np.ones(2)))
    _check_plain(fxad.vmap(lambda x: fnp.sum(x))(np.ones((4, 3))))
    _check_plain(fxad.vmap(lambda x: x * 2, in_axes=1)(np.ones((4, 3))))
    _check_plain(fxad.vmap(lambda x: 1.0, axis_size=3)(np.ones((3, 2))))
    _check_plain(fxad.jacfwd(bc)(x))
    _check_plain(fxad.jacrev(bc)(x))
    _check_plain(fxad.hessian(m)(x))
    _check_plain(fxad.hvp(m, (x,), (v,)))
    _check_plain(fxad.linear_transpose(bc, x)(np.ones((2, 3))))
    _check_plain(fxad.stop_gradient(x))


# --- Hessians ---------------------------------------------------------------------------------

def _chain_f(x):
    return fnp.sum(fnp.exp(x[:-1] * x[1:])) + fnp.sum(x ** 3)


def _chain_grad(x):
    e = np.exp(x[:-1] * x[1:])
    g = 3 * x ** 2
    g[:-1] += x[1:] * e
    g[1:] += x[:-1] * e
    return g


def _chain_hessian(x):
    n = len(x)
    H = np.diag(6 * x)
    for i in range(n - 1):
        e = np.exp(x[i] * x[i + 1])
        H[i, i] += x[i + 1] ** 2 * e
        H[i + 1, i + 1] += x[i] ** 2 * e
        H[i, i + 1] += e * (1 + x[i] * x[i + 1])
        H[i + 1, i] += e * (1 + x[i] * x[i + 1])
    return H


def test_hessian_and_hvp():
    x = np.array([0.3, -0.5, 0.8, 0.1])
    v = np.array([1.0, 2.0, -0.5, 0.25])
    close(fxad.grad(_chain_f)(x), _chain_grad(x))
    H = _chain_hessian(x)
    close(fxad.hessian(_chain_f)(x), H)
    close(fxad.jacfwd(fxad.grad(_chain_f))(x), H)
    close(fxad.jacrev(fxad.grad(_chain_f))(x), H)
    hv = fxad.hvp(_chain_f, (x,), (v,))
    assert isinstance(hv, tuple) and len(hv) == 1
    close(hv[0], H @ v)


def test_hvp_two_arguments():
    # f(x, y) = sum(x^2 y) ; H = [[2 diag(y), 2 diag(x)], [2 diag(x), 0]]
    x, y = np.array([1.0, -2.0]), np.array([0.5, 3.0])
    vx, vy = np.array([0.1, 0.2]), np.array([-1.0, 1.0])
    hx, hy = fxad.hvp(lambda x, y: fnp.sum(x ** 2 * y), (x, y), (vx, vy))
    close(hx, 2 * y * vx + 2 * x * vy)
    close(hy, 2 * x * vx)


# --- dtypes -----------------------------------------------------------------------------------

@pytest.mark.parametrize("f,df", [
    (lambda x: fnp.sum(fnp.sin(x) * 2.0), lambda x: 2 * np.cos(x)),
    (lambda x: fnp.sum(x ** 2) / 3, lambda x: 2 * x / 3),
    (lambda x: fnp.mean(fnp.exp(x)), lambda x: np.exp(x) / x.size),
    (lambda x: fnp.sum(fnp.tanh(x) * x), lambda x: np.tanh(x) + x * _sech2(x)),
    (lambda x: fnp.dot(x, x) + 1.5, lambda x: 2 * x),
], ids=["sin*2.0", "sumsq/3", "mean-exp", "tanh*x", "dot"])
def test_float32_in_float32_gradient_out(f, df):
    x = np.array([0.1, -0.6, 1.2], dtype=np.float32)
    g = fxad.grad(f)(x)
    assert g.dtype == np.float32, g.dtype
    close(g, df(x.astype(np.float64)), rtol=1e-5, atol=1e-6)
    val, g2 = fxad.value_and_grad(f)(x)
    assert np.asarray(val).dtype == np.float32 and g2.dtype == np.float32
    _, t = fxad.jvp(f, (x,), (np.ones(3, np.float32),))
    assert np.asarray(t).dtype == np.float32
    close(t, np.sum(df(x.astype(np.float64))), rtol=1e-5, atol=1e-5)


def test_float32_higher_order_and_hessian():
    x = np.float32(0.4)
    g2 = fxad.grad(fxad.grad(lambda x: fnp.sin(x) * x))(x)
    assert np.asarray(g2).dtype == np.float32
    close(g2, 2 * np.cos(0.4) - 0.4 * np.sin(0.4), rtol=1e-5)
    xv = np.array([0.3, 0.7], dtype=np.float32)
    H = fxad.hessian(lambda x: fnp.sum(x ** 3))(xv)
    assert H.dtype == np.float32
    close(H, np.diag(6 * xv.astype(np.float64)), rtol=1e-5)


# --- stop_gradient ----------------------------------------------------------------------------

def test_straight_through_estimator():
    ste = lambda x: x + fxad.stop_gradient(fnp.round(x) - x)  # noqa: E731
    for x in (-1.7, -0.2, 0.4, 2.6):
        close(ste(x), np.round(x))
        close(fxad.grad(ste)(x), 1.0)
    xs = np.array([0.2, 1.6, -3.3])
    close(fxad.grad(lambda x: fnp.sum(ste(x) * xs))(xs), xs)


def test_stop_gradient_hessian():
    x = np.array([0.5, -1.0, 2.0])
    H = fxad.hessian(lambda x: fnp.sum(fxad.stop_gradient(x) * x ** 2))(x)
    close(H, np.diag(2 * x))
    close(fxad.grad(lambda x: fnp.sum(fxad.stop_gradient(x) * x ** 2))(x), 2 * x ** 2)


def test_stop_gradient_at_every_order():
    f = lambda x: x * fxad.stop_gradient(x ** 2)  # noqa: E731
    for x in (0.5, -1.5):
        close(fxad.grad(f)(x), x ** 2)
        close(fxad.grad(fxad.grad(f))(x), 0.0)
        close(fxad.jvp(fxad.grad(f), (x,), (1.0,))[1], 0.0)
    _, t = fxad.jvp(lambda x: fxad.stop_gradient(fnp.sin(x)), (0.3,), (1.0,))
    close(t, 0.0)
    tree = fxad.stop_gradient({"a": np.array([1.0]), "b": (2.0,)})
    close(tree["a"], [1.0])
    close(tree["b"][0], 2.0)


# --- plain NumPy code -------------------------------------------------------------------------

def test_plain_numpy_functions_under_grad():
    x = np.array([0.3, -1.1, 0.8])
    A = np.array([[2.0, 1.0, 0.0], [0.5, -1.0, 3.0], [1.0, 1.0, 1.0]])
    close(fxad.grad(lambda w: np.sum(np.exp(w) * w))(x), np.exp(x) * (1 + x))
    close(fxad.grad(lambda w: np.sum(np.sin(w)))(x), np.cos(x))
    close(fxad.grad(lambda w: np.sum(A[0] * w ** 2))(x), 2 * A[0] * x)  # ndarray * tracer
    close(fxad.grad(lambda w: np.dot(np.dot(A, w), w))(x), (A + A.T) @ x)
    close(fxad.grad(lambda w: np.sum((A @ w) ** 2))(x), 2 * A.T @ (A @ x))
    close(fxad.grad(lambda w: np.mean(np.tanh(w)))(x), _sech2(x) / 3)
    close(fxad.grad(lambda w: np.sum(np.sqrt(np.exp(w)) - w / 2.0))(x),
          0.5 * np.exp(x / 2) - 0.5)
    close(fxad.grad(fxad.grad(lambda w: np.sin(w) * np.cos(w)))(0.4), -4 * np.sin(0.4) *
          np.cos(0.4))
    close(fxad.grad(lambda w: np.sum(np.float64(2.0) * w * w))(x), 4 * x)
    close(fxad.grad(lambda w: np.sum(np.where(w > 0, w ** 2, -w)))(x), np.where(x > 0, 2 * x, -1))
    close(fxad.grad(lambda w: np.sum(np.maximum(w, 0.0) * 3.0))(x), np.where(x > 0, 3.0, 0.0))
    close(fxad.grad(lambda w: np.einsum("ij,i,j->", A, w, w))(x), (A + A.T) @ x)
    close(fxad.grad(lambda w: np.prod(w))(x), [x[1] * x[2], x[0] * x[2], x[0] * x[1]])
    close(fxad.jvp(lambda w: np.exp(w) @ A, (x,), (np.ones(3),))[1], np.exp(x) @ A)

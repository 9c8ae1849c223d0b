"""jacfwd / jacrev / hessian / hvp: forward and reverse Jacobians agree with each other (to
rounding) and with central finite differences, in JAX's layout (out_shape + in_shape, an
output pytree of input pytrees); the four Hessian orders agree with each other and with
analytic Hessians."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fxad
import fxad.numpy as fnp
from fxad.tree_util import tree_flatten, tree_structure, tree_unflatten

HSET = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RNG = np.random.default_rng(1234)


# --- helpers ---------------------------------------------------------------------------------

def fd_jacobian(f, args, argnums=0, eps=1e-6):
    """Central-difference Jacobian of f at args w.r.t. args[argnums] (an int or a tuple), in
    JAX's layout: an output tree whose leaves are input trees of out_shape + in_shape blocks."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    dyn = args[nums[0]] if single else tuple(args[i] for i in nums)
    in_leaves, in_tree = tree_flatten(dyn)
    in_leaves = [np.asarray(x, dtype=np.float64) for x in in_leaves]

    def call(leaves):
        d = tree_unflatten(in_tree, leaves)
        full = list(args)
        for k, i in enumerate(nums):
            full[i] = d if single else d[k]
        return tree_flatten(f(*full))

    out_leaves, out_tree = call(in_leaves)
    out_leaves = [np.asarray(o) for o in out_leaves]
    blocks = [[np.zeros(o.shape + x.shape) for x in in_leaves] for o in out_leaves]
    for li, x in enumerate(in_leaves):
        for idx in np.ndindex(x.shape):
            plus = [v.copy() for v in in_leaves]
            minus = [v.copy() for v in in_leaves]
            plus[li][idx] += eps
            minus[li][idx] -= eps
            op, _ = call(plus)
            om, _ = call(minus)
            for oi in range(len(out_leaves)):
                d = (np.asarray(op[oi]) - np.asarray(om[oi])) / (2 * eps)
                blocks[oi][li][(Ellipsis,) + idx] = d
    return tree_unflatten(out_tree, [tree_unflatten(in_tree, b) for b in blocks])


def assert_trees_close(a, b, rtol, atol=0.0):
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    assert ta == tb, f"tree structures differ: {ta} vs {tb}"
    for x, y in zip(la, lb):
        assert isinstance(x, (np.ndarray, np.generic)), type(x)
        assert np.shape(x) == np.shape(y), f"shape {np.shape(x)} != {np.shape(y)}"
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


def check_jacobians(f, args, argnums=0, fd_rtol=1e-6, fd_atol=1e-7):
    jf = fxad.jacfwd(f, argnums)(*args)
    jr = fxad.jacrev(f, argnums)(*args)
    assert_trees_close(jf, jr, rtol=1e-10, atol=1e-13)
    assert_trees_close(jf, fd_jacobian(f, args, argnums), rtol=fd_rtol, atol=fd_atol)
    return jf


# --- Jacobians ------------------------------------------------------------------------------

def f_rn_rm(x):  # R^4 -> R^3
    return fnp.stack([fnp.sin(x[0]) * x[1], x[2] ** 2 + fnp.exp(x[3]),
                      fnp.sum(fnp.tanh(x) * x)])


W = RNG.normal(size=(2, 4))


def f_matrix(m):  # (3, 4) -> (2, 3)
    return fnp.tanh(W @ m.T) * fnp.sum(m ** 2, axis=1)


def f_scalar_in(t):  # R -> R^3
    return fnp.stack([fnp.sin(t), t ** 3, fnp.exp(-t) * t])


def f_scalar_out(x):  # R^(2x3) -> R
    return fnp.sum(fnp.log1p(x ** 2)) * fnp.max(x)


def f_scalar_scalar(t):
    return fnp.sin(t) * t ** 2


def f_reductions(x):  # (4, 5) -> (5,) with prod, mean, var, indexing, einsum
    return fnp.prod(x[:3], axis=0) + fnp.var(x, axis=0) + fnp.einsum("ij,ij->j", x, x[::-1])


CASES = [
    ("rn_rm", f_rn_rm, (RNG.normal(size=4),), (3, 4)),
    ("matrix", f_matrix, (RNG.normal(size=(3, 4)),), (2, 3, 3, 4)),
    ("scalar_in", f_scalar_in, (np.float64(0.7),), (3,)),
    ("scalar_out", f_scalar_out, (RNG.normal(size=(2, 3)),), (2, 3)),
    ("scalar_scalar", f_scalar_scalar, (np.float64(-1.3),), ()),
    ("reductions", f_reductions, (RNG.normal(size=(4, 5)),), (5, 4, 5)),
]


@pytest.mark.parametrize("name,f,args,shape", CASES, ids=[c[0] for c in CASES])
def test_jacobian_array_functions(name, f, args, shape):
    j = check_jacobians(f, args)
    assert np.shape(j) == shape  # JAX layout: out_shape + in_shape


@HSET
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 5), m=st.integers(1, 4))
def test_jacobian_random_linear_plus_nonlinear(seed, n, m):
    rng = np.random.default_rng(seed)
    A, x = rng.normal(size=(m, n)), rng.normal(size=n)
    f = lambda x: fnp.tanh(A @ x) * fnp.sum(x) + A @ fnp.sin(x)
    jf, jr = fxad.jacfwd(f)(x), fxad.jacrev(f)(x)
    t = np.tanh(A @ x)
    exact = ((1 - t ** 2) * np.sum(x))[:, None] * A + t[:, None] * np.ones((1, n)) + \
        A * np.cos(x)[None, :]
    np.testing.assert_allclose(jf, jr, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(jf, exact, rtol=1e-10, atol=1e-12)
    assert jf.shape == (m, n)


def test_jacobian_dict_input():
    d = {"a": RNG.normal(size=3), "b": RNG.normal(size=(2, 2))}

    def f(p):
        return fnp.sin(p["b"] @ p["a"][:2]) * fnp.sum(p["a"] ** 2)

    j = check_jacobians(f, (d,))
    assert set(j) == {"a", "b"}
    assert j["a"].shape == (2, 3) and j["b"].shape == (2, 2, 2)


def test_jacobian_tuple_input():
    x, y = RNG.normal(size=3), RNG.normal(size=(2,))

    def f(xy):
        x, y = xy
        return fnp.outer(fnp.exp(x), y).ravel() + fnp.sum(x * x)

    j = check_jacobians(f, ((x, y),))
    assert isinstance(j, tuple) and j[0].shape == (6, 3) and j[1].shape == (6, 2)


def test_jacobian_pytree_output():
    x = RNG.normal(size=3)

    def f(x):
        return {"u": fnp.sin(x[:2]) * x[2], "v": fnp.sum(x ** 3), "w": (x * 2.0, fnp.cos(x))}

    j = check_jacobians(f, (x,))
    assert j["u"].shape == (2, 3) and j["v"].shape == (3,)
    assert j["w"][0].shape == (3, 3) and j["w"][1].shape == (3, 3)
    np.testing.assert_allclose(j["w"][0], 2.0 * np.eye(3))


def test_jacobian_pytree_input_and_output():
    p = {"w": RNG.normal(size=(2, 3)), "b": RNG.normal(size=2)}
    x = RNG.normal(size=3)

    def f(p, x):
        z = p["w"] @ x + p["b"]
        return (fnp.tanh(z), {"norm": fnp.sum(z ** 2)})

    j = check_jacobians(f, (p, x))
    assert tree_structure(j) == tree_structure(
        ({"b": 0, "w": 0}, {"norm": {"b": 0, "w": 0}}))
    assert j[0]["w"].shape == (2, 2, 3) and j[1]["norm"]["b"].shape == (2,)


@pytest.mark.parametrize("argnums", [0, 1, -1, (0, 1), (1, 0), (1,), (0, 2)])
def test_jacobian_argnums(argnums):
    x, y, z = RNG.normal(size=3), RNG.normal(size=(2, 3)), np.float64(0.4)

    def f(x, y, z):
        return fnp.tanh(y @ x) * z + fnp.sum(y, axis=1) * x[0]

    j = check_jacobians(f, (x, y, z), argnums)
    if isinstance(argnums, tuple):
        assert isinstance(j, tuple) and len(j) == len(argnums)
        shapes = {0: (2, 3), 1: (2, 2, 3), 2: (2,)}
        for a, block in zip(argnums, j):
            assert block.shape == shapes[a]


def test_jacobian_has_aux():
    x = RNG.normal(size=4)

    def f(x):
        y = fnp.sin(x) * x[0]
        return y, {"y": y, "n": fnp.sum(x)}

    jf, aux_f = fxad.jacfwd(f, has_aux=True)(x)
    jr, aux_r = fxad.jacrev(f, has_aux=True)(x)
    np.testing.assert_allclose(jf, jr, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(jf, fd_jacobian(lambda x: f(x)[0], (x,)), rtol=1e-6, atol=1e-8)
    for aux in (aux_f, aux_r):
        assert set(aux) == {"y", "n"}
        assert isinstance(aux["y"], np.ndarray) and aux["y"].shape == (4,)
        np.testing.assert_allclose(aux["y"], np.sin(x) * x[0])
        np.testing.assert_allclose(aux["n"], np.sum(x))


def test_jacobian_has_aux_with_argnums_tuple():
    x, y = RNG.normal(size=3), RNG.normal(size=3)
    f = lambda x, y: (x * y ** 2, fnp.dot(x, y))
    for jac in (fxad.jacfwd, fxad.jacrev):
        (jx, jy), aux = jac(f, argnums=(0, 1), has_aux=True)(x, y)
        np.testing.assert_allclose(jx, np.diag(y ** 2), atol=1e-14)
        np.testing.assert_allclose(jy, np.diag(2 * x * y), atol=1e-14)
        np.testing.assert_allclose(aux, x @ y)


def test_jacobian_kwargs_pass_through():
    x = RNG.normal(size=3)
    f = lambda x, scale=1.0: fnp.sin(x) * scale
    for jac in (fxad.jacfwd, fxad.jacrev):
        np.testing.assert_allclose(jac(f)(x, scale=3.0), np.diag(3.0 * np.cos(x)), atol=1e-14)


def test_jacobian_of_linear_map_is_the_matrix():
    A = RNG.normal(size=(4, 3))
    x = RNG.normal(size=3)
    for jac in (fxad.jacfwd, fxad.jacrev):
        np.testing.assert_allclose(jac(lambda x: A @ x)(x), A, rtol=1e-14)


def test_jacobian_results_are_plain_numpy():
    x = RNG.normal(size=3)
    for jac in (fxad.jacfwd, fxad.jacrev):
        j = jac(lambda x: fnp.sin(x))(x)
        assert type(j) is np.ndarray and j.flags.writeable


# --- Hessians --------------------------------------------------------------------------------

ORDERS = {
    "fwd_rev": lambda f, a=0: fxad.jacfwd(fxad.jacrev(f, a), a),
    "rev_rev": lambda f, a=0: fxad.jacrev(fxad.jacrev(f, a), a),
    "fwd_fwd": lambda f, a=0: fxad.jacfwd(fxad.jacfwd(f, a), a),
    "rev_fwd": lambda f, a=0: fxad.jacrev(fxad.jacfwd(f, a), a),
    "hessian": lambda f, a=0: fxad.hessian(f, a),
}

A4 = RNG.normal(size=(4, 4))
XL = RNG.normal(size=(6, 4))
YL = (RNG.uniform(size=6) < 0.5).astype(np.float64)
VM = RNG.normal(size=4)


def softplus(z):
    return fnp.log1p(fnp.exp(-fnp.abs(z))) + fnp.maximum(z, 0.0)


def h_quad_exp(x):
    return 0.5 * x @ A4 @ x + fnp.sum(fnp.exp(x))


def H_quad_exp(x):
    return 0.5 * (A4 + A4.T) + np.diag(np.exp(x))


def h_sin_sq(x):
    return fnp.sum(fnp.sin(x)) * fnp.sum(x ** 2)


def H_sin_sq(x):
    s, q = np.sum(np.sin(x)), np.sum(x ** 2)
    return np.diag(-np.sin(x)) * q + 2 * np.outer(np.cos(x), x) + \
        2 * np.outer(x, np.cos(x)) + 2 * s * np.eye(len(x))


def h_logreg(w):
    z = XL @ w
    return fnp.mean(softplus(z) - YL * z)


def H_logreg(w):
    p = 1 / (1 + np.exp(-XL @ w))
    return XL.T @ np.diag(p * (1 - p)) @ XL / len(YL)


def h_prod(x):
    return fnp.prod(x)


def H_prod(x):
    n = len(x)
    H = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                H[i, j] = np.prod(np.delete(x, [i, j]))
    return H


def h_matrix(m):  # (3, 4) -> R: sum((m @ v)^2)
    return fnp.sum((m @ VM) ** 2)


def H_matrix(m):
    return 2 * np.einsum("ik,j,l->ijkl", np.eye(3), VM, VM)


def h_scalar(t):
    return t ** 3 * fnp.sin(t)


def H_scalar(t):
    return 6 * t * np.sin(t) + 6 * t ** 2 * np.cos(t) - t ** 3 * np.sin(t)


HESS_CASES = [
    ("quad_exp", h_quad_exp, H_quad_exp, lambda r: r.normal(size=4)),
    ("sin_sq", h_sin_sq, H_sin_sq, lambda r: r.normal(size=5)),
    ("logreg", h_logreg, H_logreg, lambda r: r.normal(size=4)),
    ("prod", h_prod, H_prod, lambda r: r.uniform(0.5, 2.0, size=4)),
    ("matrix", h_matrix, H_matrix, lambda r: r.normal(size=(3, 4))),
    ("scalar", h_scalar, H_scalar, lambda r: np.float64(r.normal())),
]


@pytest.mark.parametrize("name,f,H,draw", HESS_CASES, ids=[c[0] for c in HESS_CASES])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_hessian_orders_agree_and_match_analytic(name, f, H, draw, seed):
    x = draw(np.random.default_rng(seed))
    ref = ORDERS["fwd_rev"](f)(x)
    expected = H(x)
    assert np.shape(ref) == np.shape(x) + np.shape(x)
    for order, make in ORDERS.items():
        h = make(f)(x)
        assert np.shape(h) == np.shape(expected), order
        np.testing.assert_allclose(h, ref, rtol=1e-10, atol=1e-12, err_msg=order)
        np.testing.assert_allclose(h, expected, rtol=1e-9, atol=1e-11, err_msg=order)


def h_dict(p):
    return fnp.sum(p["a"] ** 2 * p["b"]) + fnp.sum(fnp.sin(p["b"]))


def H_dict(p):
    a, b = p["a"], p["b"]
    return {"a": {"a": np.diag(2 * b), "b": np.diag(2 * a)},
            "b": {"a": np.diag(2 * a), "b": np.diag(-np.sin(b))}}


@pytest.mark.parametrize("order", list(ORDERS))
def test_hessian_dict_input(order):
    p = {"a": RNG.normal(size=3), "b": RNG.normal(size=3)}
    h = ORDERS[order](h_dict)(p)
    assert_trees_close(h, H_dict(p), rtol=1e-12, atol=1e-14)


def test_fxad_hessian_dict_input_nonuniform_shapes():
    p = {"m": RNG.normal(size=(2, 3)), "v": RNG.normal(size=3)}
    f = lambda p: fnp.sum(fnp.tanh(p["m"] @ p["v"]))
    h = fxad.hessian(f)(p)
    assert h["m"]["m"].shape == (2, 3, 2, 3) and h["m"]["v"].shape == (2, 3, 3)
    assert h["v"]["m"].shape == (3, 2, 3) and h["v"]["v"].shape == (3, 3)
    # compare with finite differences of the (reverse-mode) gradient
    fd = fd_jacobian(fxad.grad(f), (p,))
    assert_trees_close(h, fd, rtol=1e-6, atol=1e-8)
    # symmetric: H[m][v] is the transpose of H[v][m]
    np.testing.assert_allclose(h["m"]["v"], np.moveaxis(h["v"]["m"], 0, -1), rtol=1e-12)


def test_hessian_tuple_input_and_argnums_tuple():
    x, y = RNG.normal(size=3), RNG.normal(size=3)
    f = lambda x, y: fnp.sum(x ** 2 * y)
    exp = ((np.diag(2 * y), np.diag(2 * x)), (np.diag(2 * x), np.zeros((3, 3))))
    for order, make in ORDERS.items():
        assert_trees_close(make(f, (0, 1))(x, y), exp, rtol=1e-12, atol=1e-14)
    g = lambda xy: fnp.sum(xy[0] ** 2 * xy[1])
    assert_trees_close(fxad.hessian(g)((x, y)), exp, rtol=1e-12, atol=1e-14)


def test_hessian_argnums_int():
    x, y = RNG.normal(size=3), RNG.normal(size=3)
    f = lambda x, y: fnp.sum(x ** 2 * y ** 3)
    np.testing.assert_allclose(fxad.hessian(f, 1)(x, y), np.diag(6 * x ** 2 * y), rtol=1e-12)
    np.testing.assert_allclose(fxad.hessian(f)(x, y), np.diag(2 * y ** 3), rtol=1e-12)


# --- hvp -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,f,H,draw", HESS_CASES, ids=[c[0] for c in HESS_CASES])
def test_hvp_equals_hessian_times_v(name, f, H, draw):
    rng = np.random.default_rng(99)
    x = draw(rng)
    v = draw(rng)
    out = fxad.hvp(f, (x,), (v,))
    assert isinstance(out, tuple) and len(out) == 1
    hx = fxad.hessian(f)(x)
    nd = np.ndim(x)
    expected = np.tensordot(hx, v, axes=nd) if nd else hx * v
    np.testing.assert_allclose(out[0], expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out[0], np.tensordot(H(x), v, axes=nd) if nd else H(x) * v,
                               rtol=1e-9, atol=1e-11)


@HSET
@given(seed=st.integers(0, 2**32 - 1))
def test_hvp_random(seed):
    rng = np.random.default_rng(seed)
    x, v = rng.normal(size=5), rng.normal(size=5)
    np.testing.assert_allclose(fxad.hvp(h_sin_sq, (x,), (v,))[0], H_sin_sq(x) @ v,
                               rtol=1e-10, atol=1e-11)


def test_hvp_two_arguments():
    x, y = RNG.normal(size=3), RNG.normal(size=3)
    vx, vy = RNG.normal(size=3), RNG.normal(size=3)
    f = lambda x, y: fnp.sum(x ** 2 * y)
    hx, hy = fxad.hvp(f, (x, y), (vx, vy))
    np.testing.assert_allclose(hx, 2 * y * vx + 2 * x * vy, rtol=1e-12)
    np.testing.assert_allclose(hy, 2 * x * vx, rtol=1e-12)


def test_hvp_dict_primal():
    p = {"a": RNG.normal(size=3), "b": RNG.normal(size=3)}
    v = {"a": RNG.normal(size=3), "b": RNG.normal(size=3)}
    (out,) = fxad.hvp(h_dict, (p,), (v,))
    H = H_dict(p)
    np.testing.assert_allclose(out["a"], H["a"]["a"] @ v["a"] + H["a"]["b"] @ v["b"], rtol=1e-12)
    np.testing.assert_allclose(out["b"], H["b"]["a"] @ v["a"] + H["b"]["b"] @ v["b"], rtol=1e-12)


def test_eager_jacobians_meet_only_diagonal_square_products(monkeypatch):
    """Eager jacfwd/jacrev push identity bases through the program: every n x n by n x n
    product they run has a diagonal factor, which dot_general scales instead of multiplying
    (O(n^2), not O(n^3)); the layout of the batched cotangents must keep it that way."""
    from fxad.rules.contraction.dot import diagonal_of, dot_general_p, fast_form
    n = 20
    A = np.random.default_rng(1).normal(size=(n, n))
    g = lambda x: fnp.tanh(A @ x) * x  # noqa: E731
    x = np.linspace(-1.0, 1.0, n)
    squares, real = [], dot_general_p.impl

    def recording(lhs, rhs, dimension_numbers):
        if np.shape(lhs) == (n, n) == np.shape(rhs):  # diagonal, in a form it scales
            squares.append((diagonal_of(np.asarray(lhs)) is not None
                            or diagonal_of(np.asarray(rhs)) is not None)
                           and fast_form(dimension_numbers, 2, 2) in ("ab", "abT", "aTb"))
        return real(lhs, rhs, dimension_numbers)
    monkeypatch.setattr(dot_general_p, "impl", recording)
    want = (1 - np.tanh(A @ x) ** 2)[:, None] * A * x[:, None] + np.diag(np.tanh(A @ x))
    for jac in (fxad.jacfwd, fxad.jacrev):
        squares.clear()
        np.testing.assert_allclose(jac(g)(x), want, rtol=1e-12, atol=1e-12)
        assert squares and all(squares), (jac.__name__, squares)

"""Control flow (fxad.lax.cond / switch / scan / fori_loop / while_loop) against the same
computation written with plain Python control flow (if/else on concrete values, unrolled
loops), under every transformation and their compositions.

The reference is always the Python-control-flow version run eagerly through fxad (whose
non-control-flow rules are tested elsewhere); under vmap and jit, where Python control flow
cannot branch on traced values, the reference is a per-example loop of the eager result.
"""
import time

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.errors import FxadError
from fxad.tree_util import tree_flatten, tree_unflatten

RTOL, ATOL = 1e-10, 1e-12


def close(actual, expected):
    la, ta = tree_flatten(actual)
    lb, tb = tree_flatten(expected)
    assert ta == tb, f"structure {ta} != {tb}"
    for a, b in zip(la, lb):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"shape {a.shape} != {b.shape}"
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


def scalarize(f):
    """A scalar loss of f's (pytree) output, nonlinear so that Hessians are not trivial."""
    def s(*args):
        leaves, _ = tree_flatten(f(*args))
        total = 0.0
        for leaf in leaves:
            total = total + fnp.sum(fnp.sin(leaf))
        return total
    return s


def stack_results(results):
    """Stack a list of equal-structure pytrees along a new leading axis."""
    flat = [tree_flatten(r) for r in results]
    tree = flat[0][1]
    return tree_unflatten(tree, [np.stack([np.asarray(f[0][i]) for f in flat])
                                 for i in range(len(flat[0][0]))])


# --- the table: (control-flow version, Python version, arguments, batches) -------------------

# cond: the predicate depends on x; the branches close over w (an explicit argument of the
# outer function, not an operand).

def cond_cf(x, w):
    return lax.cond(fnp.sum(x) > 0, lambda v: fnp.sin(v) * w, lambda v: fnp.cos(v) + w ** 2, x)


def cond_py(x, w):
    if fnp.sum(x) > 0:
        return fnp.sin(x) * w
    return fnp.cos(x) + w ** 2


# cond with pytree operands and outputs; the predicate depends on w, and the branches close
# over w as well as taking it inside the operand pytree.

def cond_tree_cf(x, w):
    def t(ops):
        a, d = ops
        return {"u": a * d["k"], "v": fnp.sum(a) * w[0]}

    def f(ops):
        a, d = ops
        return {"u": fnp.tanh(a) - d["k"], "v": w[1] * fnp.exp(a[0])}
    return lax.cond(w[0] * w[1] > 0, t, f, (x, {"k": w}))


def cond_tree_py(x, w):
    if w[0] * w[1] > 0:
        return {"u": x * w, "v": fnp.sum(x) * w[0]}
    return {"u": fnp.tanh(x) - w, "v": w[1] * fnp.exp(x[0])}


# switch with three branches, the index computed from the data; W closed over.

def _switch_branches(W):
    return [lambda x, y: fnp.sum(x) * y,
            lambda x, y: fnp.sin(y) * x[0] + W @ y,
            lambda x, y: fnp.exp(y) - x[1] ** 2]


def switch_cf(x, y, W):
    return lax.switch(fnp.sum(x > 0.5), _switch_branches(W), x, y)


def switch_py(x, y, W):
    return _switch_branches(W)[int(np.sum(np.asarray(x > 0.5)))](x, y)


# scan: dict carry, tuple xs, tuple ys; W closed over; h0 loop-carried.

def _rnn_body(W):
    def body(c, x):
        a, b = x
        h = fnp.tanh(W @ c["h"] + a * b)
        return {"h": h, "s": c["s"] + fnp.sum(h)}, (h * b, fnp.sum(h) ** 2)
    return body


def scan_cf(h0, s0, W, xa, xb, reverse=False):
    return lax.scan(_rnn_body(W), {"h": h0, "s": s0}, (xa, xb), reverse=reverse)


def scan_py(h0, s0, W, xa, xb, reverse=False):
    body, c = _rnn_body(W), {"h": h0, "s": s0}
    ys = [None] * xa.shape[0]
    steps = range(xa.shape[0] - 1, -1, -1) if reverse else range(xa.shape[0])
    for t in steps:
        c, ys[t] = body(c, (xa[t], xb[t]))
    return c, (fnp.stack([y[0] for y in ys]), fnp.stack([y[1] for y in ys]))


def scan_rev_cf(*a):
    return scan_cf(*a, reverse=True)


def scan_rev_py(*a):
    return scan_py(*a, reverse=True)


# scan with xs=None and length=; tuple carry; w closed over.

def _nox_body(w):
    def body(c, _):
        v, p = c
        return (v * w + fnp.sin(v) * p, p + v[0] * v[1]), fnp.sum(v ** 2)
    return body


def scan_nox_cf(v0, p0, w):
    return lax.scan(_nox_body(w), (v0, p0), None, length=6)


def scan_nox_py(v0, p0, w):
    body, c, ys = _nox_body(w), (v0, p0), []
    for _ in range(6):
        c, y = body(c, None)
        ys.append(y)
    return c, fnp.stack(ys)


# fori_loop with static bounds; tuple carry; the index is used in the body; w closed over.

def _fori_body(w):
    return lambda i, c: (c[0] * w + fnp.sin(c[1]) * i, c[1] + 0.5 * c[0] * c[1])


def fori_cf(a, b, w):
    return lax.fori_loop(1, 5, _fori_body(w), (a, b))


def fori_py(a, b, w):
    c = (a, b)
    for i in range(1, 5):
        c = _fori_body(w)(i, c)
    return c


# while_loop with a fixed trip count (an integer counter in the carry).

def _while_fixed_body(w):
    return lambda c: (c[0] + 1, fnp.sin(c[1]) * w + c[1])


def while_fixed_cf(x, w):
    return lax.while_loop(lambda c: c[0] < 4, _while_fixed_body(w), (0, x))[1]


def while_fixed_py(x, w):
    c = (0, x)
    while c[0] < 4:
        c = _while_fixed_body(w)(c)
    return c[1]


# while_loop with a data-dependent trip count; a closed over.

def _while_data_body(a):
    return lambda v: v * a + 0.1 * fnp.sin(v)


def while_data_cf(x, a):
    return lax.while_loop(lambda v: fnp.sum(v * v) < 10.0, _while_data_body(a), x)


def while_data_py(x, a):
    v = x
    while fnp.sum(v * v) < 10.0:
        v = _while_data_body(a)(v)
    return v


rng = np.random.default_rng(0)
_W3 = rng.normal(size=(3, 3)) * 0.6
_T = 5
_XA, _XB = rng.normal(size=(_T, 3)), rng.normal(size=(_T,))

CASES = {
    # name: (cf, py, args, [(batched argnum, batch values)])
    "cond_true": (cond_cf, cond_py, (np.array([0.3, -0.1, 0.5]), np.array([1.2, 0.7, -0.4])),
                  [(0, np.array([[0.3, -0.1, 0.5], [-0.3, 0.1, -0.5],
                                 [1.0, 2.0, -0.5], [-1.0, -2.0, 0.5]]))]),
    "cond_false": (cond_cf, cond_py, (np.array([-0.3, 0.1, -0.5]), np.array([1.2, 0.7, -0.4])),
                   [(0, np.array([[-0.3, 0.1, -0.5], [0.3, 0.2, 0.1]]))]),
    "cond_tree": (cond_tree_cf, cond_tree_py,
                  (np.array([0.4, -0.7, 0.2]), np.array([0.9, 0.5, -1.1])),
                  [(1, np.array([[0.9, 0.5, -1.1], [0.9, -0.5, 1.1], [-0.2, -0.3, 0.4]])),
                   (0, np.array([[0.4, -0.7, 0.2], [1.0, 0.1, -0.3]]))]),
    "switch_0": (switch_cf, switch_py, (np.array([0.1, 0.2]), np.array([0.3, -0.6, 0.8]), _W3),
                 [(0, np.array([[0.1, 0.2], [0.9, 0.2], [0.9, 0.8], [0.3, 0.7]]))]),
    "switch_1": (switch_cf, switch_py, (np.array([0.9, 0.2]), np.array([0.3, -0.6, 0.8]), _W3),
                 [(1, np.array([[0.3, -0.6, 0.8], [0.1, 0.2, 0.3]]))]),
    "switch_2": (switch_cf, switch_py, (np.array([0.9, 0.8]), np.array([0.3, -0.6, 0.8]), _W3),
                 [(0, np.array([[0.9, 0.8], [0.1, 0.9], [0.0, 0.0]]))]),
    "scan_tree": (scan_cf, scan_py, (np.array([0.1, -0.2, 0.3]), np.array(0.5), _W3, _XA, _XB),
                  [(0, rng.normal(size=(3, 3))), (3, rng.normal(size=(2, _T, 3)))]),
    "scan_reverse": (scan_rev_cf, scan_rev_py,
                     (np.array([0.1, -0.2, 0.3]), np.array(0.5), _W3, _XA, _XB),
                     [(4, rng.normal(size=(3, _T)))]),
    "scan_xs_none": (scan_nox_cf, scan_nox_py,
                     (np.array([0.3, -0.4]), np.array(0.2), np.array([0.8, 0.6])),
                     [(0, np.array([[0.3, -0.4], [0.1, 0.2], [-0.5, 0.3]]))]),
    "fori_loop": (fori_cf, fori_py, (np.array([0.3, -0.4]), np.array([0.2, 0.5]),
                                     np.array([0.8, 0.6])),
                  [(1, np.array([[0.2, 0.5], [-0.1, 0.3]]))]),
    "while_fixed": (while_fixed_cf, while_fixed_py, (np.array([0.3, -0.4]), np.array([0.8, 0.6])),
                    [(0, np.array([[0.3, -0.4], [1.0, 0.5], [-0.2, 0.1]]))]),
    "while_data": (while_data_cf, while_data_py, (np.array([0.5, 0.2]), np.array(1.5)),
                   # trip counts 6, 3, 0, 9 (checked in test_while_data_trip_counts_differ)
                   [(0, np.array([[0.5, 0.2], [1.5, 1.0], [3.0, 2.0], [0.1, 0.1]]))]),
}
NAMES = list(CASES)
WHILE = {"while_fixed", "while_data"}
NOT_WHILE = [n for n in NAMES if n not in WHILE]


def case(name):
    cf, py, args, batches = CASES[name]
    return cf, py, tuple(np.array(a, dtype=float) for a in args), batches


def all_argnums(args):
    return tuple(range(len(args)))


def tangents_for(args, seed=1):
    r = np.random.default_rng(seed)
    return tuple(r.normal(size=np.shape(a)) for a in args)


def test_while_data_trip_counts_differ():
    counts = []
    for x in CASES["while_data"][3][0][1]:
        v, n = x, 0
        while np.sum(v * v) < 10.0:
            v, n = v * 1.5 + 0.1 * np.sin(v), n + 1
        counts.append(n)
    assert len(set(counts)) == len(counts), counts


def test_cond_batches_take_different_branches():
    xs = CASES["cond_true"][3][0][1]
    assert len({bool(np.sum(x) > 0) for x in xs}) == 2
    idx = {int(np.sum(x > 0.5)) for x in CASES["switch_0"][3][0][1]}
    assert idx == {0, 1, 2}


# --- the transformations ------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_value(name):
    cf, py, args, _ = case(name)
    close(cf(*args), py(*args))


@pytest.mark.parametrize("name", NAMES)
def test_grad_each_argument(name):
    cf, py, args, _ = case(name)
    for i in range(len(args)):
        close(fxad.grad(scalarize(cf), argnums=i)(*args),
              fxad.grad(scalarize(py), argnums=i)(*args))
    close(fxad.grad(scalarize(cf), argnums=all_argnums(args))(*args),
          fxad.grad(scalarize(py), argnums=all_argnums(args))(*args))


@pytest.mark.parametrize("name", NAMES)
def test_jvp(name):
    cf, py, args, _ = case(name)
    t = tangents_for(args)
    close(fxad.jvp(cf, args, t), fxad.jvp(py, args, t))


@pytest.mark.parametrize("name", NAMES)
def test_linearize(name):
    cf, py, args, _ = case(name)
    t = tangents_for(args)
    out, f_jvp = fxad.linearize(cf, *args)
    close(out, py(*args))
    close(f_jvp(*t), fxad.jvp(py, args, t)[1])


@pytest.mark.parametrize("name", NAMES)
def test_vjp(name):
    cf, py, args, _ = case(name)
    out, pull = fxad.vjp(cf, *args)
    leaves, tree = tree_flatten(out)
    r = np.random.default_rng(2)
    ct = tree_unflatten(tree, [r.normal(size=np.shape(x)) for x in leaves])
    close(pull(ct), fxad.vjp(py, *args)[1](ct))


@pytest.mark.parametrize("name", NAMES)
def test_hessian(name):
    cf, py, args, _ = case(name)
    for i in range(len(args)):
        close(fxad.hessian(scalarize(cf), argnums=i)(*args),
              fxad.hessian(scalarize(py), argnums=i)(*args))


def test_hessian_all_arguments_cond_scan():
    for name in ("cond_tree", "scan_xs_none"):
        cf, py, args, _ = case(name)
        close(fxad.hessian(scalarize(cf), argnums=all_argnums(args))(*args),
              fxad.hessian(scalarize(py), argnums=all_argnums(args))(*args))


@pytest.mark.parametrize("name", NAMES)
def test_jacrev(name):
    cf, py, args, _ = case(name)
    nums = all_argnums(args)
    close(fxad.jacrev(cf, argnums=nums)(*args), fxad.jacrev(py, argnums=nums)(*args))


@pytest.mark.parametrize("name", NAMES)
def test_jacfwd(name):
    cf, py, args, _ = case(name)
    nums = all_argnums(args)
    close(fxad.jacfwd(cf, argnums=nums)(*args), fxad.jacfwd(py, argnums=nums)(*args))


def _batch_cases():
    out = []
    for name in NAMES:
        for k, (argnum, _) in enumerate(CASES[name][3]):
            out.append(pytest.param(name, k, id=f"{name}-arg{argnum}"))
    return out


def _per_example(fn, args, argnum, values):
    return stack_results([fn(*(args[:argnum] + (v,) + args[argnum + 1:])) for v in values])


@pytest.mark.parametrize("name,k", _batch_cases())
def test_vmap_value(name, k):
    cf, py, args, batches = case(name)
    argnum, values = batches[k]
    in_axes = tuple(0 if i == argnum else None for i in range(len(args)))
    got = fxad.vmap(cf, in_axes=in_axes)(*(args[:argnum] + (values,) + args[argnum + 1:]))
    close(got, _per_example(py, args, argnum, values))


@pytest.mark.parametrize("name,k", _batch_cases())
def test_vmap_grad(name, k):
    cf, py, args, batches = case(name)
    argnum, values = batches[k]
    nums = all_argnums(args)
    in_axes = tuple(0 if i == argnum else None for i in range(len(args)))
    got = fxad.vmap(fxad.grad(scalarize(cf), argnums=nums), in_axes=in_axes)(
        *(args[:argnum] + (values,) + args[argnum + 1:]))
    close(got, _per_example(fxad.grad(scalarize(py), argnums=nums), args, argnum, values))


@pytest.mark.parametrize("name", NOT_WHILE)
def test_jit_grad(name):
    cf, py, args, batches = case(name)
    nums = all_argnums(args)
    g = fxad.jit(fxad.grad(scalarize(cf), argnums=nums))
    ref = fxad.grad(scalarize(py), argnums=nums)
    close(g(*args), ref(*args))
    # the same compiled program at other values (other branches / same trip counts)
    argnum, values = batches[0]
    for v in values:
        a = args[:argnum] + (v,) + args[argnum + 1:]
        close(g(*a), ref(*a))


@pytest.mark.parametrize("name", NOT_WHILE)
def test_grad_jit(name):
    cf, py, args, batches = case(name)
    nums = all_argnums(args)
    g = fxad.grad(fxad.jit(scalarize(cf)), argnums=nums)
    ref = fxad.grad(scalarize(py), argnums=nums)
    close(g(*args), ref(*args))
    argnum, values = batches[0]
    for v in values:
        a = args[:argnum] + (v,) + args[argnum + 1:]
        close(g(*a), ref(*a))


@pytest.mark.parametrize("name", NOT_WHILE)
def test_jit_value_and_jvp(name):
    cf, py, args, _ = case(name)
    t = tangents_for(args)
    close(fxad.jit(cf)(*args), py(*args))
    close(fxad.jit(lambda a, b: fxad.jvp(cf, a, b))(args, t), fxad.jvp(py, args, t))
    close(fxad.jvp(fxad.jit(cf), args, t), fxad.jvp(py, args, t))


def _while_loss_linear(cf):
    """A loss that is linear in the loop's output (no nonlinear use downstream)."""
    return lambda *a: fnp.sum(cf(*a))


@pytest.mark.parametrize("name", sorted(WHILE))
def test_while_jit_grad_raises_suggesting_fori_loop_or_scan(name):
    cf, py, args, _ = case(name)
    nums = all_argnums(args)
    for loss in (_while_loss_linear(cf), scalarize(cf)):
        with pytest.raises((FxadError, TypeError)) as info:
            fxad.jit(fxad.grad(loss, argnums=nums))(*args)
        msg = str(info.value)
        assert "fori_loop" in msg or "scan" in msg, msg


@pytest.mark.parametrize("name", sorted(WHILE))
def test_while_grad_of_jit_raises_suggesting_fori_loop_or_scan(name):
    cf, py, args, _ = case(name)
    nums = all_argnums(args)
    for loss in (_while_loss_linear(cf), scalarize(cf)):
        with pytest.raises((FxadError, TypeError)) as info:
            fxad.grad(fxad.jit(loss), argnums=nums)(*args)
        msg = str(info.value)
        assert "fori_loop" in msg or "scan" in msg, msg


@pytest.mark.parametrize("name", sorted(WHILE))
def test_while_jit_of_jvp_works(name):
    cf, py, args, batches = case(name)
    t = tangents_for(args)
    close(fxad.jit(cf)(*args), py(*args))
    jj = fxad.jit(lambda a, b: fxad.jvp(cf, a, b))
    close(jj(args, t), fxad.jvp(py, args, t))
    # other values: other trip counts through the same compiled program
    argnum, values = batches[0]
    for v in values:
        a = args[:argnum] + (v,) + args[argnum + 1:]
        close(jj(a, t), fxad.jvp(py, a, t))


@pytest.mark.parametrize("name", sorted(WHILE))
def test_while_jvp_of_jit_works(name):
    cf, py, args, _ = case(name)
    t = tangents_for(args)
    close(fxad.jvp(fxad.jit(cf), args, t), fxad.jvp(py, args, t))


@pytest.mark.parametrize("name", sorted(WHILE))
def test_while_eager_grad_works(name):
    cf, py, args, _ = case(name)
    nums = all_argnums(args)
    for loss in (_while_loss_linear, scalarize):
        close(fxad.grad(loss(cf), argnums=nums)(*args), fxad.grad(loss(py), argnums=nums)(*args))


def test_vmap_jit_grad_cond_batched_index():
    cf, py, args, batches = case("cond_true")
    argnum, values = batches[0]
    g = fxad.jit(fxad.vmap(fxad.grad(scalarize(cf), argnums=(0, 1)), in_axes=(0, None)))
    close(g(values, args[1]),
          _per_example(fxad.grad(scalarize(py), argnums=(0, 1)), args, 0, values))


def test_grad_of_grad_through_scan_and_cond():
    for name in ("scan_tree", "cond_tree", "switch_1", "fori_loop", "while_data"):
        cf, py, args, _ = case(name)
        gg = lambda f: fxad.grad(lambda *a: fnp.sum(fnp.sin(fxad.grad(scalarize(f))(*a))))  # noqa
        close(gg(cf)(*args), gg(py)(*args))


def test_switch_index_is_clamped():
    x, y, W = case("switch_0")[2]
    for idx, want in ((-3, 0), (7, 2)):
        f = lambda x, y, W: lax.switch(idx, _switch_branches(W), x, y)  # noqa: E731
        g = lambda x, y, W: _switch_branches(W)[want](x, y)  # noqa: E731
        close(f(x, y, W), g(x, y, W))
        close(fxad.grad(scalarize(f), argnums=(0, 1, 2))(x, y, W),
              fxad.grad(scalarize(g), argnums=(0, 1, 2))(x, y, W))


def test_scan_unroll_is_accepted():
    cf, py, args, _ = case("scan_tree")
    close(lax.scan(_rnn_body(args[2]), {"h": args[0], "s": args[1]}, (args[3], args[4]),
                   unroll=2), py(*args))


# --- linearize of an RNN: a linear program with stacked residuals -------------------------------

def _prim_names(jaxpr, acc):
    for e in jaxpr.eqns:
        acc.add(e.primitive.name)
        for v in e.params.values():
            for sub in (v if isinstance(v, (tuple, list)) else (v,)):
                if hasattr(sub, "jaxpr") and hasattr(sub.jaxpr, "eqns"):
                    _prim_names(sub.jaxpr, acc)
    return acc


def _rnn_linearized(steps, hidden=8, n_in=3):
    r = np.random.default_rng(3)
    W = r.normal(size=(hidden, hidden)) / np.sqrt(hidden)
    U = r.normal(size=(hidden, n_in))
    b = r.normal(size=hidden) * 0.1
    h0 = r.normal(size=hidden) * 0.1
    xs = r.normal(size=(steps, n_in))

    def rnn(W, U, b, h0):
        def body(h, x):
            h = fnp.tanh(W @ h + U @ x + b)
            return h, fnp.mean(h)
        h, ys = lax.scan(body, h0, xs)
        return fnp.sum(h ** 2) + fnp.sum(ys)

    def rnn_py(W, U, b, h0):
        h, total = h0, 0.0
        for t in range(steps):
            h = fnp.tanh(W @ h + U @ xs[t] + b)
            total = total + fnp.mean(h)
        return fnp.sum(h ** 2) + total

    args = (W, U, b, h0)
    out, f_jvp = fxad.linearize(rnn, *args)
    return args, rnn_py, out, f_jvp


def test_linearize_rnn_scan_is_linear_with_stacked_residuals():
    steps = 10
    args, rnn_py, out, f_jvp = _rnn_linearized(steps)
    close(out, rnn_py(*args))
    t = tangents_for(args, seed=4)
    close(f_jvp(*t), fxad.jvp(rnn_py, args, t)[1])
    printed = str(f_jvp.jaxpr)
    names = _prim_names(f_jvp.jaxpr.jaxpr, set())
    assert "scan" in names, names
    assert "tanh" not in names and "tanh" not in printed, printed
    shapes = [np.shape(c) for c in f_jvp.jaxpr.consts]
    # A few arrays, not one per step. With all of (W, U, b, h0) differentiated five are
    # needed: W, the xs, the stacked h_{t-1}, the stacked tanh' and 2 h_T.
    assert len(shapes) <= 5, shapes
    assert any(len(s) >= 1 and s[0] == steps for s in shapes), shapes
    assert all(len(s) < 2 or s[0] == steps or s == (8, 8) for s in shapes), shapes
    # ... and the number of residuals does not grow with the number of steps
    _, _, _, f_jvp_long = _rnn_linearized(4 * steps)
    long_shapes = [np.shape(c) for c in f_jvp_long.jaxpr.consts]
    assert len(long_shapes) == len(shapes), (shapes, long_shapes)
    assert sum(s[:1] == (4 * steps,) for s in long_shapes) == \
        sum(s[:1] == (steps,) for s in shapes), (shapes, long_shapes)


# --- a long scan: reverse mode over 5,000 steps --------------------------------------------------

def test_grad_long_scan_matches_closed_form():
    T = 5000
    r = np.random.default_rng(5)
    xs = r.normal(size=T)

    def f(c0, a, xs):
        c, _ = lax.scan(lambda c, x: (c * a + x, None), c0, xs)
        return c

    c0, a = np.float64(0.7), np.float64(0.999)
    t0 = time.perf_counter()
    g_c0, g_a, g_xs = fxad.grad(f, argnums=(0, 1, 2))(c0, a, xs)
    elapsed = time.perf_counter() - t0
    k = np.arange(T)
    # c_T = a^T c0 + sum_t a^(T-1-t) x_t
    close(f(c0, a, xs), a ** T * c0 + np.sum(a ** (T - 1 - k) * xs))
    close(g_c0, a ** T)
    close(g_xs, a ** (T - 1 - k))
    close(g_a, T * a ** (T - 1) * c0 + np.sum((T - 1 - k) * a ** np.maximum(T - 2 - k, 0) * xs))
    assert elapsed < 15.0, f"grad of a {T}-step scan took {elapsed:.1f} s"


# --- errors ---------------------------------------------------------------------------------------

def test_cond_branches_with_different_shapes_raise_naming_the_branch():
    x = np.ones(3)
    both = r"true_fun returns .*\(f64\[3\]\) but false_fun returns .*"
    with pytest.raises(TypeError, match=both + r"\(f64\[2\]\)"):
        lax.cond(True, lambda v: v, lambda v: v[:2], x)
    with pytest.raises(TypeError, match="true_fun returns .* but false_fun returns"):
        lax.cond(True, lambda v: (v, v), lambda v: [v, v], x)
    with pytest.raises(TypeError, match=both + r"\(i64\[3\]\)"):
        lax.cond(True, lambda v: v, lambda v: v.astype(np.int64), x)


def test_switch_branches_with_different_structures_raise_naming_the_branch():
    x = np.ones(3)
    with pytest.raises(TypeError, match="branch 2"):
        lax.switch(0, [lambda v: {"a": v}, lambda v: {"a": v * 2}, lambda v: {"b": v}], x)
    with pytest.raises(TypeError, match="branch 1"):
        fxad.grad(lambda v: fnp.sum(lax.switch(1, [lambda u: u, lambda u: fnp.sum(u)], v)))(x)


def test_scan_carry_changing_shape_or_dtype_raises():
    with pytest.raises(TypeError):
        lax.scan(lambda c, x: (fnp.concatenate([c, c]), x), np.ones(2), np.ones(3))
    with pytest.raises(TypeError):
        lax.scan(lambda c, x: (c * x, x), np.int64(1), np.ones(3))  # int carry becomes float
    with pytest.raises(TypeError):
        lax.scan(lambda c, x: ((c, c), x), np.ones(2), np.ones(3))  # structure


def test_while_body_with_wrong_structure_raises():
    with pytest.raises(TypeError):
        lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1,), (0, 1.0))
    with pytest.raises(TypeError):
        lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, np.ones(2)), (0, 1.0))
    with pytest.raises(TypeError):
        lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 0.5, c[1]), (0, 1.0))


def test_cond_with_non_scalar_predicate_raises():
    with pytest.raises((FxadError, TypeError, ValueError)):
        lax.cond(np.array([True, False]), lambda v: v, lambda v: -v, np.ones(2))
    with pytest.raises((FxadError, TypeError, ValueError)):
        fxad.grad(lambda v: fnp.sum(lax.cond(v > 0, lambda u: u, lambda u: -u, v)))(np.ones(2))


# --- the graph --------------------------------------------------------------------------------

def test_to_dot_of_cond_draws_subgraph_clusters():
    f = lambda x: lax.cond(fnp.sum(x) > 0, fnp.sin, fnp.cos, x)  # noqa: E731
    dot = fxad.make_jaxpr(f)(np.ones(3)).to_dot()
    assert "subgraph cluster" in dot, dot
    assert dot.count("subgraph cluster") >= 2, dot  # one per branch


def test_to_dot_of_scan_draws_a_subgraph_cluster():
    def f(x):
        c, ys = lax.scan(lambda c, v: (c + v, c * v), 0.0, x)
        return c + fnp.sum(ys)
    dot = fxad.make_jaxpr(f)(np.ones(3)).to_dot()
    assert "subgraph cluster" in dot, dot


def test_to_dot_of_cond_and_scan():
    def f(x):
        y = lax.cond(fnp.sum(x) > 0, fnp.sin, fnp.cos, x)
        c, ys = lax.scan(lambda c, v: (c + v, c * v), 0.0, y)
        return c + fnp.sum(ys)
    dot = fxad.make_jaxpr(f)(np.ones(3)).to_dot()
    assert "subgraph cluster" in dot
    assert dot.count("subgraph cluster") >= 3, dot  # two branches and a scan body

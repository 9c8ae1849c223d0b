"""The simplification passes (fxad.ir.simplify), one at a time, on small programs built to
contain each pass's pattern: what is removed, what must NOT be removed, and that the result
type-checks and computes what the original computed."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.core import ShapedArray, get_aval
from fxad.ir import simplify as S
from fxad.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, check_jaxpr
from fxad.rules.elementwise.arithmetic import add_p, convert_element_type_p, mul_p
from fxad.rules.elementwise.transcendental import cos_p, sin_p
from fxad.rules.structural.shape import broadcast_to_p, reshape_p, transpose_p

X3 = np.array([0.3, -0.7, 1.1])


def prims(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def run(closed, *args):
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in closed(*args)]


def check_same(before, after, *args):
    """`after` type-checks and computes what `before` computes (NaNs included)."""
    print("before:\n" + str(before))
    print("after:\n" + str(after))
    assert check_jaxpr(after.jaxpr)
    want, got = run(before, *args), run(after, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=0, equal_nan=True)


def lit(v):
    return Literal(v, get_aval(v))


F64_3 = ShapedArray((3,), np.float64)


# --- inline_calls --------------------------------------------------------------------------------

def test_inline_calls_removes_jit_eqn():
    g = fxad.jit(lambda y: fnp.sin(y) + 1.0)
    before = fxad.make_jaxpr(lambda x: g(x) * 2.0)(X3)
    assert prims(before) == ["jit", "mul"]
    after = S.inline_calls(before)
    assert "jit" not in prims(after)
    assert prims(after) == ["sin", "add", "mul"]
    check_same(before, after, X3)


def test_inline_calls_is_recursive():
    inner = fxad.jit(lambda y: fnp.cos(y))
    middle = fxad.jit(lambda y: inner(y) * y)
    before = fxad.make_jaxpr(lambda x: middle(x) + inner(x))(X3)
    assert prims(before).count("jit") == 2
    after = S.inline_calls(before)
    assert "jit" not in prims(after)
    assert sorted(prims(after)) == ["add", "cos", "cos", "mul"]
    check_same(before, after, X3)


def test_inline_calls_hoists_inner_constants():
    c = np.array([2.0, 3.0, 4.0])
    g = fxad.jit(lambda y: y * c)
    before = fxad.make_jaxpr(lambda x: g(x) + 1.0)(X3)
    assert before.consts == []  # c lives in the inner program
    after = S.inline_calls(before)
    assert "jit" not in prims(after)
    assert len(after.consts) == 1 and np.array_equal(after.consts[0], c)
    check_same(before, after, X3)


def test_inline_calls_passthrough_outputs():
    g = fxad.jit(lambda y, z: (z, y * 2.0, y))  # outputs that are the inner inputs
    before = fxad.make_jaxpr(lambda x, w: sum(g(x, w)))(X3, X3[::-1].copy())
    after = S.inline_calls(before)
    assert "jit" not in prims(after)
    check_same(before, after, X3, X3[::-1].copy())


def test_inline_calls_same_program_called_twice():
    """Two calls of one jitted function share one cached inner program; inlining it twice
    must give each call its own variables."""
    g = fxad.jit(lambda y: fnp.sin(y))
    before = fxad.make_jaxpr(lambda x: g(x) + g(2.0 * x))(X3)
    assert prims(before).count("jit") == 2
    after = S.inline_calls(before)
    assert "jit" not in prims(after)
    assert prims(after).count("sin") == 2
    check_same(before, after, X3)
    np.testing.assert_allclose(run(after, X3)[0], np.sin(X3) + np.sin(2 * X3), rtol=1e-14)


def test_inline_calls_without_calls_is_identity():
    closed = fxad.make_jaxpr(lambda x: fnp.sin(x) * x)(X3)
    assert S.inline_calls(closed) is closed


# --- fold_constants ------------------------------------------------------------------------------

def test_fold_constants_chain_of_constant_eqns():
    # { lambda c ; x . let d = sin c; e = cos d; f = add x e in (f) }
    c, x = Var(F64_3), Var(F64_3)
    d, e, f = Var(F64_3), Var(F64_3), Var(F64_3)
    jaxpr = Jaxpr([c], [x], [Eqn(sin_p, [c], [d], {}), Eqn(cos_p, [d], [e], {}),
                             Eqn(add_p, [x, e], [f], {})], [f])
    cval = np.array([0.1, 0.2, 0.3])
    before = ClosedJaxpr(jaxpr, [cval])
    assert check_jaxpr(before.jaxpr)
    after = S.fold_constants(before)
    assert prims(after) == ["add"]
    folded = dict(zip(after.jaxpr.constvars, after.consts))
    np.testing.assert_allclose(folded[e], np.cos(np.sin(cval)), rtol=1e-15)
    check_same(before, after, X3)
    np.testing.assert_allclose(run(after, X3)[0], X3 + np.cos(np.sin(cval)), rtol=1e-15)


def test_fold_constants_literal_inputs():
    # { lambda ; x . let d = sin 2.0; e = mul d x in (e) }
    x, d, e = Var(F64_3), Var(ShapedArray((), np.float64)), Var(F64_3)
    jaxpr = Jaxpr([], [x], [Eqn(sin_p, [lit(2.0)], [d], {}), Eqn(mul_p, [d, x], [e], {})], [e])
    before = ClosedJaxpr(jaxpr, [])
    assert check_jaxpr(before.jaxpr)
    after = S.fold_constants(before)
    assert prims(after) == ["mul"]
    check_same(before, after, X3)
    np.testing.assert_allclose(run(after, X3)[0], np.sin(2.0) * X3, rtol=1e-15)


def test_fold_constants_leaves_traced_eqns_and_jit_calls():
    g = fxad.jit(lambda y: fnp.sin(y))
    call = fxad.make_jaxpr(lambda y: g(y))(X3).jaxpr.eqns[0]  # a jit eqn
    assert call.primitive.name == "jit"
    c, x = Var(F64_3), Var(F64_3)
    d, e = Var(F64_3), Var(F64_3)
    jaxpr = Jaxpr([c], [x], [Eqn(call.primitive, [c], [d], call.params),
                             Eqn(mul_p, [x, d], [e], {})], [e])
    before = ClosedJaxpr(jaxpr, [np.array([0.5, 1.0, 1.5])])
    after = S.fold_constants(before)
    assert prims(after) == ["jit", "mul"]  # a call is not folded; x-dependent work neither
    check_same(before, after, X3)


def test_simplify_inlines_then_folds():
    """After inlining, an inner equation fed by an outer constant is folded."""
    g = fxad.jit(lambda y: fnp.sin(y))
    call = fxad.make_jaxpr(lambda y: g(y))(X3).jaxpr.eqns[0]
    c, x = Var(F64_3), Var(F64_3)
    d, e = Var(F64_3), Var(F64_3)
    cval = np.array([0.5, 1.0, 1.5])
    before = ClosedJaxpr(Jaxpr([c], [x], [Eqn(call.primitive, [c], [d], call.params),
                                          Eqn(mul_p, [x, d], [e], {})], [e]), [cval])
    after = S.simplify(before)
    assert prims(after) == ["mul"]
    check_same(before, after, X3)
    np.testing.assert_allclose(run(after, X3)[0], X3 * np.sin(cval), rtol=1e-15)


# --- forward_noops ---------------------------------------------------------------------------------

NOOPS = [  # (name, fn, x): staged to exactly one equation that returns x unchanged
    ("x*1", lambda x: x * 1.0, X3),
    ("1*x", lambda x: 1.0 * x, X3),
    ("x+0", lambda x: x + 0.0, X3),
    ("0+x", lambda x: 0.0 + x, X3),
    ("x-0", lambda x: x - 0.0, X3),
    ("x/1", lambda x: x / 1.0, X3),
    ("x*1int", lambda x: x * 1, X3),
    ("x*ones", lambda x: x * np.ones(3), X3),
    ("ones*x", lambda x: np.ones(3) * x, X3),
    ("x+zeros", lambda x: x + np.zeros(3), X3),
    ("x*ones(1)", lambda x: x * np.ones(1), X3),
    ("x*ones-f32-const", lambda x: x * np.ones(3, np.float32), X3),
]

NOT_NOOPS = [  # (name, fn, x): must be kept
    ("x*ones-broadcast", lambda x: x * np.ones((2, 3)), X3),
    ("x(1)*ones(3)", lambda x: x * np.ones(3), np.array([0.5])),
    ("x*0", lambda x: x * 0.0, np.array([np.inf, np.nan, -2.0])),
    ("0*x", lambda x: 0.0 * x, np.array([np.inf, np.nan, -2.0])),
    ("x*zeros", lambda x: x * np.zeros(3), np.array([np.inf, np.nan, -2.0])),
    ("0-x", lambda x: 0.0 - x, X3),
    ("1/x", lambda x: 1.0 / x, X3),
    ("x*2", lambda x: x * 2.0, X3),
    ("x*almost-ones", lambda x: x * np.array([1.0, 1.0, 2.0]), X3),
    ("int*1.0 promotes", lambda x: x * 1.0, np.array([1, 2, 3])),
    ("f32*ones64 promotes", lambda x: x * np.ones(3), X3.astype(np.float32)),
]


@pytest.mark.parametrize("name,fn,x", NOOPS, ids=[n[0] for n in NOOPS])
def test_forward_noops_drops_identity(name, fn, x):
    before = fxad.make_jaxpr(fn)(x)
    assert len(before.eqns) == 1, str(before)
    after = S.forward_noops(before)
    assert prims(after) == []
    assert after.jaxpr.outvars[0] is after.jaxpr.invars[0]
    check_same(before, after, x)


@pytest.mark.parametrize("name,fn,x", NOT_NOOPS, ids=[n[0] for n in NOT_NOOPS])
def test_forward_noops_keeps_non_identity(name, fn, x):
    before = fxad.make_jaxpr(fn)(x)
    n = len(before.eqns)
    after = S.forward_noops(before)
    assert len(after.eqns) == n, str(after)
    check_same(before, after, x)


def test_forward_noops_x_times_zero_keeps_nan():
    x = np.array([np.inf, np.nan, 3.0])
    with np.errstate(invalid="ignore"):
        out = fxad.jit(lambda v: v * 0.0)(x)
    assert np.isnan(out[0]) and np.isnan(out[1]) and out[2] == 0.0


def test_forward_noops_chain():
    before = fxad.make_jaxpr(lambda x: fnp.sin((x * 1.0 + 0.0) / 1.0 - 0.0) * 1.0)(X3)
    assert len(before.eqns) == 6
    after = S.forward_noops(before)
    assert prims(after) == ["sin"]
    check_same(before, after, X3)


def _one_eqn(prim, x_aval, out_aval, params):
    x, y = Var(x_aval), Var(out_aval)
    return ClosedJaxpr(Jaxpr([], [x], [Eqn(prim, [x], [y], params)], [y]), [])


STRUCTURAL = [  # (name, closed jaxpr, is it a no-op)
    ("reshape-same", _one_eqn(reshape_p, F64_3, F64_3, {"new_shape": (3,)}), True),
    ("reshape-new", _one_eqn(reshape_p, F64_3, ShapedArray((3, 1), np.float64),
                             {"new_shape": (3, 1)}), False),
    ("broadcast-same", _one_eqn(broadcast_to_p, F64_3, F64_3, {"shape": (3,)}), True),
    ("broadcast-new", _one_eqn(broadcast_to_p, F64_3, ShapedArray((2, 3), np.float64),
                               {"shape": (2, 3)}), False),
    ("convert-same", _one_eqn(convert_element_type_p, F64_3, F64_3,
                              {"new_dtype": np.dtype(np.float64)}), True),
    ("convert-f32", _one_eqn(convert_element_type_p, F64_3, ShapedArray((3,), np.float32),
                             {"new_dtype": np.dtype(np.float32)}), False),
    ("transpose-identity", _one_eqn(transpose_p, ShapedArray((3, 3), np.float64),
                                    ShapedArray((3, 3), np.float64), {"perm": (0, 1)}), True),
    # same shape and dtype, but NOT the identity: a square transpose must be kept
    ("transpose-square", _one_eqn(transpose_p, ShapedArray((3, 3), np.float64),
                                  ShapedArray((3, 3), np.float64), {"perm": (1, 0)}), False),
]


@pytest.mark.parametrize("name,before,noop", STRUCTURAL, ids=[s[0] for s in STRUCTURAL])
def test_forward_noops_structural(name, before, noop):
    assert check_jaxpr(before.jaxpr)
    after = S.forward_noops(before)
    assert len(after.eqns) == (0 if noop else 1)
    x = np.arange(float(np.prod(before.in_avals[0].shape))).reshape(before.in_avals[0].shape)
    check_same(before, after, x + 0.25)


# --- cse ------------------------------------------------------------------------------------------

def test_cse_merges_repeated_expression():
    before = fxad.make_jaxpr(lambda x: fnp.sin(x) + fnp.sin(x))(X3)
    assert prims(before) == ["sin", "sin", "add"]
    after = S.cse(before)
    assert prims(after) == ["sin", "add"]
    add = after.jaxpr.eqns[1]
    assert add.invars[0] is add.invars[1] is after.jaxpr.eqns[0].outvars[0]
    check_same(before, after, X3)


def test_cse_merges_transitively():
    before = fxad.make_jaxpr(lambda x: fnp.sin(x) * 2.0 + fnp.sin(x) * 2.0)(X3)
    assert prims(before) == ["sin", "mul", "sin", "mul", "add"]
    after = S.cse(before)
    assert prims(after) == ["sin", "mul", "add"]
    check_same(before, after, X3)


@pytest.mark.parametrize("name,fn,x", [
    ("different params", lambda x: fnp.sum(x, axis=0) + fnp.sum(x, axis=1), np.eye(3) + 0.5),
    ("different literals", lambda x: x * 2.0 + x * 3.0, X3),
    ("different inputs", lambda x: fnp.sin(x) + fnp.sin(x * 2.0), X3),
    ("different primitives", lambda x: fnp.sin(x) + fnp.cos(x), X3),
], ids=lambda v: v if isinstance(v, str) else "")
def test_cse_keeps_distinct_expressions(name, fn, x):
    before = fxad.make_jaxpr(fn)(x)
    after = S.cse(before)
    assert prims(after) == prims(before)
    check_same(before, after, x)


def test_cse_keeps_signed_zero_literals_apart():
    """0.0 == -0.0 in Python, but x*0.0 and x*-0.0 differ (1/(x*0.0) = inf, 1/(x*-0.0) = -inf),
    so the two products are different expressions."""
    f = lambda x: 1.0 / (x * 0.0) + 1.0 / (x * -0.0)
    x = np.array([1.0, 2.0, 3.0])
    before = fxad.make_jaxpr(f)(x)
    after = S.cse(before)
    assert prims(after).count("mul") == 2
    check_same(before, after, x)
    with np.errstate(all="ignore"):
        assert np.all(np.isnan(fxad.jit(f)(x)))  # inf + (-inf), as eagerly


# --- dce ------------------------------------------------------------------------------------------

def test_dce_removes_unused_intermediate():
    def f(x):
        _ = fnp.exp(fnp.cos(x))  # dead, and so is what only it uses
        return fnp.sin(x)
    before = fxad.make_jaxpr(f)(X3)
    assert prims(before) == ["cos", "exp", "sin"]
    after = S.dce(before)
    assert prims(after) == ["sin"]
    check_same(before, after, X3)


def test_dce_drops_unused_constants():
    c1, c2 = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])

    def f(x):
        _ = x * c1
        return x + c2
    before = fxad.make_jaxpr(f)(X3)
    assert len(before.consts) == 2
    after = S.dce(before)
    assert prims(after) == ["add"]
    assert len(after.consts) == 1 and np.array_equal(after.consts[0], c2)
    check_same(before, after, X3)


def test_dce_keeps_live_chain_and_multi_output_eqn():
    g = fxad.jit(lambda y: (fnp.sin(y), fnp.cos(y)))

    def f(x):
        a, _ = g(x)  # one of two outputs used: the call stays
        return fnp.exp(a) * x
    before = fxad.make_jaxpr(f)(X3)
    after = S.dce(before)
    assert prims(after) == prims(before) == ["jit", "exp", "mul"]
    check_same(before, after, X3)


def test_dce_keeps_unused_inputs():
    before = fxad.make_jaxpr(lambda x, y: fnp.sin(x))(X3, X3)
    after = S.dce(before)
    assert len(after.jaxpr.invars) == 2
    check_same(before, after, X3, X3)


# --- the whole pipeline ----------------------------------------------------------------------------

def test_simplify_pipeline():
    c = np.array([1.0, 1.0, 1.0])
    g = fxad.jit(lambda y: fnp.sin(y) * c)  # * all-ones constant: a no-op after inlining

    def f(x):
        _ = fnp.tanh(x)  # dead
        return g(x) + g(x) * 1.0 + fnp.sin(x) + 0.0
    before = fxad.make_jaxpr(f)(X3)
    after = S.simplify(before)
    assert prims(after).count("sin") == 1
    assert "jit" not in prims(after) and "tanh" not in prims(after)
    assert len(after.eqns) == 3  # sin, add, add
    check_same(before, after, X3)
    np.testing.assert_allclose(run(after, X3)[0], 3 * np.sin(X3), rtol=1e-14)


@pytest.mark.parametrize("p", S.PASSES, ids=lambda p: p.__name__)
def test_each_pass_type_checks_on_a_mixed_program(p):
    g = fxad.jit(lambda y: fnp.cos(y) * 1.0)

    def f(x, y):
        _ = fnp.exp(x)
        return fnp.sum(g(x) * y + g(x) * y) + fnp.sum(x @ np.eye(3)) - 0.0
    x, y = X3, np.array([2.0, -1.0, 0.5])
    before = fxad.make_jaxpr(f)(x, y)
    check_same(before, p(before), x, y)


# --- diagonal_products ---------------------------------------------------------------------------

I3 = np.eye(3)
B34 = np.arange(12.0).reshape(3, 4) / 7
A23 = np.arange(6.0).reshape(2, 3) / 5


def _dots(closed):
    return [e for e in closed.jaxpr.eqns if e.primitive.name == "dot_general"]


@pytest.mark.parametrize("name,fn", [
    ("diag@B", lambda v: (I3 * v * fnp.cos(v)) @ B34),
    ("A@diag", lambda v: A23 @ (fnp.sin(v) * I3)),
    ("scalar", lambda v: (I3 * fnp.sum(v)) @ B34),
])
def test_diagonal_products_scale_instead_of_multiplying(name, fn):
    before = fxad.make_jaxpr(fn)(X3)
    after = S.dce(S.diagonal_products(S.fold_constants(before)))
    assert _dots(before) and not _dots(after), after
    check_same(before, after, X3)


@pytest.mark.parametrize("name,fn", [
    ("not-identity", lambda v: (2.0 * I3 * v) @ B34),       # 2I is diagonal but not eye: kept
    ("column-vector", lambda v: (I3 * v[:, None]) @ B34),   # eye * column: not tracked
    ("diag-also-returned", lambda v: ((I3 * v) @ B34, I3 * v)),
])
def test_diagonal_products_leave_other_programs_correct(name, fn):
    before = fxad.make_jaxpr(fn)(X3)
    after = S.simplify(before)
    check_same(before, after, X3)
    if name == "not-identity":
        assert _dots(after)


def test_jit_of_jacrev_and_jacfwd_agree_and_use_no_matrix_product():
    B = np.random.default_rng(0).normal(size=(5, 5))
    g = lambda x: fnp.tanh(B @ x) * x  # noqa: E731
    x = np.linspace(-1.0, 1.0, 5)
    want = fxad.jacfwd(g)(x)
    for jac in (fxad.jacrev, fxad.jacfwd):
        np.testing.assert_allclose(fxad.jit(jac(g))(x), want, rtol=1e-13)
    for jac in (fxad.jacrev, fxad.jacfwd):  # no product but B @ x itself, in any spelling
        code = fxad.jit(jac(g)).lower(x).as_text()
        products = [ln for ln in code.splitlines()
                    if any(w in ln for w in ("@", "dot_general", "tensordot", "matmul", "einsum"))]
        assert len(products) == 1 and "@" in products[0], code


# --- the diagonal of a matrix product (getitem's "diagonal" rule) --------------------------------

_P = np.random.default_rng(5)
M54, M45 = _P.uniform(0.1, 1.0, (5, 4)), _P.uniform(0.1, 1.0, (4, 5))  # positive: no
A45, A245 = _P.uniform(0.1, 1.0, (4, 5)), _P.uniform(0.1, 1.0, (2, 4, 5))  # cancellation


def _hessian_trace(x):
    u = lambda v: fnp.sum(fnp.tanh(fnp.tanh(v @ M54) @ M45[:, :3]))  # noqa: E731
    return fxad.vmap(lambda v: fnp.trace(fxad.hessian(u)(v)))(x)


@pytest.mark.parametrize("name,fn,x,product", [  # product: the shape not formed any more
    ("diagonal(a @ M)", lambda a: fnp.diagonal(a @ M54), A45, (4, 4)),
    ("trace(a @ M.T)", lambda a: fnp.trace(a @ M45.T), A45, (4, 4)),
    ("diagonal(M.T @ a.T)", lambda a: fnp.diagonal(M54.T @ a.T), A45, (4, 4)),
    ("diagonal(transpose)", lambda a: fnp.diagonal((a @ M54).T), A45, (4, 4)),
    ("batched", lambda a: fnp.diagonal(a @ M54, axis1=1, axis2=2), A245, (2, 4, 4)),
    ("through-reshapes", lambda a: fnp.diagonal(fnp.reshape(fnp.reshape(a @ M54, (2, 4, 1, 4))[
        :, :, 0:1], (2, 4, 4)).transpose(0, 2, 1)[..., 0:4], axis1=1, axis2=2), A245, (2, 4, 4)),
    ("trace(hessian)", _hessian_trace, A245[0], (4, 5, 5)),
])
def test_the_diagonal_of_a_product_is_computed_without_the_product(name, fn, x, product):
    before = fxad.make_jaxpr(fn)(x)
    after = S.simplify(before)
    assert any(e.outvars[0].aval.shape == product for e in _dots(before))
    assert not any(e.outvars[0].aval.shape == product for e in _dots(after)), after
    assert "getitem" not in prims(after), after
    check_same(before, after, x)
    np.testing.assert_allclose(fxad.jit(fn)(x), fn(x), rtol=1e-14)


@pytest.mark.parametrize("name,fn,x", [
    ("offset", lambda a: fnp.diagonal(a @ M54, offset=1), A45),
    ("other-index", lambda a: (a @ M54)[np.array([0, 1, 2, 3]), np.array([1, 1, 2, 3])], A45),
    ("contracting-first-axis", lambda a: fnp.diagonal(fxad.lax.dot_general(
        a, M45, (((0,), (0,)), ((), ())))), A45),
    ("leading-axes", lambda a: fnp.diagonal(a.transpose(1, 0, 2) @ M54.T[:, :2]), A245[:, :, :4]),
    ("product-also-returned", lambda a: (fnp.trace(a @ M54), a @ M54), A45),
    ("leading-axis-cut", lambda a: (a @ M54)[:1, np.arange(4), np.arange(4)], A245),
])
def test_other_diagonals_keep_the_product_and_stay_correct(name, fn, x):
    before = fxad.make_jaxpr(fn)(x)
    after = S.simplify(before)
    check_same(before, after, x)
    if name != "product-also-returned":
        assert _dots(after) and "getitem" in prims(after), after

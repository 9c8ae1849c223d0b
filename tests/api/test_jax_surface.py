"""JAX's top-level names and transformation options in fxad: each works, and under the
transformations where it should (grad, jvp, vmap, jit)."""
import dataclasses
import functools
import pickle

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import checkpoint_policies as cp
from fxad.errors import FxadTypeError
from fxad.test_util import check_grads

RNG = np.random.default_rng(1)
X = RNG.standard_normal(4)


def test_jacobian_is_jacrev_and_array_covers_fxad_values():
    assert fxad.jacobian is fxad.jacrev
    for v in (np.ones(2), np.float64(1.0), np.int32(3)):
        assert isinstance(v, fxad.Array)
    assert not isinstance(1.0, fxad.Array) and not isinstance([1.0], fxad.Array)
    seen = []
    fxad.grad(lambda x: (seen.append(isinstance(x, fxad.Array)), fnp.sum(x))[1])(X)
    fxad.jit(lambda x: (seen.append(isinstance(x, fxad.Array)), x)[1])(X)
    assert seen == [True, True]


def test_eval_shape_and_shape_dtype_struct():
    s = fxad.ShapeDtypeStruct((2, 3), np.float32)
    out = fxad.eval_shape(lambda a, b, k=None: {"m": a @ b, "s": fnp.sum(a) + k}, s,
                          np.ones((3, 4)), k=2.0)
    assert out["m"] == fxad.ShapeDtypeStruct((2, 4), np.float64)
    assert out["s"].shape == () and out["s"].dtype == np.float32
    assert repr(s) == "ShapeDtypeStruct(shape=(2, 3), dtype=float32)" and s.ndim == 2
    assert fxad.eval_shape(lambda a: fnp.linalg.svd(a, full_matrices=False), s)[1].shape == (2,)
    low = fxad.jit(lambda a: fnp.sin(a) * 2).lower(fxad.ShapeDtypeStruct((3,), np.float64))
    assert "sin" in low.as_text()


def test_ravel_pytree_round_trip_and_derivatives():
    from fxad.flatten_util import ravel_pytree
    tree = {"w": np.arange(6.0).reshape(2, 3), "b": (np.float32(1.5), np.arange(2)), "n": None}
    flat, unravel = ravel_pytree(tree)
    assert flat.shape == (9,) and flat.dtype == np.float64
    back = unravel(flat)
    np.testing.assert_array_equal(back["w"], tree["w"])
    assert back["b"][0].dtype == np.float32 and back["b"][1].dtype == np.int64
    f = lambda p: fnp.sum(ravel_pytree(p)[0] ** 2)
    g = fxad.grad(f)({"a": X, "b": 2.0})
    np.testing.assert_allclose(g["a"], 2 * X)
    check_grads(lambda v: unravel(v)["w"] * 3.0, (flat,), order=2)
    flat0, un0 = ravel_pytree(())
    assert flat0.shape == (0,) and un0(flat0) == ()
    with pytest.raises(ValueError, match=r"\(9,\)"):
        unravel(np.ones(3))


def test_closure_convert_hoists_traced_constants():
    def outer(w):
        f = lambda x: fnp.sin(w * x) + w
        fc, consts = fxad.closure_convert(f, 1.0)
        assert len(consts) == 1
        return fc(2.0, *consts)
    np.testing.assert_allclose(fxad.grad(outer)(0.5), 2 * np.cos(1.0) + 1)
    f, consts = fxad.closure_convert(lambda x: x * 3.0, np.ones(2))
    np.testing.assert_array_equal(f(np.arange(2.0), *consts), [0.0, 3.0])
    with pytest.raises(FxadTypeError, match="made for"):
        f(np.ones(2), np.ones(2), *consts)


def test_named_call_and_disable_jit():
    g = fxad.named_call(lambda x: x * 2, name="double")
    assert g.__name__ == "double" and g(3.0) == 6.0
    seen = []
    h = fxad.jit(lambda x: (seen.append(type(x).__name__), x + 1)[1])
    with fxad.disable_jit():
        assert h(np.ones(2))[0] == 2.0
        with fxad.disable_jit(False):
            h(np.ones(3))
    h(np.ones(2))
    assert seen == ["ndarray", "StagingTracer", "StagingTracer"]


def test_transformation_options():
    f = lambda x: (fnp.sum(x ** 3), {"aux": x * 2, "n": fnp.sum(x)})
    h, aux = fxad.hessian(f, has_aux=True)(X)
    np.testing.assert_allclose(h, np.diag(6 * X))
    np.testing.assert_allclose(aux["aux"], 2 * X)
    y, f_jvp, aux = fxad.linearize(lambda x: (fnp.sin(x), x ** 2), X, has_aux=True)
    np.testing.assert_allclose(f_jvp(np.ones(4)), np.cos(X))
    np.testing.assert_allclose(aux, X ** 2)
    assert len(f_jvp.jaxpr.jaxpr.outvars) == 1  # no tangent work for the aux
    gx, gn = fxad.grad(lambda x, n: fnp.sum(x * n), argnums=(0, 1), allow_int=True)(X, np.arange(4))
    np.testing.assert_allclose(gx, np.arange(4))
    assert gn.dtype.kind == "i" and not gn.any()
    with pytest.raises(FxadTypeError, match="floating-point inputs"):
        fxad.grad(lambda n: n * 1.0)(3)


def test_nondiff_argnames():
    @functools.partial(fxad.custom_jvp, nondiff_argnames=("f",))
    def app(f, x):
        return f(x)

    @app.defjvp
    def app_jvp(f, primals, tangents):
        return f(primals[0]), 2.0 * tangents[0]
    assert fxad.grad(app, 1)(lambda v: v ** 3, 3.0) == 2.0

    @functools.partial(fxad.custom_vjp, nondiff_argnames=["n"])
    def scale(x, n):
        return x * n
    scale.defvjp(lambda x, n: (x * n, None), lambda n, r, ct: (ct * n * 10,))
    assert fxad.grad(scale)(2.0, 3) == 30.0
    with pytest.raises(FxadTypeError, match="not a positional parameter"):
        fxad.custom_jvp(lambda x: x, nondiff_argnames=("y",))


def test_jit_options_lower_compile_and_methods():
    f = fxad.jit(lambda x, n: x * n, static_argnums=1, donate_argnums=0, keep_unused=True)
    c = f.lower(np.ones(2), 3).compile()
    np.testing.assert_array_equal(c(np.ones(2)), [3.0, 3.0])
    assert "def " in c.as_text()
    with pytest.raises(FxadTypeError, match="lowered"):
        c(np.ones(3))
    with pytest.raises(FxadTypeError, match="donate_argnums"):
        fxad.jit(lambda x: x, donate_argnums="a")

    class Model:
        scale = 2.0

        @fxad.jit
        def plain(self, x):
            return x * 3.0

        @functools.partial(fxad.jit, static_argnums=0)
        def calc(self, x):
            return x * self.scale

        @functools.partial(fxad.jit, static_argnames=("k",))
        def kw(self, x, k=1):
            return x + k
    m = Model()
    np.testing.assert_array_equal(m.calc(np.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(m.kw(np.ones(2), k=3), [4.0, 4.0])
    np.testing.assert_allclose(fxad.grad(lambda x: fnp.sum(m.calc(x)))(X), 2 * np.ones(4))
    np.testing.assert_allclose(fxad.vmap(m.calc)(np.ones((3, 2))), 2 * np.ones((3, 2)))
    np.testing.assert_array_equal(m.plain(np.ones(2)), [3.0, 3.0])


def _mlp(x, ws):
    for w in ws:
        x = fnp.tanh(fxad.checkpoint_name(x @ w, "pre"))
    return fnp.sum(x ** 2)


WS = [RNG.standard_normal((4, 4)) / 2 for _ in range(3)]
POLICIES = [None, cp.nothing_saveable, cp.everything_saveable, cp.dots_saveable,
            cp.checkpoint_dots, cp.dots_with_no_batch_dims_saveable,
            cp.save_only_these_names("pre"), cp.save_any_names_but_these("other"),
            cp.save_anything_except_these_names("pre"),
            cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("pre"))]


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: getattr(p, "__name__", str(p)))
def test_checkpoint_policies_keep_derivatives_exact(policy):
    f = fxad.checkpoint(_mlp, policy=policy)
    want = fxad.grad(_mlp, (0, 1))(X, WS)
    got = fxad.grad(f, (0, 1))(X, WS)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-13)
    np.testing.assert_allclose(fxad.hessian(f)(X, WS), fxad.hessian(_mlp)(X, WS), rtol=1e-12)
    np.testing.assert_allclose(fxad.jit(fxad.grad(f))(X, WS), want[0], rtol=1e-13)
    np.testing.assert_allclose(fxad.vmap(fxad.grad(f), (0, None))(np.stack([X, -X]), WS)[1],
                               fxad.grad(_mlp)(-X, WS), rtol=1e-13)
    check_grads(lambda x: f(x, WS), (X,), order=2)


def _impl_counts(fun, prims):
    counts = {p.name: 0 for p in prims}
    originals = {p: p.impl for p in prims}
    for p in prims:
        p.def_impl(lambda *a, _p=p, **k: (counts.__setitem__(_p.name, counts[_p.name] + 1),
                                          originals[_p](*a, **k))[1])
    try:
        fun()
    finally:
        for p, impl in originals.items():
            p.def_impl(impl)
    return counts


def test_checkpoint_policies_decide_what_the_backward_pass_recomputes():
    net = lambda x, ws: fxad.checkpoint_name(_mlp(x, ws), "out")
    # the plain function's backward pass, counted the same way: the staged path (the eager
    # tape runs generated pullbacks that call NumPy, not the primitives' impls)
    fxad.config.eager_tape = False
    try:
        _checkpoint_counts(net)
    finally:
        fxad.config.eager_tape = True


def _checkpoint_counts(net):
    from fxad.rules.contraction.dot import dot_general_p
    from fxad.rules.elementwise.transcendental import tanh_p
    backward = {}
    for name, policy in [("none", None), ("dots", cp.dots_saveable),
                         ("all", cp.everything_saveable)]:
        _, pull = fxad.vjp(fxad.checkpoint(net, policy=policy), X, WS)
        backward[name] = _impl_counts(lambda: pull(1.0), [dot_general_p, tanh_p])
    _, pull = fxad.vjp(net, X, WS)
    plain = _impl_counts(lambda: pull(1.0), [dot_general_p, tanh_p])
    # three layers: nothing kept recomputes 3 products and 3 tanh; dots_saveable only the
    # tanh; everything_saveable nothing (the backward pass of the plain function)
    assert backward["none"] == {"dot_general": plain["dot_general"] + 3, "tanh": 3}
    assert backward["dots"] == {"dot_general": plain["dot_general"], "tanh": 3}
    assert backward["all"] == plain == {"dot_general": plain["dot_general"], "tanh": 0}


def test_checkpoint_static_argnums_and_prevent_cse():
    def f(x, n, flag):
        for _ in range(n):
            x = fnp.sin(x) if flag == "sin" else fnp.cos(x)
        return fnp.sum(x)
    for policy in (None, cp.dots_saveable):
        g = fxad.checkpoint(f, static_argnums=(1, 2), policy=policy, prevent_cse=False)
        np.testing.assert_allclose(fxad.grad(g)(X, 3, "sin"), fxad.grad(f)(X, 3, "sin"))
        np.testing.assert_allclose(fxad.jit(fxad.grad(g), static_argnums=(1, 2))(X, 2, "cos"),
                                   fxad.grad(f)(X, 2, "cos"))
    with pytest.raises(FxadTypeError, match="checkpoint_policies"):
        fxad.checkpoint(f, policy="dots_saveable")
    with pytest.raises(FxadTypeError, match="non-negative"):
        fxad.checkpoint(f, static_argnums=-1)


def test_checkpoint_policy_closing_over_traced_values():
    def outer(w):
        block = fxad.checkpoint(lambda x: fnp.tanh(x * w) @ np.ones((4, 4)),
                                policy=cp.dots_saveable)
        return fnp.sum(block(X) ** 2)
    h = 1e-6
    fd = (outer(0.7 + h) - outer(0.7 - h)) / (2 * h)
    np.testing.assert_allclose(fxad.grad(outer)(0.7), fd, rtol=1e-7)


def test_tracer_repr_and_format_show_known_values():
    shown = []

    def f(x):
        shown.append(repr(x))
        shown.append(f"{fnp.sum(x):.2f}")
        return fnp.sum(x * x)
    fxad.grad(f)(np.array([1.0, 2.0, 3.0]))
    assert shown[0] == "TapeTracer<grad>(f64[3], value=[1. 2. 3.])" and shown[1] == "6.00"
    fxad.jvp(f, (np.ones(2),), (np.ones(2),))
    assert shown[2].endswith("value=[1. 1.])")
    with pytest.raises(fxad.errors.ConcretizationError, match="fxad.debug.print"):
        fxad.jit(lambda x: f"{x:.2f}")(1.0)
    staged = []
    fxad.jit(lambda x: (staged.append(repr(x)), x)[1])(np.ones(2))
    assert staged == ["StagingTracer<jit>(f64[2])"]


def test_numpy_array_dot_of_a_traced_value_names_the_fix():
    a = np.ones((2, 2))
    with pytest.raises(fxad.errors.TracerArrayConversionError, match="a @ x"):
        fxad.jit(lambda x: a.dot(x))(np.ones(2))
    with pytest.raises(fxad.errors.TracerArrayConversionError, match="a @ x"):
        fxad.grad(lambda x: fnp.sum(a.T.dot(x)))(np.ones(2))
    np.testing.assert_array_equal(fxad.jit(lambda x: a @ x)(np.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(fxad.jit(lambda x: np.dot(a.T, x))(np.ones(2)), [2.0, 2.0])


def test_tree_partial_is_a_pytree_through_jit():
    p = fxad.tree_util.Partial(lambda a, b: a * b, np.array([2.0, 3.0]))
    out = fxad.jit(lambda p, x: p(x))(p, np.ones(2))
    np.testing.assert_array_equal(out, [2.0, 3.0])
    g = fxad.grad(lambda p: fnp.sum(p(np.ones(2))))(p)
    np.testing.assert_array_equal(g.args[0], [1.0, 1.0])
    assert pickle.loads(pickle.dumps(fxad.ShapeDtypeStruct((1,), np.int8))).shape == (1,)


@dataclasses.dataclass
class _Params:
    w: object
    n: int = dataclasses.field(default=2, metadata=dict(static=True))


fxad.tree_util.register_dataclass(_Params)


def test_register_dataclass_static_fields_through_jit():
    f = fxad.jit(lambda p: p.w * p.n)
    np.testing.assert_array_equal(f(_Params(np.ones(2), 3)), [3.0, 3.0])
    g = fxad.grad(lambda p: fnp.sum(p.w ** 2) * p.n)(_Params(np.ones(2), 3))
    assert isinstance(g, _Params) and g.n == 3
    np.testing.assert_array_equal(g.w, [6.0, 6.0])


def test_one_cpu_device_for_jax_code():
    assert fxad.device_count() == 1 and fxad.devices()[0].platform == "cpu"
    assert fxad.default_backend() == "cpu" and fxad.process_index() == 0
    put = fxad.device_put({"a": [1.0, 2.0]})
    assert type(put["a"][0]) is np.ndarray
    assert fxad.block_until_ready(X) is X
    assert fxad.typeof(np.ones((2, 3), np.float32)).str_short() == "f32[2,3]"
    np.testing.assert_allclose(fxad.grad(lambda x: fnp.sum(fxad.device_put(x) ** 2))(X), 2 * X)


@pytest.mark.parametrize("fn, want", [
    (lambda x: fnp.reshape(x, (2**20, -1)), (2**20, 2**60)),
    (lambda x: fnp.ravel(x), (2**80,)),
    (lambda x: fnp.reshape(x, (2**20, -1, 2**20)), (2**20, 2**40, 2**20)),
])
def test_eval_shape_of_sizes_past_int64(fn, want):
    """Shapes are worked out in Python ints: an int64 product of (2**40, 2**40) wraps to 0,
    which made a -1 in reshape (and ravel) come out as 0."""
    x = fxad.ShapeDtypeStruct((2**40, 2**40), np.float32)
    assert fxad.eval_shape(fn, x).shape == want

"""jit: the decorator's behaviour (static arguments, the signature cache, concretization
errors, pytrees, closures, dtypes) and its compositions with the other transformations. Every
rule-table row runs under jit in its own table (tests/rules/common.py's jit check).

Expected values always come from un-jitted fxad or from NumPy, never from jit itself."""
import ast
import functools
import importlib.util
import re
import threading

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.errors import ConcretizationError
from fxad.tree_util import tree_flatten

RTOL, ATOL = 1e-10, 1e-12

# --- helpers ---------------------------------------------------------------------------------

def leaves(x):
    return [np.asarray(v) for v in tree_flatten(x)[0]]


def assert_tree_close(got, want, what=""):
    g, w = leaves(got), leaves(want)
    assert len(g) == len(w), what
    for a, b in zip(g, w):
        assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=what)


# --- caching and static arguments ---------------------------------------------------------------

def _counting(fun):
    calls = []

    def f(*a, **k):
        calls.append(1)
        return fun(*a, **k)
    return f, calls


def test_traces_once_per_signature():
    f, calls = _counting(lambda x: fnp.sin(x) * 2.0)
    jf = fxad.jit(f)
    x = np.linspace(0.1, 0.9, 4)
    for _ in range(3):
        np.testing.assert_allclose(jf(x), np.sin(x) * 2.0, rtol=RTOL)
    assert len(calls) == 1 and len(jf.cache) == 1
    jf(x + 1.0)  # same signature, new values: no retrace
    assert len(calls) == 1
    jf(x.astype(np.float32))  # new dtype: retrace
    jf(x[:3])  # new shape: retrace
    assert len(calls) == 3 and len(jf.cache) == 3


def test_static_argnums_retrace_per_value_and_reuse_cache():
    def f(x, n):
        if n > 1:  # Python control flow on a static argument is fine
            return x ** n
        return -x
    f, calls = _counting(f)
    jf = fxad.jit(f, static_argnums=1)
    x = np.array([0.5, 1.5, -2.0])
    np.testing.assert_allclose(jf(x, 3), x ** 3, rtol=RTOL)
    np.testing.assert_allclose(jf(x, 3), x ** 3, rtol=RTOL)
    assert len(jf.cache) == 1 and len(calls) == 1
    np.testing.assert_allclose(jf(x, 1), -x, rtol=RTOL)
    assert len(jf.cache) == 2 and len(calls) == 2
    np.testing.assert_allclose(jf(x, 3), x ** 3, rtol=RTOL)
    assert len(jf.cache) == 2 and len(calls) == 2
    # negative static_argnums count from the end
    jg = fxad.jit(f, static_argnums=-1)
    np.testing.assert_allclose(jg(x, 2), x ** 2, rtol=RTOL)
    # and under grad the static argument stays static
    np.testing.assert_allclose(fxad.grad(lambda v: fnp.sum(jf(v, 3)))(x), 3 * x ** 2,
                               rtol=RTOL)


def test_static_argnames_retrace_per_value_and_reuse_cache():
    f, calls = _counting(lambda x, mode="sin": fnp.sin(x) if mode == "sin" else fnp.cos(x))
    jf = fxad.jit(f, static_argnames="mode")
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(jf(x, mode="sin"), np.sin(x), rtol=RTOL)
    np.testing.assert_allclose(jf(x, mode="sin"), np.sin(x), rtol=RTOL)
    assert len(jf.cache) == 1 and len(calls) == 1
    np.testing.assert_allclose(jf(x, mode="cos"), np.cos(x), rtol=RTOL)
    assert len(jf.cache) == 2 and len(calls) == 2
    np.testing.assert_allclose(jf(x, mode="cos"), np.cos(x), rtol=RTOL)
    assert len(calls) == 2


def test_static_values_equal_but_of_different_type_do_not_share_an_entry():
    f, calls = _counting(lambda x, n: x * n + (0.5 if isinstance(n, float) else 0.0))
    jf = fxad.jit(f, static_argnums=1)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(jf(x, 2), x * 2, rtol=RTOL)
    np.testing.assert_allclose(jf(x, 2.0), x * 2 + 0.5, rtol=RTOL)
    assert len(calls) == 2


def test_unhashable_static_arg_raises():
    jf = fxad.jit(lambda x, idx: x[np.array(idx)], static_argnums=1)
    with pytest.raises(TypeError, match="hashable"):
        jf(np.arange(3.0), [0, 2])
    jg = fxad.jit(lambda x, idx=(): x, static_argnames="idx")
    with pytest.raises(TypeError, match="hashable"):
        jg(np.arange(3.0), idx=[1])
    # a tuple is fine
    np.testing.assert_array_equal(jf(np.arange(3.0), (0, 2)), [0.0, 2.0])


def test_cache_is_bounded():
    f, calls = _counting(lambda x: x * 2.0)
    jf = fxad.jit(f)
    for n in range(1, 101):
        x = np.arange(float(n))
        np.testing.assert_array_equal(jf(x), x * 2.0)
        assert len(jf.cache) <= jf.CACHE_SIZE
    assert len(calls) == 100
    assert len(jf.cache) == min(100, jf.CACHE_SIZE)
    jf(np.arange(100.0))  # most recent shape: still cached
    assert len(calls) == 100
    jf(np.arange(1.0))  # the oldest was evicted: traced again
    assert len(calls) == 101
    assert len(jf.cache) <= jf.CACHE_SIZE


def test_jit_of_the_same_function_shares_its_cache():
    """JAX keys its cache on the function: jit(f)(x) written inline traces f once; other
    options, another function, another partial or another instance's bound method (whose
    instance is baked into the program) trace anew."""
    f, calls = _counting(lambda x: x * 2.0)
    for i in range(3):
        np.testing.assert_array_equal(fxad.jit(f)(np.full(2, float(i))), np.full(2, 2.0 * i))
    assert len(calls) == 1
    fxad.jit(f, static_argnums=0)(3.0)
    fxad.jit(f, static_argnums=0)(3.0)
    assert len(calls) == 2

    class Scale:
        def __init__(self, s):
            self.s = s

        def apply(self, x):
            return x * self.s
    assert fxad.jit(Scale(2.0).apply)(1.0) == 2.0 and fxad.jit(Scale(3.0).apply)(1.0) == 3.0
    p2, p3 = (functools.partial(lambda s, x: x * s, s) for s in (2.0, 3.0))
    assert fxad.jit(p2)(1.0) == 2.0 and fxad.jit(p3)(1.0) == 3.0
    assert fxad.jit(np.sin)(0.5) == np.sin(0.5)  # a callable that takes no attributes


# --- concretization ------------------------------------------------------------------------------

def test_python_if_on_traced_value_raises():
    def f(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(ConcretizationError) as info:
        fxad.jit(f)(1.0)
    assert isinstance(info.value, TypeError)
    msg = str(info.value)
    assert "where" in msg and "static_argnums" in msg


@pytest.mark.parametrize("conv", [int, float])
@pytest.mark.parametrize("value", [np.float64(1.5), np.int64(3)], ids=["float", "int"])
def test_int_float_of_traced_value_raise(conv, value):
    with pytest.raises(ConcretizationError):
        fxad.jit(lambda x: x * conv(x))(np.asarray(value))


def test_static_arg_makes_if_work():
    jf = fxad.jit(lambda x, flag: x if flag > 0 else -x, static_argnums=1)
    assert jf(2.0, 1) == 2.0 and jf(2.0, -1) == -2.0


# --- closures, pytrees, kwargs ---------------------------------------------------------------------

def test_closure_over_traced_value():
    assert fxad.grad(lambda a: fxad.jit(lambda y: a * y)(2.0))(3.0) == 2.0
    # second order, through the closed-over value
    g2 = fxad.grad(fxad.grad(lambda a: fxad.jit(lambda y: a ** 3 * y)(2.0)))(1.5)
    np.testing.assert_allclose(g2, 6 * 1.5 * 2.0, rtol=RTOL)
    # forward mode and vmap over the closed-over value
    _, t = fxad.jvp(lambda a: fxad.jit(lambda y: fnp.sin(a) * y)(2.0), (0.3,), (1.0,))
    np.testing.assert_allclose(t, 2.0 * np.cos(0.3), rtol=RTOL)
    a = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(
        fxad.vmap(lambda ai: fxad.jit(lambda y: ai * y)(np.array([1.0, 2.0])))(a),
        a[:, None] * np.array([1.0, 2.0]), rtol=RTOL)


def test_closure_over_array_constant():
    c = np.array([1.0, 2.0, 3.0])
    jf = fxad.jit(lambda x: fnp.sum(c * x))
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(jf(x), np.sum(c * x), rtol=RTOL)
    np.testing.assert_allclose(fxad.grad(jf)(x), c, rtol=RTOL)


def test_pytree_inputs_and_outputs():
    def f(d, t):
        return {"sum": d["a"] + t[0], "pair": (d["b"] * t[1], fnp.sin(d["a"]))}
    d = {"a": np.array([0.1, 0.2]), "b": np.array(3.0)}
    t = (np.array([1.0, 2.0]), np.array(0.5))
    got, want = fxad.jit(f)(d, t), f(d, t)
    assert set(got) == {"sum", "pair"} and isinstance(got["pair"], tuple)
    assert_tree_close(got, want, "pytree")
    np.testing.assert_allclose(got["pair"][1], np.sin(d["a"]), rtol=RTOL)
    s = lambda d, t: fnp.sum(f(d, t)["sum"] ** 2) + f(d, t)["pair"][0] * fnp.sum(
        f(d, t)["pair"][1])
    assert_tree_close(fxad.grad(fxad.jit(s), argnums=(0, 1))(d, t),
                      fxad.grad(s, argnums=(0, 1))(d, t), "grad pytree")
    # a different pytree structure is a new signature
    jf = fxad.jit(lambda d: sum(d.values()))
    jf({"a": 1.0, "b": 2.0})
    assert jf({"a": 1.0, "b": 2.0, "c": 3.0}) == 6.0
    assert len(jf.cache) == 2


def test_kwargs():
    f = lambda x, scale=1.0, shift=None: x * scale + (0.0 if shift is None else shift)
    jf = fxad.jit(f)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(jf(x, scale=np.array(3.0)), x * 3.0, rtol=RTOL)
    np.testing.assert_allclose(jf(x, scale=np.array(3.0), shift=np.array([1.0, -1.0])),
                               x * 3.0 + np.array([1.0, -1.0]), rtol=RTOL)
    np.testing.assert_allclose(jf(x, shift=np.array(5.0)), x + 5.0, rtol=RTOL)
    # kwargs are traced: new values, same entry
    n = len(jf.cache)
    np.testing.assert_allclose(jf(x, scale=np.array(4.0)), x * 4.0, rtol=RTOL)
    assert len(jf.cache) == n
    # differentiate through a jitted call that takes kwargs
    g = fxad.grad(lambda s: fnp.sum(jf(x, scale=s)))(2.0)
    np.testing.assert_allclose(g, x.sum(), rtol=RTOL)


def test_output_is_writeable_and_fresh():
    jf = fxad.jit(lambda x: fnp.broadcast_to(x, (2, 3)) * 1.0)
    out = jf(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(out, [[1, 2, 3], [1, 2, 3]])
    out[0, 0] = 5.0  # must not raise (read-only broadcast views are copied)


# --- lower / as_text -------------------------------------------------------------------------------

def test_lower_as_text_is_numpy_source():
    c = np.array([1.0, 2.0, 3.0])

    def f(x, y):
        return (fnp.sum(fnp.tanh(x @ y) * 2.0 + fnp.exp(x[0]) * c + fxad.lax.logistic(y[:2]))
                + fnp.sum(fnp.outer(x[0], x[1]))) / fnp.max(y)
    x, y = np.ones((2, 3)) * 0.1, np.ones((3, 3)) * 0.2
    text = fxad.jit(f).lower(x, y).as_text()
    assert "def " in text
    assert "fxad" not in text
    tree = ast.parse(text)  # valid Python
    assert any(isinstance(n, ast.FunctionDef) for n in tree.body)
    # every dotted call (`x.y(` or `x.y.z(`) goes through `_np.`; other calls are bound impls
    calls = re.findall(r"(?<![\w.])([A-Za-z_]\w*(?:\.\w+)+)\(", text)
    assert calls, text
    for call in calls:
        assert call.startswith("_np."), text
    # and every name the body uses is generated: variables, _np, _c<k>, _<prim>_<k>, _jit_<k>
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    args = {a.arg for a in fn.args.args}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id not in args:
            assert re.fullmatch(r"[a-z]+|_np|_c\d+|_[a-z_]+_\d+", node.id), node.id
    assert "_np.tanh" in text and "_np.exp" in text
    assert str(fxad.jit(f).lower(x, y)) == text


# --- dtypes ---------------------------------------------------------------------------------------

def test_float32_stays_float32():
    x = np.linspace(0.1, 0.9, 5).astype(np.float32)
    s = lambda v: fnp.sum(fnp.tanh(v) * 2.0 + fnp.exp(v) ** 2 + 0.5 * v)
    assert fxad.jit(lambda v: fnp.tanh(v) * 2.0)(x).dtype == np.float32
    g = fxad.jit(fxad.grad(s))(x)
    assert g.dtype == np.float32
    assert fxad.grad(fxad.jit(s))(x).dtype == np.float32
    want = fxad.grad(s)(x)
    assert want.dtype == np.float32
    np.testing.assert_allclose(g, want, rtol=1e-6)
    t = np.tanh(x.astype(np.float64))
    np.testing.assert_allclose(g, 2 * (1 - t ** 2) + 2 * np.exp(2 * x.astype(np.float64))
                               + 0.5, rtol=1e-5)


def test_jit_grad_matches_hand_derivative():
    x = np.array([0.3, -0.7, 1.1])
    g = fxad.jit(fxad.grad(lambda v: fnp.sum(fnp.sin(v) * v)))(x)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=RTOL, atol=ATOL)


# --- composition with nested jitted calls --------------------------------------------------------

def test_same_jitted_function_called_twice_inside_jit():
    """Two calls of one jitted function (same cached program) inside another jit."""
    g = fxad.jit(lambda v: fnp.sin(v))
    f = lambda v: g(v) + g(2.0 * v)
    x = np.array([0.3, 0.7])
    want = np.sin(x) + np.sin(2 * x)
    np.testing.assert_allclose(f(x), want, rtol=RTOL)
    np.testing.assert_allclose(fxad.jit(f)(x), want, rtol=RTOL)
    np.testing.assert_allclose(fxad.grad(lambda v: fnp.sum(fxad.jit(f)(v)))(x),
                               np.cos(x) + 2 * np.cos(2 * x), rtol=RTOL)


def test_nested_jit_grad_of_jit():
    inner = fxad.jit(lambda v: fnp.exp(v) * v)
    outer = fxad.jit(fxad.grad(lambda v: fnp.sum(inner(v) ** 2)))
    x = np.array([0.2, -0.4])
    # d/dx (x e^x)^2 = 2 x e^x (e^x + x e^x)
    e = np.exp(x)
    np.testing.assert_allclose(outer(x), 2 * x * e * (e + x * e), rtol=RTOL)


# --- more compositions, each against the un-jitted transformation ------------------------------

_X = np.array([0.3, -0.7, 1.1])
_M = np.arange(6.0).reshape(2, 3) / 5.0 - 0.4
_f_sin_x = lambda v: fnp.sin(v) * v
_f_two = lambda v: (fnp.sin(v), fnp.cos(v) * v)
_f_int = lambda v: (fnp.argmax(v), fnp.sum(v ** 2))

COMPOSITIONS = [  # (name, transformation of a function, function, args)
    ("jacfwd", lambda f: fxad.jacfwd(f), fnp.sin, (_X,)),
    ("jacrev", lambda f: fxad.jacrev(f), _f_sin_x, (_X,)),
    ("linearize", lambda f: lambda x: fxad.linearize(f, x)[1](np.ones(3)), _f_sin_x, (_X,)),
    ("vjp-two-outputs", lambda f: lambda x: fxad.vjp(f, x)[1]((np.ones(3), np.zeros(3))),
     _f_two, (_X,)),
    ("vjp-one-output-unused", lambda f: lambda x: fxad.vjp(f, x)[1]((np.zeros(3), _X)),
     _f_two, (_X,)),
    ("jvp-int-output", lambda f: lambda x: fxad.jvp(f, (x,), (np.ones(3),)), _f_int, (_X,)),
    ("grad-past-int-output", lambda f: fxad.grad(lambda x: f(x)[1]), _f_int, (_X,)),
    ("jvp-int-input", lambda f: lambda x: fxad.jvp(lambda v: f(v, np.array(3)), (x,),
                                                   (np.ones(3),)),
     lambda v, n: v ** 2 * n, (_X,)),
    ("vmap-in_axes-None", lambda f: fxad.vmap(f, in_axes=(0, None)), lambda a, b: a * b,
     (_M, _X)),
    ("vmap-in_axes-1", lambda f: fxad.vmap(f, in_axes=1), lambda a: fnp.sum(a) * a, (_M,)),
    ("vmap-out_axes-1", lambda f: fxad.vmap(f, out_axes=1), lambda a: a * fnp.max(a), (_M,)),
    ("vmap-unbatched-output", lambda f: fxad.vmap(f, in_axes=(0, None)),
     lambda a, b: (a * 2.0, b * 3.0), (_M, _X)),
    ("vmap(grad)", lambda f: fxad.vmap(fxad.grad(f)), lambda v: fnp.sum(fnp.sin(v) * v),
     (_M,)),
    ("grad(vmap)", lambda f: fxad.grad(lambda v: fnp.sum(fxad.vmap(f)(v))),
     lambda a: fnp.sum(fnp.sin(a) * a), (_M,)),
    ("jvp(jvp)", lambda f: lambda x: fxad.jvp(lambda v: fxad.jvp(f, (v,), (np.ones(3),))[1],
                                              (x,), (np.ones(3),)), fnp.sin, (_X,)),
    ("grad(grad)", lambda f: fxad.grad(fxad.grad(f)), lambda v: fnp.sin(v) * v ** 3,
     (np.array(0.7),)),
    ("hessian-two-args", lambda f: fxad.hessian(f, argnums=(0, 1)),
     lambda a, b: fnp.sum(fnp.sin(a) * b ** 2), (_X, _X[::-1].copy())),
    ("identity-outputs", lambda f: lambda x: fxad.vjp(f, x)[1]((np.ones(3), 2 * np.ones(3))),
     lambda v: (v, v * 2.0), (_X,)),
]


@pytest.mark.parametrize("name,transform,fn,args", COMPOSITIONS,
                         ids=[c[0] for c in COMPOSITIONS])
def test_composition(name, transform, fn, args):
    want = transform(fn)(*args)
    assert_tree_close(transform(fxad.jit(fn))(*args), want, f"{name}(jit(f))")
    assert_tree_close(fxad.jit(transform(fn))(*args), want, f"jit({name}(f))")
    assert_tree_close(fxad.jit(transform(fxad.jit(fn)))(*args), want, f"jit({name}(jit(f)))")


def test_escaped_tracer_from_jit():
    store = []

    def f(v):
        store.append(v)
        return v * 2.0
    fxad.jit(f)(_X)
    with pytest.raises(fxad.errors.EscapedTracerError):
        store[0] + 1.0


def test_jit_grad_of_a_long_scalar_chain():
    """A 25-step chain (the benchmark's): its gradient program has hundreds of variables."""
    def chain(x):
        for _ in range(25):
            x = fnp.sin(x) * 1.01 + 0.1 * fnp.cos(x)
        return x
    x, d = 0.3, 1.0
    for _ in range(25):  # hand-written (value, derivative)
        d = d * (1.01 * np.cos(x) - 0.1 * np.sin(x))
        x = np.sin(x) * 1.01 + 0.1 * np.cos(x)
    np.testing.assert_allclose(fxad.grad(chain)(0.3), d, rtol=1e-12)
    np.testing.assert_allclose(fxad.jit(fxad.grad(chain))(0.3), d, rtol=1e-12)
    np.testing.assert_allclose(fxad.grad(fxad.jit(chain))(0.3), d, rtol=1e-12)


def test_python_scalar_argument_keeps_eager_dtype():
    """jit(f)(x32, 2.0) has f(x32, 2.0)'s dtype: a Python scalar argument promotes like a
    Python scalar (weakly), as it does eagerly, not like a float64 array."""
    x = np.ones(3, np.float32)
    f = lambda v, s: v * s
    assert f(x, 2.0).dtype == np.float32
    assert fxad.jit(f)(x, 2.0).dtype == np.float32
    assert fxad.jit(f)(x, 2).dtype == f(x, 2).dtype


def test_decorator_forms_and_metadata():
    @fxad.jit(static_argnums=1)
    def power(x, n):
        """x to the n."""
        return x ** n
    np.testing.assert_allclose(power(np.array([2.0, 3.0]), 3), [8.0, 27.0], rtol=RTOL)
    assert power.__name__ == "power" and power.__doc__ == "x to the n."

    @fxad.jit
    def plain(x):
        return fnp.cos(x)
    np.testing.assert_allclose(plain(_X), np.cos(_X), rtol=RTOL)


@pytest.mark.parametrize("x", [np.zeros(0), np.zeros((2, 0))], ids=["(0,)", "(2,0)"])
def test_empty_arrays(x):
    s = lambda v: fnp.sum(fnp.sin(v) * 1.0 + 0.0)
    assert fxad.jit(s)(x) == 0.0
    g = fxad.jit(fxad.grad(s))(x)
    assert g.shape == x.shape and g.dtype == x.dtype


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
def test_integer_and_bool_inputs_keep_eager_dtype(dtype):
    x = np.array([1, 0, 1]).astype(dtype)
    for f in (lambda v: v + 0, lambda v: v * 1, lambda v: v * 2, lambda v: v / 1):
        want = f(x)
        got = fxad.jit(f)(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_repeat_calls_take_the_fast_path_and_agree_with_the_first():
    """Calls with only positional arrays/scalars skip flattening after the first; the
    results (values, dtypes, weak Python scalars) are those of the staged path."""
    f = fxad.jit(lambda v, s: fnp.sin(v) * s)
    x32, x64 = np.linspace(0, 1, 3, dtype=np.float32), np.linspace(0, 1, 3)
    for _ in range(2):  # first call stages, second takes the fast path
        a, b, c = f(x32, 2.0), f(x64, np.float64(2.0)), f(x32, np.float32(2.0))
        assert a.dtype == np.float32 and b.dtype == np.float64 and c.dtype == np.float32
        np.testing.assert_allclose(a, np.sin(x32) * 2, rtol=1e-6)
        np.testing.assert_allclose(b, np.sin(x64) * 2, rtol=1e-15)
    assert len(f.fast) == 3
    np.testing.assert_allclose(f(x64[:2], 3), np.sin(x64[:2]) * 3)  # a new shape: staged
    assert len(f.fast) == 4


def test_repeat_calls_with_lists_and_tuples_take_the_fast_path():
    """Nested lists/tuples of arrays (a model's parameters) are keyed without pytree
    flattening; list and tuple, and different nestings, are different signatures; dicts
    and other nodes take the general path."""
    calls = []

    def f(params, x):
        calls.append(1)
        (w, b), scale = params[0], params[1]
        return [fnp.tanh(x @ w + b) * scale, (x.sum(),)]
    jf = fxad.jit(f)
    w, b, x = np.ones((3, 2)), np.arange(2.0), np.linspace(0, 1, 3)
    want = [np.tanh(x @ w + b) * 2.0, (x.sum(),)]
    for params in ([(w, b), 2.0], [[w, b], 2.0], ((w, b), np.float64(2.0))):
        for _ in range(3):
            out = jf(params, x)
            assert isinstance(out, list) and isinstance(out[1], tuple)
            np.testing.assert_allclose(out[0], want[0], rtol=1e-15)
            np.testing.assert_allclose(out[1][0], want[1][0], rtol=1e-15)
    assert len(calls) == 3 and len(jf.fast) == 3  # one trace and one fast entry each
    g = fxad.jit(lambda d: d["a"] * 2)
    for _ in range(2):
        np.testing.assert_allclose(g({"a": x}), 2 * x)
    assert len(g.fast) == 0


def test_string_leaves_are_refused_with_the_fix():
    """A string among jit's arguments is refused at the call, as JAX refuses it, naming
    static arguments as the fix; as a static argument it works."""
    from typing import Any, NamedTuple

    class Named(NamedTuple):
        name: str
        a: Any
    with pytest.raises(fxad.errors.FxadTypeError, match="static_argnums"):
        fxad.jit(lambda c: c.a * 2.0)(Named("moc", 1.0))
    with pytest.raises(TypeError, match="static_argnums"):
        fxad.jit(lambda s, x: x)("a", 1.0)
    assert fxad.jit(lambda s, x: x * len(s), static_argnums=0)("ab", 1.5) == 3.0


# --- the repeat-call fast path: what must miss it, what it must keep ------------------------------

# backend="numba" where Numba is installed (its programs take the same fast path)
BACKENDS = ["numpy"] + (["numba"] if importlib.util.find_spec("numba") else [])
_V64 = np.linspace(-1.0, 1.0, 6)
_V32 = _V64.astype(np.float32)
_M = np.arange(12.0).reshape(3, 4) / 7.0
_READONLY = _V64.copy()
_READONLY.flags.writeable = False

# name -> (f, the calls' argument tuples in order, how many signatures they make)
FAST_PATH_CASES = {
    "new dtype": (lambda v: fnp.sin(v) * 2.0,
                  [(_V64,), (_V32,), (_V64.astype(np.int32),), (_V64,)], 3),
    "new shape": (lambda v: fnp.sin(v) * 2.0, [(_V64,), (_V64[:4],), (_V64[None],)], 3),
    "weak Python scalar vs array": (lambda v, s: v * s,
                                    [(_V32, 2.0), (_V32, np.float64(2.0)),
                                     (_V32, np.asarray(2.0)), (_V32, 2), (_V32, True)], 4),
    "Python scalar argument types": (lambda s: fnp.cos(s * 1.0),
                                     [(0.5,), (1,), (np.float32(0.5),), (0.25,)], 3),
    "layouts of one signature": (lambda m: fnp.tanh(m) @ m.T + 1.0,
                                 [(_M,), (np.asfortranarray(_M),), (_M[:, ::-1],),
                                  (np.broadcast_to(_M[0], (3, 4)),)], 1),
    "read-only and strided inputs": (lambda v: fnp.exp(v) - v,
                                     [(_V64,), (_READONLY,), (_V64[::-1].copy(),)], 1),
    "pytree argument": (lambda d: d["a"] * fnp.cos(d["b"]),
                        [({"a": _V64, "b": 0.5},), ({"a": _V64, "b": np.float64(0.5)},),
                         ({"a": _V32, "b": 0.5},), ({"a": _V64 * 2, "b": 0.25},)], 3),
    "nested lists": (lambda p: p[0][0] * p[1] + p[0][1],
                     [([(_V64, _V64), 2.0],), ([[_V64, _V64], 2.0],), ([(_V64, _V64), 3.0],)],
                     2),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", FAST_PATH_CASES)
def test_fast_path_misses_where_the_signature_changes(name, backend):
    """Each call, first and repeated (the fast path), gives eager f's values and dtype; a
    new dtype, shape, weak or strong scalar, or tree stages again, and a new layout or new
    values of one signature does not."""
    fun, calls, signatures = FAST_PATH_CASES[name]
    f, traces = _counting(fun)
    jf = fxad.jit(f, backend=backend)
    for _ in range(2):
        for args in calls:
            got, want = jf(*args), fun(*args)
            g, w = leaves(got), leaves(want)
            assert [(a.shape, a.dtype) for a in g] == [(a.shape, a.dtype) for a in w], args
            for a, b in zip(g, w):
                np.testing.assert_allclose(a, b, rtol=1e-6 if a.dtype == np.float32 else 1e-14)
    assert len(traces) == signatures


@pytest.mark.parametrize("backend", BACKENDS)
def test_fast_path_new_static_value_stages_again(backend):
    f, traces = _counting(lambda v, n: fnp.sin(v) ** n)
    jf = fxad.jit(f, static_argnums=1, backend=backend)
    for _ in range(2):
        for n in (2, 3, 2.0):
            np.testing.assert_allclose(jf(_V64, n), np.sin(_V64) ** n, rtol=1e-14)
    assert len(traces) == 3  # 2 and 2.0 are different static values


@pytest.mark.parametrize("backend", BACKENDS)
def test_fast_path_results_own_their_memory(backend):
    """Results on the fast path are fresh and writeable: writing into one changes neither
    the input, nor what fxad keeps, nor a later result; an input changed in place after a
    call changes the next result only."""
    c = np.arange(3.0)
    progs = {"identity": lambda x: x, "constant": lambda x: (x * 0.0, c),
             "broadcast view": lambda x: fnp.broadcast_to(x, (2, 3)),
             "read-only view of a result": lambda x: fnp.broadcast_to(x * 2.0, (2, 3)),
             "tree of results": lambda x: {"a": x.T, "b": [x[0], fnp.sum(x)]}}
    for name, fun in progs.items():
        jf = fxad.jit(fun, backend=backend)
        x = np.arange(3.0) + 1.0
        first = jf(x)
        for _ in range(2):
            out = jf(x)
            for o in leaves(out):
                assert not np.shares_memory(o, x) and not np.shares_memory(o, c), name
            for o in tree_flatten(out)[0]:
                if isinstance(o, np.ndarray):
                    assert o.flags.writeable, name
                    o[...] = -5.0
        x[0] = 10.0  # the input changed in place: the next call sees it, earlier results not
        assert_tree_close(jf(x), fun(x), name)
        assert_tree_close(first, fun(np.arange(3.0) + 1.0), name)
        np.testing.assert_array_equal(c, np.arange(3.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_fast_path_keeps_debug_nans_and_disable_jit(backend):
    f, traces = _counting(lambda x: fnp.log(x) * 2.0)
    jf = fxad.jit(f, backend=backend)
    ok = np.array([1.0, 2.0])
    jf(ok), jf(ok)  # the fast path holds this signature now
    with np.errstate(invalid="ignore"):
        assert np.isnan(jf(np.array([-1.0, 2.0]))[0])
        with fxad.debug_nans(), pytest.raises(FloatingPointError, match="'log'"):
            jf(np.array([-1.0, 2.0]))
    with fxad.disable_jit():
        np.testing.assert_allclose(jf(ok), np.log(ok) * 2.0, rtol=1e-15)
    assert len(traces) == 2  # the one trace, and the eager call under disable_jit


@pytest.mark.parametrize("backend", BACKENDS)
def test_fast_path_threads_with_different_signatures(backend):
    """Threads calling one jitted function with different dtypes and shapes at once each
    get their own signature's result."""
    fun = lambda v, s: fnp.tanh(v) * s
    jf = fxad.jit(fun, backend=backend)
    inputs = [(_V64, 2.0), (_V32, 2.0), (_V64[:3], np.float64(3.0)), (_M, 0.5)]
    for args in inputs:
        jf(*args)  # (compiled before the threads start)
    errors = []

    def work(args):
        want = fun(*args)
        for _ in range(200):
            got = jf(*args)
            if got.dtype != want.dtype or got.shape != want.shape or \
                    not np.allclose(got, want, rtol=1e-6, atol=0):
                errors.append((args, got))
                return
    ts = [threading.Thread(target=work, args=(a,)) for a in inputs * 2]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_repeat_calls_check_the_lowered_signature(backend):
    """`.lower(...).compile()` called again with its signature runs the program (as jit's
    fast path); any other structure, shape, dtype or scalar kind is refused every time,
    also after calls that passed."""
    fun = lambda v, s: fnp.sin(v) * s
    c = fxad.jit(fun, backend=backend).lower(_V32, 2.0).compile()
    for _ in range(3):
        for s in (2.0, 0.5):
            got, want = c(_V32, s), fun(_V32, s)
            assert got.dtype == want.dtype == np.float32
            np.testing.assert_allclose(got, want, rtol=1e-6)
        for bad in [(_V64, 2.0), (_V32[:2], 2.0), (_V32, np.float32(2.0)), (_V32, 2),
                    ([_V32], 2.0), (_V32,)]:
            with pytest.raises(fxad.errors.FxadTypeError, match="lower"):
                c(*bad)
    k = fxad.jit(lambda v, n: v * n, static_argnums=1, backend=backend).lower(_V64, 3).compile()
    for _ in range(2):
        np.testing.assert_array_equal(k(_V64), _V64 * 3)
        with pytest.raises(fxad.errors.FxadTypeError, match="lowered"):
            k(_V32)

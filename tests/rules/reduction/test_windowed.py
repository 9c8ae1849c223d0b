"""Rule table and checks for the windowed reductions (fxad/rules/reduction/windowed.py) and
fxad.lax.reduce_window: values against a loop reference and JAX, derivatives to second order
(the max/min derivative through select_and_gather_add / select_and_scatter_add), ties routed
to the first extremal element as in JAX, vmap against a loop, jit against eager."""
import itertools

import numpy as np
import pytest

import fxad
from fxad import lax
from fxad.errors import FxadTypeError, FxadValueError

from ..common import grid, Row, row_tests

# name, operand shape, keyword arguments of lax.reduce_window (after init and computation)
CONFIGS = [
    ("1d-valid", (7,), dict(window_dimensions=(2,), window_strides=(1,), padding="VALID")),
    ("1d-same-strided", (7,), dict(window_dimensions=(3,), window_strides=(2,),
                                   padding="SAME")),
    ("1d-dilations", (7,), dict(window_dimensions=(2,), window_strides=(2,),
                                padding=((1, 2),), base_dilation=(2,), window_dilation=(2,))),
    ("2d-negative-pad", (5, 6), dict(window_dimensions=(2, 3), window_strides=(2, 1),
                                     padding=((1, 0), (-1, 2)), base_dilation=(1, 2))),
    ("pool-2x2", (2, 6, 5, 3), dict(window_dimensions=(1, 2, 2, 1),
                                    window_strides=(1, 2, 2, 1), padding="VALID")),
    ("pool-3x3-same-dilated", (2, 6, 5, 3), dict(window_dimensions=(1, 3, 3, 1),
                                                 window_strides=(1, 2, 1, 1), padding="SAME",
                                                 window_dilation=(1, 1, 2, 1))),
    ("3d-base-dilated", (3, 4, 5), dict(window_dimensions=(2, 2, 2), window_strides=(1, 2, 1),
                                        padding=((0, 1), (1, 1), (2, 0)),
                                        base_dilation=(2, 1, 1))),
    ("same-lower", (6, 5), dict(window_dimensions=(2, 2), window_strides=(1, 1),
                                padding="SAME_LOWER")),
]
IDS = [c[0] for c in CONFIGS]
OPS = [("add", lax.add, 0.0, np.add), ("max", lax.max, -np.inf, np.maximum),
       ("min", lax.min, np.inf, np.minimum), ("mul", lax.mul, 1.0, np.multiply)]


def reduce_of(op, init, kw):
    return lambda x: lax.reduce_window(x, init, op, **kw)


def _distinct(shape, seed=0):
    """Values with no ties (so max and min have one derivative)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) - n / 2) / n * 3.0


def _finite(f):
    """f with outputs of windows that hold only padding (-inf / inf, constant) set to 0, so
    finite differences see them."""
    def g(x):
        y = f(x)
        return lax.select(lax.isfinite(y), y, 0.0)
    return g


TABLE = []
for _name, _shape, _kw in CONFIGS:
    for _op_name, _op, _init, _ in OPS:
        TABLE.append((f"{_name}-{_op_name}", _finite(reduce_of(_op, _init, _kw)), [_shape]))
# the derivative primitives, staged by the rows themselves (gradient and tangent programs)
_POOL = CONFIGS[5][2]
_C = _distinct((2, 3, 5, 3), seed=9)
TABLE += [
    ("max-pool-grad", lambda x: fxad.grad(lambda y: (lax.reduce_window_max(y, **_POOL) * _C)
                                          .sum())(x), [(2, 6, 5, 3)]),
    ("min-pool-jvp", lambda x: fxad.jvp(lambda y: lax.reduce_window_min(y, **_POOL), (x,),
                                        (x * x,))[1], [(2, 6, 5, 3)]),
]


def reduce_window_reference(x, init, ufunc, window_dimensions, window_strides=None,
                            padding="VALID", base_dilation=None, window_dilation=None):
    """Loops over windows; padding and holes are skipped; init combined once (XLA)."""
    nd = x.ndim
    strides = window_strides or (1,) * nd
    base = base_dilation or (1,) * nd
    wdil = window_dilation or (1,) * nd
    if isinstance(padding, str):
        spans = [(k - 1) * b + 1 for k, b in zip(window_dimensions, wdil)]
        padding = lax.padtype_to_pads(x.shape, spans, strides, padding)
    dil = [(n - 1) * a + 1 for n, a in zip(x.shape, base)]
    spans = [(k - 1) * b + 1 for k, b in zip(window_dimensions, wdil)]
    out_sp = [max((L + lo + hi - k) // s + 1, 0) for L, (lo, hi), k, s in
              zip(dil, padding, spans, strides)]
    out = np.empty(out_sp)
    for p in itertools.product(*[range(m) for m in out_sp]):
        acc = init
        for j in itertools.product(*[range(k) for k in window_dimensions]):
            q = [pp * s + jj * b - lo for pp, s, jj, b, (lo, _) in
                 zip(p, strides, j, wdil, padding)]
            if all(0 <= qq < L and qq % a == 0 for qq, L, a in zip(q, dil, base)):
                acc = ufunc(acc, x[tuple(qq // a for qq, a in zip(q, base))])
        out[p] = acc
    return out


@pytest.mark.parametrize("name,shape,kw", CONFIGS, ids=IDS)
@pytest.mark.parametrize("op_name,op,init,ufunc", OPS, ids=[o[0] for o in OPS])
def test_values_match_the_loop_reference_eager_and_jit(name, shape, kw, op_name, op, init,
                                                       ufunc):
    x = _distinct(shape)
    for init_value in (init, 0.75):  # the identity, and another initial value
        want = reduce_window_reference(x, init_value, ufunc, **kw)
        got = lax.reduce_window(x, init_value, op, **kw)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(fxad.jit(reduce_of(op, init_value, kw))(x), want,
                                   rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name,shape,kw", CONFIGS, ids=IDS)
@pytest.mark.parametrize("op_name,op,init,ufunc", OPS[:3], ids=[o[0] for o in OPS[:3]])
def test_values_and_gradients_match_jax(name, shape, kw, op_name, op, init, ufunc):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jop = {"add": jax.lax.add, "max": jax.lax.max, "min": jax.lax.min}[op_name]
    x = _distinct(shape, seed=1)
    want = jax.lax.reduce_window(x, init, jop, **kw)
    got = lax.reduce_window(x, init, op, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    c = _distinct(got.shape, seed=2) * np.isfinite(got)  # windows of padding only: weight 0
    c_in = lambda y: jax.numpy.where(np.isfinite(got), y, 0.0) * c
    try:
        jg = jax.grad(lambda x: c_in(jax.lax.reduce_window(x, init, jop, **kw)).sum())(x)
    except (NotImplementedError, TypeError):  # JAX: no max/min VJP with window dilation or
        return                                 # negative padding; fxad has one (checked below)
    g = fxad.grad(lambda x: (lax.select(np.isfinite(got), lax.reduce_window(x, init, op, **kw),
                                        0.0) * c).sum())(x)
    np.testing.assert_allclose(g, jg, rtol=1e-13, atol=1e-13)


TABLE = [Row(n, f, s, grid(-2, 2, 0.01), unique=True) for n, f, s in TABLE]
test_row = row_tests(TABLE)


def test_ties_go_to_the_first_element_in_both_modes():
    """As JAX (XLA's select with >=): among equal maxima the first in row-major window
    order gets the whole derivative, in forward and reverse mode."""
    x = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    kw = dict(window_dimensions=(2, 2), window_strides=(1, 1), padding="VALID")
    f = lambda x: lax.reduce_window_max(x, **kw)  # windows [[1,1],[1,1]] and [[1,0],[1,0]]
    g = fxad.grad(lambda x: (f(x) * np.array([[1.0, 10.0]])).sum())(x)
    np.testing.assert_array_equal(g, [[1.0, 10.0, 0.0], [0.0, 0.0, 0.0]])
    t = np.arange(6.0).reshape(2, 3) + 1
    np.testing.assert_array_equal(fxad.jvp(f, (x,), (t,))[1], [[t[0, 0], t[0, 1]]])
    jax = pytest.importorskip("jax")
    jg = jax.grad(lambda x: (jax.lax.reduce_window(x, -np.inf, jax.lax.max, **kw)
                             * np.array([[1.0, 10.0]])).sum())(x)
    np.testing.assert_array_equal(g, jg)
    y = -x  # min: the same rule
    gmin = fxad.grad(lambda y: (lax.reduce_window_min(y, **kw) * np.array([[1.0, 10.0]])).sum())
    np.testing.assert_array_equal(gmin(y), g)


def test_nan_selection_matches_jax():
    """A comparison with NaN is false, so the scan moves on to the candidate (XLA's rule)."""
    jax = pytest.importorskip("jax")
    z = np.array([1.0, np.nan, 3.0, 2.0])
    kw = dict(window_dimensions=(2,), window_strides=(1,), padding="VALID")
    np.testing.assert_array_equal(lax.reduce_window_max(z, **kw),
                                  jax.lax.reduce_window(z, -np.inf, jax.lax.max, **kw))
    np.testing.assert_array_equal(
        fxad.grad(lambda z: lax.reduce_window_max(z, **kw).sum())(z),
        jax.grad(lambda z: jax.lax.reduce_window(z, -np.inf, jax.lax.max, **kw).sum())(z))


def test_max_derivative_programs_use_the_selection_primitives():
    """No dense masks over windows: the JVP gathers, its transpose scatters, each one
    primitive; the windowed sum's transpose is a windowed sum."""
    x = _distinct((2, 6, 5, 3))
    kw = CONFIGS[4][2]
    rev = fxad.make_jaxpr(fxad.grad(lambda x: lax.reduce_window(x, -np.inf, lax.max, **kw)
                                    .sum()))(x)
    assert {e.primitive.name for e in rev.eqns} >= {"select_and_scatter_add"}
    fwd = fxad.make_jaxpr(lambda x: fxad.jvp(lambda y: lax.reduce_window_max(y, **kw), (x,),
                                             (x,))[1])(x)
    assert "select_and_gather_add" in {e.primitive.name for e in fwd.eqns}
    s = fxad.make_jaxpr(fxad.grad(lambda x: lax.reduce_window_sum(x, **kw).sum()))(x)
    assert {e.primitive.name for e in s.eqns} & {"reduce_window_sum"}
    assert not {e.primitive.name for e in s.eqns} & {"scatter_add", "getitem"}


@pytest.mark.parametrize("name,shape,kw", CONFIGS, ids=IDS)
def test_vmap_matches_a_loop(name, shape, kw):
    xs = np.stack([_distinct(shape, seed=s) for s in range(3)])
    for op_name, op, init, _ in OPS:
        f = reduce_of(op, init, kw)
        want = np.stack([f(x) for x in xs])
        np.testing.assert_allclose(fxad.vmap(f)(xs), want, rtol=1e-13)
        got = fxad.vmap(f, in_axes=len(shape), out_axes=-1)(np.moveaxis(xs, 0, -1))
        np.testing.assert_allclose(np.moveaxis(got, -1, 0), want, rtol=1e-13)
        if op_name in ("max", "min") and np.isfinite(want).all():
            c = _distinct(want.shape[1:], seed=7)
            gf = fxad.grad(lambda x: (f(x) * c).sum())
            np.testing.assert_allclose(fxad.vmap(gf)(xs), np.stack([gf(x) for x in xs]),
                                       rtol=1e-13)
            np.testing.assert_allclose(fxad.jit(fxad.vmap(gf))(xs), np.stack([gf(x) for x in xs]),
                                       rtol=1e-13)


def test_integer_and_float32_operands():
    xi = np.arange(12).reshape(3, 4) * 7 % 11 - 5
    kw = dict(window_dimensions=(2, 2), window_strides=(1, 2), padding="SAME")
    for op, ufunc, init in ((lax.add, np.add, 0), (lax.max, np.maximum, np.iinfo(np.int64).min),
                            (lax.min, np.minimum, np.iinfo(np.int64).max)):
        got = lax.reduce_window(xi, init, op, **kw)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, reduce_window_reference(xi, init, ufunc, **kw))
    x32 = _distinct((4, 5)).astype(np.float32)
    for fn in (lax.reduce_window_sum, lax.reduce_window_max, lax.reduce_window_min):
        assert fn(x32, **kw).dtype == np.float32
        assert fxad.grad(lambda x: fn(x, **kw).sum())(x32).dtype == np.float32


def test_computations_are_accepted_in_every_spelling():
    x = _distinct((6,))
    want = lax.reduce_window(x, -np.inf, lax.max, (2,))
    for comp in ("max", np.maximum, lax.max):
        np.testing.assert_array_equal(lax.reduce_window(x, -np.inf, comp, (2,)), want)
    np.testing.assert_array_equal(lax.reduce_window(x, 0.0, np.add, (3,)),
                                  lax.reduce_window_sum(x, (3,)))


@pytest.mark.parametrize("call,err,match", [
    (lambda x: lax.reduce_window(x, 0.0, lambda a, b: a + b, (2, 2)), FxadTypeError,
     "computation"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2,)), FxadValueError, "entries"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 0)), FxadValueError, ">= 1"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), padding=((-9, 0), (0, 0))),
     FxadValueError, "crops"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), padding="FULL"), FxadValueError,
     "padding"),
    (lambda x: lax.reduce_window_max(x + 1j, (2, 2)), FxadTypeError, "order"),
    (lambda x: lax.reduce_window_sum(x > 0, (2, 2)), FxadTypeError, "boolean"),
    (lambda x: lax.reduce_window((x, x), (0.0, 0.0), lax.add, (2, 2)), FxadTypeError,
     "one array"),
])
def test_bad_arguments_raise_clear_errors(call, err, match):
    x = _distinct((4, 5))
    for fn in (call, fxad.jit(call)):
        with pytest.raises(err, match=match):
            fn(x)


def test_shape_tuple_matches_jax():
    jax = pytest.importorskip("jax")
    args = ((7, 6), (2, 3), (2, 1), ((1, 0), (2, -1)), (1, 2), (2, 1))
    assert lax.reduce_window_shape_tuple(*args) == tuple(jax.lax.reduce_window_shape_tuple(*args))

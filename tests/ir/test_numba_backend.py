"""jit's numba backend (fxad/ir/numba_backend): every numba lowering against the NumPy backend
on a table of programs, bit for bit (compiled code calls NumPy's own ufunc and matmul loops
and sums in NumPy's order), with extreme values and mixed dtypes; fusion; segments around
equations without a compiled lowering; the disk cache seen from a fresh process; the
fallback when Numba is missing; the backend switches."""
import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.rules.reduction.softmax import softmax as _softmax
from fxad import core, lax
from fxad.errors import CompilationWarning, FxadValueError
from fxad.ir import numba_backend
from fxad.scipy import special
from fxad.tree_util import tree_flatten

pytest.importorskip("numba")  # the compile extra (CI installs it before these run)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# --- helpers ----------------------------------------------------------------------------------


def run_both(f, *args, expect_compiled=True, **kw):
    """jit(f) on both backends; the numba program must compile without a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompilationWarning)
        jn = fxad.jit(f, backend="numba", **kw)
        with np.errstate(all="ignore"):
            got = jn(*args)
            want = fxad.jit(f, backend="numpy", **kw)(*args)
        low = jn.lower(*args)
    if expect_compiled and low.compiled.closed.eqns:  # (simplification may leave nothing)
        assert low.segments and not low.fallbacks, low.as_text()
    return got, want, low


def assert_same(got, want):
    """Bit for bit: shapes, dtypes, values (NaN where NaN)."""
    g, w = tree_flatten(got)[0], tree_flatten(want)[0]
    assert len(g) == len(w)
    for a, b in zip(g, w):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        np.testing.assert_array_equal(a, b)


EXTREME = np.array([1e300, -1e300, 1e-300, -1e-300, 0.0, np.inf, -np.inf, np.nan, 0.5, -2.25,
                    3.75, 1.0, -1.0, 0.999, 40.0, -40.0])
UNIT = np.array([-0.99, -0.5, -1e-300, 0.0, 0.25, 0.5, 0.75, 0.999, 1.0, -1.0, 1.5, np.nan])
POS = np.array([1e-300, 1e-10, 0.5, 1.0, 2.0, 1e10, 1e300, np.inf, 0.0, np.nan])


def grid(dtype=np.float64, base=EXTREME):
    with np.errstate(over="ignore"):  # 1e300 as float32 is inf
        return base.astype(dtype)


def pair(dtype=np.float64):
    x = grid(dtype)
    return np.repeat(x, x.size).reshape(x.size, x.size), np.tile(x, x.size).reshape(x.size,
                                                                                   x.size)


# --- the table: (name, function, arguments) ------------------------------------------------------

UNARY = [("sin", fnp.sin), ("cos", fnp.cos), ("tan", fnp.tan), ("arcsin", fnp.arcsin),
         ("arccos", fnp.arccos), ("arctan", fnp.arctan), ("sinh", fnp.sinh),
         ("cosh", fnp.cosh), ("tanh", fnp.tanh), ("arcsinh", fnp.arcsinh),
         ("arccosh", fnp.arccosh), ("arctanh", fnp.arctanh), ("exp", fnp.exp),
         ("expm1", fnp.expm1), ("log", fnp.log), ("log1p", fnp.log1p), ("sqrt", fnp.sqrt),
         ("cbrt", fnp.cbrt), ("rsqrt", lax.rsqrt), ("logistic", lax.logistic),
         ("abs", fnp.abs), ("sign", fnp.sign), ("floor", fnp.floor), ("ceil", fnp.ceil),
         ("trunc", fnp.trunc), ("round", fnp.round), ("neg", lambda x: -x),
         ("isnan", fnp.isnan), ("isfinite", fnp.isfinite), ("signbit", fnp.signbit),
         ("logical_not", fnp.logical_not), ("erf", special.erf), ("erfc", special.erfc),
         ("gammaln", special.gammaln), ("gamma", special.gamma), ("logit", special.logit),
         ("ndtr", special.ndtr), ("log_ndtr", special.log_ndtr), ("ndtri", special.ndtri),
         ("erfinv", special.erfinv), ("entr", special.entr), ("softplus", fxad.nn.softplus),
         ("square", lambda x: x ** 2), ("cube", lambda x: x ** 3), ("inv_sq", lambda x: x ** -2),
         ("stop_gradient", lambda x: fxad.stop_gradient(x) * 2.0),
         ("to_f32", lambda x: x.astype(np.float32)), ("to_i32", lambda x: fnp.nan_to_num(
             x, nan=0.0, posinf=3.0, neginf=-3.0).clip(-1e6, 1e6).astype(np.int32)),
         ("to_bool", lambda x: x.astype(bool))]

BINARY = [("add", lambda x, y: x + y), ("sub", lambda x, y: x - y), ("mul", lambda x, y: x * y),
          ("div", lambda x, y: x / y), ("pow", fnp.power), ("max", fnp.maximum),
          ("min", fnp.minimum), ("floor_divide", fnp.floor_divide), ("rem", fnp.remainder),
          ("fmod", fnp.fmod), ("arctan2", fnp.arctan2), ("logaddexp", fnp.logaddexp),
          ("xlogy", special.xlogy), ("xlog1py", special.xlog1py), ("eq", fnp.equal),
          ("ne", fnp.not_equal), ("lt", fnp.less), ("le", fnp.less_equal),
          ("gt", fnp.greater), ("ge", fnp.greater_equal), ("and", fnp.logical_and),
          ("or", fnp.logical_or), ("select", lambda x, y: fnp.where(x > y, x, y * 2.0)),
          ("complex", lax.complex)]

def _masked_logits():
    x = _R.normal(size=(2, 3, 4)).astype(np.float32)
    x[0, 1] = -np.inf  # a row of -inf: zeros
    x[1, :, 2] = -np.inf
    return x


PROGRAMS = []
for _n, _f in UNARY:
    PROGRAMS.append((f"{_n}-f64", _f, (grid(),)))
    PROGRAMS.append((f"{_n}-f32-2d", _f, (grid(np.float32).reshape(4, 4),)))
for _n, _f in BINARY:
    PROGRAMS.append((f"{_n}-f64", _f, pair()))
    if _n != "complex":
        PROGRAMS.append((f"{_n}-f32-bcast", _f, (grid(np.float32).reshape(16, 1),
                                              grid(np.float32)[::-1].copy())))
PROGRAMS += [
    ("unit-arcsin", fnp.arcsin, (grid(base=UNIT),)),
    ("pos-log", fnp.log, (grid(base=POS),)),
    ("int-arith", lambda x, y: (x + y) * 3 - x // (y + 7) + x % 5, (
        np.arange(-6, 6, dtype=np.int64), np.arange(12, dtype=np.int64))),
    ("int8-wrap", lambda x: x * x + x, (np.arange(-128, 128, 16, dtype=np.int8),)),
    ("uint8-neg", lambda x: -x + 1, (np.arange(0, 250, 25, dtype=np.uint8),)),
    ("int-true-div", lambda x, y: x / y, (np.arange(-5, 5), np.array([1, 2, 0, -3, 4] * 2))),
    ("int-and-float", lambda x, y: x * y + 1, (np.arange(6, dtype=np.int32), grid()[:6])),
    ("bool-arith", lambda x, y: (x & y) | ~x, (np.array([True, False, True, False]),
                                               np.array([True, True, False, False]))),
    ("bool-sum-to-int", lambda x: fnp.sum(x, axis=0), (np.eye(5, dtype=bool),)),
    ("weak-float32", lambda x, s: x * s + 1.5, (grid(np.float32), 2.0)),
    ("weak-int", lambda x, s: x * s, (grid(np.float32), 3)),
    ("scalar-chain", lambda x: fnp.sin(x) * 1.01 + 0.1 * fnp.cos(x), (np.float64(0.3),)),
    ("0d-array", lambda x: fnp.exp(x) - x, (np.array(0.7),)),
    ("complex-arith", lambda z, w: z * w + z / w - fnp.exp(z), (
        np.array([1 + 2j, -0.5j, 3.0, np.inf + 1j]), np.array([2 - 1j, 1j, -1.0, 2.0]))),
    ("complex-parts", lambda z: fnp.abs(z) + fnp.real(z) * fnp.imag(z) + fnp.real(fnp.conj(z)),
     (np.array([1 + 2j, -0.5j, 3.0, np.nan]),)),
    ("real-of-real", lambda x: fnp.real(x) + fnp.imag(x), (grid(),)),
]
# reductions: axes that take NumPy's pairwise, sequential and mixed orders; sizes past 8, 128
_R = np.random.default_rng(0)
_X3 = _R.normal(size=(3, 150, 9)) * 10.0 ** _R.uniform(-3, 3, size=(3, 150, 9))
for _ax in (None, 0, 1, 2, (0, 2), (1, 2), (0, 1)):
    for _red in ("sum", "max", "min", "prod"):
        PROGRAMS.append((f"{_red}-axis{_ax}", lambda x, r=_red, a=_ax: getattr(fnp, r)(x, axis=a),
                      (_X3 if _red != "prod" else _X3[:, :20] / 10.0,)))
    PROGRAMS.append((f"sum-f32-keepdims-axis{_ax}", lambda x, a=_ax: fnp.sum(x, axis=a,
                                                                        keepdims=True),
                  (_X3.astype(np.float32),)))
# sums past 8 terms along a reduced axis before an unreduced one: reduce_sum's tree, after
# the trailing run's pairwise sums; a transposed operand is summed in C order
_X4 = _R.normal(size=(12, 5, 17, 3)) * 10.0 ** _R.uniform(-3, 3, size=(12, 5, 17, 3))
for _ax in ((0, 2, 3), (0, 1, 3), (2,), (0, 2)):
    PROGRAMS.append((f"sum-tree-axis{_ax}", lambda x, a=_ax: fnp.sum(x, axis=a), (_X4,)))
    PROGRAMS.append((f"sum-tree-f32-keepdims-axis{_ax}",
                     lambda x, a=_ax: fnp.sum(x, axis=a, keepdims=True), (_X4.astype(np.float32),)))
PROGRAMS += [
    ("sum-transposed", lambda x: fnp.sum(x.T, axis=1), (_X3[0],)),
    ("sum-trailing-of-transposed", lambda x: fnp.sum(fnp.transpose(x, (2, 0, 1)), axis=(1, 2)), (_X3,)),
    ("sum-int", lambda x: fnp.sum(x, axis=1), (np.arange(60, dtype=np.int32).reshape(6, 10),)),
    ("max-nan", lambda x: fnp.max(x, axis=0), (pair()[0],)),
    ("mean-of-chain", lambda x: fnp.mean(fnp.exp(x) * 2.0), (_X3[0, :, 0] / 1e3,)),
    ("sum-long", lambda x: fnp.sum(x), (_R.normal(size=5000),)),
    ("chain-empty-grad", fxad.grad(lambda x: fnp.sum(fnp.sin(x) * 1.0 + 0.0)), (np.zeros(0),)),
]
# structural and indexing (views), products
_A = _R.normal(size=(4, 5))
_B = _R.normal(size=(5, 3))
_V = _R.normal(size=5)
PROGRAMS += [
    ("reshape", lambda x: fnp.reshape(x * 2.0, (10, 2)), (_A,)),
    ("reshape-noncontiguous", lambda x: fnp.reshape(x.T, (20,)) + 1.0, (_A,)),
    ("reshape-to-scalar", lambda x: fnp.reshape(x, ()) * 3.0, (np.ones((1, 1)),)),
    ("transpose-2d", lambda x: x.T * 2.0, (_A,)),
    ("transpose-3d", lambda x: fnp.transpose(x, (2, 0, 1)) + 1.0, (_X3[:, :4],)),
    ("broadcast_to", lambda x: fnp.broadcast_to(x, (3, 5)) * 2.0, (_V,)),
    # broadcasts are zero-stride views: size-1 axes stretched, new leading axes, size-1 axes
    # kept, strided and transposed operands, a 0-d operand
    ("broadcast_to-size-one-axes", lambda x: fnp.broadcast_to(fnp.sin(x)[:, :1], (4, 6)) * x,
     (_R.normal(size=(4, 6)),)),
    ("broadcast_to-new-and-kept-axes", lambda x: fnp.broadcast_to(x[:1], (2, 3, 1, 5)) + 1.0,
     (_A[:, None, :].reshape(4, 1, 5),)),
    ("broadcast_to-transposed-f32", lambda x: fnp.broadcast_to(x.T[None], (3, 5, 4)) * 2.0,
     (_A.astype(np.float32),)),
    ("broadcast_to-strided", lambda x: fnp.broadcast_to(x[::2, 1:2], (3, 2, 4)) - x[0, 0],
     (_A,)),
    ("broadcast_to-0d", lambda x: fnp.broadcast_to(fnp.sum(x), (2, 3)) * x[:2, :3], (_A,)),
    # read by other than elementwise equations of its shape: a view
    ("broadcast_to-into-a-product", lambda x, y: fnp.broadcast_to(fnp.sin(x)[:, :1], (4, 5)) @ y,
     (_A, _B)),
    ("broadcast_to-returned", lambda x: fnp.broadcast_to(fnp.sin(x)[:1], (3, 5)), (_A,)),
    ("broadcast_to-into-a-sum", lambda x: fnp.sum(fnp.broadcast_to(fnp.cos(x)[:1], (3, 4, 5)),
                                                  axis=1), (_A,)),
    ("broadcast_to-read-twice", lambda x: (lambda b: (b * x, b @ x.T))(
        fnp.broadcast_to(fnp.sin(x)[:, :1], (4, 5))), (_A,)),
    ("concatenate", lambda x, y: fnp.concatenate([x * 2.0, y], axis=0), (_A, _A[:2])),
    ("flip", lambda x: fnp.flip(x, axis=1) - x, (_A,)),
    ("getitem", lambda x: x[1:3, ::-2] * x[0, None, 1:4] + x[-1, 2], (_A,)),
    ("getitem-ellipsis", lambda x: x[..., 1] * 2.0, (_X3[:, :3],)),
    ("getitem-ellipsis-only", lambda x: fnp.sin(x)[...] * 2.0, (_X3,)),  # (found by the fuzzer)
    # new axes (older Numba cannot index with None: stride-0 axes of the same view)
    ("getitem-new-leading-axis", lambda x: fnp.sin(x)[None] * 2.0, (_X3,)),
    ("getitem-new-axes", lambda x: fnp.sin(x)[:, None, 1] + x[None, ..., None, 0], (_X3[:, :3],)),
    ("getitem-new-axis-of-element", lambda x: x[1, 2, None] * 2.0, (_A,)),
]
PROGRAMS += [
    ("matmul", lambda a, b: a @ b, (_A, _B)),
    ("matmul-f32", lambda a, b: a @ b, (_A.astype(np.float32), _B.astype(np.float32))),
    ("matvec", lambda a, v: a @ v, (_A, _V)),
    ("vecmat", lambda v, b: v @ b, (_V, _B)),
    ("dot", lambda v, w: v @ w * 2.0, (_V, _V[::-1].copy())),
    ("abT", lambda a, b: a @ b.T, (_A, _B.T.copy())),
    ("aTb", lambda a, b: a.T @ b, (_A.T.copy(), _B)),
    ("matmul-views", lambda a, b: a[:, ::2] @ b[::2], (_A, _B)),
    ("outer", lambda v, w: fnp.outer(v, w), (_V, _V[:3])),
    ("batched-matmul", lambda a, b: fnp.einsum("bij,bjk->bik", a, b), (
        _R.normal(size=(3, 4, 5)), _R.normal(size=(3, 5, 2)))),
    ("per-example", lambda h, x: fnp.einsum("b,bi->bi", h, x), (_V, _R.normal(size=(5, 3)))),
    # past rank 2: one matmul on the operands reshaped to matrices (dot.matrix_form)
    ("dg-3d-ab", lambda a, b: lax.dot_general(a, b, (((2,), (0,)), ((), ()))),
     (_R.normal(size=(3, 4, 5)), _R.normal(size=(5, 6)))),
    ("dg-3d-abT-views", lambda a, b: lax.dot_general(a[:, ::2], b, (((2,), (1,)), ((), ()))),
     (_R.normal(size=(3, 4, 5)), _R.normal(size=(5, 6)).T)),
    ("dg-3d-f32-transposed-input", lambda a, b: lax.dot_general(a, b, (((2,), (0,)), ((), ()))),
     (_R.normal(size=(5, 4, 3)).astype(np.float32).T, _R.normal(size=(5, 2)).astype(np.float32))),
    ("dg-two-contracted", lambda a, b: lax.dot_general(a, b, (((1, 2), (0, 1)), ((), ()))),
     (_R.normal(size=(3, 4, 5)), _R.normal(size=(4, 5, 2)))),
    ("dg-rhs-3d", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
     (_R.normal(size=(3, 4)), _R.normal(size=(4, 2, 5)))),
    ("dg-batched-ab", lambda a, b: lax.dot_general(a, b, (((3,), (1,)), ((0,), (0,)))),
     (_R.normal(size=(2, 3, 4, 5)), _R.normal(size=(2, 5, 6)))),
    ("dg-batched-abT-views", lambda a, b: lax.dot_general(a, b[:, ::2], (((3,), (2,)),
                                                                         ((0,), (0,)))),
     (_R.normal(size=(2, 3, 4, 5)), _R.normal(size=(2, 6, 5)))),
    ("dg-two-batch-dims", lambda a, b: lax.dot_general(a, b, (((4,), (2,)), ((0, 1), (0, 1)))),
     (_R.normal(size=(2, 2, 3, 2, 4)), _R.normal(size=(2, 2, 4, 3)))),
    ("dg-3d-aTb", lambda a, b: lax.dot_general(a, b, (((0, 1), (0, 1)), ((), ()))),
     (_R.normal(size=(3, 4, 5)), _R.normal(size=(3, 4, 2)))),
    ("dg-3d-aTb-f32-views", lambda a, b: lax.dot_general(a[:, ::2], b, (((0, 1), (0, 1)),
                                                                        ((), ()))),
     (_R.normal(size=(3, 4, 5)).astype(np.float32), _R.normal(size=(3, 2, 2)).astype(
         np.float32))),
    ("dg-3d-aTb-rhs-T", lambda a, b: lax.dot_general(a, b, (((0,), (1,)), ((), ()))),
     (_R.normal(size=(3, 4, 5)), _R.normal(size=(2, 3)))),
    ("dg-batched-aTb", lambda a, b: lax.dot_general(a, b, (((1,), (1,)), ((0,), (0,)))),
     (_R.normal(size=(2, 3, 4, 5)), _R.normal(size=(2, 3, 6)))),
    ("dg-weight-grad", fxad.grad(lambda x, w: fnp.sum(fnp.tanh(x @ w)), argnums=1),
     (_R.normal(size=(2, 3, 4)).astype(np.float32), _R.normal(size=(4, 5)).astype(np.float32))),
    # the softmax primitives: their composites inlined (and fused), NumPy's bits
    ("softmax", lambda x: _softmax(x, 1) * 2.0, (_masked_logits(),)),
    ("softmax-grad", fxad.grad(lambda x, w: fnp.sum(_softmax(x, 2) * w)),
     (_masked_logits(), _R.normal(size=(2, 3, 4)).astype(np.float32))),
    ("mlp-layer", lambda x, w, b: fnp.tanh(x @ w + b), (_A.astype(np.float32),
                                                         _B.astype(np.float32),
                                                         _V[:3].astype(np.float32))),
]

NOT_COMPILED = [  # (name, f, args): equations that run on NumPy, between segments
    ("sum-over-no-axes", fxad.vmap(lambda v: fnp.sum(v, keepdims=True) * 2.0), (_V,)),
    ("float16", lambda x: fnp.sin(x) * 2, (_V.astype(np.float16),)),
    ("index-array", lambda x: x[np.array([2, 0, 2])] * 2.0, (_V,)),
]


def _scan_rnn(w, xs):
    def step(h, x):
        h = fnp.tanh(w @ h + x)
        return h, fnp.sum(h)
    return lax.scan(step, fnp.zeros(w.shape[0]), xs)


PROGRAMS += [
    ("scan", _scan_rnn, (_R.normal(size=(3, 3)), _R.normal(size=(6, 3)))),
    ("scan-reverse", lambda xs: lax.scan(lambda c, x: (c * 0.5 + x, c), 0.0, xs, reverse=True),
     (_R.normal(size=7),)),
    ("grad-scan", fxad.grad(lambda w, xs: fnp.sum(_scan_rnn(w, xs)[1])),
     (_R.normal(size=(3, 3)), _R.normal(size=(6, 3)))),
    ("fori_loop", lambda x: lax.fori_loop(0, 5, lambda i, c: c * 1.5 + fnp.sin(c), x), (_V,)),
    ("while_loop", lambda x: lax.while_loop(lambda c: c[1] < 10, lambda c: (c[0] * 1.1, c[1] + 1),
                                            (x, 0))[0], (_V,)),
    ("cond", lambda p, x: lax.cond(p > 0, lambda v: fnp.exp(v), lambda v: -v, x),
     (np.float64(1.0), _V)),
    ("switch", lambda i, x: lax.switch(i, [lambda v: v, lambda v: v * 2.0, fnp.sin], x),
     (np.int64(2), _V)),
    ("nested-scan", lambda xs: lax.scan(lambda c, x: (lax.scan(lambda d, y: (d + y * c, d), c,
                                                                x)[0], c), 1.0, xs)[0],
     (_R.normal(size=(3, 4)),)),
    ("hessian", fxad.hessian(lambda x: fnp.sum(fxad.nn.softplus(_A @ x)) + 0.5 * fnp.sum(x ** 2)),
     (_V,)),
    ("jacfwd", fxad.jacfwd(lambda x: fnp.tanh(_A @ x) * x[:4]), (_V,)),
    ("vmap-grad", fxad.vmap(fxad.grad(lambda w, x: fxad.nn.softplus(-fnp.dot(x, w))),
                            in_axes=(None, 0)), (_V, _R.normal(size=(6, 5)))),
]

IDS = [row[0] for row in PROGRAMS]
assert len(set(IDS)) == len(IDS)


@pytest.mark.parametrize("name,f,args", PROGRAMS, ids=IDS)
def test_lowering_matches_numpy_backend_bit_for_bit(name, f, args):
    got, want, _ = run_both(f, *args)
    assert_same(got, want)


def test_nested_laplacian_matches_numpy_backend_bit_for_bit():
    """jit(vmap(trace(hessian(u)))) for a small tanh MLP: its products of rank-3 tangents
    with weight matrices compile as one matmul each (only the diagonal's gather falls back).
    One hidden layer keeps the compile short; the products are those of deeper nets."""
    sizes = (4, 6, 1)
    params = [(_R.normal(size=(a, b)) / np.sqrt(a), 0.1 * _R.normal(size=b))
              for a, b in zip(sizes[:-1], sizes[1:])]

    def u(x):
        h = x
        for W, b in params[:-1]:
            h = fnp.tanh(h @ W + b)
        return (h @ params[-1][0] + params[-1][1])[0]
    lap = fxad.vmap(lambda x: fnp.trace(fxad.hessian(u)(x)))
    got, want, low = run_both(lap, _R.normal(size=(3, 4)), expect_compiled=False)
    assert_same(got, want)
    assert not any("dot_general" in f for f in low.fallbacks), low.as_text()


@pytest.mark.parametrize("name,f,args", NOT_COMPILED, ids=[r[0] for r in NOT_COMPILED])
def test_equations_without_a_compiled_lowering_run_on_numpy(name, f, args):
    got, want, low = run_both(f, *args, expect_compiled=False)
    assert_same(got, want)
    assert low.fallbacks


def _compiled_primitives(low):
    seen = set()
    for seg in low.compiled.segments:
        seen.update(part.split(" = ")[1].split("[")[0].split(" ")[0] for part in seg.split("; "))
    return seen


def _table_compiled():
    seen = set()
    for name, f, args in PROGRAMS:
        with np.errstate(all="ignore"):
            seen |= _compiled_primitives(fxad.jit(f, backend="numba").lower(*args))
    return seen


def _rule_rows_for(names):
    """For each primitive in `names`, the first row of the rule tables (tests/rules/...,
    found as test_coverage finds them) that binds it: the families added after this table
    was written are checked through their own rows."""
    from tests.rules.common import primitives_used
    from tests.rules.test_coverage import TABLES
    rows, left = {}, set(names)
    for mod in TABLES.values():
        for row in mod.TABLE:
            if not left:
                return rows
            try:
                used = primitives_used(row.fn, row.shapes, row) & left
            except Exception:  # noqa: BLE001  (a row that needs other arguments to stage)
                continue
            for p in used:
                rows[p] = row
            left -= used
    return rows


def test_every_numba_lowering_compiles_in_a_row_and_matches_numpy_bit_for_bit():
    """Each primitive with a numba lowering compiles in some row of PROGRAMS or, failing that,
    in a row of the rule tables, run here on both backends (on the row's own arguments)."""
    seen = _table_compiled()
    nested = {"scan", "while_loop", "cond"}  # their bodies' primitives are listed inside
    assert nested <= seen
    have = {p.name for p in core.primitives() if "numba" in p.lowerings}
    rows = _rule_rows_for(have - seen - nested - {"jit"})
    for prim, row in sorted(rows.items()):
        args = row.args()
        got, want, low = run_both(row.fn, *args, expect_compiled=False)
        assert_same(got, want)
        seen |= _compiled_primitives(low)
    assert have - seen - {"jit"} <= nested, sorted(have - seen)


# --- fusion -------------------------------------------------------------------------------------

def test_an_arithmetic_chain_is_one_loop_with_no_temporaries():
    x = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    y = np.linspace(0.5, 2.0, 4)

    def f(x, y):
        return ((x * y + 1.0) / (x - 3.0) - x * y * y) * 0.5

    got, want, low = run_both(f, x, y)
    assert_same(got, want)
    src = low.compiled.numba_source
    assert src.count("_np.empty(") == 1  # the result only
    assert src.count("for _i0 in range(") == 1


@pytest.mark.parametrize("f, args, view", [
    (lambda x: fnp.broadcast_to(fnp.sin(x)[:, :1], (4, 5)) * x - 1.0, (_A,), False),
    (lambda x: fnp.broadcast_to(fnp.sum(x, axis=1), (3, 4)) + x[0, :4], (_A,), False),
    (lambda x, y: fnp.broadcast_to(fnp.sin(x)[:, :1], (4, 5)) @ y, (_A, _B), True),
    (lambda x: fnp.broadcast_to(fnp.sin(x)[:1], (3, 5)), (_A,), True),
])
def test_a_broadcast_read_only_elementwise_is_read_by_index_not_as_a_view(f, args, view):
    got, want, low = run_both(f, *args)
    assert_same(got, want)
    assert ("as_strided(" in low.compiled.numba_source) == view


def test_control_flow_programs_compile_whole_one_after_another():
    """cond's and scan's lowerings stage their bodies for the occasion, and drop them: the
    prober's memo (keyed by equation id) must keep what it answered for, or a later equation
    that reuses an id gets a dropped one's answer (it did: "declined after probing", the
    whole program left on NumPy with a warning, in about one program in twenty here)."""
    import warnings

    from fxad.errors import CompilationWarning
    from tests.test_control_flow import NOT_WHILE, all_argnums, case, scalarize
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompilationWarning)
        for name in NOT_WHILE:
            cf, py, args, batches = case(name)
            nums = all_argnums(args)
            g = fxad.jit(fxad.grad(scalarize(cf), argnums=nums), backend="numba")
            want = fxad.grad(scalarize(py), argnums=nums)(*args)
            for got, w in zip(g(*args), want):
                np.testing.assert_allclose(got, w, rtol=1e-10, atol=1e-12)


def test_a_chain_through_transcendental_functions_has_no_full_size_temporary():
    x = np.linspace(-3.0, 3.0, 3000).reshape(60, 50)

    def f(x):
        return fnp.tanh(x * 2.0 + 1.0) * fnp.exp(-x) - fnp.sin(x) ** 2

    got, want, low = run_both(f, x)
    assert_same(got, want)
    src = low.compiled.numba_source
    assert src.count("_np.empty((60, 50)") == 1  # the result; the rest are tile buffers
    assert src.count("_loop1(") == 3  # tanh, exp, sin: NumPy's own loops


def test_runtime_helpers_compile_once_per_array_types_not_per_shape():
    """Integers passed to runtime's helpers (loop indices, dimensions, run lengths, counters)
    are typed plain intp, never as literal values: a new shape reuses the helpers' machine
    code instead of compiling a matmul, a loop caller and a pairwise sum of its own."""
    from numba import types

    from fxad.ir.numba_backend import runtime
    helpers = [runtime.matmul, runtime.loop1, runtime.loop2, runtime.pairwise_sum,
               runtime._pairwise_block]

    c = 1.0 + (os.getpid() % 997) / 1024.0  # segments not in the disk cache: they compile

    def f(w, x):
        h = fnp.tanh(x @ w) * fnp.exp(x @ w + c)
        return fnp.sum(h, axis=1) + fnp.sum(fnp.arctan2(h, h + 1.0), axis=1)

    counts = []
    for m, n, p in [(3, 4, 5), (7, 6, 9), (2, 11, 13)]:
        r = np.random.default_rng(m)
        w, x = r.standard_normal((n, p)), r.standard_normal((m, n))
        got, want, low = run_both(f, w, x)
        assert_same(got, want)
        counts.append([len(h.signatures) for h in helpers])
        for h in helpers:
            for sig in h.signatures:
                assert not any(isinstance(t, types.Literal) for t in sig), (h, sig)
    assert all(c > 0 for c in counts[0][:4]), counts  # the program calls these helpers
    assert counts[0] == counts[1] == counts[2]


@pytest.mark.parametrize("axes", [(1, 3), (0, 2), (0, 1, 3), (2,)])
def test_a_reduction_regroups_its_kept_axes_without_np_transpose(axes):
    # Numba takes seconds to compile np.transpose with an axes tuple: a copy loop, or
    # nothing when the kept axes are in order already
    x = np.linspace(-2.0, 2.0, 360, dtype=np.float32).reshape(3, 4, 5, 6) ** 3
    got, want, low = run_both(lambda v: fnp.sum(v * 1.5, axis=axes), x)
    assert_same(got, want)
    assert "_np.transpose(" not in low.compiled.numba_source


def test_a_groups_tile_buffers_of_one_dtype_share_one_allocation():
    """Tile buffers are slices of one array per dtype (a scalar chain's hundred buffers
    were a hundred allocations per call); the values stay NumPy's, bit for bit, for a scalar,
    a shape of several tiles, and buffers of two dtypes in one group."""
    def chain(x):
        for _ in range(6):
            x = fnp.sin(x) * 1.01 + 0.1 * fnp.cos(x)
        return x

    def mixed(x):
        y = fnp.exp(x.astype(np.float32) * np.float32(0.5))
        return fnp.tanh(x) * y + fnp.sin(y.astype(np.float64) - x)
    for f, x in ((chain, 0.3), (chain, np.float64(0.3)), (chain, np.linspace(-2.0, 2.0, 1300)),
                 (fxad.grad(chain), 0.3), (mixed, np.linspace(-3.0, 3.0, 1100)),
                 (mixed, np.linspace(-3.0, 3.0, 12).reshape(3, 4))):
        got, want, low = run_both(f, x)
        assert_same(got, want)
        src = low.compiled.numba_source
        assert src.count("_np.empty(") <= 4, src  # _w, one tile arena per dtype, the result


@pytest.mark.parametrize("const", [np.float64(1.25), np.float32(1.25), np.int64(3),
                                   np.int32(3), np.complex128(0.5 - 1j), np.bool_(True),
                                   np.array(1.25), np.array(1.25, np.float32)],
                         ids=lambda c: f"{type(c).__name__}-{np.result_type(c)}")
def test_scalar_constants_passed_to_a_segment_keep_their_dtype(const):
    """0-d constants of the dtypes Numba types like Python numbers reach segments as Python
    numbers (its dispatcher reads those faster); others as they are: either way the
    segment computes in the constant's dtype, as the NumPy backend does."""
    for x in (np.linspace(-1.0, 1.0, 5), np.linspace(-1.0, 1.0, 5).astype(np.float32)):
        f = lambda v: fnp.tanh(v) * const + fnp.sin(v) * const
        got, want, _ = run_both(f, x)
        assert_same(got, want)
        assert_same(got, f(x))


# --- segments around equations without a compiled lowering -------------------------------------

def test_a_primitive_without_numba_lowering_splits_the_program_into_segments():
    cumsum = next(p for p in core.primitives() if p.name == "cumsum")
    assert "numba" not in cumsum.lowerings  # (if it gets one, pick another primitive here)
    x = np.linspace(0.1, 2.0, 7)

    def f(x):
        y = fnp.sin(x) * 2.0
        return fnp.exp(fnp.cumsum(y) * 0.5) + y

    got, want, low = run_both(f, x, expect_compiled=False)
    assert_same(got, want)
    assert len(low.segments) == 2 and len(low.fallbacks) == 1
    assert "cumsum" in low.fallbacks[0] and "on NumPy" in low.as_text()


def test_a_loop_whose_body_does_not_compile_runs_on_numpy_between_segments():
    xs = np.linspace(0.1, 2.0, 12).reshape(4, 3)

    def f(xs):
        c, ys = lax.scan(lambda c, x: (c + fnp.cumsum(c * x), c * 2.0), fnp.ones(3),
                         fnp.exp(xs))
        return fnp.sum(ys) + fnp.sin(c)

    got, want, low = run_both(f, xs, expect_compiled=False)
    assert_same(got, want)
    assert any(f_.split(" = ")[1].startswith("scan") for f_ in low.fallbacks)
    assert low.segments


def test_nothing_compiles_still_runs():
    got, want, low = run_both(lambda x: fnp.cumsum(x), np.arange(4.0), expect_compiled=False)
    assert_same(got, want)
    assert not low.segments and low.compiled.numba_source is None


# --- layouts, aliasing, threads, debugging -----------------------------------------------------

def test_non_contiguous_and_readonly_inputs():
    base = _R.normal(size=(6, 8))
    ro = base.copy()
    ro.flags.writeable = False
    f = fxad.jit(lambda a, b: fnp.tanh(a @ b) + fnp.sum(a, axis=0), backend="numba")
    ref = fxad.jit(lambda a, b: fnp.tanh(a @ b) + fnp.sum(a, axis=0), backend="numpy")
    for a in (base[:, :6].T.copy(), base[::1, :6].T, ro[:, :6].T, np.broadcast_to(base[0, :6], (6, 6))):
        b = base[:, 1:7][:6]
        assert_same(f(a, b), ref(a, b))


def test_results_alias_nothing_fxad_keeps_or_the_inputs():
    c = np.arange(3.0)
    x = np.arange(6.0).reshape(2, 3)
    for f in (lambda x: x, lambda x: x.T, lambda x: fnp.reshape(x, (6,)),
              lambda x: fxad.stop_gradient(x), lambda x: (x[0], c)):
        out = fxad.jit(f, backend="numba")(x)
        for o in tree_flatten(out)[0]:
            assert not np.shares_memory(o, x) and not np.shares_memory(o, c)
            assert o.flags.writeable


def test_threads_share_one_compiled_program():
    f = fxad.jit(lambda x: fnp.sum(fnp.exp(x) * x), backend="numba")
    x = np.linspace(0.0, 1.0, 50)
    want = fxad.jit(lambda x: fnp.sum(fnp.exp(x) * x))(x)
    got = []
    ts = [threading.Thread(target=lambda: got.append(f(x))) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(got) == 4 and all(g == want for g in got)


def test_threads_loading_one_module_see_it_executed():
    """A thread that asks for a generated module while another is executing it waits for
    it, rather than getting the registered but still empty module (a NumPy fallback with
    "no attribute _seg0" before)."""
    from fxad.ir.numba_backend import cache
    source = f"import time\ntime.sleep(0.3)\nDONE = {os.getpid()}{threading.get_ident()}\n"
    cache.source_key("")  # (imports Numba now, not in the threads)
    got = []
    ts = [threading.Thread(target=lambda: got.append(hasattr(cache.load_module(source), "DONE")))
          for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert got == [True, True, True]


def test_debug_nans_names_the_primitive_on_the_numba_backend():
    f = fxad.jit(lambda x: fnp.log(x) * 2.0, backend="numba")
    f(np.array([1.0, 2.0]))
    with pytest.raises(FloatingPointError, match="'log'"):
        with fxad.debug_nans():
            f(np.array([-1.0, 2.0]))


# --- the Lowered view, compile reporting ---------------------------------------------------------

def test_lower_shows_what_was_compiled_and_its_compile_time(capsys):
    x = np.linspace(0.0, 1.0, 5)
    low = fxad.jit(lambda x: fnp.cumsum(fnp.sin(x)) * 2.0, backend="numba").lower(x)
    text = low.as_text()
    assert "@_nb.njit" in text and "def _seg0(" in text and "cumsum" in text
    assert low.compile_seconds is None or low.compile_seconds > 0
    old = fxad.config.log_compiles
    fxad.config.log_compiles = True
    try:
        low2 = fxad.jit(lambda x: fnp.cos(x) * 3.5, backend="numba").lower(x).compile()
    finally:
        fxad.config.log_compiles = old
    assert low2.compile_seconds > 0
    assert "fxad: jit(numba)" in capsys.readouterr().err
    assert fxad.jit(lambda x: x + 1.0).lower(x).compile_seconds == 0.0


# --- switches and the fallback when Numba is missing ----------------------------------------------

def test_config_switch_and_bad_backend_names():
    x = np.linspace(0.0, 1.0, 4)
    f = fxad.jit(lambda x: fnp.sin(x) + 1.0)
    assert fxad.config.jit_backend == "numpy"
    fxad.config.jit_backend = "numba"
    try:
        got = f(x)
        assert f.lower(x).backend == "numba" and f.lower(x).segments
    finally:
        fxad.config.jit_backend = "numpy"
    assert f.lower(x).backend == "numpy"
    assert_same(got, f(x))
    with pytest.raises(FxadValueError, match="unknown backend"):
        fxad.jit(f, backend="xla")
    with pytest.raises(FxadValueError, match="jit_backend"):
        fxad.config.jit_backend = "cuda"


def test_without_numba_the_numpy_backend_runs_with_one_warning(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` now fails
    monkeypatch.setattr(numba_backend, "_state", {})
    monkeypatch.setattr(sys.modules["fxad.jit"], "_warned", threading.Event())
    x = np.linspace(0.0, 1.0, 4)
    f = fxad.jit(lambda x: fnp.exp(x) * 2.0, backend="numba")
    with pytest.warns(CompilationWarning, match="compile"):
        got = f(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = fxad.jit(lambda x: fnp.tanh(x), backend="numba")(x)  # no second warning
    assert_same(got, fxad.jit(lambda x: fnp.exp(x) * 2.0)(x))
    assert_same(again, np.tanh(x))
    assert f.lower(x).backend == "numpy"
    assert sys.modules["fxad.jit"].resolve_backend("numba") == "numpy"


def _python(code, env):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_the_disk_cache_serves_a_fresh_process(tmp_path):
    env = dict(os.environ, FXAD_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    code = """
        import numpy as np, fxad, fxad.numpy as fnp
        f = fxad.jit(fxad.grad(lambda w, x: fnp.sum(fnp.tanh(x @ w) ** 2)), backend="numba")
        w, x = np.linspace(-1, 1, 12).reshape(4, 3), np.linspace(0, 1, 8).reshape(2, 4)
        low = f.lower(w, x).compile()
        print([how for _, _, how in low.compiled.report.entries], repr(f(w, x).sum()))
    """
    first, second = _python(code, env), _python(code, env)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.split()[0] == "['compiled']" and second.stdout.split()[0] == \
        "['disk", second.stdout
    assert first.stdout.split()[-1] == second.stdout.split()[-1]
    assert any(p.name.endswith(".py") for p in (tmp_path / "numba").iterdir())


def test_environment_variable_sets_the_default_backend(tmp_path):
    env = dict(os.environ, FXAD_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT,
               FXAD_JIT_BACKEND="numba")
    out = _python("""
        import numpy as np, fxad
        f = fxad.jit(lambda x: x * 2.0)
        print(fxad.config.jit_backend, f.lower(np.ones(2)).backend)
    """, env)
    assert out.stdout.split() == ["numba", "numba"], out.stderr
    bad = _python("import fxad", dict(env, FXAD_JIT_BACKEND="fast"))
    assert bad.returncode != 0 and "FXAD_JIT_BACKEND" in bad.stderr


# --- the fuzzer's jit checks on this backend -------------------------------------------------------

def test_fuzzer_jit_checks_on_the_numba_backend():
    """The fuzzer's first programs (16; CI's two runs take fewer, FXAD_NUMBA_FUZZ_PROGRAMS,
    as each costs seconds of Numba compiling) with jit's checks on this backend."""
    from tests.audits import fuzz
    n = int(os.environ.get("FXAD_NUMBA_FUZZ_PROGRAMS", "16"))
    assert n > 0
    fxad.config.jit_backend = "numba"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompilationWarning)
            fuzz.run_fuzz(n, props=["jit", "jit_grad", "dtypes"], skip_known=True)
    finally:
        fxad.config.jit_backend = "numpy"


def test_an_effect_without_outputs_runs_on_numpy_between_segments():
    # debug.callback is an equation with no outputs; the driver emitted "    = f(x)" for it
    # (found by the fuzzer on this backend)
    seen = []
    f = lambda x: (fxad.debug.callback(lambda v: seen.append(float(v.sum())), x),  # noqa: E731
                   fnp.sin(x) * 2.0)[1]
    got, want, low = run_both(f, np.ones(3), expect_compiled=False)
    assert_same(got, want)
    assert seen == [3.0, 3.0] and low.fallbacks


def test_a_very_long_program_runs_on_the_numpy_backend(monkeypatch):
    # an unrolled Python loop of thousands of equations would take Numba minutes to compile
    monkeypatch.setattr(numba_backend, "MAX_EQUATIONS", 10)

    def f(x):
        for _ in range(12):
            x = fnp.sin(x) * 1.01
        return x
    x = np.linspace(-1.0, 1.0, 5)
    low = fxad.jit(f, backend="numba").lower(x)
    assert not low.segments  # nothing compiled
    assert_same(fxad.jit(f, backend="numba")(x), fxad.jit(f)(x))

"""Plain NumPy under fxad's transformations (issue 7): the rule tables' functions (tests/rules/
and the fxad.numpy tables of tests/numpy/), rewritten with `import numpy as np` instead of
`fxad.numpy`, differentiate through NumPy's dispatch protocols (__array_ufunc__ for ufuncs,
__array_function__ for the rest) and agree with the fxad.numpy versions; and functions written
by hand in plain NumPy (PLAIN, PLAIN_MORE) under grad, jit and vmap.

Table-driven and mechanical, so a new table row is covered (or must be listed below) without
writing it twice:
  - a row whose function IS an fxad.numpy function (fnp.sin) becomes the NumPy function of
    the same name (np.sin);
  - a row whose function is a lambda calling fxad.numpy (fnp.sum(x, axis=1) ** 2) is
    re-created with `fnp` bound to NumPy in its globals: literally the same code, run on
    NumPy's names.
Each converted row is checked for: eager values (NumPy itself) against fxad.numpy, jvp,
vjp and grad against the fxad.numpy version, check_grads to order 1, vmap and jit.
"""
import types
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import assume as hyp_assume

import fxad
import fxad.numpy as fnp
from fxad.test_util import check_grads

from ..rules.common import NUMPY_2_1, XP, arrays_for
from ..rules.contraction import test_dot
from ..rules.elementwise import test_arithmetic, test_piecewise, test_transcendental
from ..rules.reduction import test_cumulative, test_reduce
from ..rules.structural import test_indexing, test_shape, test_sorting
from . import (test_creation, test_linalg, test_manipulation, test_products, test_reductions as
               test_numpy_reductions, test_series, test_statistics, test_ufuncs)

# Rows that cannot go through NumPy's protocols, and why. Checked to be exactly the rows the
# conversion below skips, so the list stays true as the tables grow.
LAX_ONLY = {  # they call fxad.lax (or are lax functions): there is no NumPy function to call
    "rsqrt": "lax.rsqrt: NumPy has no rsqrt (1/np.sqrt would be a different function)",
    "logistic": "lax.logistic: NumPy has no sigmoid (scipy.special.expit is SciPy's, "
                "not NumPy's)",
    "convert_element_type": "lax.convert_element_type; the NumPy spelling is the "
                            ".astype method, already the same code on a tracer",
    "complex": "lax.complex(x, y) has no NumPy function (np.real/imag/conj do, but the row "
               "builds its complex values with lax.complex)",
    "integer_pow_4": "lax.integer_pow: NumPy's spelling is x ** 4, an operator",
    "pow_lax": "lax.pow, whose NumPy spelling is np.power (the 'pow' row)",
    "cummax": "lax.cummax: NumPy has no running max (np.maximum.accumulate is a ufunc method)",
    "cummin-reverse": "lax.cummin with reverse=: NumPy has no running min",
    "cumlogsumexp": "lax.cumlogsumexp: NumPy has no running logsumexp",
    "cumlogsumexp-reverse": "lax.cumlogsumexp with reverse=",
    "sort-two-keys": "lax.sort with num_keys=: np.lexsort's order differs",
    "sort_key_val": "lax.sort_key_val: NumPy has no sort of values by keys",
    "top_k": "lax.top_k: NumPy has no top_k",
    "top_k-axis": "lax.top_k with axis=",
    "dg-batched-3d-ab": "lax.dot_general with a leading batch dim and a rank-3 operand: "
                        "NumPy has no batched tensordot (np.einsum routes it its own way)",
    "dg-batched-3d-abT": "lax.dot_general, as dg-batched-3d-ab, the rhs contracted on its "
                         "last dim",
    "dg-3d-aTb": "lax.dot_general with the lhs's contracted dims leading it (np.tensordot "
                 "would be the NumPy spelling; the row exercises lax's own layout path)",
    "dg-3d-aTb-rhs-T": "lax.dot_general, as dg-3d-aTb, the rhs contracted on its last dim",
    "dg-batched-aTb": "lax.dot_general with a batch dim and the contracted dim leading the "
                      "rest: NumPy has no batched tensordot",
    "dg-lead-and-trail-mixed": "lax.dot_general with contracted dims neither leading nor "
                               "trailing (the tensordot path inside lax)",
}
OPERATORS_ONLY = {  # no NumPy function in them: operators and methods on the tracer, which
    # are the same code whichever module is imported (covered by the tables themselves)
    "integer_pow_3", "integer_pow_-2", "integer_pow_0", "comparisons", "reshape-1", "T",
    "getitem-int", "getitem-slice", "getitem-negstep", "getitem-none-ellipsis",
    "getitem-array", "getitem-array-2d", "getitem-mixed-adjacent", "getitem-non-adjacent",
    "getitem-bool-mask", "@",
    "add_any",  # the backward pass's cotangent sum: fxad's own primitive, no NumPy function
    "logsumexp",  # fxad.nn.logsumexp (scipy.special's is SciPy's, not NumPy's)
    "scipy_norm",  # scipy.linalg.norm (SciPy's, not NumPy's)
}


def _fnp_names(fn):
    """The fxad.numpy names bound to exactly this object that NumPy also has."""
    return [n for n in dir(fnp) if not n.startswith("_") and getattr(fnp, n) is fn
            and callable(getattr(np, n, None))]


def to_numpy(name, fn):
    """(kind, the NumPy version or None): kind is 'direct', 'rewrite', 'lax' or 'operators'."""
    names = _fnp_names(fn)
    if names:  # prefer the row's own name (fnp.abs, not fnp.fabs, for row "abs")
        return "direct", getattr(np, name if name in names else names[0])
    code = getattr(fn, "__code__", None)
    if code is None or "lax" in code.co_names or fn.__module__.startswith("fxad."):
        return "lax", None
    if "fnp" not in code.co_names:
        return "operators", None
    glb = dict(fn.__globals__, fnp=np)
    return "rewrite", types.FunctionType(code, glb, fn.__name__, fn.__defaults__,
                                         fn.__closure__)


TABLES = [test_arithmetic, test_transcendental, test_piecewise, test_reduce, test_shape,
          test_indexing, test_sorting, test_dot, test_cumulative, test_ufuncs,
          test_numpy_reductions, test_statistics, test_series, test_manipulation, test_linalg,
          test_products, test_creation]
# (table, name, fn, shapes, domains, unique, assume) of every row with derivatives to check
ROWS = [(m.__name__.rsplit(".test_", 1)[1], r.name, r.fn, r.shapes, r.domains, r.unique,
         r.assume) for m in TABLES for r in m.TABLE if r.grad]

CONVERTED = [r for r in ROWS if to_numpy(r[1], r[2])[0] in ("direct", "rewrite")]


def _id(row):
    return f"{row[0]}-{row[1]}-{'x'.join(map(str, row[3]))}"


def test_every_row_is_converted_or_listed_with_a_reason():
    skipped = {}
    for table, name, fn, *_ in ROWS:
        kind, _ = to_numpy(name, fn)
        if kind not in ("direct", "rewrite"):
            skipped[name] = kind
    assert {n for n, k in skipped.items() if k == "lax"} == set(LAX_ONLY), skipped
    assert {n for n, k in skipped.items() if k == "operators"} == OPERATORS_ONLY, skipped
    assert len({r[1] for r in CONVERTED}) >= 150  # the bulk of the tables goes through NumPy


def test_rewritten_functions_really_call_numpy():
    """The rewrite must have changed the function: called on arrays, it runs NumPy alone
    (no fxad primitive is bound; fxad.numpy would bind them)."""
    from fxad.core import Primitive
    calls = []
    orig = Primitive.bind

    def spy(self, *a, **k):
        calls.append(self.name)
        return orig(self, *a, **k)
    rng = np.random.default_rng(0)
    fxad_binds = 0
    for table, name, fn, shapes, *_ in CONVERTED:
        _, np_fn = to_numpy(name, fn)
        args = [rng.uniform(0.5, 1.5, s) for s in shapes]
        Primitive.bind = spy
        try:
            with np.errstate(all="ignore"):  # values outside some rows' domains: irrelevant
                np_fn(*args)
                assert not calls, (name, calls)
                fn(*args)  # the control: the fxad.numpy version binds primitives
                fxad_binds += bool(calls)
        finally:
            Primitive.bind = orig
            calls.clear()
    # (a few fxad.numpy functions, e.g. split, use NumPy directly on plain arrays)
    assert fxad_binds >= 0.9 * len(CONVERTED), (fxad_binds, len(CONVERTED))


def _as_arrays(tree):
    return [np.asarray(x) for x in fxad.tree_util.tree_leaves(tree)]


def _same(got, want, what, rtol=1e-12, atol=1e-12):
    got, want = _as_arrays(got), _as_arrays(want)
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        assert g.shape == w.shape, (what, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=what)


def _check_row(fn, np_fn, args, rng):
    args = tuple(args)
    # eager: NumPy runs itself; fxad.numpy must agree with it
    _same(np_fn(*args), fn(*args), "eager value", rtol=1e-10)
    tangents = tuple(rng.standard_normal(np.shape(a)) for a in args)
    (y_np, t_np), (y, t) = fxad.jvp(np_fn, args, tangents), fxad.jvp(fn, args, tangents)
    for v in _as_arrays((y_np, t_np)):
        assert type(v) is np.ndarray  # plain arrays out, never tracers
    _same(y_np, y, "jvp primal")
    _same(t_np, t, "jvp tangent")
    ct = rng.standard_normal(np.shape(y))
    _same(fxad.vjp(np_fn, *args)[1](ct), fxad.vjp(fn, *args)[1](ct), "vjp")
    argnums = tuple(range(len(args)))
    g_np = fxad.grad(lambda *a: np.sum(np_fn(*a) * ct), argnums=argnums)(*args)
    _same(g_np, fxad.grad(lambda *a: fnp.sum(fn(*a) * ct), argnums=argnums)(*args), "grad")
    check_grads(np_fn, args, order=1)


@pytest.mark.parametrize("row", CONVERTED, ids=[_id(r) for r in CONVERTED])
def test_numpy_version_under_jvp_vjp_grad(row):
    table, name, fn, shapes, elements, unique, assume = row
    _, np_fn = to_numpy(name, fn)
    rng = np.random.default_rng(zlib.crc32(_id(row).encode()))  # per row, every run

    @settings(max_examples=2, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(arrays_for(shapes, elements, unique))
    def check(args):
        if assume is not None:
            hyp_assume(assume(*args))
        _check_row(fn, np_fn, args, rng)
    check()


# one shape per row name for the batched and compiled checks (they do not depend on it)
_FIRST = {}
for _r in CONVERTED:
    _FIRST.setdefault((_r[0], _r[1]), _r)
ONE_PER_NAME = list(_FIRST.values())

@pytest.mark.parametrize("row", ONE_PER_NAME, ids=[_id(r) for r in ONE_PER_NAME])
def test_numpy_version_under_vmap_and_jit(row):
    table, name, fn, shapes, elements, unique, assume = row
    _, np_fn = to_numpy(name, fn)

    @settings(max_examples=1, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(arrays_for([(2,) + tuple(s) for s in shapes], elements, unique))
    def check(batch):
        if assume is not None:
            hyp_assume(all(assume(*[b[i] for b in batch]) for i in range(2)))
        _same(fxad.vmap(np_fn)(*batch), fxad.vmap(fn)(*batch), "vmap")
        args = [b[0] for b in batch]
        _same(fxad.jit(np_fn)(*args), fn(*args), "jit", rtol=1e-10)
        nums = tuple(range(len(args)))
        _same(fxad.jit(fxad.grad(lambda *a: np.sum(np_fn(*a)), argnums=nums))(*args),
              fxad.grad(lambda *a: fnp.sum(fn(*a)), argnums=nums)(*args), "jit(grad)",
              rtol=1e-10)
    check()



# --- plain NumPy code, written by hand -----------------------------------------------------------

# The same functions written against plain NumPy: fxad differentiates them unchanged through
# __array_ufunc__ / __array_function__, jitted and batched.
PLAIN = [
    ("sin*exp", lambda x: np.sum(np.sin(x) * np.exp(x))),
    ("logaddexp", lambda x: np.sum(np.logaddexp(x, 2 * x))),
    ("cumsum", lambda x: np.sum(np.cumsum(x) ** 2)),
    ("sort", lambda x: np.sum(np.sort(x) * np.arange(4.0))),
    ("dot/matmul", lambda x: np.dot(x, x) + np.matmul(x, x)),
    ("reshape/transpose", lambda x: np.sum(np.transpose(np.reshape(x, (2, 2))) ** 3)),
    ("where/max", lambda x: np.sum(np.where(x > 0, x, 0.0)) + np.max(x)),
    ("mean/std", lambda x: np.mean(x) * np.std(x)),
    ("tanh/log1p", lambda x: np.sum(np.tanh(x) + np.log1p(x * x))),
    ("concatenate/stack", lambda x: np.sum(np.concatenate([x, x]) * np.stack([x, x]).sum(0)[0])),
    ("einsum", lambda x: np.einsum("i,i->", x, x)),
]


@pytest.mark.parametrize("name,fn", PLAIN, ids=[p[0] for p in PLAIN])
def test_plain_numpy_under_transformations(name, fn):
    x = np.array([0.3, -1.2, 0.8, 2.0])
    check_grads(fn, (x,), order=2)
    fnp_version = fxad.grad(fn)(x)
    np.testing.assert_allclose(fxad.jit(fxad.grad(fn))(x), fnp_version, rtol=1e-12)
    xs = np.stack([x, x[::-1]])
    np.testing.assert_allclose(fxad.vmap(fxad.grad(fn))(xs),
                               np.stack([fxad.grad(fn)(r) for r in xs]), rtol=1e-12)


# The second round of NumPy breadth (statistics, sequences, linear algebra, ufuncs, fft, ...),
# in plain NumPy, differentiated through dispatch, jitted and batched.
PLAIN_MORE = [
    ("median/percentile", lambda x: np.median(x) * np.percentile(x, 30) + np.quantile(x, 0.9)),
    ("nanmax/ptp", lambda x: np.nanmax(x) + np.ptp(x) * np.nanmean(x)),
    ("diff/gradient", lambda x: np.sum(np.diff(x) ** 2) + np.sum(np.gradient(x) ** 3)),
    ("trapezoid/polyval", lambda x: np.trapezoid(x ** 2) + np.sum(np.polyval(x[:2], x))),
    ("interp", lambda x: np.sum(np.interp(np.linspace(-1, 1, 5), XP, np.concatenate([x, x[:1]])))),
    ("convolve/correlate", lambda x: np.sum(np.convolve(x, x[:2]) ** 2)
     + np.sum(np.correlate(x, np.arange(3.0), "same"))),
    ("cov/corrcoef", lambda x: np.sum(np.cov(np.stack([x, x ** 2]))) + np.corrcoef(x, x ** 3)[0, 1]),
    ("pad/rot90", lambda x: np.sum(np.pad(x, 2, mode="reflect") ** 2)
     + np.sum(np.rot90(x.reshape(2, 2)) * np.arange(4.0).reshape(2, 2))),
    ("linalg", lambda x: np.sum(np.linalg.pinv(np.outer(x, x[:3]) + np.eye(4, 3)))
     + np.linalg.cond(np.outer(x, x[::-1]) + np.diag([4.0, 5.0, 6.0, 7.0]))
     + np.sum(np.linalg.matrix_power(np.outer(x, x) / 10, 3))
     + np.linalg.multi_dot([x, np.outer(x, x), x])
     + np.sum(np.linalg.lstsq(np.outer(x, x[:2]) + np.eye(4, 2), x, rcond=None)[0])),
    ("ufuncs", lambda x: np.sum(np.fmax(x, 0.1) + np.copysign(x, -1.0) + np.float_power(x * x, 1.5)
                                + np.fmod(x, 0.7071) + np.heaviside(x, 0.5) * x)),
    ("methods", lambda x: np.sum(x.repeat(2) ** 2) + x.cumsum().sum() + x.cumprod()[-1]
     + x.reshape(2, 2).trace() + x.reshape(2, 2).diagonal().sum() + x.take([0, 3]).sum()),
    ("reductions-where", lambda x: np.sum(x, where=x > 0) + np.max(x, initial=0.0)),
    ("predicates", lambda x: np.sum(x) * np.any(x > 0) * np.all(np.isfinite(x))
     + np.sum(np.where(np.isclose(x, 0.3), 0.0, x)) * np.count_nonzero(x > 0)),
    ("unique/searchsorted", lambda x: np.sum(np.unique(x) * np.searchsorted(np.sort(x), x))),
    ("numpy2-names", lambda x: np.vecdot(x, x) + np.linalg.vecdot(x, x[::-1])
     + np.sum(np.matrix_transpose(np.outer(x, x[::-1]))[0])
     + np.sum(np.astype(x, np.float64) ** 3)),
    pytest.param("numpy2.1-names", lambda x: np.sum(np.clip(x, min=0, max=1))
                 + np.sum(np.unstack(np.outer(x, x))[1]),
                 marks=pytest.mark.skipif(not NUMPY_2_1, reason="NumPy < 2.1 has neither "
                                          "np.unstack nor np.clip(min=, max=) to dispatch")),
    ("nanmedian-select", lambda x: np.nanmedian(np.where(x > 1.5, np.nan, x))
     + np.sum(np.select([x > 0, x < -1], [x, x ** 2], 0.5)) + np.sum(np.cbrt(x + 3))),
    ("ufunc-methods", lambda x: np.add.reduce(x) * np.multiply.accumulate(x)[-1]
     + np.maximum.reduce(x) + np.sum(np.add.accumulate(x) ** 2)),
    ("fft", lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2) + np.sum(np.fft.irfft(np.fft.rfft(x) * 1j))
     + np.sum(np.real(np.fft.ifft2(np.outer(x, x))) ** 2)),
]


@pytest.mark.parametrize("name,fn", PLAIN_MORE, ids=[p.values[0] if hasattr(p, "values") else p[0]
                                                    for p in PLAIN_MORE])
def test_plain_numpy_second_round_under_transformations(name, fn):
    x = np.array([0.35, -1.2, 0.8, 2.05])
    check_grads(fn, (x,), order=2)
    g = fxad.grad(fn)(x)
    if name != "unique/searchsorted":  # unique's output shape depends on values: eager only
        np.testing.assert_allclose(fxad.jit(fxad.grad(fn))(x), g, rtol=1e-12)
        xs = np.stack([x, x[::-1]])
        np.testing.assert_allclose(fxad.vmap(fxad.grad(fn))(xs),
                                   np.stack([fxad.grad(fn)(r) for r in xs]), rtol=1e-12)


def test_predicates_are_staged_under_jit():
    """any/all/isclose/count_nonzero used to need concrete values; they are primitives now."""
    f = fxad.jit(lambda x: np.where(np.any(x > 1) & np.allclose(x, x), np.sum(x), 0.0)
                 + np.count_nonzero(x))
    x = np.array([0.5, 2.0, 0.0])
    assert f(x) == 2.5 + 2
    assert f(x - 2) == 2


# Lists (and tuples) of traced values given to the NumPy functions whose dispatch looks
# inside sequences (NumPy hands the list to fxad), and the joining functions' dtype= and
# casting= keywords. Values against NumPy on the same (concrete) lists.
PLAIN_LISTS = [
    ("concatenate", lambda x: np.concatenate([x[:2], x, np.ones(2)]) ** 2),
    ("concat-casting", lambda x: np.concat((x, 2 * x), casting="no")),
    ("concatenate-dtype", lambda x: np.concatenate([x, x], axis=None, dtype=np.float32)),
    ("stack-scalars", lambda x: np.stack([x[0], x[1] * x[2], 1.0])),
    ("stack-dtype", lambda x: np.stack((x, x ** 2), axis=1, dtype=np.float64, casting="equiv")),
    ("vstack-dtype", lambda x: np.vstack([x, x * 2, np.ones(4)], dtype=np.float32)),
    ("hstack-scalars", lambda x: np.hstack([x[0], x[1], 3.0, x], casting="safe")),
    ("dstack", lambda x: np.dstack([x, x ** 2])),
    ("column_stack", lambda x: np.column_stack([x, np.sin(x)])),
    ("block", lambda x: np.block([[x[0], x[1]], [x[2], 1.0]])),
    ("select", lambda x: np.select([x > 1, x < 0], [x, x ** 2], default=0.5)),
    ("choose", lambda x: np.choose(np.array([0, 1, 0, 1]), [x, x ** 2])),
    ("piecewise", lambda x: np.piecewise(x, [x > 1], [lambda v: v ** 2, lambda v: v])),
    ("multi_dot", lambda x: np.linalg.multi_dot([x, np.outer(x, x), x])),
    ("broadcast_arrays", lambda x: np.broadcast_arrays(x, x[:1] * 2)[1]),
    ("meshgrid", lambda x: np.meshgrid(x, x[:2] ** 2)[1]),
    ("einsum-sublists", lambda x: np.einsum(x, [0], np.outer(x, x), [0, 1], [1])),
]


@pytest.mark.parametrize("name,fn", PLAIN_LISTS, ids=[p[0] for p in PLAIN_LISTS])
def test_lists_of_traced_values_are_handed_to_fxad(name, fn):
    x = np.array([0.35, -1.2, 0.8, 2.05])
    want = fn(x)  # NumPy itself, on concrete values
    got = fxad.jit(fn)(x)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype == np.float32 else 1e-14)
    f = lambda x: np.sum(fn(x) ** 2).astype(np.float64)  # noqa: E731
    if want.dtype == np.float64:
        check_grads(f, (x,), order=2)
    g = fxad.grad(f)(x)
    np.testing.assert_allclose(fxad.jit(fxad.grad(f))(x), g, rtol=1e-12)
    xs = np.stack([x, x[::-1]])
    np.testing.assert_allclose(fxad.vmap(fxad.grad(f))(xs), np.stack([fxad.grad(f)(r) for r in xs]),
                               rtol=1e-12)


def test_joining_casting_errors_are_numpys():
    x = np.ones(2)
    for fn in (lambda x: np.concatenate([x, x.astype(np.float32)], casting="no"),
               lambda x: np.vstack([x, x], dtype=np.int64),
               lambda x: np.stack([x, x], casting="bogus")):
        with pytest.raises((TypeError, ValueError)) as want:
            fn(x)
        with pytest.raises(type(want.value), match=str(want.value)[:30].replace("(", r"\(")
                           .replace(")", r"\)")):
            fxad.jit(fn)(x)


@pytest.mark.parametrize("name,fn,hint", [
    ("np.sum([a, b])", lambda w: np.sum([w[0], w[1]]), r"numpy's sum was given traced values "
     r"inside a list or tuple \(argument 'a'\).*np.stack\(a\)"),
    ("np.mean((a, b))", lambda w: np.mean((w[0], w[1])), r"numpy's mean .* np.stack\(a\)"),
    ("np.median", lambda w: np.median([w[0], w[1]]), r"numpy's median .* np.stack\(a\)"),
    ("np.r_", lambda w: np.sum(np.r_[w, 1.0]), r"np.r_\[...\] converts .* fxad.numpy.r_\[...\]"),
    ("np.c_", lambda w: np.sum(np.c_[w, w]), r"np.c_\[...\] converts .* fxad.numpy.c_\[...\]"),
    ("np.vectorize", lambda w: np.sum(np.vectorize(lambda a: a)(w)), r"vectorize.__call__ "
     r"converts its arguments.*fxad.numpy.vectorize"),
    ("np.array([a, b])", lambda w: np.sum(np.array([w[0], w[1]])), r"for traced values in a "
     r"list given to NumPy .* np.stack\(\[a, b\]\) first"),
    ("np.exp([a, b])", lambda w: np.sum(np.exp([w[0], w[1]])), r"np.stack\(\[a, b\]\) first"),
    ("np.asarray(list)", lambda w: np.sum(np.asarray([w[0], w[1]])), r"np.stack\(\[a, b\]\)"),
])
def test_what_numpy_makes_impossible_names_the_fix(name, fn, hint):
    """NumPy converts these to plain arrays before any dispatch (notes/06): a clear error
    naming the fix, under every transformation, never a value."""
    from fxad.errors import TracerArrayConversionError
    x = np.array([0.5, 1.0, 2.0])
    for t in (fxad.grad, fxad.jit, fxad.vmap):
        with pytest.raises(TracerArrayConversionError, match=hint):
            t(fn)(x if t is not fxad.vmap else np.stack([x, x]))

"""The rule tables: one row per primitive (or per use of one) drives every check of it.

A table is a module-level TABLE of `Row(name, function, argument shapes, domain, ...)`
(tests/rules/<family>/test_<file>.py, and tests/numpy/ for the fxad.numpy functions built on
the primitives). `row_tests(TABLE)` makes the module's parametrized test, which runs, per row:

  grad  check_grads to order 2 in forward and reverse mode (finite differences of fxad's own
        value and the transpose identity) on values hypothesis draws from the row's domain;
  vmap  vmap over every argument against a Python loop over the examples: batch axis first
        and last, each argument unbatched in turn, and the batch axis last in the output;
  jit   jit against eager for the value, jit of grad, grad of jit, jvp of jit, jit of vmap
        (and the Hessian through jit for one-argument rows).

tests/rules/test_coverage.py finds every TABLE (a Row is also a `(name, fn, shapes)` tuple)
and fails for a primitive no row binds, so adding a primitive means its block and its row.
`check_values_match_numpy` (below) compares a function's values, shapes and dtypes with
NumPy's on the shared arguments (V7, V3, M, ...)."""
from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fxad
from fxad.test_util import check_grads
from fxad.tree_util import tree_flatten, tree_unflatten

SHAPES_UNARY = [(), (3,), (2, 3)]
# Shapes of the value rows over NumPy's calling forms (none has a 3: B = 3 below is never
# confused with a data axis) and constant index arrays in their functions.
MAT, T3D, VEC = (4, 5), (2, 4, 5), (5,)
A = np.array
SHAPES_BINARY = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)),
                 ((), (2, 3))]


# --- domains: where a row's arguments are drawn from ------------------------------------------

class Domain:
    """Values for one argument: a hypothesis strategy (the derivative checks) and a NumPy draw
    (vmap and jit), over the same set."""

    def __init__(self, strategy, draw, dtype=np.float64):
        self.strategy, self._draw, self.dtype = strategy, draw, np.dtype(dtype)

    def draw(self, rng, shape):
        return np.asarray(self._draw(rng, shape), self.dtype)


def floats(lo, hi):
    return Domain(st.floats(lo, hi, allow_nan=False, allow_infinity=False),
                  lambda rng, s: rng.uniform(lo, hi, s))


def away_from_zero(lo, hi):
    """|x| in [lo, hi], either sign (e.g. abs, division)."""
    return Domain(st.one_of(st.floats(lo, hi), st.floats(-hi, -lo)),
                  lambda rng, s: rng.choice([-1.0, 1.0], s) * rng.uniform(lo, hi, s))


def grid(lo, hi, step=0.01):
    """Values on a grid: with unique=True they are at least `step` apart (no ties for
    max/min/argmax, whose derivatives jump at ties)."""
    k0, k1 = int(round(lo / step)), int(round(hi / step))
    return Domain(st.integers(k0, k1).map(lambda k: k * step),
                  lambda rng, s: rng.integers(k0, k1 + 1, s) * step)


def ints(lo, hi, dtype=np.int64):
    """Integers in [lo, hi) (indices, counts): no derivative."""
    return Domain(st.integers(lo, hi - 1), lambda rng, s: rng.integers(lo, hi, s), dtype)


def bools():
    return Domain(st.booleans(), lambda rng, s: rng.integers(0, 2, s).astype(bool), np.bool_)


def ties():
    """Floats in {-1, 0, 1}: comparisons and extrema see many ties (values only)."""
    return Domain(st.sampled_from([-1.0, 0.0, 1.0]),
                  lambda rng, s: rng.integers(-1, 2, s).astype(np.float64))


def _strategy(d):
    return d.strategy if isinstance(d, Domain) else d


def arrays_for(shapes, elements, unique=False):
    elements = elements if isinstance(elements, (list, tuple)) else [elements] * len(shapes)
    return st.tuples(*[hnp.arrays(e.dtype if isinstance(e, Domain) else np.float64, s,
                                  elements=_strategy(e), unique=unique)
                       for s, e in zip(shapes, elements)])


def run_row(fn, shapes, elements, order=2, assume=None, unique=False, **kw):
    @settings(max_examples=6, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(arrays_for(shapes, elements, unique))
    def check(args):
        if assume is not None:
            from hypothesis import assume as hyp_assume
            hyp_assume(assume(*args))
        check_grads(fn, args, order=order, **{"modes": ("fwd", "rev"), **kw})
    check()


# --- rows ---------------------------------------------------------------------------------------

class Row(tuple):
    """(name, fn, shapes), and how to check it.

    domain        one Domain for every argument or a list (one per argument)
    grad          False for a row with no derivative to check (integer or boolean values):
                  its value is still checked under vmap and jit
    order, unique, assume, check  passed on to the derivative check (`check`: check_grads'
                  eps, rtol, ...)
    traced_first  the first argument must be traced (it is indexed with a traced index, or a
                  method is called on it), so vmap never leaves it unbatched
    vmap, jit     False, or a string saying why the row cannot run there
    in_axes       the vmap checks' in_axes (a list of int / None / tuple); default: batch axis
                  first, last, each argument unbatched in turn, and out_axes=-1
    """

    def __new__(cls, name, fn, shapes, domain=None, *, grad=True, order=2, unique=False,
                assume=None, check=None, traced_first=False, vmap=True, jit=True, rtol=1e-12,
                atol=1e-12, in_axes=None):
        shapes = [tuple(s) for s in shapes]
        self = super().__new__(cls, (name, fn, shapes))
        domain = floats(-1.0, 1.0) if domain is None else domain
        self.domains = list(domain) if isinstance(domain, (list, tuple)) else \
            [domain] * len(shapes)
        assert len(self.domains) == len(shapes), name
        self.name, self.fn, self.shapes = name, fn, shapes
        self.grad, self.order, self.unique, self.assume = grad, order, unique, assume
        self.check = check or {}
        self.traced_first, self.vmap, self.jit = traced_first, vmap, jit
        self.rtol, self.atol, self.in_axes = rtol, atol, in_axes
        return self

    @property
    def id(self):
        return f"{self.name}-{'x'.join(str(s).replace(' ', '') for s in self.shapes)}"

    def args(self, seed=0, batch=None, axes=None):
        """Arguments drawn from the domains (distinct seeds per row); with `batch`, each
        argument has `batch` examples stacked at its axis in `axes` (None: unbatched)."""
        rng = np.random.default_rng(zlib.crc32(f"{self.id}|{seed}".encode()))
        out = []
        for i, (s, d) in enumerate(zip(self.shapes, self.domains)):
            ax = None if batch is None else (axes or [0] * len(self.shapes))[i]
            if ax is None:
                v = d.draw(rng, s)
            else:
                v = np.stack([d.draw(rng, s) for _ in range(batch)], axis=ax)
            if self.unique and d.dtype.kind == "f" and v.size > 1:
                v = v + np.arange(v.size).reshape(v.shape) * 1e-3  # (no ties)
            out.append(v)
        if self.assume is not None and batch is None and not self.assume(*out):
            return self.args(seed + 1000)
        return out


def _leaves(x):
    return [np.asarray(v) for v in tree_flatten(x)[0]]


def assert_tree_close(got, want, rtol=1e-12, atol=1e-12, what=""):
    g, w = tree_flatten(got), tree_flatten(want)
    assert g[1] == w[1], f"{what}: tree {g[1]} != {w[1]}"
    for a, b in zip(g[0], w[0]):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
        assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}"
        if np.issubdtype(b.dtype, np.inexact):
            lo = np.finfo(b.dtype).eps > 1e-10  # float32/16: summation order shows at ~1e-7
            np.testing.assert_allclose(a, b, rtol=max(rtol, 1e-5 if lo else 0),
                                       atol=max(atol, 1e-5 if lo else 0), err_msg=what,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)


def check_row_grad(row):
    run_row(row.fn, row.shapes, row.domains, order=row.order, assume=row.assume,
            unique=row.unique, **row.check)


B = 3  # examples per batch in the vmap checks


def _vmap_configs(row):
    """(in_axes, out_axes) to run: batch axis first, last, each argument unbatched in turn
    (two or more arguments), and the output's batch axis last."""
    k = len(row.shapes)
    if row.in_axes is not None:
        return [(tuple(a) if isinstance(a, tuple) else (a,) * k, 0) for a in row.in_axes]
    cfgs = [((0,) * k, 0), ((-1,) * k, 0)]
    if k >= 2:
        cfgs += [(tuple(None if j == i else 0 for j in range(k)), 0) for i in range(k)]
    cfgs.append(((0,) * k, -1))
    seen, out = set(), []
    for c in cfgs:
        if c not in seen and not (row.traced_first and c[0][0] is None):
            seen.add(c)
            out.append(c)
    return out


def check_row_vmap(row):
    """vmap(fn) against the examples run one by one and stacked (leaf by leaf) at out_axes."""
    for n, (in_axes, out_axes) in enumerate(_vmap_configs(row)):
        args = row.args(seed=100 + n, batch=B, axes=in_axes)
        per = [row.fn(*[a if ax is None else np.take(a, i, axis=ax)
                        for a, ax in zip(args, in_axes)]) for i in range(B)]
        flat = [tree_flatten(o) for o in per]
        want = tree_unflatten(flat[0][1], [np.stack([np.asarray(f[0][j]) for f in flat],
                                                    axis=out_axes)
                                           for j in range(len(flat[0][0]))])
        ia = in_axes[0] if len(in_axes) == 1 else tuple(in_axes)
        got = fxad.vmap(row.fn, in_axes=ia, out_axes=out_axes)(*args)
        for leaf in tree_flatten(got)[0]:
            assert isinstance(leaf, np.ndarray), f"vmap returned {type(leaf).__name__}"
        assert_tree_close(got, want, row.rtol, row.atol, f"vmap in_axes={in_axes} "
                                                         f"out_axes={out_axes}")
        if n == 0:
            assert_tree_close(fxad.jit(fxad.vmap(row.fn, in_axes=ia, out_axes=out_axes))(*args),
                              want, max(row.rtol, 1e-10), row.atol, "jit(vmap(f))")


def _sum_sq(fn):
    """A real scalar of the row: the sum of |f|² over all inexact output leaves."""
    import fxad.numpy as fnp

    def s(*a):
        total = 0.0
        for o in tree_flatten(fn(*a))[0]:
            if np.issubdtype(fnp.result_type(o), np.complexfloating):
                total = total + fnp.sum(fnp.real(o * fnp.conj(o)))
            elif np.issubdtype(fnp.result_type(o), np.inexact):
                total = total + fnp.sum(o ** 2)
        return total
    return s


def check_row_jit(row):
    """jit against eager: the value, and with derivatives jit(grad), grad(jit), jvp(jit) and,
    for one-argument rows, the Hessian through jit."""
    args = row.args()
    rtol, atol = max(row.rtol, 1e-10), row.atol
    with np.errstate(all="ignore"):
        want = row.fn(*args)
    assert_tree_close(fxad.jit(row.fn)(*args), want, rtol, atol, "jit(f)")
    if not row.grad:
        return
    s = _sum_sq(row.fn)
    nums = tuple(i for i, d in enumerate(row.domains) if d.dtype.kind == "f")
    if not nums:
        return
    reverse = "rev" in row.check.get("modes", ("rev",))
    if reverse:
        g = fxad.grad(s, argnums=nums)(*args)
        assert_tree_close(fxad.jit(fxad.grad(s, argnums=nums))(*args), g, rtol, atol,
                          "jit(grad)")
        assert_tree_close(fxad.grad(fxad.jit(s), argnums=nums)(*args), g, rtol, atol,
                          "grad(jit)")
    tans = [np.asarray(row.args(seed=7)[i], float) if i in nums else
            np.zeros(np.shape(a), float) for i, a in enumerate(args)]
    if len(nums) == len(args):
        want_out, want_t = fxad.jvp(row.fn, tuple(args), tuple(tans))
        out, t = fxad.jvp(fxad.jit(row.fn), tuple(args), tuple(tans))
        assert_tree_close(out, want_out, rtol, atol, "jvp(jit(f)) primal")
        assert_tree_close(t, want_t, rtol, atol, "jvp(jit(f)) tangent")
    if reverse and len(args) == 1 and row.order >= 2 and np.size(args[0]) <= 6:  # small
        assert_tree_close(fxad.hessian(fxad.jit(s))(*args), fxad.hessian(s)(*args), 1e-9,
                          1e-10, "hessian(jit(s))")


CHECKS = {"grad": check_row_grad, "vmap": check_row_vmap, "jit": check_row_jit}


def no_ties(*args):
    """Every pair of operands apart by more than 1e-3 (max/min and comparisons jump at ties)."""
    return all(bool(np.all(np.abs(np.subtract(a, b)) > 1e-3))
               for i, a in enumerate(args) for b in args[i + 1:])


def unary_rows(entries, shapes=SHAPES_UNARY, **kw):
    """Rows of (name, fn, domain) entries, one per shape of SHAPES_UNARY."""
    return [Row(n, f, [s], d, **kw) for n, f, d in entries for s in shapes]


def binary_rows(entries, shapes=SHAPES_BINARY, **kw):
    """Rows of (name, fn, domain) entries over the broadcasting pairs of SHAPES_BINARY, so
    every transpose's `unbroadcast` is exercised."""
    return [Row(n, f, list(s), d, **kw) for n, f, d in entries for s in shapes]


def row_tests(table):
    """The parametrized test of a module's TABLE: every row under every check it takes."""
    cases = []
    for row in table:
        for name in CHECKS:
            skip = row.grad is False if name == "grad" else getattr(row, name) is not True
            if not skip:
                cases.append(pytest.param(row, name, id=f"{row.id}-{name}"))

    @pytest.mark.parametrize("row,check", cases)
    def test_row(row, check):
        CHECKS[check](row)
    return test_row


def check_vmap_matches_loop(fn, shapes, rng, size=3):
    """vmap(fn) over `size` examples equals the stacked results of a Python loop."""
    args = [rng.uniform(-2, 2, (size,) + s) for s in shapes]
    got = fxad.vmap(fn)(*args)
    want = np.stack([np.asarray(fn(*[a[i] for a in args])) for i in range(size)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def primitives_used(fn, shapes, row=None):
    """Names of the primitives a row's function binds (found by staging it on the row's own
    arguments, or on 0.5 everywhere)."""
    args = row.args() if isinstance(row, Row) else [np.full(s, 0.5) for s in shapes]
    jaxpr = fxad.make_jaxpr(fn)(*args)
    return {e.primitive.name for e in jaxpr.eqns}


# --- values against NumPy: the checker and the arguments the numpy-level tables share -----------

_R = np.random.default_rng(11)
V7, V3, M = _R.standard_normal(7), _R.standard_normal(3), _R.standard_normal((3, 4, 5))
NANS = np.where(M[0] > 1, np.nan, M[0])
XP = np.array([-2.5, -1.005, 0.003, 1.373, 2.5])  # interp nodes off the value grid
MASK = np.array([[True, False, False], [False, False, True]])

# NumPy 2.1 added np.unstack and np.clip(x, min=, max=). fxad has both on every supported NumPy;
# on NumPy 2.0 the reference values come from the definitions NumPy 2.1 gives them.
NUMPY_2_1 = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


def _unstack(m, x, axis):
    if m is np and not NUMPY_2_1:
        return tuple(np.moveaxis(x, axis, 0))
    return m.unstack(x, axis=axis)


def _clip(m, x, lo, hi):
    if m is np and not NUMPY_2_1:
        return np.clip(x, lo, hi)
    return m.clip(x, min=lo, max=hi)


def _leaves(v):
    return [np.asarray(t) for t in v] if isinstance(v, (list, tuple)) else [np.asarray(v)]


def check_values_match_numpy(f, argsets, kws):
    """f(np, *args, **kw) == f(fxad.numpy, *args, **kw) for every argument tuple and keyword
    set: the same number of results, each with NumPy's shape, dtype and values."""
    import fxad.numpy as fnp
    for args in argsets:
        for k in kws:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices, x / 0
                want, got = _leaves(f(np, *args, **k)), _leaves(f(fnp, *args, **k))
            assert len(want) == len(got), (k, len(want), len(got))
            for w, g in zip(want, got):
                assert (w.shape, w.dtype) == (g.shape, g.dtype), (k, w.shape, w.dtype, g.shape,
                                                                  g.dtype)
                tol = 1e-5 if w.dtype in (np.float32, np.complex64) else 1e-12
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True,
                                           err_msg=str(k))

"""Plain NumPy under fxad's transformations (issue 7): the rule tables' functions, rewritten
with `import numpy as np` instead of `fxad.numpy`, differentiate through NumPy's dispatch
protocols (__array_ufunc__ for ufuncs, __array_function__ for the rest) and agree with the
fxad.numpy versions.

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

from ..rules import test_dot, test_elementwise, test_numpy_extra, test_reductions
from ..rules import test_structural
from ..rules.common import arrays_for, floats, grid

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
}
OPERATORS_ONLY = {  # no NumPy function in them: operators and methods on the tracer, which
    # are the same code whichever module is imported (covered by the tables themselves)
    "integer_pow_3", "integer_pow_-2", "integer_pow_0", "comparisons", "reshape-1", "T",
    "getitem-int", "getitem-slice", "getitem-negstep", "getitem-none-ellipsis",
    "getitem-array", "getitem-array-2d", "getitem-mixed-adjacent", "getitem-non-adjacent",
    "getitem-bool-mask", "@",
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


def _elementwise_rows():
    rows = []
    for n, f, el in test_elementwise.UNARY:
        rows += [("elementwise", n, f, [s], el, False, None)
                 for s in test_elementwise.SHAPES_UNARY]
    for n, f, el in test_elementwise.BINARY:
        rows += [("elementwise", n, f, list(s), el, False, test_elementwise._no_ties)
                 for s in test_elementwise.SHAPES_BINARY]
    return rows


# (table, name, fn, shapes, element strategy, unique, assume): the domains the tables use
ROWS = _elementwise_rows() + \
    [("reductions", n, f, s, grid(0.5, 2), True, None) for n, f, s in test_reductions.TABLE] + \
    [("structural", n, f, s, grid(-2, 2), True, None) for n, f, s in test_structural.TABLE] + \
    [("dot", n, f, s, floats(-2, 2), False, None) for n, f, s in test_dot.TABLE] + \
    [("numpy_extra", n, f, s, grid(-2, 2), True, None) for n, f, s in test_numpy_extra.TABLE]

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

"""Rule table: fxad.numpy.reductions beyond the reduction primitives (var / std with ddof and
keepdims, average, nansum / nanmean, where= and initial=, count_nonzero / any / all): values
against NumPy, derivatives to second order in both modes, vmap against a loop."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp

from ..rules.common import (
    M, MASK, MAT, T3D, VEC, check_values_match_numpy, floats, grid, ints, Row, row_tests, ties)


# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("counts", lambda m, x: [m.count_nonzero(x > 0, axis=0), m.any(x > 2, axis=1),
                             m.all(x > -3), m.flatnonzero(x > 0), m.argwhere(x > 1)],
     [(M[0],)], [{}]),
    ("reductions-where", lambda m, x: [
        m.sum(x, 1, where=x > 0), m.prod(x, where=x > 0, initial=2.0),
        m.max(x, 0, initial=1.5), m.min(x, 1, where=x < 0, initial=0.0),
        m.mean(x, 0, where=x > -1)], [(M[0],)], [{}]),
    # the spread of complex values is real: mean |x - mean|^2
    ("spread-complex", lambda m, z: [
        m.var(z), m.std(z, axis=0), m.var(z, axis=1, ddof=1), m.std(z, keepdims=True),
        m.var(z, where=z.real > 0), m.nanvar(z, axis=0), m.nanstd(z), m.var(z[0, 0])],
     [(M[0] + 1j * M[0][::-1],)], [{}]),
    # integer and boolean data average in float64 (not by integer division), as in NumPy
    ("average-integers", lambda m, x, w: [
        m.average(x, axis=1, weights=w), m.average(x, axis=1, weights=w, returned=True),
        m.average(x.astype(np.int8), axis=1, weights=w.astype(np.int8)),
        m.average(x > 0, axis=1, weights=w), m.average(x, axis=1, weights=w.astype(np.float32)),
        m.average(x.astype(np.float32), axis=1, weights=w), m.average(x, weights=x * 0 + 2)],
     [(np.array([[1, 5, -3, 2], [4, 0, 2, 7]]), np.array([1, 2, 3, 4]))], [{}]),
    # integers and booleans have no NaNs: the NaN-ignoring reductions are the plain ones, in
    # NumPy's dtypes (not float64: 2**60 + 1 kept exactly)
    ("nan-reductions-integers", lambda m, x: [
        f(y, **kw) for y in (x, x.astype(np.int8), x > 1) for kw in ({}, {"axis": 1})
        for f in (m.nansum, m.nanmean, m.nanmax, m.nanmin, m.nanprod, m.nancumsum,
                  m.nancumprod, m.nanargmax, m.nanargmin, m.nanvar)] + [m.nansum(x * 2**58 + 1)],
     [(np.array([[1, 5, -3, 2], [4, 0, 2, 7]]),)], [{}]),
    # initial= is cast to the reduction's dtype, as NumPy casts it
    ("initial-cast", lambda m, x: [
        f(y, initial=i) for y in (x, x.astype(np.float32), x > 1) for f in (m.sum, m.prod, m.max)
        for i in (0.5, np.float64(2.5))] + [m.min(x, where=x != 2, initial=2.5)],
     [(np.array([[1, 5, -3, 2], [4, 0, 2, 7]]),)], [{}]),
    # dtype= gives that dtype (integers wrap around as NumPy's arithmetic does)
    ("dtype-argument", lambda m, x, **k: [
        f(y, **k, dtype=dt) for y in (x, x.astype(np.int64) * 40)
        for f in (m.sum, m.prod, m.cumsum, m.cumprod, m.mean, m.nansum, m.nancumsum)
        for dt in (np.int8, np.int32, np.float32)] + [
        f(x, **k, dtype=np.float32) for f in (m.var, m.std, m.nanvar, m.nanstd, m.nanmean)],
     [(M[0],)], [{}, {"axis": 1}]),
]


def test_spread_of_complex_values_has_the_right_derivatives():
    from fxad.test_util import check_grads
    z = M[0] + 1j * M[0][::-1]
    check_grads(lambda z: fnp.var(z, axis=0), (z,), order=2)
    check_grads(lambda z: fnp.std(z, axis=1, ddof=1), (z,), order=2)


@pytest.mark.parametrize("std", [fnp.std, fnp.nanstd])
def test_spread_of_one_value_has_derivative_zero(std):
    """std over one value is 0 whatever the value: its derivative is 0 (not 0 / sqrt(0)),
    in every mode; over more values it is the usual one."""
    import fxad
    from fxad.test_util import check_grads
    row = np.array([[0.5, -1.0, 2.0]])
    assert fxad.grad(std)(3.5) == 0.0
    assert fxad.jit(fxad.grad(std))(3.5) == 0.0
    np.testing.assert_array_equal(fxad.jvp(lambda x: std(x, axis=0), (row,), (row,))[1], 0.0)
    np.testing.assert_array_equal(fxad.vmap(fxad.grad(std))(row[0]), 0.0)
    check_grads(lambda x: std(x, axis=0), (row,), order=2)
    check_grads(lambda x: std(x, axis=1), (row,), order=2)


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


# (flatnonzero / argwhere have value-dependent shapes: not under jit)
@pytest.mark.parametrize("name,f,argsets,kws", VALUES[1:], ids=[v[0] for v in VALUES[1:]])
def test_values_match_numpy_under_jit(name, f, argsets, kws):
    import fxad
    for args in argsets:
        check_values_match_numpy(
            lambda m, *a, **k: fxad.jit(lambda *t: f(m, *t, **k))(*a) if m is fnp else f(m, *a, **k),
            [args], kws)


TABLE = [
    Row("var-ddof", lambda x: fnp.var(x, axis=0, ddof=1), [(3, 2)], grid(-2, 2), unique=True),
    Row("std-keepdims", lambda x: fnp.std(x, axis=1, keepdims=True), [(2, 3)], grid(-2, 2), unique=True),
    Row("average", lambda x, w: fnp.average(x, axis=1, weights=w * w + 1.0), [(2, 3), (3,)],
        grid(-2, 2), unique=True),
    Row("nansum", lambda x: fnp.nansum(x * x), [(2, 3)], grid(-2, 2), unique=True),
    Row("nanmean", lambda x: fnp.nanmean(x * x, axis=0), [(2, 3)], grid(-2, 2), unique=True),
    Row("reductions-where", lambda x: fnp.sum(x, 1, where=MASK) + fnp.prod(x, where=MASK, initial=2.0)
     + fnp.max(x, 0, initial=0.505).sum() + fnp.mean(x, where=MASK), [(2, 3)], grid(-2, 2), unique=True),
    # NumPy's calling forms: their values under vmap and jit
    *[Row(f"{r}_axis{ax}{'_keep' if kd else ''}",
       (lambda r, ax, kd: lambda x: getattr(fnp, r)(x, axis=ax, keepdims=kd))(r, ax, kd),
       [T3D], ties() if r in ("max", "min", "amax", "amin") else floats(-2, 2), grad=False)
  for r in ("sum", "mean", "prod", "max", "min", "var", "std") for ax, kd in ((None, False), (0, False),
      (1, False), (-1, True), ((0, 2), False),
                     ((0, 2), True), (None, True))],
    Row("amax", lambda x: fnp.amax(x, axis=1), [MAT], ties(), grad=False),
    Row("amin", lambda x: fnp.amin(x, 0), [MAT], ties(), grad=False),
    Row("sum_vector", fnp.sum, [VEC], floats(-2, 2), grad=False),
    Row("sum_scalar", fnp.sum, [()], floats(-2, 2), grad=False),
    Row("sum_int", lambda x: fnp.sum(x, axis=0), [MAT], ints(-5, 5), grad=False),
    Row("sum_dtype", lambda x: fnp.sum(x, dtype=np.float32), [MAT], floats(-2, 2), grad=False),
    Row("mean_int", fnp.mean, [MAT], ints(-5, 5), grad=False),
    Row("var_ddof", lambda x: fnp.var(x, axis=1, ddof=1), [MAT], floats(-2, 2), grad=False),
    Row("std_ddof", lambda x: fnp.std(x, axis=(0, 1), ddof=1, keepdims=True), [T3D], floats(-2, 2),
        grad=False),
    Row("sum_method", lambda x: x.sum(axis=1), [MAT], floats(-2, 2), grad=False),
    Row("mean_method", lambda x: x.mean(), [MAT], floats(-2, 2), grad=False),
    Row("max_method", lambda x: x.max(axis=-1, keepdims=True), [MAT], ties(), grad=False),
    Row("np_dispatch_sum", lambda x: np.sum(x, axis=0), [MAT], floats(-2, 2), grad=False),
    *[Row(f"{r}_axis{ax}{'_keep' if kd else ''}",
       (lambda r, ax, kd: lambda x: getattr(fnp, r)(x, axis=ax, keepdims=kd))(r, ax, kd),
       [T3D], ties(), grad=False)
  for r in ("argmax", "argmin") for ax, kd in ((None, False), (0, False), (1, False), (-1, False), (2, True),
                     (None, True))],
    Row("argmax_method", lambda x: x.argmax(axis=0), [MAT], floats(-2, 2), grad=False),
    Row("fnp_cumsum_flat", fnp.cumsum, [MAT], floats(-2, 2), grad=False),
]
test_row = row_tests(TABLE)




@pytest.mark.parametrize("name", ["sum", "prod", "cumsum", "cumprod", "nansum", "nanprod",
                                  "nancumsum", "nancumprod"])
def test_an_explicit_small_integer_dtype_accumulates_in_it(name):
    """NumPy sums and multiplies in the dtype asked for (uint8: modulo 256); the primitives
    accumulate small integers in int64, so the result must come back to that dtype with
    NumPy's wrapped values, eagerly and under jit."""
    a = np.array([[100, 200, 7], [3, 4, 255]], np.uint8)
    for dtype in [np.uint8, np.int8, np.int16, np.uint16, np.float32]:
        for axis in [None, 0, 1]:
            want = getattr(np, name)(a, axis=axis, dtype=dtype)
            for run in (lambda f: f, fxad.jit):
                got = run(lambda x: getattr(fnp, name)(x, axis=axis, dtype=dtype))(a)
                assert got.dtype == want.dtype, (dtype, axis, got.dtype)
                np.testing.assert_array_equal(got, want)

"""fxad.numpy on integer and boolean data against NumPy: values, shapes and dtypes, eager and
under jit. The fuzzer draws float programs only, so this is where integer inputs meet the
reductions, statistics and elementwise functions (float fills that promote integers to
float64, integer division, differences that wrap around in uint8, ...)."""
import warnings

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp

DTYPES = [np.int8, np.uint8, np.int16, np.int64, np.bool_]
X = np.array([[1, 5, 0, 2], [4, 0, 2, 7], [9, 3, 8, 1]])
W = np.array([1, 2, 3, 4])

# (name, f(module, x)); x is X in each of DTYPES
CASES = [
    ("sum", lambda m, x: m.sum(x, axis=0)), ("prod", lambda m, x: m.prod(x, axis=1)),
    ("cumsum", lambda m, x: m.cumsum(x, axis=0)), ("cumprod", lambda m, x: m.cumprod(x)),
    ("mean", lambda m, x: m.mean(x, axis=1)), ("var", lambda m, x: m.var(x, axis=0, ddof=1)),
    ("std", lambda m, x: m.std(x)), ("median", lambda m, x: m.median(x, axis=0)),
    ("percentile", lambda m, x: m.percentile(x, 30, axis=1)),
    ("quantile-lower", lambda m, x: m.quantile(x, [0.3, 0.5], axis=1, method="lower")),
    ("quantile-nearest", lambda m, x: m.quantile(x, 0.6, method="nearest")),
    ("average", lambda m, x: m.average(x, axis=1, weights=W)),
    ("average-returned", lambda m, x: m.average(x, axis=1, weights=W, returned=True)[1]),
    ("max", lambda m, x: m.max(x, axis=0)), ("argmax", lambda m, x: m.argmax(x, axis=1)),
    ("ptp", lambda m, x: m.ptp(x, axis=1)),
    ("nansum", lambda m, x: m.nansum(x, axis=0)), ("nanmean", lambda m, x: m.nanmean(x)),
    ("nanmax", lambda m, x: m.nanmax(x, axis=1)), ("nanmin", lambda m, x: m.nanmin(x)),
    ("nanprod", lambda m, x: m.nanprod(x, axis=0)), ("nancumsum", lambda m, x: m.nancumsum(x)),
    ("nancumprod", lambda m, x: m.nancumprod(x, axis=1)),
    ("nanargmin", lambda m, x: m.nanargmin(x, axis=0)), ("nanvar", lambda m, x: m.nanvar(x)),
    ("nanmedian", lambda m, x: m.nanmedian(x, axis=1)),
    ("sum-dtype", lambda m, x: m.sum(x, dtype=np.int8)),
    ("abs", lambda m, x: m.abs(x)), ("fabs", lambda m, x: m.fabs(x)),
    ("sign", lambda m, x: m.sign(x)), ("square", lambda m, x: m.square(x)),
    ("sqrt", lambda m, x: m.sqrt(x)), ("exp", lambda m, x: m.exp(x)),
    ("rint", lambda m, x: m.rint(x)), ("round", lambda m, x: m.round(x)),
    ("deg2rad", lambda m, x: m.deg2rad(x)), ("true_divide", lambda m, x: m.true_divide(x, 3)),
    ("floor_divide", lambda m, x: m.floor_divide(x, 3)),
    ("remainder", lambda m, x: m.remainder(x, 3)), ("clip", lambda m, x: m.clip(x, 1, 4)),
    ("diff", lambda m, x: m.diff(x, axis=0)), ("gradient", lambda m, x: m.gradient(x, axis=1)),
    ("trapezoid", lambda m, x: m.trapezoid(x, axis=0)),
    ("interp", lambda m, x: m.interp(np.array([0.5, 1.5, 2.5]), np.arange(4), x[0])),
    ("pad-linear_ramp", lambda m, x: m.pad(x, 2, mode="linear_ramp", end_values=3)),
    ("pad-mean", lambda m, x: m.pad(x, 1, mode="mean")),
    ("dot", lambda m, x: m.dot(x, x.T)), ("einsum", lambda m, x: m.einsum("ij,kj->ik", x, x)),
    ("outer", lambda m, x: m.outer(x[0], x[1])), ("trace", lambda m, x: m.trace(x)),
    ("where", lambda m, x: m.where(x > 2, x, 0)), ("sort", lambda m, x: m.sort(x, axis=0)),
    ("cov", lambda m, x: m.cov(x)), ("polyval", lambda m, x: m.polyval(x[0], x[1])),
    ("convolve", lambda m, x: m.convolve(x[0], x[1])),
    ("linspace", lambda m, x: m.linspace(x[0], x[1], 3)),
    ("count_nonzero", lambda m, x: m.count_nonzero(x, axis=0)),
    ("matrix_power", lambda m, x: m.linalg.matrix_power(x[:, :3], 3)),
    ("matrix_power-0", lambda m, x: m.linalg.matrix_power(x[:, 1:], 0)),
    ("vecdot", lambda m, x: m.vecdot(x, x[0])),
    # (numpy.matvec is NumPy 2.2's: the same contraction by einsum on older NumPy)
    ("matvec", lambda m, x: m.matvec(x, x[0]) if hasattr(m, "matvec")
     else np.einsum("...ij,...j->...i", x, x[0])),
]

# NumPy results fxad does not reproduce on purpose: {(name, dtype name): why}
DIFFERENCES = {
    **{("sign", "bool"): "NumPy has no sign loop for booleans (it raises)"},
    **{(n, "bool"): "NumPy refuses boolean subtraction" for n in (
        "gradient", "ptp", "percentile")},
    ("polyval", "bool"): "NumPy evaluates a boolean polynomial in boolean arithmetic (and / "
                         "or, a bool result); fxad in integers",
}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,f", CASES, ids=[r[0] for r in CASES])
def test_integer_and_boolean_data_match_numpy(name, f, dtype):
    x = X.astype(dtype)
    documented = (name, np.dtype(dtype).name) in DIFFERENCES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = np.asarray(f(np, x))
        except (TypeError, ValueError):
            assert documented
            return
        if documented:  # the difference is still there (or DIFFERENCES is stale)
            assert np.asarray(f(fnp, x)).dtype != want.dtype
            return
        for how, got in [("eager", f(fnp, x)), ("jit", fxad.jit(lambda x: f(fnp, x))(x))]:
            got = np.asarray(got)
            assert (got.shape, got.dtype) == (want.shape, want.dtype), how
            tol = 1e-3 if want.dtype == np.float16 else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=how)

"""Issue 16, item 6: float32 stays float32 where NumPy keeps it.

Every elementwise function fxad.numpy and fxad.scipy.special share with NumPy/SciPy (found by
introspection: a new one is covered without editing this file) runs on mixed operands (float32
arrays with Python scalars, NumPy scalars, 0-d arrays, other dtypes) and must give NumPy's
result dtype eagerly and under jit, a gradient of each float operand's own dtype, and a jvp
tangent of the output's dtype. Where NumPy refuses the operands, fxad must refuse them too.

The class of bug: composites that let a Python scalar meet another constant first (hypot's
1.0 * 1.0 is a strong float64, and float32 + float64 is float64), float64 NumPy constants in
rules (np.sqrt(np.pi) is a float64 scalar, 2 / np.sqrt(np.pi) too), and JVPs whose tangent
kept the input's dtype while SciPy computes float16 in float64. The fix: NumPy's own ufuncs as
impls (their dtype rules by construction), Python floats for constants, and every JVP's
tangent fitted to its output (rules.helpers.defjvp).
"""
import warnings

import numpy as np
import pytest
import scipy.special as sc

import fxad
import fxad.numpy as fnp
import fxad.scipy.special as fss
from fxad import nn


def _ufuncs(module, ours, nin):
    return sorted((n, getattr(ours, n), getattr(module, n)) for n in dir(module)
                  if isinstance(getattr(module, n), np.ufunc) and getattr(module, n).nin == nin
                  and callable(getattr(ours, n, None)))


BINARY = _ufuncs(np, fnp, 2) + _ufuncs(sc, fss, 2)
UNARY = _ufuncs(np, fnp, 1) + _ufuncs(sc, fss, 1) + [
    ("sinc", fnp.sinc, np.sinc), ("nan_to_num", fnp.nan_to_num, np.nan_to_num),
    ("angle", fnp.angle, np.angle), ("round", fnp.round, np.round),
    ("nn.sigmoid", nn.sigmoid, sc.expit), ("nn.relu", nn.relu, lambda x: np.maximum(x, 0)),
    ("nn.softplus", nn.softplus, lambda x: np.logaddexp(x, 0)),
    ("nn.log_softmax", nn.log_softmax, sc.log_softmax), ("nn.softmax", nn.softmax, sc.softmax),
    ("logsumexp", fss.logsumexp, sc.logsumexp), ("median", fnp.median, np.median),
    ("nanmedian", fnp.nanmedian, np.nanmedian), ("std", fnp.std, np.std),
    ("linalg.norm", fnp.linalg.norm, np.linalg.norm)]

F32 = np.array([0.5, 1.5, 0.25], np.float32)
CASES = {  # operand pairs
    "f32 array, Python float": (F32, 1.0),
    "Python float, f32 array": (1.0, F32),
    "f32 array, Python int": (F32, 2),
    "Python int, f32 array": (2, F32),
    "f32, f32": (F32, F32[::-1].copy()),
    "f32 0-d, f64 array": (np.array(0.5, np.float32), np.array([1.5, 2.0, 0.75])),
    "f64 0-d, f32 array": (np.array(0.5), F32),
    "f32 array, f64 array": (F32, np.array([1.5, 2.0, 0.75])),
    "f32 array, np.float64": (F32, np.float64(2.0)),
    "np.float32, Python float": (np.float32(0.5), 1.0),
    "f16 array, Python float": (F32.astype(np.float16), 1.0),
    "f32 array, int32 array": (F32, np.array([1, 2, 3], np.int32)),
    "f32 array, int8 array": (F32, np.array([1, 2, 3], np.int8)),
    "f32 array, bool": (F32, True),
}


def _first(y):
    return y[0] if isinstance(y, tuple) else y


def _dtype(y):
    return np.asarray(_first(y)).dtype


def _check_dtypes(fx, ref, args, diff_args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            want = _dtype(ref(*args))
        except (TypeError, ValueError):  # NumPy refuses these operands
            with pytest.raises((TypeError, ValueError)):
                fx(*args)
            return
        assert _dtype(fx(*args)) == want, "eager"
        assert _dtype(fxad.jit(fx)(*args)) == want, "jit"
        if want.kind not in "fc":
            return
        for i in diff_args:
            def f(v, i=i):
                return _first(fx(*[v if j == i else a for j, a in enumerate(args)]))
            a = args[i]
            assert fxad.grad(lambda v: fnp.sum(fnp.real(f(v))))(a).dtype == np.asarray(a).dtype, \
                f"grad wrt operand {i}"
            y, t = fxad.jvp(f, (a,), (np.ones_like(a),))
            assert np.asarray(t).dtype == np.asarray(y).dtype, f"jvp wrt operand {i}"


# Their first operand is an order that selects SciPy's function: a concrete scalar (closed
# over under jit), or a clear FxadTypeError.
STATIC_ORDER = {"iv", "ive", "jv", "jn", "yn", "yv", "kn", "kv", "kve"}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name,fx,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary_result_dtypes_are_numpys(name, fx, ref, case):
    args = CASES[case]
    if name in STATIC_ORDER:
        v, x = args
        if np.ndim(v) != 0:
            with pytest.raises(fxad.errors.FxadTypeError, match="concrete scalar"):
                fx(*args)
            return
        _check_dtypes(lambda x: fx(v, x), lambda x: ref(v, x), (x,), [0])
        return
    floats = [i for i, a in enumerate(args) if isinstance(a, (np.ndarray, np.generic))
              and np.asarray(a).dtype.kind == "f"]
    _check_dtypes(fx, ref, args, floats)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name,fx,ref", UNARY, ids=[u[0] for u in UNARY])
def test_unary_result_dtypes_are_numpys(name, fx, ref, dtype):
    _check_dtypes(fx, ref, (F32.astype(dtype),), [0])


def test_the_named_cases():
    x = np.ones(3, np.float32)
    assert fnp.hypot(x, 1.0).dtype == np.float32  # was float64
    assert fnp.logaddexp2(x, 1.0).dtype == np.float32  # was float64
    assert fxad.jit(fnp.heaviside)(x, 0.5).dtype == np.float32  # was float64 under jit
    assert fnp.copysign(x, np.float64(-1.0)).dtype == np.float64  # was float32 (x's)
    assert fxad.jvp(fss.erfcx, (x,), (x,))[1].dtype == np.float32
    assert fxad.jvp(fss.erf, (x.astype(np.float16),), (x.astype(np.float16),))[1].dtype == \
        sc.erf(x.astype(np.float16)).dtype  # SciPy computes float16 in float64


def test_binary_table_is_the_whole_surface():
    names = {b[0] for b in BINARY}
    assert {"hypot", "logaddexp2", "copysign", "heaviside", "ldexp", "float_power", "arctan2",
            "xlogy", "xlog1py", "fmax", "power"} <= names
    assert len(BINARY) >= 35

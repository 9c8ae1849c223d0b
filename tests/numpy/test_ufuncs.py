"""Rule table: fxad.numpy.ufuncs, NumPy's ufuncs on traced values (logaddexp, sinc, clip,
fmax / fmin, fmod / divmod, vecdot, the operators, ...): values against NumPy, and each row's
derivatives, vmap and jit (tests/rules/common.py)."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax

from ..rules.common import (
    M, MASK, MAT, T3D, V3, V7, VEC, _clip, away_from_zero, bools, check_values_match_numpy,
    floats, grid, ints, Row, row_tests, ties)


# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("ufuncs", lambda m, x, y: [
        m.copysign(x, y), m.heaviside(x, 0.5), m.fmax(x, np.nan), m.fmin(np.nan, y),
        m.float_power(np.abs(x), 1.5), m.trunc(x), m.fmod(x, 0.3), m.signbit(-0.0 * x),
        m.isinf(x / 0.0), m.isposinf(x / 0.0), m.isneginf(x / 0.0), m.divmod(x, 0.3)[1],
        m.logical_xor(x > 0, y > 0), m.heaviside(np.array([np.nan, 0.0, -np.inf]), 0.5)],
     [(V7[:3], V3), (V7[:3].astype(np.float32), V3.astype(np.float32))], [{}]),
    ("ufuncs-more", lambda m, x: [m.cbrt(x), m.ldexp(x, 3), m.modf(x)[0], m.modf(x)[1],
                                  m.vecdot(M, M[0]), _clip(m, x, -0.5, 0.5),
                                  m.einsum("i,i->", x, x, optimize=True)],
     [(V7,), (V7.astype(np.float32),)], [{}]),
    # complex: each part on its own, as NumPy's
    ("nan_to_num-complex", lambda m, z, **k: m.nan_to_num(z, **k),
     [(np.array([np.nan + 1j, np.inf * 1j, complex(-np.inf, np.nan), 1 + 2j]),),
      (np.array([np.nan + 1j, complex(np.inf, -np.inf)], np.complex64),)],
     [{}, {"nan": 1.5, "posinf": 7.0, "neginf": -3.0}]),
    # rint, fabs, deg2rad, rad2deg have float loops only: integers and booleans come back as
    # NumPy's floats for them (round and absolute keep their dtype)
    ("float-loops-on-integers", lambda m, x: [
        m.rint(x), m.round(x), m.around(x), m.fabs(x), m.absolute(x), m.deg2rad(x),
        m.radians(x), m.rad2deg(x), m.degrees(x)],
     [(np.array([-3, 0, 2, 7]).astype(dt),) for dt in (np.int8, np.int16, np.int64, bool)] +
     [(np.array([-2.5, 0.5, 1.5, 2.49]).astype(dt),) for dt in (np.float32, np.float64)], [{}]),
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


def _off_jumps(x, y):
    """fmod(x, d) jumps where x is a nonzero multiple of d = y² + 0.7071."""
    r = x / (y * y + 0.7071)
    k = np.round(r)
    return bool(np.all((k == 0) | (np.abs(r - k) > 1e-3)))


TABLE = [
    Row("logaddexp", lambda x, y: fnp.logaddexp(x, y), [(2, 3), (3,)], grid(-2, 2), unique=True),
    Row("logaddexp2", lambda x, y: fnp.logaddexp2(x, y), [(2, 3), (2, 3)], grid(-2, 2),
        unique=True),
    Row("deg2rad", fnp.deg2rad, [(3,)], grid(-2, 2), unique=True),
    Row("rad2deg", fnp.rad2deg, [(3,)], grid(-2, 2), unique=True),
    Row("sinc", fnp.sinc, [(2, 3)], grid(-2, 2), unique=True),
    Row("fabs", lambda x: fnp.fabs(x + 3.0), [(3,)], grid(-2, 2), unique=True),
    Row("clip", lambda x: fnp.clip(x, -0.5, 0.5) * x, [(2, 3)], grid(-2, 2), unique=True),
    Row("nan_to_num", lambda x: fnp.nan_to_num(x) * x, [(3,)], grid(-2, 2), unique=True),
    Row("fmax-fmin", lambda x, y: fnp.fmax(fnp.where(MASK, np.nan, x), y + 0.005)
        + fnp.fmin(x, fnp.where(MASK[0], np.nan, y + 0.005)), [(2, 3), (3,)], grid(-2, 2),
        unique=True),
    Row("fmod-divmod", lambda x, y: fnp.fmod(x, y * y + 0.7071)
        * fnp.divmod(x + 0.005, 0.7071)[1], [(2, 3), (3,)], grid(-2, 2), unique=True,
        assume=_off_jumps),
    Row("trunc-signbit", lambda x: (x + 0.005) * fnp.trunc(x + 0.005)
        + fnp.where(fnp.signbit(x + 0.005), x, 2 * x), [(2, 3)], grid(-2, 2), unique=True),
    Row("vecdot", lambda x, y: fnp.vecdot(x, y), [(2, 3), (3,)], grid(-2, 2), unique=True),
    # NumPy's calling forms (functions, operators on traced values, NumPy's own functions on
    # them): their values under vmap and jit
    Row("neg", fnp.negative, [MAT], floats(-2, 2), grad=False),
    Row("neg_op", lambda x: -x, [T3D], floats(-2, 2), grad=False),
    Row("pos_op", lambda x: +x, [MAT], floats(-2, 2), grad=False),
    Row("exp", fnp.exp, [MAT], floats(-2, 2), grad=False),
    Row("log", fnp.log, [MAT], floats(0.5, 3), grad=False),
    Row("log1p", fnp.log1p, [MAT], floats(0.5, 3), grad=False),
    Row("expm1", fnp.expm1, [MAT], floats(-2, 2), grad=False),
    Row("exp2", fnp.exp2, [MAT], floats(-2, 2), grad=False),
    Row("log2", fnp.log2, [MAT], floats(0.5, 3), grad=False),
    Row("log10", fnp.log10, [T3D], floats(0.5, 3), grad=False),
    Row("sqrt", fnp.sqrt, [T3D], floats(0.5, 3), grad=False),
    Row("sin", fnp.sin, [MAT], floats(-2, 2), grad=False),
    Row("cos", fnp.cos, [MAT], floats(-2, 2), grad=False),
    Row("tan", fnp.tan, [MAT], floats(-0.9, 0.9), grad=False),
    Row("tanh", fnp.tanh, [MAT], floats(-2, 2), grad=False),
    Row("arcsin", fnp.arcsin, [MAT], floats(-0.9, 0.9), grad=False),
    Row("arccos", fnp.arccos, [MAT], floats(-0.9, 0.9), grad=False),
    Row("arctan", fnp.arctan, [MAT], floats(-2, 2), grad=False),
    Row("sinh", fnp.sinh, [MAT], floats(-2, 2), grad=False),
    Row("cosh", fnp.cosh, [MAT], floats(-2, 2), grad=False),
    Row("arcsinh", fnp.arcsinh, [MAT], floats(-2, 2), grad=False),
    Row("arccosh", fnp.arccosh, [MAT], floats(1.1, 3), grad=False),
    Row("arctanh", fnp.arctanh, [MAT], floats(-0.9, 0.9), grad=False),
    Row("abs", fnp.abs, [MAT], ties(), grad=False),
    Row("abs_op", lambda x: abs(x), [VEC], floats(-2, 2), grad=False),
    Row("sign", fnp.sign, [MAT], ties(), grad=False),
    Row("floor", fnp.floor, [MAT], floats(-2, 2), grad=False),
    Row("trunc", fnp.trunc, [MAT], floats(-2, 2), grad=False),
    Row("cbrt", fnp.cbrt, [MAT], floats(-2, 2), grad=False),
    Row("ceil", fnp.ceil, [MAT], floats(-2, 2), grad=False),
    Row("round", fnp.round, [MAT], floats(-2, 2), grad=False),
    Row("square", fnp.square, [MAT], floats(-2, 2), grad=False),
    Row("reciprocal", fnp.reciprocal, [MAT], away_from_zero(0.5, 2), grad=False),
    Row("invert_op", lambda x: ~x, [MAT], bools(), grad=False),
    Row("abs_int", fnp.abs, [VEC], ints(-4, 5), grad=False),
    Row("clip", lambda x: fnp.clip(x, -0.5, 0.7), [MAT], floats(-2, 2), grad=False),
    Row("clip_method", lambda x: x.clip(-0.5), [MAT], floats(-2, 2), grad=False),
    Row("np_dispatch_sin", np.sin, [MAT], floats(-2, 2), grad=False),
    Row("np_dispatch_exp_mul", lambda x: np.exp(x) * x, [MAT], floats(-2, 2), grad=False),
    Row("add", fnp.add, [MAT, MAT], floats(-2, 2), grad=False),
    Row("add_bcast", fnp.add, [MAT, VEC], floats(-2, 2), grad=False),
    Row("add_bcast_rank", fnp.add, [T3D, (4, 1)], floats(-2, 2), grad=False),
    Row("add_scalar_arg", fnp.add, [MAT, ()], floats(-2, 2), grad=False),
    Row("add_py_scalar", lambda x: x + 2.0, [MAT], floats(-2, 2), grad=False),
    Row("radd_py_scalar", lambda x: 2.0 + x, [MAT], floats(-2, 2), grad=False),
    Row("subtract", fnp.subtract, [MAT, VEC], floats(-2, 2), grad=False),
    Row("rsub_op", lambda x: 1.0 - x, [MAT], floats(-2, 2), grad=False),
    Row("multiply", fnp.multiply, [T3D, MAT], floats(-2, 2), grad=False),
    Row("multiply_op", lambda x, y: x * y, [VEC, MAT], floats(-2, 2), grad=False),
    Row("divide", fnp.divide, [MAT, MAT], [floats(-2, 2), away_from_zero(0.5, 2)], grad=False),
    Row("rdiv_op", lambda x: 1.0 / x, [MAT], away_from_zero(0.5, 2), grad=False),
    Row("divide_int", fnp.divide, [MAT, MAT], [ints(-5, 5), ints(1, 4)], grad=False),
    Row("floor_divide", fnp.floor_divide, [MAT, VEC], [floats(-2, 2), away_from_zero(0.5, 2)], grad=False),
    Row("fmod", fnp.fmod, [MAT, VEC], [floats(-2, 2), away_from_zero(0.5, 2)], grad=False),
    Row("floordiv_op", lambda x, y: x // y, [MAT, MAT], [floats(-2, 2), away_from_zero(0.5, 2)], grad=False),
    Row("remainder", fnp.remainder, [MAT, VEC], [floats(-2, 2), away_from_zero(0.5, 2)], grad=False),
    Row("mod_op", lambda x: x % 0.7, [MAT], floats(-2, 2), grad=False),
    Row("power_float", fnp.power, [MAT, MAT], [floats(0.5, 3), floats(-2, 2)], grad=False),
    Row("power_float_bcast", fnp.power, [MAT, ()], [floats(0.5, 3), floats(-2, 2)], grad=False),
    Row("power_float_const", lambda x: fnp.power(x, 2.5), [MAT], floats(0.5, 3), grad=False),
    Row("power_int_3", lambda x: fnp.power(x, 3), [MAT], floats(-2, 2), grad=False),
    Row("power_int_neg", lambda x: x ** -2, [MAT], away_from_zero(0.5, 2), grad=False),
    Row("power_int_0", lambda x: x ** 0, [MAT], floats(-2, 2), grad=False),
    Row("rpow_op", lambda x: 2.0 ** x, [MAT], floats(-2, 2), grad=False),
    Row("arctan2", fnp.arctan2, [MAT, MAT], [floats(-2, 2), away_from_zero(0.5, 2)], grad=False),
    Row("arctan2_bcast", fnp.arctan2, [VEC, MAT], [floats(-2, 2), away_from_zero(0.5, 2)], grad=False),
    Row("hypot", fnp.hypot, [VEC, MAT], [floats(-2, 2), away_from_zero(0.5, 2)], grad=False),
    Row("float_power", lax.float_power, [MAT, VEC], [floats(0.5, 3), floats(-2, 2)], grad=False),
    Row("maximum", fnp.maximum, [MAT, MAT], ties(), grad=False),
    Row("minimum", fnp.minimum, [MAT, VEC], ties(), grad=False),
    Row("maximum_const", lambda x: fnp.maximum(x, 0.0), [MAT], floats(-2, 2), grad=False),
    Row("lt_op", lambda x, y: x < y, [MAT, MAT], ties(), grad=False),
    Row("eq_op", lambda x, y: x == y, [MAT, VEC], ties(), grad=False),
    Row("gt_scalar_op", lambda x: x > 0.0, [MAT], ties(), grad=False),
    Row("where", fnp.where, [MAT, MAT, MAT], [bools(), floats(-2, 2), floats(-2, 2)], grad=False),
    Row("where_bcast", fnp.where, [MAT, VEC, ()], [bools(), floats(-2, 2), floats(-2, 2)], grad=False),
    Row("where_computed", lambda x: fnp.where(x > 0, x, 0.0), [MAT], floats(-2, 2), grad=False),
    Row("and_op", lambda x, y: x & y, [MAT, MAT], bools(), grad=False),
    Row("or_op", lambda x, y: x | y, [MAT, MAT], bools(), grad=False),
    Row("add_int_float", fnp.add, [MAT, MAT], [ints(-5, 5), floats(-2, 2)], grad=False),
]
test_row = row_tests(TABLE)


def test_derivatives_at_special_points_are_finite():
    assert fxad.grad(fnp.sinc)(0.0) == 0.0
    g = fxad.grad(lambda x: fnp.logaddexp(x, -np.inf))(1.0)
    assert g == 1.0
    assert np.isfinite(fxad.grad(lambda x: fnp.logaddexp(x, x))(-np.inf))


@pytest.mark.parametrize("a,tol", [
    (np.array([1 + 1e-15j, 2 - 0j]), 100), (np.array([1 + 1e-3j, 2.0]), 100),
    (np.array([1 + 1e-3j, 2.0]), 1e-2), (np.array([1.0, 2.0]), 100),
    (np.array([1 + 1e-7j], np.complex64), 1000), (np.array([1 + 1e-7j], np.complex64), 10),
    (np.array(3 + 0j), 100),
])
def test_real_if_close(a, tol):
    """NumPy's values and dtypes (real where every imaginary part is small, the input
    otherwise); under grad (values known) the derivative of the branch NumPy takes, also
    through plain np.real_if_close; under jit/vmap a complex input is refused clearly, a real
    one passes through."""
    from fxad.errors import ConcretizationError
    from fxad.test_util import check_grads
    want = np.real_if_close(a, tol)
    got = fnp.real_if_close(a, tol)
    assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape
    np.testing.assert_array_equal(got, want)
    re, im = np.real(a).astype(np.float64), np.imag(a).astype(np.float64)
    low = dict(eps=1e-2, atol=1e-4, rtol=1e-4) if a.dtype == np.complex64 else {}  # float32
    for m in (fnp, np):
        def f(re, im):
            z = lax_complex(re, im).astype(a.dtype) if a.dtype.kind == "c" else re + 0 * im
            out = m.real_if_close(z, tol)
            return fnp.real(out) * 1.5 + fnp.imag(out) * 0.5
        # (differences in the imaginary parts would cross NumPy's threshold: the function
        # jumps there; the derivative is the branch's, checked exactly below)
        check_grads(lambda re: f(re, im), (re,), order=2, modes=("fwd", "rev"), **low)
        g = fxad.grad(lambda re, im: fnp.sum(f(re, im)), argnums=(0, 1))(re, im)
        np.testing.assert_allclose(g[0], 1.5)
        np.testing.assert_allclose(g[1], 0.0 if want.dtype.kind == "f" else 0.5)
    if a.dtype.kind == "c":
        for t in (fxad.jit, fxad.vmap):
            with pytest.raises(ConcretizationError, match="real_if_close.*fxad.numpy.real"):
                t(lambda z: fnp.real_if_close(z, tol))(np.atleast_1d(a))
    else:
        np.testing.assert_array_equal(fxad.jit(fnp.real_if_close)(a), a)


def lax_complex(re, im):
    from fxad import lax
    return lax.complex(re, im)

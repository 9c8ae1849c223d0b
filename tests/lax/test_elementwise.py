"""fxad.lax's elementwise functions whose JAX meaning differs from NumPy's: `div` of integers
rounds toward zero, `rem` takes the sign of x, `round` breaks ties away from zero;
`reduce_precision` rounds as a cast to the narrow format, with JAX's derivative. A JAX
program ported to fxad must get JAX's numbers (fxad.numpy keeps NumPy's)."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.errors import FxadTypeError, FxadValueError
from fxad.test_util import check_grads

X = np.array([7, -7, 6, -6, 0, 9, -9], dtype=np.int32)
Y = np.array([2, 2, -4, 4, 3, -3, -3], dtype=np.int32)


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
def test_integer_div_rounds_toward_zero_and_rem_takes_the_sign_of_x(mode):
    run = {"eager": lambda f: f, "jit": fxad.jit, "vmap": fxad.vmap}[mode]
    q = run(lax.div)(X, Y)
    r = run(lax.rem)(X, Y)
    # C's division: the quotient truncated (Python's int(a / b) on these small values)
    assert q.dtype == np.int32
    np.testing.assert_array_equal(q, [int(a / b) for a, b in zip(X.tolist(), Y.tolist())])
    np.testing.assert_array_equal(r, X - q * Y)  # so x == div(x, y) * y + rem(x, y)
    np.testing.assert_array_equal(run(lambda y: lax.rem(-7.5, y))(np.array([2.0, -2.0])), [-1.5, -1.5])
    # NumPy's meanings stay in fxad.numpy
    np.testing.assert_array_equal(fnp.remainder(X, Y), np.remainder(X, Y))
    np.testing.assert_array_equal(fnp.floor_divide(X, Y), np.floor_divide(X, Y))
    np.testing.assert_array_equal(fnp.divide(X, Y), np.divide(X, Y))


def test_float_div_and_rem_are_differentiable():
    x, y = np.array([1.3, -2.7, 5.1]), np.array([0.7, 1.1, -2.3])
    np.testing.assert_allclose(lax.div(x, y), x / y, rtol=1e-15)
    check_grads(lax.div, (x, y), order=2)
    check_grads(lax.rem, (x, y), order=2)


TIES = np.array([2.5, -2.5, 0.5, -0.5, 1.5, 3.5, 2.4999999999999996, 0.49999999999999994, -0.4,
                 7.0, 1e300])
AWAY = np.array([3.0, -3.0, 1.0, -1.0, 2.0, 4.0, 2.0, 0.0, 0.0, 7.0, 1e300])
EVEN = np.array([2.0, -2.0, 0.0, 0.0, 2.0, 4.0, 2.0, 0.0, 0.0, 7.0, 1e300])


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
def test_round_breaks_ties_away_from_zero_by_default(mode):
    run = {"eager": lambda f: f, "jit": fxad.jit, "vmap": fxad.vmap}[mode]
    np.testing.assert_array_equal(run(lax.round)(TIES), AWAY)
    np.testing.assert_array_equal(
        run(lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN))(TIES), EVEN)
    np.testing.assert_array_equal(run(fnp.round)(TIES), np.round(TIES))  # NumPy's: to even
    np.testing.assert_array_equal(fxad.grad(lambda x: fnp.sum(lax.round(x) * x))(TIES), AWAY)


def test_round_refuses_an_unknown_method_and_keeps_integers():
    with pytest.raises(FxadValueError, match="RoundingMethod"):
        lax.round(np.ones(2), 2)
    np.testing.assert_array_equal(lax.round(X), X)


# (exponent bits, mantissa bits, the NumPy dtype of that format)
FORMATS = [(8, 23, np.float32), (5, 10, np.float16)]


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
@pytest.mark.parametrize("e,m,narrow", FORMATS)
def test_reduce_precision_rounds_as_a_cast_to_the_narrow_format(e, m, narrow, mode):
    """In the narrow format's normal range (and past it: infinities) rounding to nearest even
    is a NumPy cast; below its smallest normal number the value is flushed to a signed zero
    (no subnormals); NaN stays NaN."""
    fi = np.finfo(narrow)
    rng = np.random.default_rng(0)
    normal = rng.choice([-1.0, 1.0], 200) * 10.0 ** rng.uniform(
        np.log10(float(fi.tiny)) + 0.01, np.log10(float(fi.max)) - 0.01, 200)
    ties = np.array([1 + 2.0 ** -(m + 1), 1 + 3 * 2.0 ** -(m + 1), -(1 + 2.0 ** -(m + 1))])
    big = np.array([float(fi.max), float(fi.max) * 1.001, -float(fi.max) * 3, np.inf])
    x = np.concatenate([normal, ties, big])
    run = {"eager": lambda f: f, "jit": fxad.jit, "vmap": fxad.vmap}[mode]
    got = run(lambda v: lax.reduce_precision(v, e, m))(x)
    assert got.dtype == np.float64
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, x.astype(narrow).astype(np.float64))
    tiny = np.array([float(fi.tiny) / 3, -float(fi.tiny) / 5, 0.0, np.nan])
    out = lax.reduce_precision(tiny, e, m)
    np.testing.assert_array_equal(out[:3], [0.0, 0.0, 0.0])
    assert np.signbit(out[1]) and np.isnan(out[3])
    # the operand's own format or a wider one changes nothing
    np.testing.assert_array_equal(lax.reduce_precision(x, 11, 52), x)
    x32 = x.astype(np.float32) if e == 5 else x[np.abs(x) < 3e38].astype(np.float32)
    np.testing.assert_array_equal(lax.reduce_precision(x32, 8, 23), x32)
    if e == 5:  # from float32 to float16's format
        got32 = lax.reduce_precision(x32, 5, 10)
        assert got32.dtype == np.float32
        np.testing.assert_array_equal(got32, x32.astype(np.float16).astype(np.float32))


def test_reduce_precision_derivative_is_the_tangent_rounded_alike():
    x = np.array([0.3, -2.1])
    t = np.array([1.2345678, 1.0])
    _, tan = fxad.jvp(lambda v: lax.reduce_precision(v, 8, 7), (x,), (t,))
    np.testing.assert_array_equal(tan, [1.234375, 1.0])
    np.testing.assert_array_equal(fxad.grad(lambda v: fnp.sum(lax.reduce_precision(v, 8, 7)))(
        x), [1.0, 1.0])
    with pytest.raises(FxadTypeError, match="float16/32/64"):
        lax.reduce_precision(np.array([1, 2]), 8, 7)
    with pytest.raises(FxadValueError, match="exponent_bits"):
        lax.reduce_precision(x, 0, 7)

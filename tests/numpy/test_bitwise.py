"""fxad.numpy's integer and bit functions (bitwise logic and shifts with NumPy's promotion,
bitwise_count, packbits/unpackbits, gcd, lcm) and float decomposition (frexp, spacing,
nextafter): values and dtypes against NumPy for several dtypes and edge values, eagerly,
under jit and under vmap; operators on traced integers; derivatives where they exist."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.errors import FxadTypeError
from fxad.test_util import check_grads

INTS = [np.int8, np.uint8, np.int16, np.uint32, np.int64, np.uint64]
RUN = {"eager": lambda f: f, "jit": fxad.jit, "vmap": fxad.vmap}


def edges(dtype):
    info = np.iinfo(dtype)
    v = [0, 1, 7, 64, info.max, info.max - 3, info.min]
    return np.array(v + ([-1, -7, info.min + 1] if info.min < 0 else [2, 3, 4]), dtype)


def assert_same(got, want):
    assert np.asarray(got).dtype == np.asarray(want).dtype, (np.asarray(got).dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", list(RUN))
@pytest.mark.parametrize("dtype", INTS)
def test_bit_functions_match_numpy(dtype, mode):
    x = edges(dtype)
    y = x[::-1].copy()
    width = 8 * np.dtype(dtype).itemsize
    s = (np.arange(x.size) * 5 % (width + 2)).astype(dtype)  # shifts 0 .. width + 1
    run = RUN[mode]
    for name in ["bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm"]:
        assert_same(run(getattr(fnp, name))(x, y), getattr(np, name)(x, y))
    for name in ["bitwise_not", "invert", "bitwise_invert", "bitwise_count"]:
        assert_same(run(getattr(fnp, name))(x), getattr(np, name)(x))
    in_range = s < width  # (NumPy's result of a shift by the width or more is the C library's)
    for name, theirs in [("left_shift", np.left_shift), ("right_shift", np.right_shift),
                         ("bitwise_left_shift", np.left_shift),
                         ("bitwise_right_shift", np.right_shift)]:
        got = run(getattr(fnp, name))(x, s)
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got)[in_range], theirs(x, s)[in_range])


def test_mixed_dtypes_promote_as_numpy():
    a, b = np.array([-3, 100, -128], np.int8), np.array([2, 200, 255], np.uint8)
    for name in ["bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm", "left_shift",
                 "right_shift"]:
        assert_same(getattr(fnp, name)(a, b % 8 if "shift" in name else b),
                    getattr(np, name)(a, b % 8 if "shift" in name else b))
        assert_same(getattr(fnp, name)(b, 3), getattr(np, name)(b, 3))  # a weak Python int
    for name in ["bitwise_and", "bitwise_or", "left_shift", "right_shift"]:
        for run in (lambda g: g, fxad.jit):  # out of uint8's range: refused, never wrapped
            with pytest.raises(OverflowError):
                run(lambda v: getattr(fnp, name)(v, 300))(b)
    t, f = np.array([True, False]), np.array([True, True])
    for name in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
        assert_same(getattr(fnp, name)(t, f), getattr(np, name)(t, f))
    assert_same(fnp.invert(t), np.invert(t))
    assert_same(fnp.left_shift(t, f), np.left_shift(t, f))


def test_operators_on_traced_integers():
    x = np.array([5, -6, 127, 0], np.int32)

    def f(v):
        return (v & 3) + (v | 8) - (v ^ 5) + (v << 2) + (v >> 1) + (~v) + (1 << v % 4) \
            + (64 >> (v % 3))
    want = (x & 3) + (x | 8) - (x ^ 5) + (x << 2) + (x >> 1) + (~x) + (1 << x % 4) \
        + (64 >> (x % 3))
    for mode in RUN:
        assert_same(RUN[mode](f)(x), want)


def test_refusals():
    for f in [lambda: fnp.bitwise_and(np.ones(2), 1), lambda: fnp.left_shift(1.5, 1),
              lambda: fnp.gcd(np.ones(2), 2), lambda: fnp.bitwise_count(np.ones(2)),
              lambda: fnp.packbits(np.ones(3)), lambda: fnp.unpackbits(np.ones(3, np.int8))]:
        with pytest.raises(FxadTypeError):
            f()


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_packbits_unpackbits_match_numpy(mode):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, (3, 11)).astype(np.int16)  # nonzero packs as 1
    run = RUN[mode]
    for kw in [{}, {"axis": 0}, {"axis": 1}, {"axis": -1, "bitorder": "little"}]:
        assert_same(run(lambda v: fnp.packbits(v, **kw))(a), np.packbits(a, **kw))
    b = rng.integers(0, 256, (2, 3)).astype(np.uint8)
    for kw in [{}, {"axis": 0}, {"axis": 1, "count": -5}, {"axis": 1, "count": 30},
               {"count": 7, "bitorder": "little"}, {"axis": 0, "count": 0}]:
        assert_same(run(lambda v: fnp.unpackbits(v, **kw))(b), np.unpackbits(b, **kw))
    assert_same(fnp.unpackbits(fnp.packbits(a > 0, axis=1), axis=1, count=11),
                (a > 0).astype(np.uint8))
    assert_same(fxad.vmap(fnp.packbits)(a), np.stack([np.packbits(r) for r in a]))


FLOATS = np.array([3.0, -0.75, 0.0, -0.0, 1e-310, -5e-324, 1e308, np.inf, -np.inf, 1.0, 0.5,
                   7e-5, np.nan])


@pytest.mark.parametrize("mode", list(RUN))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_frexp_spacing_nextafter_match_numpy(dtype, mode):
    with np.errstate(over="ignore"):
        x = FLOATS.astype(dtype)
    run = RUN[mode]
    m, e = run(fnp.frexp)(x)
    wm, we = np.frexp(x)
    assert_same(m, wm)
    assert_same(e, we)
    assert_same(run(fnp.spacing)(x), np.spacing(x))
    y = np.roll(x, 3)
    assert_same(run(fnp.nextafter)(x, y), np.nextafter(x, y))
    i = np.array([3, -4, 0])
    assert_same(fnp.frexp(i)[0], np.frexp(i)[0])  # integers as float64, as NumPy's
    assert_same(fnp.spacing(i), np.spacing(i))


def test_frexp_mantissa_derivative():
    """mantissa = x 2**-e, with e piecewise constant: derivative 2**-e, to any order."""
    x = np.array([3.0, -0.3, 1e-3, 40.0])
    np.testing.assert_array_equal(fxad.grad(lambda v: fnp.sum(fnp.frexp(v)[0]))(x),
                                  2.0 ** -np.frexp(x)[1])
    check_grads(lambda v: fnp.frexp(v)[0] * v, (x,), order=2)
    np.testing.assert_array_equal(fxad.grad(lambda v: fnp.sum(v * fnp.spacing(v)))(x),
                                  np.spacing(x))

"""fxad.lax's bit functions under JAX's names (bitwise logic, shifts, population_count, clz,
nextafter, bitcast_convert_type): values against NumPy and against the definition on Python
integers, for several dtypes and edge values (0, -1, the extremes, shifts past the width),
eagerly, under jit and under vmap; integer results carry no derivative through a program."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.errors import FxadTypeError

DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
RUN = {"eager": lambda f: f, "jit": fxad.jit, "vmap": fxad.vmap}


def edge_values(dtype):
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 3, 5, 100 % info.max, info.max, info.max - 1, info.min, info.min + 1]
    if info.min < 0:
        vals += [-1, -2, -100]
    return np.array(vals, dtype=dtype)


def bits(v, width):
    """v's two's-complement bit pattern as a Python int in [0, 2**width)."""
    return int(v) % (1 << width)


def signed(p, width):
    return p - (1 << width) if p >> (width - 1) else p


@pytest.mark.parametrize("mode", list(RUN))
@pytest.mark.parametrize("dtype", DTYPES)
def test_counts_and_shifts_match_their_definition_on_the_bit_pattern(dtype, mode):
    x = edge_values(dtype)
    w = 8 * np.dtype(dtype).itemsize
    run = RUN[mode]
    pc = run(lax.population_count)(x)
    lz = run(lax.clz)(x)
    assert pc.dtype == dtype and lz.dtype == dtype
    np.testing.assert_array_equal(pc, [bin(bits(v, w)).count("1") for v in x])
    np.testing.assert_array_equal(lz, [w - bits(v, w).bit_length() for v in x])
    for s in [0, 1, 3, w - 1, w, w + 3]:
        sh = np.full(x.shape, s, dtype)
        left = run(lax.shift_left)(x, sh)
        logical = run(lax.shift_right_logical)(x, sh)
        arith = run(lax.shift_right_arithmetic)(x, sh)
        for got in (left, logical, arith):
            assert got.dtype == dtype
        p = [bits(v, w) for v in x]
        want_left = [(q << s) % (1 << w) if s < w else 0 for q in p]
        want_logical = [q >> s if s < w else 0 for q in p]
        want_arith = [signed(q, w) >> min(s, w - 1) for q in p]  # Python's >> is arithmetic
        np.testing.assert_array_equal([bits(v, w) for v in left], want_left)
        np.testing.assert_array_equal([bits(v, w) for v in logical], want_logical)
        np.testing.assert_array_equal([bits(v, w) for v in arith],
                                      [q % (1 << w) for q in want_arith])


@pytest.mark.parametrize("mode", list(RUN))
@pytest.mark.parametrize("dtype", DTYPES + [np.bool_])
def test_bitwise_logic_matches_numpy(dtype, mode):
    x = edge_values(dtype) if dtype is not np.bool_ else np.array([True, False, True, False])
    y = x[::-1].copy()
    run = RUN[mode]
    for ours, theirs in [(lax.bitwise_and, np.bitwise_and), (lax.bitwise_or, np.bitwise_or),
                         (lax.bitwise_xor, np.bitwise_xor)]:
        got = run(ours)(x, y)
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got, theirs(x, y))
    np.testing.assert_array_equal(run(lax.bitwise_not)(x), np.invert(x))


def test_bit_functions_refuse_floats():
    for f in (lambda x: lax.population_count(x), lambda x: lax.clz(x),
              lambda x: lax.shift_right_arithmetic(x, x), lambda x: lax.bitwise_and(x, x)):
        with pytest.raises(FxadTypeError, match="integer"):
            f(np.ones(2))
    with pytest.raises(FxadTypeError, match="bool"):
        lax.population_count(np.array([True]))


def test_integer_parts_carry_no_derivative_in_a_program():
    """A float program whose integer side path goes through the bit functions: its derivative
    is that of the float arithmetic alone, in both modes, eagerly and under jit."""
    def f(x):
        k = lax.convert_element_type(lax.mul(x, 100.0), np.int32)
        n = lax.population_count(k) + lax.clz(lax.shift_right_arithmetic(k, np.int32(1)))
        n = lax.bitwise_xor(n, lax.shift_left(np.int32(1), np.int32(2)))
        return fnp.sum(x * x * lax.convert_element_type(n, np.float64))
    x = np.array([0.37, -1.25, 2.5])
    k = (x * 100).astype(np.int32)
    n = np.array([bin(bits(v, 32)).count("1") for v in k]) + np.array(
        [32 - bits(v, 32).bit_length() for v in (k >> 1)])
    n = n ^ 4
    np.testing.assert_allclose(fxad.grad(f)(x), 2 * x * n, rtol=1e-15)
    np.testing.assert_allclose(fxad.jit(fxad.grad(f))(x), 2 * x * n, rtol=1e-15)
    np.testing.assert_allclose(fxad.jacfwd(f)(x), 2 * x * n, rtol=1e-15)


def test_nextafter_and_bitcast():
    x = np.array([1.0, -0.0, 0.0, 1e308, -5e-324])
    y = np.array([2.0, 1.0, -1.0, np.inf, 0.0])
    np.testing.assert_array_equal(lax.nextafter(x, y), np.nextafter(x, y))
    np.testing.assert_array_equal(fxad.jit(lax.nextafter)(x, y), np.nextafter(x, y))
    # its derivative: 1 in x (x plus one ulp), 0 in y
    np.testing.assert_array_equal(fxad.grad(lambda x: fnp.sum(lax.nextafter(x, y)))(x),
                                  np.ones(5))
    u = lax.bitcast_convert_type(x, np.uint64)
    np.testing.assert_array_equal(u, x.view(np.uint64))
    np.testing.assert_array_equal(lax.bitcast_convert_type(u, np.float64), x)

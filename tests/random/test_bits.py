"""Keys and bits: the Threefry-2x32 hash against its published answers, the key operations'
structure, independence of split keys, eager == jit == vmap bit for bit, and clear errors for
bad keys. Also the bit-level primitives fxad.random is built from (bitwise, bitcast,
nextafter, fma)."""
from fractions import Fraction

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import random as fr
from fxad.rules import ops
from fxad.errors import FxadTypeError, FxadValueError
from fxad.rules.random.bits import threefry2x32


# --- the hash ----------------------------------------------------------------------------

# Known-answer vectors of Threefry-2x32 with 20 rounds, from the Random123 library's
# kat_vectors (Salmon et al., SC 2011): (key, counter) -> output.
KAT = [((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6b200159, 0x99ba4efe)),
       ((0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
       ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0))]


@pytest.mark.parametrize("key, ctr, want", KAT)
def test_threefry_known_answers(key, ctr, want):
    u = [np.uint32(v) for v in key + ctr]
    assert [int(w) for w in threefry2x32(*u)] == list(want)


def test_threefry_broadcasts_and_batches():
    rng = np.random.default_rng(0)
    k0, k1 = rng.integers(0, 2 ** 32, (2, 4), dtype=np.uint32)
    x0, x1 = rng.integers(0, 2 ** 32, (2, 4, 3), dtype=np.uint32)
    w0, w1 = threefry2x32(k0[:, None], k1[:, None], x0, x1)
    for i in range(4):
        for j in range(3):
            assert (w0[i, j], w1[i, j]) == tuple(threefry2x32(k0[i], k1[i], x0[i, j], x1[i, j]))
    got = fxad.vmap(lambda a, b: threefry2x32(a, k1[0], b, x1[0, 0]))(k0, x0[:, 0])
    want = [threefry2x32(k0[i], k1[0], x0[i, 0], x1[0, 0]) for i in range(4)]
    assert np.array_equal(np.stack(got, 1), np.array([[int(a), int(b)] for a, b in want]))
    with pytest.raises(FxadTypeError, match="uint32"):
        fxad.jit(threefry2x32)(k0.astype(np.int64), k1, x0, x1)


# --- keys ----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed, want", [
    (0, [0, 0]), (42, [0, 42]), (2 ** 32 + 5, [1, 5]), (-1, [2 ** 32 - 1, 2 ** 32 - 1]),
    (2 ** 64 - 1, [2 ** 32 - 1, 2 ** 32 - 1]), (np.int32(-1), [0, 2 ** 32 - 1]),
    (np.uint32(7), [0, 7]), (np.uint64(2 ** 33), [2, 0])])
def test_seed_is_bit_cast_to_two_words(seed, want):
    """A 64-bit seed gives (high, low) words; a 32-bit one fills the low word."""
    k = fr.PRNGKey(seed)
    assert k.dtype == np.uint32 and k.shape == (2,) and k.tolist() == want
    assert np.array_equal(fr.key(seed), k)


def test_traced_seeds():
    seeds = np.array([0, 7, -3, 2 ** 40])
    want = np.stack([fr.PRNGKey(int(s)) for s in seeds])
    assert np.array_equal(fxad.vmap(fr.PRNGKey)(seeds), want)
    assert np.array_equal(fxad.jit(fr.PRNGKey)(np.int64(-3)), fr.PRNGKey(-3))


def test_split_fold_in_and_bits_shapes_and_dtypes():
    k = fr.PRNGKey(1)
    assert fr.split(k).shape == (2, 2) and fr.split(k, (3, 4)).shape == (3, 4, 2)
    assert fr.split(k, 0).shape == (0, 2)
    assert fr.fold_in(k, 5).shape == (2,) and fr.fold_in(k, 5).dtype == np.uint32
    assert fr.bits(k).dtype == np.uint64 and fr.bits(k).shape == ()
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
        b = fr.bits(k, (3, 2), dt)
        assert b.dtype == dt and b.shape == (3, 2)


def test_draws_are_laid_out_in_row_major_order():
    """Element i of any shape is drawn from counter i: reshaping the request reshapes the
    result, and fold_in(k, i) is split(k, n)[i] (JAX's partitionable scheme)."""
    k = fr.PRNGKey(3)
    assert np.array_equal(fr.bits(k, (4, 5), np.uint32), fr.bits(k, (20,), np.uint32).reshape(4, 5))
    assert np.array_equal(fr.split(k, (2, 3)), fr.split(k, 6).reshape(2, 3, 2))
    assert np.array_equal(fr.bits(k, (), np.uint16), fr.bits(k, (9,), np.uint16)[0])
    keys = fr.split(k, 7)
    for i in range(7):
        assert np.array_equal(fr.fold_in(k, i), keys[i])
    # 32-bit draws are the xor of the two hash words, 64-bit ones their concatenation.
    b32, b64 = fr.bits(k, (7,), np.uint32), fr.bits(k, (7,), np.uint64)
    assert np.array_equal(b32, keys[:, 0] ^ keys[:, 1])
    assert np.array_equal(b64, (keys[:, 0].astype(np.uint64) << 32) | keys[:, 1])
    assert np.array_equal(fr.bits(k, (7,), np.uint8), b32.astype(np.uint8))


def test_split_keys_differ_from_their_parent_and_each_other():
    """The failure this catches: split(k)[0] == k (a key reused as its own child)."""
    for seed in range(200):
        k = fr.PRNGKey(seed)
        children = fr.split(k, 4)
        rows = {tuple(k)} | {tuple(c) for c in children} | {tuple(fr.fold_in(k, 0))}
        assert len(rows) == 5, seed


def _corr(a, b):
    a, b = a - a.mean(), b - b.mean()
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def test_streams_of_related_keys_are_uncorrelated():
    """Uniform streams (10^5 draws) of a key, its children, its fold-ins and neighbouring
    seeds: |correlation| < 0.015 (4.7 standard errors; identical or shifted streams give ~1),
    also between the stream and its neighbours shifted by one draw."""
    k = fr.PRNGKey(0)
    n = 10 ** 5
    # (not fold_in(k, i) for i < 3: that is split(k, n)[i] by design, as in JAX)
    keys = [k, *fr.split(k, 3), fr.fold_in(k, 7), fr.fold_in(k, 8), fr.PRNGKey(1),
            fr.split(fr.split(k)[0])[0]]
    streams = [fr.uniform(kk, (n,)) for kk in keys]
    for i in range(len(streams)):
        for j in range(i + 1, len(streams)):
            assert abs(_corr(streams[i], streams[j])) < 0.015, (i, j)
        assert abs(_corr(streams[i][1:], streams[i][:-1])) < 0.015


def test_every_bit_is_balanced():
    """Each of the 64 bit positions is set in half the draws (binomial, 3 sigma = 0.0047 at
    10^5 draws; a stuck or biased bit fails)."""
    b = fr.bits(fr.PRNGKey(5), (10 ** 5,), np.uint64)
    ones = np.array([np.mean((b >> np.uint64(i)) & np.uint64(1)) for i in range(64)])
    assert np.all(np.abs(ones - 0.5) < 0.0047 * 1.4)


def test_eager_jit_and_vmap_agree_bit_for_bit():
    keys = fr.split(fr.PRNGKey(11), 5)
    cases = [lambda k: fr.bits(k, (3, 2), np.uint32), lambda k: fr.split(k, 3),
             lambda k: fr.fold_in(k, 17), lambda k: fr.split(fr.fold_in(k, 2))[1],
             lambda k: fr.bits(fr.split(k)[0], (4,), np.uint8)]
    for f in cases:
        loop = np.stack([f(k) for k in keys])
        assert np.array_equal(fxad.jit(f)(keys[0]), f(keys[0]))
        assert np.array_equal(fxad.vmap(f)(keys), loop)
        assert np.array_equal(fxad.jit(fxad.vmap(f))(keys), loop)
        assert np.array_equal(fxad.vmap(f, in_axes=1)(keys.T), loop)
        nested = fxad.vmap(fxad.vmap(f))(keys.reshape(1, 5, 2))
        assert np.array_equal(nested[0], loop)


def test_fold_in_batched_over_data_and_keys():
    keys = fr.split(fr.PRNGKey(2), 3)
    data = np.arange(3, dtype=np.uint32) * 1000
    want = np.stack([fr.fold_in(keys[i], data[i]) for i in range(3)])
    assert np.array_equal(fxad.vmap(fr.fold_in)(keys, data), want)
    assert np.array_equal(fxad.vmap(lambda d: fr.fold_in(keys[0], d))(data),
                          np.stack([fr.fold_in(keys[0], d) for d in data]))
    assert np.array_equal(fxad.vmap(lambda k: fr.fold_in(k, 9))(keys),
                          np.stack([fr.fold_in(k, 9) for k in keys]))


def test_jit_stages_the_bits_instead_of_freezing_them():
    f = fxad.jit(lambda k: fr.bits(k, (4,), np.uint32))
    k1, k2 = fr.split(fr.PRNGKey(0))
    assert not np.array_equal(f(k1), f(k2))
    assert np.array_equal(f(k1), f(k1))
    names = [e.primitive.name for e in fxad.make_jaxpr(lambda k: fr.bits(k, (4,)))(k1).eqns]
    assert names == ["random_bits"]


# --- bad inputs ------------------------------------------------------------------------------

class _TypedKey:  # stands in for a JAX typed key (its dtype prints as key<fry>)
    dtype = "key<fry>"
    shape = ()


@pytest.mark.parametrize("bad, err, match", [
    (np.array([0.0, 1.0]), FxadTypeError, "float key"),
    (np.array([0, 1]), FxadTypeError, "uint32"),
    (np.zeros(3, np.uint32), FxadValueError, r"shape \(2,\)"),
    (np.zeros((4, 2), np.uint32), FxadValueError, "vmap"),
    (_TypedKey(), FxadTypeError, "key_data"),
    ([0, 1], FxadTypeError, "uint32"),
])
def test_bad_keys_get_clear_errors(bad, err, match):
    for f in (lambda k: fr.normal(k), lambda k: fr.split(k), lambda k: fr.fold_in(k, 1),
              lambda k: fr.bits(k), lambda k: fr.randint(k, (), 0, 3), lambda k: fr.gamma(k, 1.0)):
        with pytest.raises(err, match=match):
            f(bad)


def test_bad_seeds_data_and_dtypes():
    for seed in (1.5, True, np.array([1, 2]), "3"):
        with pytest.raises(FxadTypeError):
            fr.PRNGKey(seed)
    with pytest.raises(FxadValueError, match="64 bits"):
        fr.PRNGKey(2 ** 64)
    k = fr.PRNGKey(0)
    with pytest.raises(FxadTypeError, match="scalar"):
        fr.fold_in(k, np.arange(3))
    with pytest.raises(FxadValueError, match="32 unsigned bits"):
        fr.fold_in(k, -1)
    with pytest.raises(FxadTypeError, match="integer"):
        fr.fold_in(k, 1.5)
    with pytest.raises(FxadTypeError, match="unsigned"):
        fr.bits(k, (2,), np.int32)
    with pytest.raises(FxadValueError, match="widths"):
        ops.random_bits(k, 12, (2,))
    with pytest.raises(FxadValueError, match="negative"):
        fr.uniform(k, (2, -1))
    with pytest.raises(FxadTypeError, match="float"):
        fr.uniform(k, (2,), np.int32)


def test_keys_are_not_differentiable():
    k = fr.PRNGKey(0)
    with pytest.raises(FxadTypeError, match="floating-point"):
        fxad.grad(lambda k: fnp.sum(fr.normal(k, (3,))))(k)
    with pytest.raises(FxadTypeError, match="float key"):  # a key cast to float for grad
        fxad.grad(lambda k: fnp.sum(fr.normal(k, (3,))))(k.astype(float))
    # Integer outputs carry symbolic-zero tangents: grad through them is exactly zero.
    g = fxad.grad(lambda x: fnp.sum(x * fr.bits(fr.fold_in(k, 3), (3,), np.uint8)))(np.ones(3))
    assert np.array_equal(g, fr.bits(fr.fold_in(k, 3), (3,), np.uint8).astype(float))
    assert fxad.grad(lambda p: fnp.sum(fr.bernoulli(k, p, (5,)) * 1.0))(0.5) == 0.0


# --- the bit-level primitives ------------------------------------------------------------------

INT_DTYPES = [np.uint8, np.uint16, np.uint32, np.uint64, np.int32, np.int64]


@pytest.mark.parametrize("dt", INT_DTYPES)
def test_bitwise_ops_match_numpy(dt):
    rng = np.random.default_rng(1)
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, 50, dtype=dt, endpoint=True)
    y = rng.integers(info.min, info.max, 50, dtype=dt, endpoint=True)
    s = rng.integers(0, info.bits, 50).astype(dt)
    for ours, theirs in [(ops.bitwise_and, np.bitwise_and), (ops.bitwise_or, np.bitwise_or),
                         (ops.bitwise_xor, np.bitwise_xor), (ops.shift_left, np.left_shift)]:
        for f in (ours, fxad.jit(ours)):
            assert np.array_equal(f(x, y if theirs is not np.left_shift else s),
                                  theirs(x, y if theirs is not np.left_shift else s))
    assert np.array_equal(ops.bitwise_not(x), np.invert(x))
    unsigned = x.view(f"u{x.itemsize}")
    want = (unsigned >> s.astype(unsigned.dtype)).view(dt)  # zeros shift in, whatever the sign
    assert np.array_equal(ops.shift_right_logical(x, s), want)
    assert np.array_equal(fxad.vmap(ops.shift_right_logical)(x, s), want)


def test_bitcast_and_nextafter():
    x = np.array([0.0, -0.0, 1.5, -np.inf, np.nan, 5e-324])
    u = ops.bitcast_convert_type(x, np.uint64)
    assert u.dtype == np.uint64 and np.array_equal(u, x.view(np.uint64))
    assert np.array_equal(ops.bitcast_convert_type(u, np.float64).view(np.uint64), u)
    assert np.array_equal(fxad.jit(lambda v: ops.bitcast_convert_type(v, np.int64))(x),
                          x.view(np.int64))
    with pytest.raises(FxadValueError, match="size"):
        ops.bitcast_convert_type(x, np.uint32)
    with pytest.raises(FxadTypeError, match="integer"):
        ops.bitwise_and(x, x)
    with pytest.raises(FxadTypeError, match="integer"):
        ops.shift_left(x, 1)
    up = ops.nextafter(np.array([1.0, -1.0, 0.0]), np.inf)
    assert np.array_equal(up, np.nextafter([1.0, -1.0, 0.0], np.inf))
    assert fxad.grad(lambda v: ops.nextafter(v, 3.0))(1.0) == 1.0


def _exact_fma(x, y, z):
    return Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))


def _is_nearest(got, exact, dtype):
    """got is the float of `dtype` nearest to the exact value (ties: either neighbour is
    farther or equally far)."""
    got = dtype(got)
    d = abs(Fraction(float(got)) - exact)
    for nb in (np.nextafter(got, dtype(np.inf)), np.nextafter(got, dtype(-np.inf))):
        if abs(Fraction(float(nb)) - exact) < d:
            return False
    return True


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_fma_rounds_once(dtype):
    """x*y + z correctly rounded, checked with exact rational arithmetic, where a product
    rounded first differs (cancellation makes the difference visible)."""
    rng = np.random.default_rng(2)
    x = rng.uniform(-2, 2, 400).astype(dtype)
    y = rng.uniform(-2, 2, 400).astype(dtype)
    z = (-(x.astype(np.float64) * y)).astype(dtype)  # cancels the product's leading bits
    z[::2] = rng.uniform(-2, 2, 200).astype(dtype)
    got = ops.fma(x, y, z)
    assert got.dtype == dtype
    assert all(_is_nearest(g, _exact_fma(a, b, c), dtype) for a, b, c, g in zip(x, y, z, got))
    if dtype == np.float64:
        assert np.any(got != x * y + z)  # the case where rounding twice is wrong occurs
    assert np.array_equal(fxad.jit(ops.fma)(x, y, z), got)


def test_fma_special_values():
    inf, nan = np.inf, np.nan
    x = np.array([inf, 1.0, nan, 1e300, 0.0, 1e-300])
    y = np.array([1.0, inf, 1.0, 1e10, inf, 1e-300])
    z = np.array([1.0, -inf, 0.0, -1.0, 1.0, 1e-310])
    with np.errstate(all="ignore"):
        want = x * y + z
    np.testing.assert_array_equal(ops.fma(x, y, z), want)

"""Counter-based random bits: the Threefry-2x32 hash (Salmon et al., "Parallel random numbers:
as easy as 1, 2, 3", SC 2011; 20 rounds, as JAX's default implementation), and the key
primitives built on it, following JAX's `jax_threefry_partitionable` scheme so the streams
are JAX's bit for bit:

  key        a uint32 array of shape (2,); a batch of keys has shape (..., 2)
  seed       a 64-bit integer seed s -> (s >> 32, s & 0xFFFFFFFF)
  split      key k -> keys threefry(k, (hi(i), lo(i))) for the row-major index i of each new key
  fold_in    key k, data d -> threefry(k, (0, d))
  bits       key k -> per element i: w0 ^ w1 (32 bits; 8 and 16 keep the low bits) or
             w0 << 32 | w1 (64 bits), where (w0, w1) = threefry(k, (hi(i), lo(i)))

Every primitive here takes a batch of keys (leading axes), so vmap over keys is one call, and
has integer outputs (symbolic-zero tangents). Nothing is computed at trace time: under jit
the key is an input of the staged program and these primitives run when it runs.
"""
from __future__ import annotations

import math

import numpy as np

from ...core import Primitive, ShapedArray, Tracer
from ...errors import FxadTypeError, FxadValueError
from ..helpers import bdim_to_front, broadcast_batched, defjvp_zero, ndim_of, shape_of
from .. import ops
from ..elementwise.bitwise import fma_np

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)
_CHUNK = 1 << 16  # lanes hashed at a time: the working arrays stay in cache (3x faster)
_U32 = np.dtype(np.uint32)
UINT_BY_BITS = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}


def _rounds(k0, k1, x0, x1, tmp):
    """Threefry-2x32 on uint32 lanes x0, x1 (1-d, updated in place; wraparound arithmetic)
    with keys k0, k1 (scalars or lane arrays): 5 groups of 4 rounds, a key injection after
    each group."""
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0 += k0
    x1 += k1
    for g in range(5):
        for r in _ROTATIONS[g % 2]:
            x0 += x1
            np.left_shift(x1, r, out=tmp)  # rotate left by r
            x1 >>= 32 - r
            x1 |= tmp
            x1 ^= x0
        x0 += ks[(g + 1) % 3]
        x1 += ks[(g + 2) % 3]
        x1 += np.uint32(g + 1)


def threefry_np(k0, k1, x0, x1):
    """The hash of counters (x0, x1) under keys (k0, k1), all uint32 and broadcast together:
    two uint32 arrays of the broadcast shape. Vectorized over lanes, in cache-sized chunks."""
    arrs = [np.asarray(a, _U32) for a in (k0, k1, x0, x1)]
    shape = np.broadcast_shapes(*[a.shape for a in arrs])
    n = math.prod(shape)
    keys = [a.reshape(()) if a.size == 1 else np.broadcast_to(a, shape).ravel()
            for a in arrs[:2]]
    y0 = np.broadcast_to(arrs[2], shape).ravel().copy()  # the output buffers, hashed in place
    y1 = np.broadcast_to(arrs[3], shape).ravel().copy()
    tmp = np.empty(min(n, _CHUNK), _U32)
    for s in range(0, n, _CHUNK):
        e = min(n, s + _CHUNK)
        ka, kb = [k[()] if k.ndim == 0 else k[s:e] for k in keys]
        _rounds(ka, kb, y0[s:e], y1[s:e], tmp[:e - s])
    return y0.reshape(shape), y1.reshape(shape)


def _hash_indices(k0, k1, y0, y1, start=0):
    """y0, y1 (1-d uint32 buffers) := threefry((k0, k1), (hi(i), lo(i))) for the 64-bit
    indices i = start, start + 1, ...: the counters are written chunk by chunk and hashed in
    place, so nothing of the full size is allocated besides the outputs."""
    tmp = np.empty(min(len(y0), _CHUNK), _U32)
    for s in range(0, len(y0), _CHUNK):
        e = min(len(y0), s + _CHUNK)
        if start + e <= 2 ** 32:
            y0[s:e] = 0
            y1[s:e] = np.arange(start + s, start + e, dtype=_U32)
        else:
            i = np.arange(start + s, start + e, dtype=np.uint64)
            y0[s:e], y1[s:e] = i >> np.uint64(32), i & np.uint64(0xFFFFFFFF)
        _rounds(k0, k1, y0[s:e], y1[s:e], tmp[:e - s])


def hash_counters(keys, n):
    """For keys of shape (m, 2): the words (w0, w1) of threefry(key j, index i) for i < n,
    each of shape (m, n). Few large draws loop over keys (keys stay scalars); many small
    ones (a key per element, as gamma's sampler uses) hash all keys' lanes at once."""
    keys = np.asarray(keys, _U32).reshape(-1, 2)
    m = keys.shape[0]
    w0, w1 = np.empty((m, n), _U32), np.empty((m, n), _U32)
    if m == 1 or n >= 4096:
        for j in range(m):
            _hash_indices(keys[j, 0], keys[j, 1], w0[j], w1[j])
    elif m:
        idx = np.tile(np.arange(n, dtype=np.uint64), m)
        hi, lo = (idx >> np.uint64(32)).astype(_U32), idx.astype(_U32)
        w0, w1 = [w.reshape(m, n) for w in threefry_np(np.repeat(keys[:, 0], n),
                                                        np.repeat(keys[:, 1], n), hi, lo)]
    return w0, w1


def bits_np(keys, bit_width, shape):
    """JAX's random bits for each key of keys (..., 2): shape keys.shape[:-1] + shape."""
    lead, n = keys.shape[:-1], math.prod(shape)
    w0, w1 = hash_counters(keys, n)
    if bit_width == 64:
        out = w0.astype(np.uint64)
        out <<= np.uint64(32)
        out |= w1
    else:
        out = np.bitwise_xor(w0, w1, out=w0)
        if bit_width < 32:
            out = out.astype(UINT_BY_BITS[bit_width])  # keeps the low bits
    return out.reshape(lead + tuple(shape))


def split_np(keys, shape):
    lead = keys.shape[:-1]
    w0, w1 = hash_counters(keys, math.prod(shape))
    return np.stack([w0, w1], axis=-1).reshape(lead + tuple(shape) + (2,))


def fold_in_np(keys, data):
    data = np.asarray(data).astype(_U32)  # 32-bit data (wraps, as JAX's uint32 conversion)
    keys = np.asarray(keys, _U32)
    w0, w1 = threefry_np(keys[..., 0], keys[..., 1], np.zeros((), _U32), data)
    return np.stack([w0, w1], axis=-1)


def seed_np(seeds):
    """A key from each integer seed: a 64-bit seed is bit-cast to two uint32 words (high
    first); a seed of 32 bits or fewer fills the low word (JAX with 64-bit types enabled)."""
    seeds = np.asarray(seeds)
    if seeds.dtype.itemsize == 8:
        u = seeds.view(np.uint64) if seeds.dtype.kind == "i" else seeds
        hi, lo = (u >> np.uint64(32)).astype(_U32), u.astype(_U32)
    else:
        lo, hi = seeds.astype(_U32), np.zeros(seeds.shape, _U32)  # two's complement
    return np.stack([hi, lo], axis=-1)


# --- NumPy draws shared by the samplers' impls (gamma, poisson, binomial): the same
# arithmetic, in the same order, as the fxad.random functions of the same names -------------

def unit_floats_np(bits, dtype):
    """Floats in [1, 2) from random mantissa bits, minus 1: uniform on [0, 1) in steps of
    2**-nmant (JAX's construction; NumPy and JAX share the IEEE layouts)."""
    info = np.finfo(dtype)
    u = UINT_BY_BITS[info.bits]
    mant = (bits >> u.type(info.bits - info.nmant)) | np.array(1.0, dtype).view(u)
    return mant.view(dtype) - dtype.type(1)


def exact_scale(span):
    """Is x * span exact for every float x in [0, 1)? (A concrete span of powers of two: then
    x * span + minval rounds once, like a fused multiply-add.)"""
    if isinstance(span, Tracer):
        return False
    m, _ = np.frexp(np.asarray(span))
    return bool(np.all((m == 0.5) | (m == -0.5) | (m == 0)))


def uniform_np(keys, shape, dtype, minval=0.0, maxval=1.0):
    """uniform(key, shape, dtype, minval, maxval) for each key of keys (..., 2)."""
    dtype = np.dtype(dtype)
    lo, hi = dtype.type(minval), dtype.type(maxval)
    f = unit_floats_np(bits_np(keys, np.finfo(dtype).bits, shape), dtype)
    span = hi - lo
    return np.maximum(lo, (f * span + lo if exact_scale(span) or dtype == np.float16
                      else fma_np(f, span, lo)))


def normal_np(keys, shape, dtype):
    """normal(key, shape, dtype) for each key: sqrt(2) erfinv(u), u uniform on (-1, 1)."""
    import scipy.special as sc
    dtype = np.dtype(dtype)
    lo = np.nextafter(dtype.type(-1), dtype.type(0))
    return dtype.type(np.sqrt(2)) * sc.erfinv(uniform_np(keys, shape, dtype, lo, 1.0))


# --- checks shared by the shape rules --------------------------------------------------------

def check_keys(aval, name):
    if aval.dtype != _U32 or not aval.shape or aval.shape[-1] != 2:
        raise FxadTypeError(f"{name}: keys must be uint32 arrays of shape (..., 2), got "
                            f"{aval.str_short()}")
    return aval.shape[:-1]


def _key_batch(vals, dims):
    """Batching: the key batch axis in front (the primitives take leading key axes)."""
    return bdim_to_front(vals[0], dims[0])


# --- the hash itself (JAX's threefry2x32 primitive: elementwise, broadcasting) ---------------

threefry2x32_p = Primitive("threefry2x32", multiple_results=True, memory="fresh")
threefry2x32_p.def_impl(lambda k0, k1, x0, x1: list(threefry_np(k0, k1, x0, x1)))
def _threefry_shape(*avals):
    if any(a.dtype != _U32 for a in avals):
        raise FxadTypeError("threefry2x32 takes uint32 operands, got "
                            f"{[a.str_short() for a in avals]}")
    try:
        shape = np.broadcast_shapes(*[a.shape for a in avals])
    except ValueError:
        raise FxadValueError(f"threefry2x32: shapes {[a.shape for a in avals]} do not "
                             "broadcast together") from None
    return [ShapedArray(shape, _U32)] * 2
threefry2x32_p.def_abstract_eval(_threefry_shape)
defjvp_zero(threefry2x32_p)
def _threefry_batch(vals, dims):
    n = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not None)
    rank = max(ndim_of(v) - (d is not None) for v, d in zip(vals, dims))
    aligned = []
    for v, d in zip(vals, dims):  # batch axis in front, then NumPy's right alignment
        v = broadcast_batched(v, d, n)
        r = ndim_of(v) - 1
        aligned.append(ops.reshape(v, (n,) + (1,) * (rank - r) + shape_of(v)[1:]))
    return threefry2x32_p.bind(*aligned), [0, 0]
threefry2x32_p.def_batch(_threefry_batch)
def threefry2x32(k0, k1, x0, x1): return threefry2x32_p.bind(k0, k1, x0, x1)


# --- seeds, bits, split, fold_in ----------------------------------------------------------------

random_seed_p = Primitive("random_seed", memory="fresh")
random_seed_p.def_impl(seed_np)
def _seed_shape(seeds):
    if seeds.dtype.kind not in "iu":
        raise FxadTypeError(f"a PRNG seed must be an integer, got {seeds.str_short()}")
    return ShapedArray(seeds.shape + (2,), _U32)
random_seed_p.def_abstract_eval(_seed_shape)
defjvp_zero(random_seed_p)
random_seed_p.def_batch(lambda vals, dims: (random_seed_p.bind(vals[0]), dims[0]))
def random_seed(seeds): return random_seed_p.bind(seeds)


random_bits_p = Primitive("random_bits", memory="fresh")
random_bits_p.def_impl(lambda keys, bit_width, shape: bits_np(np.asarray(keys), bit_width, shape))
random_bits_p.def_abstract_eval(lambda keys, bit_width, shape: ShapedArray(
    check_keys(keys, "random_bits") + shape, UINT_BY_BITS[bit_width]))
defjvp_zero(random_bits_p)
random_bits_p.def_batch(lambda vals, dims, bit_width, shape: (
    random_bits_p.bind(_key_batch(vals, dims), bit_width=bit_width, shape=shape), 0))
def random_bits(keys, bit_width, shape):
    if bit_width not in UINT_BY_BITS:
        raise FxadValueError(f"random bits come in widths 8, 16, 32 or 64, not {bit_width}")
    return random_bits_p.bind(keys, bit_width=int(bit_width), shape=tuple(map(int, shape)))


random_split_p = Primitive("random_split", memory="fresh")
random_split_p.def_impl(lambda keys, shape: split_np(np.asarray(keys), shape))
random_split_p.def_abstract_eval(lambda keys, shape: ShapedArray(
    check_keys(keys, "random_split") + shape + (2,), _U32))
defjvp_zero(random_split_p)
random_split_p.def_batch(lambda vals, dims, shape: (
    random_split_p.bind(_key_batch(vals, dims), shape=shape), 0))
def random_split(keys, shape): return random_split_p.bind(keys, shape=tuple(map(int, shape)))


random_fold_in_p = Primitive("random_fold_in", memory="fresh")
random_fold_in_p.def_impl(fold_in_np)
def _fold_in_shape(keys, data):
    lead = check_keys(keys, "random_fold_in")
    if data.dtype.kind not in "iu":
        raise FxadTypeError(f"fold_in: data must be an integer, got {data.str_short()}")
    return ShapedArray(np.broadcast_shapes(lead, data.shape) + (2,), _U32)
random_fold_in_p.def_abstract_eval(_fold_in_shape)
defjvp_zero(random_fold_in_p)
def _fold_in_batch(vals, dims):
    (keys, data), (dk, dd) = vals, dims
    n = shape_of(keys)[dk] if dk is not None else shape_of(data)[dd]
    keys, data = broadcast_batched(keys, dk, n), broadcast_batched(data, dd, n)
    kl, dl = shape_of(keys)[1:-1], shape_of(data)[1:]
    r = max(len(kl), len(dl))  # align the per-example axes after the batch axis
    keys = ops.reshape(keys, (n,) + (1,) * (r - len(kl)) + kl + (2,))
    data = ops.reshape(data, (n,) + (1,) * (r - len(dl)) + dl)
    return random_fold_in_p.bind(keys, data), 0
random_fold_in_p.def_batch(_fold_in_batch)
def random_fold_in(keys, data): return random_fold_in_p.bind(keys, data)


__all__ = ["threefry2x32", "random_seed", "random_bits", "random_split", "random_fold_in"]

"""Discrete samplers: Bernoulli, integers, permutations, choices, categorical, counts. Their
outputs are integers or booleans: no derivative (symbolic zeros)."""
from __future__ import annotations

import math

import numpy as np

from .. import numpy as fnp
from ..core import Tracer, get_aval
from ..errors import FxadTypeError, FxadValueError
from ..rules import ops
from ..rules.random.bits import UINT_BY_BITS
from .common import (canonical_shape, check_key, check_shape, float_dtype, inexact_dtype,
                     int_dtype)
from .basic import uniform
from .continuous import gumbel
from .keys import split


def _clip_convert(x, dtype):
    """Integer x converted to an integer dtype, saturating instead of wrapping."""
    src = get_aval(x).dtype
    lo = max(np.iinfo(dtype).min, np.iinfo(src).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(src).max)
    return ops.convert_element_type(ops.min(ops.max(x, src.type(lo)), src.type(hi)), dtype)


def _as_int(x):
    x = x if isinstance(x, Tracer) or isinstance(x, np.ndarray) else np.asarray(x)
    return x if get_aval(x).dtype.kind in "iu" else ops.convert_element_type(x, np.int64)


def randint(key, shape, minval, maxval, dtype=None):
    """Integers uniform on [minval, maxval) (JAX's modular construction from two words of
    bits; the bias is below 2**-32 for spans under 2**32)."""
    key, dtype = check_key("randint", key), int_dtype("randint", dtype)
    shape = check_shape("randint", canonical_shape("randint", shape), minval, maxval)
    sample = dtype
    minval, maxval = _as_int(minval), _as_int(maxval)
    if dtype.itemsize < 4:  # 8- and 16-bit integers are drawn as int32 (less modulo bias)
        sample = np.dtype(np.int32)
        info = np.iinfo(dtype)
        minval = ops.min(ops.max(ops.convert_element_type(minval, sample), info.min), info.max)
        maxval = ops.min(ops.max(ops.convert_element_type(maxval, sample), info.min),
                         info.max + 1)
    out = _randint(key, shape, minval, maxval, sample)
    return ops.convert_element_type(out, dtype)


def _randint(key, shape, minval, maxval, dtype):
    n, nbits = math.prod(shape), np.iinfo(dtype).bits
    unsigned = UINT_BY_BITS[nbits]
    # Flat 1-d arithmetic: wraparound on arrays is silent (on 0-d values NumPy warns).
    too_big = ops.gt(maxval, _clip_convert(np.array(np.iinfo(dtype).max, dtype),
                                           get_aval(maxval).dtype))
    flat = lambda v: ops.reshape(ops.broadcast_to(v, shape), (n,))
    minval, maxval = flat(_clip_convert(minval, dtype)), flat(_clip_convert(maxval, dtype))
    too_big = flat(too_big)
    k1, k2 = split(key)
    higher, lower = ops.random_bits(k1, nbits, (n,)), ops.random_bits(k2, nbits, (n,))
    span = ops.convert_element_type(ops.sub(maxval, minval), unsigned)
    span = ops.select(ops.le(maxval, minval), unsigned.type(1), span)
    span = ops.select(ops.logical_and(too_big, ops.gt(maxval, minval)),
                      ops.add(span, unsigned.type(1)), span)
    mult = ops.rem(unsigned.type(2 ** (nbits // 2)), span)
    mult = ops.rem(ops.mul(mult, mult), span)
    offset = ops.add(ops.mul(ops.rem(higher, span), mult), ops.rem(lower, span))
    offset = ops.rem(offset, span)
    out = ops.add(minval, ops.convert_element_type(offset, dtype))
    return ops.reshape(out, shape)


def _shuffle(key, x, axis):
    """Sort by random 32-bit keys (stable), in enough rounds that ties are negligible."""
    size = math.prod(fnp.shape(x))
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, sub = split(key)
        order = ops.argsort(ops.random_bits(sub, 32, tuple(fnp.shape(x))), axis)
        x = fnp.take_along_axis(x, order, axis)
    return x


def permutation(key, x, axis=0, independent=False):
    """A shuffled arange(x) (x an int) or copy of x along `axis` (each slice on its own if
    `independent`)."""
    key = check_key("permutation", key)
    if not fnp.ndim(x):
        if isinstance(x, Tracer) or get_aval(x).dtype.kind not in "iu":
            raise FxadTypeError("permutation: x must be a static integer or an array with at "
                                "least one axis")
        return _shuffle(key, np.arange(int(x)), 0)
    axis = axis % fnp.ndim(x)
    if independent or fnp.ndim(x) == 1:
        return _shuffle(key, x, axis)
    order = _shuffle(key, np.arange(fnp.shape(x)[axis]), 0)
    return fnp.take(x, order, axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples of a (or of arange(a) for an int a), with or without replacement, uniformly or
    with probabilities p."""
    key = check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise FxadTypeError(f"choice: shape must be a sequence, got {shape!r}")
    shape = canonical_shape("choice", shape)
    scalar = not fnp.ndim(a)
    if scalar:
        if isinstance(a, Tracer):
            raise FxadTypeError("choice: an integer a must be static (not traced)")
        n_inputs = int(a)
    else:
        axis = axis % fnp.ndim(a)
        n_inputs = fnp.shape(a)[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return np.zeros(shape, np.int64 if scalar else get_aval(a).dtype)
    if n_inputs <= 0:
        raise FxadValueError("choice: a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise FxadValueError(f"choice: cannot take a larger sample (size {n_draws}) than the "
                             f"population (size {n_inputs}) when replace=False")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if scalar else fnp.take(a, ind, axis)
        else:
            perm = permutation(key, n_inputs if scalar else a, axis)
            result = fnp.take(perm, np.arange(n_draws), axis if not scalar else 0)
    else:
        dt = inexact_dtype(p)
        p = ops.convert_element_type(p, dt)
        if tuple(fnp.shape(p)) != (n_inputs,):
            raise FxadValueError(f"choice: p must be None or a 1-d vector of size {n_inputs}, "
                                 f"got shape {tuple(fnp.shape(p))}")
        if replace:
            cum = fnp.cumsum(p)
            r = ops.mul(cum[-1], ops.sub(1, uniform(key, shape, dt)))
            ind = ops.convert_element_type(fnp.searchsorted(cum, r), np.int64)
        else:
            with np.errstate(divide="ignore"):  # p = 0 gives log p = -inf: never chosen
                g = ops.add(gumbel(key, (n_inputs,), dt, mode=mode), ops.log(p))
            ind = ops.convert_element_type(_top_k_indices(g, n_draws), np.int64)
        result = ind if scalar else fnp.take(a, ind, axis)
    out_shape = shape if scalar else \
        tuple(fnp.shape(a)[:axis]) + shape + tuple(fnp.shape(a)[axis + 1:])
    return fnp.reshape(result, out_shape)


def _top_k_indices(x, k):
    """Indices of the k largest values along the last axis, largest first, ties to the lower
    index (as lax.top_k)."""
    order = ops.argsort(ops.neg(x), len(fnp.shape(x)) - 1)
    return order[..., :k]


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Indices drawn with probabilities softmax(logits) along `axis` (the Gumbel-max trick)."""
    key = check_key("categorical", key)
    lshape = tuple(fnp.shape(logits))
    axis = axis % len(lshape)
    batch = lshape[:axis] + lshape[axis + 1:]
    shape = batch if shape is None else check_shape(
        "categorical", canonical_shape("categorical", shape), np.empty(batch))
    prefix = shape[:len(shape) - len(batch)]
    dt = inexact_dtype(logits)
    if replace:
        drawn = list(shape[len(prefix):])  # the batch part of `shape` (it may widen logits')
        drawn.insert(axis, lshape[axis])
        noise = gumbel(key, prefix + tuple(drawn), dt, mode=mode)
        moved = fnp.reshape(logits, (1,) * len(prefix) + lshape)
        return fnp.argmax(ops.add(noise, moved), axis=len(prefix) + axis)
    k = math.prod(prefix)
    if k > lshape[axis]:
        raise FxadValueError(f"categorical: the number of samples without replacement ({k}) "
                             f"cannot exceed the number of categories ({lshape[axis]})")
    perturbed = ops.add(logits, gumbel(key, lshape, dt, mode=mode))
    top = _top_k_indices(fnp.moveaxis(perturbed, axis, -1), k)  # batch + (k,)
    top = ops.convert_element_type(top, np.int32)  # as JAX (lax.top_k's indices are int32)
    return fnp.reshape(fnp.moveaxis(top, -1, 0), shape)


def geometric(key, p, shape=None, dtype=None):
    """Trials until the first success (1, 2, ...)."""
    key, dtype = check_key("geometric", key), int_dtype("geometric", dtype)
    shape = check_shape("geometric", canonical_shape("geometric", shape), p)
    p = ops.convert_element_type(p, inexact_dtype(p))
    u = uniform(key, shape, get_aval(p).dtype)
    u = ops.select(ops.eq(u, 0), get_aval(p).dtype.type(1), u)
    g = ops.add(ops.floor(ops.div(ops.log(u), ops.log1p(ops.neg(p)))), 1)
    return ops.convert_element_type(g, dtype)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) counts (lam in float32, as JAX: Knuth below 10, PTRS above)."""
    key, dtype = check_key("poisson", key), int_dtype("poisson", dtype)
    shape = canonical_shape("poisson", shape)
    shape = tuple(fnp.shape(lam)) if shape is None else check_shape("poisson", shape, lam)
    lam = ops.convert_element_type(ops.broadcast_to(lam, shape), np.float32)
    return ops.random_poisson(key, lam, dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts, as floats (JAX's default dtype)."""
    key, dtype = check_key("binomial", key), float_dtype("binomial", dtype)
    shape = check_shape("binomial", canonical_shape("binomial", shape), n, p)
    dt = inexact_dtype(p)
    prob = ops.broadcast_to(ops.convert_element_type(p, dt), shape)
    count = ops.broadcast_to(ops.convert_element_type(n, dt), shape)
    return ops.random_binomial(key, count, prob, dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts over the last axis of p summing to n: binomials of the remaining count, one
    category at a time (`unroll` is accepted for JAX's signature; the loop is unrolled)."""
    key, dtype = check_key("multinomial", key), float_dtype("multinomial", dtype)
    dt = inexact_dtype(n, p)
    n, p = ops.convert_element_type(n, dt), ops.convert_element_type(p, dt)
    shape = tuple(fnp.shape(p)) if shape is None else canonical_shape("multinomial", shape)
    remainder = ops.broadcast_to(n, shape[:-1])
    p = fnp.moveaxis(ops.broadcast_to(p, shape), -1, 0)
    remaining = fnp.flip(fnp.cumsum(fnp.flip(p, 0), axis=0), 0)
    ratios = ops.div(p, ops.select(ops.eq(remaining, 0), dt.type(1), remaining))
    keys = split(key, shape[-1])
    counts = []
    for i in range(shape[-1]):
        c = binomial(keys[i], remainder, fnp.clip(ratios[i], 0, 1), dtype=dt)
        remainder = ops.sub(remainder, c)
        counts.append(c)
    return ops.convert_element_type(fnp.stack(counts, axis=-1), dtype)


__all__ = ["randint", "permutation", "choice", "categorical",
           "geometric", "poisson", "binomial", "multinomial"]

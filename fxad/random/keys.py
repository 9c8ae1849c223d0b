"""Keys: making, splitting, folding in data, raw bits.

A key is a uint32 array of shape (2,), exactly JAX's legacy `PRNGKey` layout, and `key(seed)`
returns the same array (fxad has no extended key dtype: JAX's typed keys and raw keys hold the
same two words, `jax.random.key_data` converts). Keys are values: pass them in, split them,
never reuse one for two draws you want independent.
"""
from __future__ import annotations

import numpy as np

from ..core import Tracer, get_aval
from ..errors import FxadTypeError, FxadValueError
from ..rules import ops
from .common import canonical_shape, check_key

_IMPL = "threefry2x32"


def PRNGKey(seed, *, impl=None):
    """The key for an integer seed: a 64-bit seed is bit-cast to (high, low) uint32 words, a
    seed of at most 32 bits fills the low word (JAX's rule with 64-bit types enabled: seeds
    in [0, 2**31) give JAX's key in either mode)."""
    if impl not in (None, _IMPL):
        raise FxadValueError(f"fxad.random implements only '{_IMPL}', not {impl!r}")
    if isinstance(seed, Tracer):
        if get_aval(seed).shape:
            raise FxadTypeError(f"PRNGKey takes a scalar seed, got shape {get_aval(seed).shape}; "
                                "use fxad.vmap for a batch of seeds")
        if get_aval(seed).dtype.kind not in "iu":
            raise FxadTypeError(f"a PRNG seed must be an integer, got {get_aval(seed)}")
        return ops.random_seed(seed)
    if isinstance(seed, int) and not isinstance(seed, bool):
        if not -2 ** 63 <= seed < 2 ** 64:
            raise FxadValueError(f"a PRNG seed must fit in 64 bits, got {seed}")
        seed = np.int64(seed) if seed < 2 ** 63 else np.uint64(seed)
    if isinstance(seed, np.bool_) or np.ndim(seed) or np.asarray(seed).dtype.kind not in "iu":
        raise FxadTypeError(f"a PRNG seed must be a scalar integer, got {seed!r}")
    return ops.random_seed(np.asarray(seed))


def key(seed, *, impl=None):
    """The same uint32 (2,) key as PRNGKey(seed) (see the module docstring)."""
    return PRNGKey(seed, impl=impl)


def _num_shape(num):
    if isinstance(num, Tracer):
        raise FxadTypeError("split: the number of keys must be a static int")
    return canonical_shape("split", num)


def split(key, num=2):
    """`num` new keys (an int or a shape), shape (*num, 2), independent of each other and of
    `key` (new key i hashes the index i under `key`)."""
    return ops.random_split(check_key("split", key), _num_shape(num))


def fold_in(key, data):
    """A new key from a key and a 32-bit integer (e.g. a step or example index)."""
    key = check_key("fold_in", key)
    aval = get_aval(data)
    if aval.shape:
        raise FxadTypeError(f"fold_in takes a scalar integer, got shape {aval.shape}; use "
                            "fxad.vmap for a batch")
    if aval.dtype.kind not in "iub":
        raise FxadTypeError(f"fold_in: data must be an integer, got {aval.str_short()}")
    if isinstance(data, int) and not 0 <= data < 2 ** 32:  # as JAX: a Python int must fit
        raise FxadValueError(f"fold_in: {data} does not fit in 32 unsigned bits")
    # (integer arrays are taken modulo 2**32, as JAX's conversion to uint32 does)
    return ops.random_fold_in(key, data)


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (default uint64, as JAX with 64-bit types)."""
    key = check_key("bits", key)
    dt = np.dtype(np.uint64 if dtype is None else dtype)
    if dt.kind != "u":
        raise FxadTypeError(f"bits: dtype must be an unsigned integer dtype, got {dt}")
    return ops.random_bits(key, dt.itemsize * 8, canonical_shape("bits", shape))


def key_data(keys):
    """The uint32 words of keys (..., 2): the keys themselves, checked."""
    aval = get_aval(keys)
    if aval.dtype != np.uint32 or not aval.shape or aval.shape[-1] != 2:
        raise FxadTypeError(f"key_data: keys are uint32 arrays of shape (..., 2), got "
                            f"{aval.str_short()}")
    return keys


def wrap_key_data(key_bits_array, *, impl=None):
    """Keys from their uint32 words (..., 2): the words themselves, checked."""
    if impl not in (None, _IMPL):
        raise FxadValueError(f"fxad.random implements only '{_IMPL}', not {impl!r}")
    return key_data(key_bits_array)


def key_impl(keys):
    """The name of the key's random-number implementation: "threefry2x32", JAX's default, the
    only one fxad has."""
    key_data(keys)
    return _IMPL


def clone(key):
    """The same key (JAX's clone exists for its key-reuse checker, which fxad has not)."""
    return check_key("clone", key)

"""fxad.nn.initializers: JAX's weight initializers. Each maker returns `init(key, shape,
dtype=float64)`; the values are JAX's for the same key wherever the underlying sampler's are
(uniform-based ones bit for bit, normal-based ones to rounding, see notes/11_random.md).
"""
from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from .. import numpy as fnp
from .. import random
from ..errors import FxadValueError
from ..random.common import canonical_shape


class Initializer(Protocol):
    """The type of every initializer here, for annotations (as JAX's): called with a key, a
    shape and an optional dtype, it returns an array."""

    def __call__(self, key: Any, shape: Any, dtype: Any = None) -> Any: ...


def _dtype(dtype):
    return np.dtype(np.float64 if dtype is None else dtype)


def zeros(key, shape, dtype=None):
    """Zeros (the key is ignored)."""
    return np.zeros(canonical_shape("zeros", shape), _dtype(dtype))


def ones(key, shape, dtype=None):
    """Ones (the key is ignored)."""
    return np.ones(canonical_shape("ones", shape), _dtype(dtype))


def constant(value, dtype=None):
    """An initializer filling the shape with `value` (the key is ignored)."""
    def init(key, shape, dtype=dtype):
        return fnp.full(canonical_shape("constant", shape), value, _dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """Uniform on [0, scale)."""
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.uniform(key, shape, dt) * np.array(scale, dt)
    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer drawing stddev times standard normal samples (`fxad.random.normal`)."""
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.normal(key, shape, dt) * np.array(stddev, dt)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """stddev times a standard normal truncated to (lower, upper) (no variance correction)."""
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dt) * np.array(stddev, dt)
    return init


def _size(shape, axes):
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out): the input and output sizes times the receptive field (the axes that
    are none of in, out and batch: a convolution kernel's spatial axes)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise FxadValueError(f"cannot compute the fans of a {len(shape)}-d weight with the "
                             "default in_axis: give a shape of at least 2 axes or in_axis")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    field = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * field, out_size * field


def _complex_uniform(key, shape, dtype):
    """Uniform on the unit-variance disk."""
    k_r, k_theta = random.split(key)
    real = np.array(0, dtype).real.dtype
    r = fnp.sqrt(2 * random.uniform(k_r, shape, real)).astype(dtype)
    theta = 2 * np.pi * random.uniform(k_theta, shape, real).astype(dtype)
    return r * fnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """A complex normal (variance 1 before truncation) with modulus below `upper`."""
    k_r, k_theta = random.split(key)
    real = np.array(0, dtype).real.dtype
    t = (1 - np.exp(np.array(-(upper ** 2), dtype))) * random.uniform(k_r, shape, real).astype(dtype)
    r = fnp.sqrt(-fnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(k_theta, shape, real).astype(dtype)
    return r * fnp.exp(1j * theta)


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """Samples with variance scale / n, n the fan_in, fan_out, their average ("fan_avg") or
    geometric mean ("fan_geo_avg"); "truncated_normal" cuts at 2 standard deviations (and
    rescales so the variance stays scale / n), "uniform" is symmetric about 0."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise FxadValueError(f"variance_scaling: invalid mode {mode!r}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise FxadValueError(f"variance_scaling: invalid distribution {distribution!r}")

    def init(key, shape, dtype=dtype):
        shape, dt = canonical_shape("variance_scaling", shape), _dtype(dtype)
        fan_in, fan_out = compute_fans(shape, in_axis, out_axis, batch_axis)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
             "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = np.array(scale / n, dt)
        if distribution == "truncated_normal":
            if dt.kind == "f":  # .8796... = std of a standard normal truncated to (-2, 2)
                stddev = np.sqrt(variance) / np.array(.87962566103423978, dt)
                return random.truncated_normal(key, -2, 2, shape, dt) * stddev
            stddev = np.sqrt(variance) / np.array(.95311164380491208, dt)
            return _complex_truncated_normal(key, 2, shape, dt) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dt) * np.sqrt(variance)
        if dt.kind == "f":
            return random.uniform(key, shape, dt, -1) * np.sqrt(3 * variance)
        return _complex_uniform(key, shape, dt) * np.sqrt(variance)
    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """Glorot and Bengio's (alias xavier_uniform) initializer: uniform samples with variance
    1 / n, n the average of fan_in and fan_out
    (`variance_scaling(1.0, "fan_avg", "uniform")`; the axes as in `compute_fans`)."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """Glorot and Bengio's (alias xavier_normal) initializer: truncated normal samples with
    variance 1 / n, n the average of fan_in and fan_out
    (`variance_scaling(1.0, "fan_avg", "truncated_normal")`; the axes as in `compute_fans`)."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """LeCun's initializer: uniform samples with variance 1 / n, n fan_in
    (`variance_scaling(1.0, "fan_in", "uniform")`; the axes as in `compute_fans`)."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """LeCun's initializer: truncated normal samples with variance 1 / n, n fan_in
    (`variance_scaling(1.0, "fan_in", "truncated_normal")`; the axes as in `compute_fans`)."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """He et al.'s (alias kaiming_uniform) initializer: uniform samples with variance 2 / n, n fan_in
    (`variance_scaling(2.0, "fan_in", "uniform")`; the axes as in `compute_fans`)."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """He et al.'s (alias kaiming_normal) initializer: truncated normal samples with variance 2 / n, n fan_in
    (`variance_scaling(2.0, "fan_in", "truncated_normal")`; the axes as in `compute_fans`)."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Orthonormal columns (or rows, whichever are fewer) along `column_axis`, times scale."""
    def init(key, shape, dtype=dtype):
        shape, dt = canonical_shape("orthogonal", shape), _dtype(dtype)
        if len(shape) < 2:
            raise FxadValueError("the orthogonal initializer needs a shape of at least 2 axes")
        if 0 in shape:
            return np.zeros(shape, dt)
        n_cols = shape[column_axis]
        q = random.orthogonal(key, math.prod(shape) // n_cols, (), dt, n_cols)
        q = fnp.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        return np.array(scale, dt) * fnp.moveaxis(q, -1, column_axis)
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """A convolution kernel (3, 4 or 5 axes) that is an orthogonal matrix at the spatial
    centre and zero elsewhere (Xiao et al. 2018)."""
    def init(key, shape, dtype=dtype):
        shape, dt = canonical_shape("delta_orthogonal", shape), _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise FxadValueError("the delta orthogonal initializer needs a 3-, 4- or 5-d shape")
        if shape[-1] < shape[-2]:
            raise FxadValueError(f"delta_orthogonal: fan_in ({shape[-2]}) must be at most "
                                 f"fan_out ({shape[-1]})")
        w = orthogonal(scale, column_axis, dt)(key, shape[-2:])
        spatial = shape[:-2]
        pads = [((k - 1) // 2, k - 1 - (k - 1) // 2) for k in spatial] + [(0, 0), (0, 0)]
        return fnp.pad(fnp.reshape(w, (1,) * len(spatial) + shape[-2:]), pads)
    return init


__all__ = ["Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal"]

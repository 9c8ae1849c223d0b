"""`fxad.example_libraries.stax`: JAX's minimal neural-network library, for programs that
import `jax.example_libraries.stax`.

A layer is a pair of functions:

    init_fun(rng, input_shape) -> (output_shape, params)
    apply_fun(params, inputs, **kwargs) -> outputs      (rng=key for the layers that draw)

Layers combine with `serial` and `parallel` (and FanOut / FanInSum / FanInConcat). The keys
are split as JAX splits them and the initializers are fxad.nn.initializers, which give JAX's
numbers for the same key (notes/11_random.md): the same key gives JAX's parameters, in
float64 (JAX's with 64-bit types enabled; pass `dtype=` to the initializers for float32).

Names follow JAX: layer constructors are CamelCase (`Dense(10)`); layers that need no
arguments are the pair itself (`Relu`, `Flatten`, `Identity`, `FanInSum`).
"""
from __future__ import annotations

import functools
import math

from .. import lax
from .. import numpy as fnp
from .. import random
from ..errors import FxadValueError
from ..nn import (elu, gelu, initializers, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                  softplus, standardize)

glorot_normal, normal = initializers.glorot_normal, initializers.normal
ones, zeros = initializers.ones, initializers.zeros

glorot = glorot_normal  # JAX's older names
randn = normal
logsoftmax = log_softmax


# --- layers with parameters --------------------------------------------------------------------

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: inputs @ W + b, W of shape (in, out_dim)."""
    def init_fun(rng, input_shape):
        k_w, k_b = random.split(rng)
        params = (W_init(k_w, (input_shape[-1], out_dim)), b_init(k_b, (out_dim,)))
        return tuple(input_shape[:-1]) + (out_dim,), params

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return fnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape):
    """The kernel's shape in its layout: 'O' out_chan, 'I' the input's 'C', the spatial
    letters filter_shape in order."""
    spatial = iter(filter_shape)
    return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
            else next(spatial) for c in rhs_spec]


def _conv_layer(transpose, dimension_numbers, out_chan, filter_shape, strides, padding,
                W_init, b_init):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    unit = (1,) * len(filter_shape)
    strides = strides or unit
    if W_init is None:  # fan in / fan out along the kernel's I and O axes
        W_init = glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))
    shape_tuple = lax.conv_transpose_shape_tuple if transpose else lax.conv_general_shape_tuple

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape)
        output_shape = shape_tuple(input_shape, kernel_shape, strides, padding,
                                   dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k_w, k_b = random.split(rng)
        return output_shape, (W_init(k_w, kernel_shape), b_init(k_b, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        if transpose:
            out = lax.conv_transpose(inputs, W, strides, padding,
                                     dimension_numbers=dimension_numbers)
        else:
            out = lax.conv_general_dilated(inputs, W, strides, padding, unit, unit,
                                           dimension_numbers=dimension_numbers)
        return out + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """A convolution with the layouts `dimension_numbers` = (lhs, rhs, out) strings, e.g.
    ('NHWC', 'HWIO', 'NHWC'), plus a bias per output channel."""
    return _conv_layer(False, dimension_numbers, out_chan, filter_shape, strides, padding,
                       W_init, b_init)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A transposed (fractionally strided) convolution (lax.conv_transpose) plus a bias."""
    return _conv_layer(True, dimension_numbers, out_chan, filter_shape, strides, padding,
                       W_init, b_init)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
Conv.__doc__ = ("A 2-d convolution layer, (init_fun, apply_fun): GeneralConv with NHWC "
                "inputs, HWIO kernels and NHWC outputs, as JAX's stax.Conv.")
Conv1DTranspose.__doc__ = ("A 1-d transposed convolution layer: GeneralConvTranspose with NHC "
                           "inputs, HIO kernels and NHC outputs, as JAX's.")
ConvTranspose.__doc__ = ("A 2-d transposed convolution layer: GeneralConvTranspose with NHWC "
                         "inputs, HWIO kernels and NHWC outputs, as JAX's.")


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Normalize over `axis` with the batch's own statistics (no running averages), then
    gamma * z + beta, both of the shape of the axes not in `axis`. As in JAX, `axis` is
    matched literally against 0..ndim-1 (give non-negative axes)."""
    axis = (axis,) if fnp.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k_beta, k_gamma = random.split(rng)
        beta = beta_init(k_beta, shape) if center else ()
        gamma = gamma_init(k_gamma, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        keep = tuple(None if i in axis else slice(None) for i in range(fnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[keep] * z
        return z + beta[keep] if center else z
    return init_fun, apply_fun


# --- layers without parameters -----------------------------------------------------------------

def elementwise(fun, **fun_kwargs):
    """A layer applying fun(inputs, **fun_kwargs)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(fnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(fnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _with_unit_axes(window, spec):
    """The per-axis window (or strides) of an input in layout `spec` (None: 'NHWC'-like, batch
    first and channels last): 1 on the batch and channel axes."""
    n = len(window) + 2
    skip = sorted((0, n - 1) if spec is None else (spec.index("N"), spec.index("C")))
    it = iter(window)
    return tuple(1 if i in skip else next(it) for i in range(n))


def _pooling_layer(reducer, init_val, average=False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """A pooling layer over the spatial axes of inputs in layout `spec` (default: batch
        first, channels last)."""
        window_shape = tuple(window_shape)
        strides = tuple(strides) if strides else (1,) * len(window_shape)
        dims, steps = _with_unit_axes(window_shape, spec), _with_unit_axes(strides, spec)

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, dims, steps, padding)
            unit = (1,) * len(dims)
            return lax.reduce_window_shape_tuple(input_shape, dims, steps, pads, unit,
                                                 unit), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, dims, steps, padding)
            if not average:
                return out
            # Divide by the number of inputs each window covers (fewer at padded edges).
            nd = fnp.ndim(inputs)
            batch_chan = (0, nd - 1) if spec is None else (spec.index("N"), spec.index("C"))
            spatial = tuple(n for i, n in enumerate(inputs.shape) if i not in batch_chan)
            counts = lax.reduce_window(fnp.ones(spatial, dtype=inputs.dtype), 0.0, lax.add,
                                       window_shape, strides, padding)
            for i in sorted(batch_chan):
                counts = fnp.expand_dims(counts, i)
            return out / counts
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -fnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, average=True)


def _no_params(output_shape, apply):
    """A layer without parameters from output_shape(input_shape) and apply(inputs)."""
    def init_fun(rng, input_shape):
        return output_shape(input_shape), ()

    def apply_fun(params, inputs, **kwargs):
        return apply(inputs)
    return init_fun, apply_fun


# Flatten: all but the leading (batch) axis into one. FanInSum: the sum of a list of inputs
# (after FanOut and parallel).
Flatten = _no_params(lambda s: (s[0], math.prod(s[1:])),
                     lambda x: fnp.reshape(x, (x.shape[0], -1)))
Identity = _no_params(lambda s: s, lambda x: x)
FanInSum = _no_params(lambda shapes: shapes[0], sum)


def FanOut(num):
    """`num` copies of the input, for `parallel` branches."""
    return _no_params(lambda s: [s] * num, lambda x: [x] * num)


def FanInConcat(axis=-1):
    """Concatenates a list of inputs along `axis`."""
    def output_shape(shapes):
        ax = axis % len(shapes[0])
        first = tuple(shapes[0])
        return first[:ax] + (sum(s[ax] for s in shapes),) + first[ax + 1:]
    return _no_params(output_shape, lambda xs: fnp.concatenate(xs, axis))


def Dropout(rate, mode="train"):
    """Dropout needing apply_fun(params, inputs, rng=key). As in JAX's stax, `rate` is the
    probability of *keeping* an input (kept ones are divided by it); with mode other than
    'train' the layer is the identity."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise FxadValueError("the Dropout layer needs a PRNG key: call "
                             "apply_fun(params, inputs, rng=key), e.g. with "
                             "key = fxad.random.key(0) (split it for every call)")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return fnp.where(keep, inputs / rate, 0)
    return init_fun, apply_fun


# --- combinators -------------------------------------------------------------------------------

def _apply_keys(rng, n):
    """One key per layer (split from rng), or None for each when no key was given."""
    return random.split(rng, n) if rng is not None else (None,) * n


def serial(*layers):
    """The layers one after another: each one's output is the next one's input. init_fun
    splits its key once per layer, in order (rng -> (rng, layer key))."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, p = init(layer_rng, input_shape)
            params.append(p)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        keys = _apply_keys(kwargs.pop("rng", None), len(apply_funs))
        for apply, p, key in zip(apply_funs, params, keys):
            inputs = apply(p, inputs, rng=key, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """The layers side by side: a sequence of inputs in, one to each layer, a list of
    outputs out (combine with FanOut and FanInSum / FanInConcat)."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        keys = random.split(rng, len(init_funs))
        pairs = [init(k, s) for init, k, s in zip(init_funs, keys, input_shape)]
        return tuple(s for s, _ in pairs), tuple(p for _, p in pairs)

    def apply_fun(params, inputs, **kwargs):
        keys = _apply_keys(kwargs.pop("rng", None), len(apply_funs))
        return [apply(p, x, rng=k, **kwargs)
                for apply, p, x, k in zip(apply_funs, params, inputs, keys)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built by make_layer(input_shape) once the input's shape is known."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun


__all__ = ["AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense",
           "Dropout", "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu",
           "GeneralConv", "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax",
           "MaxPool", "Relu", "Selu", "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh",
           "elementwise", "elu", "gelu", "glorot", "glorot_normal", "leaky_relu",
           "log_softmax", "logsoftmax", "normal", "ones", "parallel", "randn", "relu", "selu",
           "serial", "shape_dependent", "sigmoid", "softmax", "softplus", "standardize",
           "zeros"]

"""fxad.example_libraries.stax: shapes, initial values against fxad.random and
fxad.nn.initializers directly (the key splitting JAX does), apply functions against NumPy,
derivatives by check_grads, jit against eager, vmap against a loop. Parity with JAX itself:
test_against_jax.py (where JAX is installed)."""
import math

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import random
from fxad.example_libraries import stax
from fxad.nn import initializers as init
from fxad.test_util import check_grads

RNG = np.random.default_rng(5)
KEY = random.PRNGKey(3)


def np_conv_nhwc(x, w, stride, pads):
    """Cross-correlation, NHWC input, HWIO kernel, explicit (lo, hi) pads: loops."""
    x = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))
    kh, kw, _, o = w.shape
    oh = (x.shape[1] - kh) // stride[0] + 1
    ow = (x.shape[2] - kw) // stride[1] + 1
    out = np.zeros((x.shape[0], oh, ow, o))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw]
            out[:, i, j] = np.einsum("nhwc,hwco->no", patch, w)
    return out


def np_pool(x, k, s, pads, op, fill):
    """Pooling over axes 1, 2 of NHWC input with explicit pads filled with `fill`."""
    x = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)), constant_values=fill)
    oh = (x.shape[1] - k[0]) // s[0] + 1
    ow = (x.shape[2] - k[1]) // s[1] + 1
    return np.stack([np.stack([op(x[:, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]],
                                  axis=(1, 2)) for j in range(ow)], 1) for i in range(oh)], 1)


# --- initialization: JAX's key splitting ---------------------------------------------------------

def test_dense_and_serial_split_keys_as_jax():
    net_init, _ = stax.serial(stax.Dense(4), stax.Relu, stax.Dense(2))
    out_shape, params = net_init(KEY, (-1, 3))
    assert out_shape == (-1, 2) and params[1] == ()
    # serial: rng -> (rng, layer key) before every layer; Dense splits its key into (W, b)
    rng, k0 = random.split(KEY)
    rng, _ = random.split(rng)
    _, k2 = random.split(rng)
    for (w, b), k, shape in [(params[0], k0, (3, 4)), (params[2], k2, (4, 2))]:
        kw, kb = random.split(k)
        np.testing.assert_array_equal(w, init.glorot_normal()(kw, shape))
        np.testing.assert_array_equal(b, init.normal()(kb, shape[1:]))


def test_conv_init_uses_the_kernel_layout():
    layer_init, _ = stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 5, (3, 2), strides=(2, 1),
                                     padding="SAME")
    out_shape, (w, b) = layer_init(KEY, (4, 3, 9, 8))
    assert out_shape == (4, 5, 5, 8) and w.shape == (5, 3, 3, 2) and b.shape == (1, 5, 1, 1)
    kw, kb = random.split(KEY)
    np.testing.assert_array_equal(w, init.glorot_normal(1, 0)(kw, (5, 3, 3, 2)))
    np.testing.assert_array_equal(b, init.normal(1e-6)(kb, (1, 5, 1, 1)))


def test_parallel_and_batchnorm_init():
    p_init, _ = stax.parallel(stax.Dense(2), stax.Identity, stax.Dense(3))
    shapes, params = p_init(KEY, [(-1, 4), (-1, 5), (-1, 6)])
    assert shapes == ((-1, 2), (-1, 5), (-1, 3)) and params[1] == ()
    keys = random.split(KEY, 3)
    np.testing.assert_array_equal(params[2][0], init.glorot_normal()(
        random.split(keys[2])[0], (6, 3)))
    bn_init, _ = stax.BatchNorm(axis=(0, 2), beta_init=init.normal(1.0))
    shape, (beta, gamma) = bn_init(KEY, (8, 3, 5))
    assert shape == (8, 3, 5)
    np.testing.assert_array_equal(beta, init.normal(1.0)(random.split(KEY)[0], (3,)))
    np.testing.assert_array_equal(gamma, np.ones(3))
    _, (beta, gamma) = stax.BatchNorm(center=False, scale=False)[0](KEY, (2, 2, 2, 2))
    assert beta == () and gamma == ()


# --- apply functions against NumPy ---------------------------------------------------------------

def _run(layer, x, key=KEY, **kw):
    layer_init, apply = layer
    shape, params = layer_init(key, x.shape if isinstance(x, np.ndarray)
                               else [a.shape for a in x])
    y = apply(params, x, **kw)
    return shape, params, y


X = RNG.standard_normal((2, 6, 5, 3))

POOLS = [  # (layer, window, strides, padding, NumPy op, fill, average)
    (stax.MaxPool, (2, 2), None, "VALID", np.max, -np.inf, False),
    (stax.MaxPool, (3, 2), (2, 2), "SAME", np.max, -np.inf, False),
    (stax.SumPool, (2, 3), (1, 2), "SAME", np.sum, 0.0, False),
    (stax.AvgPool, (2, 2), (2, 2), "VALID", np.sum, 0.0, True),
    (stax.AvgPool, (3, 3), (2, 1), "SAME", np.sum, 0.0, True),
]


@pytest.mark.parametrize("layer, k, s, padding, op, fill, average", POOLS)
def test_pooling_against_numpy(layer, k, s, padding, op, fill, average):
    shape, params, y = _run(layer(k, s, padding), X)
    steps = s or (1, 1)
    pads = [tuple(p) for p in fxad.lax.padtype_to_pads(X.shape[1:3], k, steps, padding)]
    want = np_pool(X, k, steps, pads, op, fill)
    if average:  # divided by the number of real (unpadded) inputs in each window
        want = want / np_pool(np.ones_like(X), k, steps, pads, np.sum, 0.0)
    assert params == () and shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-13)


def test_pooling_with_spec():
    x = X.transpose(0, 3, 1, 2)  # NCHW
    _, _, y = _run(stax.AvgPool((2, 2), (1, 2), "SAME", spec="NCHW"), x)
    _, _, want = _run(stax.AvgPool((2, 2), (1, 2), "SAME"), X)
    np.testing.assert_allclose(y, want.transpose(0, 3, 1, 2), rtol=1e-13)


@pytest.mark.parametrize("strides, padding", [((1, 1), "SAME"), ((2, 1), "VALID"),
                                              ((2, 2), [(1, 0), (2, 1)])])
def test_conv_against_numpy(strides, padding):
    shape, (w, b), y = _run(stax.Conv(4, (3, 2), strides, padding), X)
    if isinstance(padding, str):
        padding = fxad.lax.padtype_to_pads(X.shape[1:3], (3, 2), strides, padding)
    want = np_conv_nhwc(X, w, strides, [tuple(p) for p in padding]) + b
    assert shape == want.shape and b.shape == (1, 1, 1, 4)
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-14)


def test_conv_transpose_is_the_gradient_of_a_strided_conv():
    """ConvTranspose with a flipped, transposed kernel is conv's transpose (its VJP)."""
    shape, (w, b), y = _run(stax.ConvTranspose(3, (3, 3), (2, 2), "SAME",
                                               b_init=init.zeros), X[:, :3, :3])
    assert shape == (2, 6, 6, 3) == y.shape
    _, (w2, _), _ = _run(stax.Conv1DTranspose(2, (3,), (2,), "VALID"), X[:, :, 0])
    assert w2.shape == (3, 3, 2)
    x6 = RNG.standard_normal((2, 6, 6, 3))
    fwd = lambda x: fxad.lax.conv_general_dilated(  # noqa: E731
        x, w[::-1, ::-1].transpose(0, 1, 3, 2), (2, 2), "SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    _, pullback = fxad.vjp(fwd, x6)
    np.testing.assert_allclose(pullback(np.asarray(X[:, :3, :3]))[0], y, rtol=1e-12)


def test_batchnorm_against_numpy():
    layer = stax.BatchNorm(beta_init=init.normal(1.0), gamma_init=init.normal(1.0))
    _, (beta, gamma), y = _run(layer, X)
    m, v = X.mean((0, 1, 2)), X.var((0, 1, 2))
    np.testing.assert_allclose(y, gamma * (X - m) / np.sqrt(v + 1e-5) + beta, rtol=1e-12)
    _, _, y = _run(stax.BatchNorm(axis=1, epsilon=0.1, center=False), X)
    m, v = X.mean(1, keepdims=True), X.var(1, keepdims=True)
    np.testing.assert_allclose(y, (X - m) / np.sqrt(v + 0.1), rtol=1e-12)


ELEMENTWISE = [(stax.Tanh, np.tanh), (stax.Exp, np.exp), (stax.Relu, lambda x: np.maximum(x, 0)),
               (stax.Sigmoid, lambda x: 1 / (1 + np.exp(-x))),
               (stax.Softplus, lambda x: np.log1p(np.exp(x))),
               (stax.Elu, lambda x: np.where(x > 0, x, np.expm1(x))),
               (stax.LeakyRelu, lambda x: np.where(x > 0, x, 0.01 * x)),
               (stax.Selu, lambda x: 1.0507009873554805 * np.where(
                   x > 0, x, 1.6732632423543772 * np.expm1(x))),
               (stax.Gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (
                   x + 0.044715 * x ** 3)))),
               (stax.LogSoftmax, lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
               (stax.Softmax, lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
               (stax.Identity, lambda x: x),
               (stax.Flatten, lambda x: x.reshape(x.shape[0], -1))]


@pytest.mark.parametrize("layer, ref", ELEMENTWISE)
def test_parameterless_layers_against_numpy(layer, ref):
    shape, params, y = _run(layer, X)
    assert params == () and shape == y.shape
    np.testing.assert_allclose(y, ref(X), rtol=1e-12, atol=1e-15)


def test_fan_layers_and_parallel():
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 2))
    shape, _, y = _run(stax.FanOut(3), a)
    assert shape == [(3, 4)] * 3 and len(y) == 3 and all(v is a for v in y)
    shape, _, y = _run(stax.FanInConcat(), [a, b])
    assert shape == (3, 6)
    np.testing.assert_array_equal(y, np.concatenate([a, b], -1))
    shape, _, y = _run(stax.FanInConcat(0), [a, a])
    assert shape == (6, 4)
    shape, _, y = _run(stax.FanInSum, [a, 2 * a, 3 * a])
    assert shape == (3, 4)
    np.testing.assert_allclose(y, 6 * a, rtol=1e-15)
    net = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(5), stax.Dense(5)),
                      stax.FanInSum)
    shape, ((), (p1, p2), ()), y = _run(net, a)
    assert shape == (3, 5)
    np.testing.assert_allclose(y, a @ p1[0] + p1[1] + a @ p2[0] + p2[1], rtol=1e-13)


def test_shape_dependent():
    net = stax.shape_dependent(lambda s: stax.Dense(s[-1] * 2))
    shape, (w, b), y = _run(net, RNG.standard_normal((2, 3)))
    assert shape == (2, 6) and w.shape == (3, 6) and y.shape == (2, 6)


def test_dropout():
    x = RNG.standard_normal((50, 40)) + 3.0
    k = random.PRNGKey(9)
    _, _, y = _run(stax.Dropout(0.75), x, rng=k)
    keep = np.asarray(random.bernoulli(k, 0.75, x.shape))
    np.testing.assert_array_equal(y, np.where(keep, x / 0.75, 0.0))
    assert 0.7 < keep.mean() < 0.8  # JAX's convention: rate is the probability of keeping
    np.testing.assert_array_equal(_run(stax.Dropout(0.5, mode="test"), x, rng=k)[2], x)
    with pytest.raises(ValueError, match="rng=key"):
        _run(stax.Dropout(0.5), x)
    # inside serial, the i-th layer gets split(rng, n_layers)[i]
    _, _, y = _run(stax.serial(stax.Identity, stax.Dropout(0.5)), x, rng=k)
    keep = np.asarray(random.bernoulli(random.split(k, 2)[1], 0.5, x.shape))
    np.testing.assert_array_equal(y, np.where(keep, x / 0.5, 0.0))


# --- transformations -----------------------------------------------------------------------------

def _cnn():
    return stax.serial(stax.Conv(3, (2, 2), padding="SAME"), stax.Relu, stax.BatchNorm(),
                       stax.MaxPool((2, 2), (2, 2)), stax.AvgPool((2, 1), padding="SAME"),
                       stax.Flatten, stax.Dense(3), stax.Gelu, stax.LogSoftmax)


def test_derivatives_of_a_network():
    net_init, apply = _cnn()
    x = X[:, :4, :4]
    _, params = net_init(KEY, x.shape)

    def loss(params, x):
        return fnp.sum(apply(params, x) * np.arange(3.0))
    check_grads(loss, (params, x), order=1, modes=("rev",))
    leaves, unravel = fxad.flatten_util.ravel_pytree(params)
    check_grads(lambda flat: loss(unravel(flat), x), (leaves,), order=2, modes=("fwd", "rev"))


def test_jit_and_vmap():
    net_init, apply = stax.serial(stax.Dense(5), stax.Tanh, stax.Dense(2), stax.Softmax)
    _, params = net_init(KEY, (-1, 4))
    xs = RNG.standard_normal((7, 4))
    np.testing.assert_allclose(fxad.jit(apply)(params, xs), apply(params, xs), rtol=1e-14)
    per_example = fxad.vmap(fxad.grad(lambda p, x: apply(p, x[None])[0, 0]),
                            in_axes=(None, 0))(params, xs)
    for i in range(len(xs)):
        g = fxad.grad(lambda p: apply(p, xs[i:i + 1])[0, 0])(params)
        for a, b in zip(fxad.tree.leaves(per_example), fxad.tree.leaves(g)):
            np.testing.assert_allclose(a[i], b, rtol=1e-12, atol=1e-15)


def test_names_match_jax():
    layers = {"AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense",
              "Dropout", "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu",
              "GeneralConv", "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax",
              "MaxPool", "Relu", "Selu", "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh",
              "elementwise", "parallel", "serial", "shape_dependent", "glorot", "randn",
              "logsoftmax", "relu", "standardize", "glorot_normal", "normal", "ones", "zeros"}
    assert layers <= set(stax.__all__) and all(hasattr(stax, n) for n in stax.__all__)
    assert math.prod((2, 3)) == stax.Flatten[0](None, (4, 2, 3))[0][1]

"""The same stax programs trained with the same optimizers in JAX (64-bit types enabled) and
in fxad, parameters compared after every step. Runs only where JAX is installed (it is not a
dependency); `python tests/example_libraries/test_against_jax.py` prints the table of
differences that notes/12_jax_surface.md reports."""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.example_libraries.optimizers as jopt  # noqa: E402
import jax.example_libraries.stax as jstax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import fxad  # noqa: E402
import fxad.numpy as fnp  # noqa: E402
from fxad.example_libraries import optimizers as fopt  # noqa: E402
from fxad.example_libraries import stax as fstax  # noqa: E402

RNG = np.random.default_rng(0)
SIDES = {"jax": (jax, jnp, jstax, jopt), "fxad": (fxad, fnp, fstax, fopt)}
STEPS = 8


def mlp(stax):
    return stax.serial(stax.Dense(32), stax.Relu, stax.Dense(16), stax.Tanh, stax.Dense(4),
                       stax.LogSoftmax), (-1, 10)


def cnn(stax):
    # BatchNorm after the Relu: right after the convolution it would cancel the conv's bias,
    # whose gradient would be rounding noise (which adagrad and sm3 scale to full steps).
    return stax.serial(stax.Conv(6, (3, 3), padding="SAME"), stax.Relu, stax.BatchNorm(),
                       stax.MaxPool((2, 2), strides=(2, 2)), stax.Conv(8, (3, 3)), stax.Elu,
                       stax.AvgPool((2, 2), padding="SAME"), stax.Flatten, stax.Dense(4),
                       stax.LogSoftmax), (-1, 10, 10, 3)


def zoo(stax):
    """Every other layer and combinator once."""
    branch = stax.serial(stax.Dense(6), stax.Gelu)
    conv_t = stax.serial(stax.ConvTranspose(3, (2, 2), strides=(2, 2)), stax.Softplus,
                         stax.SumPool((2, 2), strides=(2, 2), padding="SAME"), stax.Sigmoid)
    nchw = stax.serial(stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 2, (3, 3), padding="SAME"),
                       stax.MaxPool((2, 2), spec="NCHW"), stax.AvgPool((2, 2), spec="NCHW"),
                       stax.Flatten, stax.Dense(6))
    body = stax.serial(
        stax.FanOut(3),
        stax.parallel(stax.serial(conv_t, stax.Flatten, branch),
                      stax.serial(stax.Flatten, stax.Dense(6), stax.LeakyRelu),
                      stax.shape_dependent(lambda s: stax.serial(
                          stax.Flatten, stax.Dense(6 if s[-1] == 3 else 5), stax.Selu))),
        stax.FanInConcat(), stax.Dense(6), stax.Dropout(0.8), stax.FanOut(2),
        stax.parallel(stax.Identity, stax.serial(stax.Dense(6), stax.Exp)), stax.FanInSum,
        stax.BatchNorm(axis=0), stax.Softmax)
    one_d = stax.serial(stax.Conv1DTranspose(2, (3,), padding="SAME"), stax.Flatten)
    return body, nchw, one_d


def _close(a, b):
    la, lb = jax.tree.leaves(a), fxad.tree.leaves(b)
    assert len(la) == len(lb)
    return max((float(np.max(np.abs(np.asarray(x) - np.asarray(y)), initial=0.0))
                for x, y in zip(la, lb)), default=0.0)


def _data(shape, n=6):
    x = RNG.standard_normal((n,) + shape[1:])
    y = np.eye(4)[RNG.integers(0, 4, n)]
    return x, y


OPTIMIZERS = [("sgd", (0.05,)), ("momentum", (0.05, 0.9)), ("nesterov", (0.05, 0.9)),
              ("adagrad", (0.05,)), ("rmsprop", (0.01,)), ("rmsprop_momentum", (0.01,)),
              ("adam", (0.01,)), ("adamax", (0.01,)), ("sm3", (0.05,))]
SCHEDULED = [("sgd", lambda o: (o.exponential_decay(0.05, 3, 0.5),)),
             ("momentum", lambda o: (o.polynomial_decay(0.05, 5, 0.001, 2.0), 0.9)),
             ("rmsprop", lambda o: (o.inverse_time_decay(0.01, 2, 0.5, staircase=True),)),
             ("adam", lambda o: (o.piecewise_constant([2, 5], [0.02, 0.01, 0.005]),))]


def train(side, net, opt_name, opt_args, steps=STEPS, jit=False):
    """Parameters after each step (the first entry: the initial ones)."""
    ad, np_, stax, opt = SIDES[side]
    (init, apply), in_shape = net(stax)
    _, params = init(ad.random.PRNGKey(0), in_shape)
    x, y = DATA[net.__name__]
    args = opt_args(opt) if callable(opt_args) else opt_args
    opt_init, opt_update, get_params = getattr(opt, opt_name)(*args)

    def loss(p):
        return -np_.mean(np_.sum(apply(p, x) * y, axis=-1))

    def step(i, state):
        g = ad.grad(loss)(get_params(state))
        return opt_update(i, opt.clip_grads(g, 10.0), state)
    if jit:
        step = ad.jit(step)
    state = opt_init(params)
    history = [get_params(state)]
    for i in range(steps):
        state = step(i, state)
        history.append(get_params(state))
    return history


DATA = {"mlp": _data((-1, 10)), "cnn": _data((-1, 10, 10, 3))}


def diffs(net, opt_name, opt_args, jit=False):
    hj = train("jax", net, opt_name, opt_args, jit=jit)
    hf = train("fxad", net, opt_name, opt_args, jit=jit)
    return [_close(a, b) for a, b in zip(hj, hf)]


@pytest.mark.parametrize("net", [mlp, cnn], ids=["mlp", "cnn"])
@pytest.mark.parametrize("opt_name, opt_args", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_training_matches_jax_step_by_step(net, opt_name, opt_args):
    d = diffs(net, opt_name, opt_args)
    assert d[0] < 1e-14, d  # the same initialization from the same key (to rounding)
    assert max(d) < 1e-12, d


@pytest.mark.parametrize("opt_name, opt_args", SCHEDULED, ids=[o[0] for o in SCHEDULED])
def test_schedules_match_jax(opt_name, opt_args):
    assert max(diffs(mlp, opt_name, opt_args)) < 1e-12
    for make in [lambda o: o.exponential_decay(0.1, 4, 0.3),
                 lambda o: o.inverse_time_decay(0.1, 3, 2.0),
                 lambda o: o.inverse_time_decay(0.1, 3, 2.0, staircase=True),
                 lambda o: o.polynomial_decay(0.1, 7, 0.01, 0.5),
                 lambda o: o.piecewise_constant([3, 6], [1.0, 0.5, 0.1]),
                 lambda o: o.make_schedule(0.3)]:
        for i in range(12):
            np.testing.assert_allclose(make(fopt)(i), make(jopt)(i), rtol=1e-15)


def test_jitted_training_matches_jax():
    assert max(diffs(mlp, "adam", (0.01,), jit=True)) < 1e-12
    assert max(diffs(cnn, "momentum", (0.05, 0.9), jit=True)) < 1e-12


def test_every_layer_matches_jax():
    x = RNG.standard_normal((5, 4, 4, 3))
    x_nchw = RNG.standard_normal((5, 3, 8, 8))
    x_1d = RNG.standard_normal((5, 7, 3))
    out = {}
    for side in ("jax", "fxad"):
        ad, np_, stax, _ = SIDES[side]
        key = ad.random.PRNGKey(42)
        res = []
        for (init, apply), xin in zip(zoo(stax), (x, x_nchw, x_1d)):
            shape, params = init(key, xin.shape)
            y = apply(params, xin, rng=ad.random.PRNGKey(7))
            g = ad.grad(lambda p: np_.sum(np_.sin(apply(p, xin, rng=ad.random.PRNGKey(7)))))(
                params)
            assert tuple(shape) == y.shape
            res.append((params, y, g))
        out[side] = res
    for (pj, yj, gj), (pf, yf, gf) in zip(out["jax"], out["fxad"]):
        assert _close(pj, pf) < 1e-14  # the normal sampler agrees to rounding
        assert _close(yj, yf) < 1e-12
        assert _close(gj, gf) < 1e-10


def test_optimizer_utilities_match_jax():
    tree = {"a": RNG.standard_normal(3), "b": [RNG.standard_normal((2, 2))]}
    assert abs(fopt.l2_norm(tree) - jopt.l2_norm(tree)) < 1e-14
    assert _close(jopt.clip_grads(tree, 0.5), fopt.clip_grads(tree, 0.5)) < 1e-15
    state = fopt.adam(0.1)[0](tree)
    packed = fopt.pack_optimizer_state(fopt.unpack_optimizer_state(state))
    assert packed.tree_def == state.tree_def and _close(packed.packed_state,
                                                       state.packed_state) == 0


if __name__ == "__main__":
    print(f"max |params_jax - params_fxad| after each of {STEPS} steps (step 0: init)")
    for net in (mlp, cnn):
        for name, args in OPTIMIZERS:
            d = diffs(net, name, args)
            print(f"{net.__name__:4} {name:17} max {max(d):.1e}  per step "
                  + " ".join(f"{v:.0e}" for v in d))
    for name, args in SCHEDULED:
        print(f"mlp  {name:17} with a schedule: max {max(diffs(mlp, name, args)):.1e}")
    print(f"mlp  adam, jit: max {max(diffs(mlp, 'adam', (0.01,), jit=True)):.1e};  "
          f"cnn momentum, jit: {max(diffs(cnn, 'momentum', (0.05, 0.9), jit=True)):.1e}")

"""fxad.example_libraries.optimizers: every update against the formula written in NumPy, on a
pytree of parameters, eagerly and under jit / fori_loop; schedules against their formulas;
the utilities; training runs. Parity with JAX itself: test_against_jax.py."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax, random
from fxad.example_libraries import optimizers as opt
from fxad.example_libraries import stax

RNG = np.random.default_rng(8)
PARAMS = {"w": RNG.standard_normal((3, 4)), "b": [RNG.standard_normal(4), np.float64(0.5)]}
GRADS = [fxad.tree.map(lambda x, k=k: RNG.standard_normal(np.shape(x)) * (k + 1), PARAMS)
         for k in range(4)]
GRADS[0]["w"][0, 0] = 0.0  # a zero first gradient: adagrad's and sm3's guarded division


def ref_sgd(lr):
    return lambda x: x, lambda i, g, x: x - lr * g


def ref_momentum(lr, mass, nesterov=False):
    def update(i, g, s):
        x, v = s
        v = mass * v + g
        return x - lr * (mass * v + g if nesterov else v), v
    return lambda x: (x, np.zeros_like(x)), update


def ref_adagrad(lr, momentum=0.9):
    def update(i, g, s):
        x, g_sq, m = s
        g_sq = g_sq + g ** 2
        scaled = np.divide(g, np.sqrt(g_sq), out=np.zeros_like(g), where=g_sq > 0)
        m = (1 - momentum) * scaled + momentum * m
        return x - lr * m, g_sq, m
    return lambda x: (x, np.zeros_like(x), np.zeros_like(x)), update


def ref_rmsprop(lr, gamma=0.9, eps=1e-8, momentum=None):
    def update(i, g, s):
        x, avg = s[:2]
        avg = gamma * avg + (1 - gamma) * g ** 2
        step = lr * g / np.sqrt(avg + eps)
        if momentum is None:
            return x - step, avg
        mom = momentum * s[2] + step
        return x - mom, avg, mom
    n = 2 if momentum is None else 3
    return lambda x: (x,) + (np.zeros_like(x),) * (n - 1), update


def ref_adam(lr, b1=0.9, b2=0.999, eps=1e-8, infinity=False):
    def update(i, g, s):
        x, m, v = s
        m = b1 * m + (1 - b1) * g
        if infinity:
            v = np.maximum(b2 * v, np.abs(g))
            return x - lr / (1 - b1 ** (i + 1)) * m / (v + eps), m, v
        v = b2 * v + (1 - b2) * g ** 2
        m_hat, v_hat = m / (1 - b1 ** (i + 1)), v / (1 - b2 ** (i + 1))
        return x - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    return lambda x: (x, np.zeros_like(x), np.zeros_like(x)), update


def ref_sm3(lr, momentum=0.9):
    """SM3 as the paper writes it: one accumulator vector per axis; the accumulator of an
    entry is the min over its axes' vectors, plus g^2; each vector keeps the max over its
    slice."""
    def init(x):
        x1 = np.atleast_1d(x)
        return x1, np.zeros_like(x1), [np.zeros(n) for n in x1.shape], np.shape(x)

    def update(i, g, s):
        x, m, vs, shape = s
        g = np.reshape(g, x.shape)
        mins = np.full(x.shape, np.inf)
        for a, v in enumerate(vs):
            mins = np.minimum(mins, np.expand_dims(v, [b for b in range(x.ndim) if b != a]))
        acc = mins + g ** 2
        scaled = np.divide(g, np.sqrt(acc), out=np.zeros_like(g), where=acc > 0)
        m = (1 - momentum) * scaled + momentum * m
        vs = [acc.max(axis=tuple(b for b in range(x.ndim) if b != a)) for a in range(x.ndim)]
        return x - lr * m, m, vs, shape
    return init, update


CASES = [  # (fxad optimizer, NumPy reference, parameters index of the state)
    (opt.sgd(0.1), ref_sgd(0.1)),
    (opt.momentum(0.1, 0.8), ref_momentum(0.1, 0.8)),
    (opt.nesterov(0.1, 0.8), ref_momentum(0.1, 0.8, nesterov=True)),
    (opt.adagrad(0.2), ref_adagrad(0.2)),
    (opt.adagrad(0.2, momentum=0.5), ref_adagrad(0.2, 0.5)),
    (opt.rmsprop(0.05, gamma=0.8, eps=1e-6), ref_rmsprop(0.05, 0.8, 1e-6)),
    (opt.rmsprop_momentum(0.05), ref_rmsprop(0.05, momentum=0.9)),
    (opt.adam(0.01), ref_adam(0.01)),
    (opt.adam(0.01, b1=0.5, b2=0.9, eps=1e-3), ref_adam(0.01, 0.5, 0.9, 1e-3)),
    (opt.adamax(0.01), ref_adam(0.01, infinity=True)),
    (opt.sm3(0.1), ref_sm3(0.1)),
]
IDS = ["sgd", "momentum", "nesterov", "adagrad", "adagrad-m", "rmsprop", "rmsprop_momentum",
       "adam", "adam-b", "adamax", "sm3"]


def _ref_run(ref, steps=len(GRADS)):
    init, update = ref
    leaves, tree = fxad.tree.flatten(PARAMS)
    states = [init(x) for x in leaves]
    out = []
    for i in range(steps):
        gs = fxad.tree.leaves(GRADS[i])
        states = [update(i, g, s) for g, s in zip(gs, states)]
        out.append(tree.unflatten([np.reshape(s[0], np.shape(x)) if isinstance(s, tuple)
                                   else s for s, x in zip(states, leaves)]))
    return out


def _assert_trees_close(a, b, rtol=1e-13):
    assert fxad.tree.structure(a) == fxad.tree.structure(b)
    for x, y in zip(fxad.tree.leaves(a), fxad.tree.leaves(b)):
        assert np.shape(x) == np.shape(y)
        np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-15)


@pytest.mark.parametrize("optimizer, ref", CASES, ids=IDS)
def test_updates_against_numpy(optimizer, ref):
    opt_init, opt_update, get_params = optimizer
    state = opt_init(PARAMS)
    assert isinstance(state, opt.OptimizerState)
    _assert_trees_close(get_params(state), PARAMS, rtol=0)
    want = _ref_run(ref)
    for i, g in enumerate(GRADS):
        state = opt_update(i, g, state)
        _assert_trees_close(get_params(state), want[i])
    assert PARAMS["w"].shape == (3, 4)


@pytest.mark.parametrize("optimizer, ref", CASES, ids=IDS)
def test_updates_under_jit_and_fori_loop(optimizer, ref):
    opt_init, opt_update, get_params = optimizer
    want = _ref_run(ref)[-1]
    state = opt_init(PARAMS)
    step = fxad.jit(opt_update)
    for i, g in enumerate(GRADS):
        state = step(i, g, state)
    _assert_trees_close(get_params(state), want)
    stacked = fxad.tree.map(lambda *gs: np.stack(gs), *GRADS)
    state = lax.fori_loop(0, len(GRADS), lambda i, s: opt_update(
        i, fxad.tree.map(lambda g: fnp.asarray(g)[i], stacked), s), opt_init(PARAMS))
    _assert_trees_close(get_params(state), want)


def test_an_old_state_is_never_changed():
    opt_init, opt_update, get_params = opt.adagrad(0.1)
    s0 = opt_init(PARAMS)
    before = [np.array(x) for x in fxad.tree.leaves(s0)]
    opt_update(0, GRADS[0], s0)
    for x, y in zip(before, fxad.tree.leaves(s0)):
        np.testing.assert_array_equal(x, y)


def test_structure_errors():
    opt_init, opt_update, _ = opt.momentum(0.1, 0.9)
    state = opt_init(PARAMS)
    with pytest.raises(TypeError, match="tree structure"):
        opt_update(0, {"w": GRADS[0]["w"]}, state)

    @opt.optimizer
    def broken(step):
        return (lambda x: (x, x), lambda i, g, s: (s[0] - g,), lambda s: s[0])
    b_init, b_update, _ = broken(0.1)
    with pytest.raises(TypeError, match="state of structure"):
        b_update(0, GRADS[0], b_init(PARAMS))


def test_scalar_parameters_with_sm3():
    opt_init, opt_update, get_params = opt.sm3(0.5)
    state = opt_init(np.float64(2.0))
    for i in range(3):
        state = opt_update(i, np.float64(1.5), state)
    x = get_params(state)
    assert np.shape(x) == ()
    _, update = ref_sm3(0.5)
    s = ref_sm3(0.5)[0](np.float64(2.0))
    for i in range(3):
        s = update(i, np.float64(1.5), s)
    np.testing.assert_allclose(x, s[0].reshape(()), rtol=1e-14)


SCHEDULES = [
    (opt.constant(0.3), lambda i: 0.3),
    (opt.exponential_decay(0.1, 4, 0.3), lambda i: 0.1 * 0.3 ** (i / 4)),
    (opt.inverse_time_decay(0.1, 3, 2.0), lambda i: 0.1 / (1 + 2.0 * i / 3)),
    (opt.inverse_time_decay(0.1, 3, 2.0, staircase=True), lambda i: 0.1 / (1 + 2.0 * (i // 3))),
    (opt.polynomial_decay(0.1, 7, 0.01, 0.5),
     lambda i: (1 - min(i, 7) / 7) ** 0.5 * (0.1 - 0.01) + 0.01),
    (opt.piecewise_constant([3, 6], [1.0, 0.5, 0.1]),
     lambda i: 1.0 if i <= 3 else 0.5 if i <= 6 else 0.1),
    (opt.make_schedule(0.25), lambda i: 0.25),
]


@pytest.mark.parametrize("schedule, ref", SCHEDULES)
def test_schedules(schedule, ref):
    for i in range(12):
        np.testing.assert_allclose(schedule(i), ref(i), rtol=1e-15)
    jitted = fxad.jit(schedule)
    np.testing.assert_allclose([jitted(i) for i in range(12)], [ref(i) for i in range(12)],
                               rtol=1e-15)


def test_schedule_errors_and_callables():
    f = lambda i: 1.0 / (i + 1)  # noqa: E731
    assert opt.make_schedule(f) is f
    with pytest.raises(TypeError, match="step size"):
        opt.make_schedule(np.ones(2))
    with pytest.raises(ValueError, match="one value more"):
        opt.piecewise_constant([1, 2], [1.0, 2.0])


def test_l2_norm_and_clip_grads():
    leaves = fxad.tree.leaves(GRADS[2])
    norm = np.sqrt(sum(np.sum(x ** 2) for x in leaves))
    np.testing.assert_allclose(opt.l2_norm(GRADS[2]), norm, rtol=1e-14)
    clipped = opt.clip_grads(GRADS[2], norm / 2)
    _assert_trees_close(clipped, fxad.tree.map(lambda g: g / 2, GRADS[2]))
    _assert_trees_close(opt.clip_grads(GRADS[2], norm * 2), GRADS[2], rtol=0)


def test_pack_unpack_roundtrip():
    opt_init, opt_update, get_params = opt.adam(0.1)
    state = opt_update(0, GRADS[0], opt_init(PARAMS))
    marked = opt.unpack_optimizer_state(state)
    assert isinstance(marked["w"], opt.JoinPoint) and len(marked["w"].subtree) == 3
    again = opt.pack_optimizer_state(marked)
    assert again.tree_def == state.tree_def and again.subtree_defs == state.subtree_defs
    _assert_trees_close(get_params(opt_update(1, GRADS[1], again)),
                        get_params(opt_update(1, GRADS[1], state)), rtol=0)
    with pytest.raises(TypeError, match="JoinPoint"):
        opt.pack_optimizer_state({"w": 1.0})


def test_training_a_classifier():
    """A small classification problem learned with stax and adam, the step jitted."""
    x = RNG.standard_normal((64, 2))
    y = np.eye(2)[(x[:, 0] * x[:, 1] > 0).astype(int)]
    net_init, apply = stax.serial(stax.Dense(16), stax.Tanh, stax.Dense(2), stax.LogSoftmax)
    _, params = net_init(random.PRNGKey(0), (-1, 2))

    def loss(p):
        return -fnp.mean(fnp.sum(apply(p, x) * y, axis=1))
    opt_init, opt_update, get_params = opt.adam(0.05)

    @fxad.jit
    def step(i, state):
        value, g = fxad.value_and_grad(loss)(get_params(state))
        return value, opt_update(i, g, state)
    state = opt_init(params)
    first, _ = step(0, state)
    for i in range(150):
        value, state = step(i, state)
    accuracy = np.mean(np.argmax(apply(get_params(state), x), 1) == np.argmax(y, 1))
    assert value < first / 3 and accuracy > 0.9

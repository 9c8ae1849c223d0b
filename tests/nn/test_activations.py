"""fxad.nn's activations and utilities from jax.nn (fxad/nn/activations.py): values against
mpmath, derivatives to second order (check_grads, both modes, away from kinks), JAX's
derivative conventions at the kinks, finite values and derivatives at extreme inputs, vmap
against a loop, jit against eager, dtypes."""
import mpmath as mp
import numpy as np
import pytest

import fxad
from fxad import nn
from fxad.errors import FxadValueError

from ..rules.common import floats, run_row

_A, _S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _clip(x, lo, hi):
    return min(max(x, lo), hi)


# name -> (mpmath reference, kinks, domain (lo, hi) for finite-difference checks)
ACTIVATIONS = {
    "relu": (lambda x: max(x, 0), (0,), (-4, 4)),
    "relu6": (lambda x: _clip(x, 0, 6), (0, 6), (-9, 9)),
    "hard_tanh": (lambda x: _clip(x, -1, 1), (-1, 1), (-4, 4)),
    "hard_sigmoid": (lambda x: _clip(x + 3, 0, 6) / 6, (-3, 3), (-6, 6)),
    "hard_silu": (lambda x: x * _clip(x + 3, 0, 6) / 6, (-3, 3), (-6, 6)),
    "hard_swish": (lambda x: x * _clip(x + 3, 0, 6) / 6, (-3, 3), (-6, 6)),
    "leaky_relu": (lambda x: x if x >= 0 else x / 100, (0,), (-4, 4)),
    "elu": (lambda x: x if x > 0 else mp.expm1(x), (0,), (-5, 5)),
    "celu": (lambda x: max(x, 0) + mp.expm1(min(x, 0)), (0,), (-5, 5)),
    "selu": (lambda x: _S * (x if x > 0 else _A * mp.expm1(x)), (0,), (-5, 5)),
    "log_sigmoid": (lambda x: -mp.log1p(mp.exp(-x)), (), (-30, 30)),
    "soft_sign": (lambda x: x / (abs(x) + 1), (0,), (-5, 5)),
    "sparse_plus": (lambda x: 0 if x <= -1 else x if x >= 1 else (x + 1) ** 2 / 4, (-1, 1),
                    (-4, 4)),
    "sparse_sigmoid": (lambda x: _clip(x + 1, 0, 2) / 2, (-1, 1), (-4, 4)),
    "squareplus": (lambda x: (x + mp.sqrt(x * x + 4)) / 2, (), (-30, 30)),
    "mish": (lambda x: x * mp.tanh(mp.log1p(mp.exp(x))), (), (-20, 20)),
    "log1mexp": (lambda x: mp.log(-mp.expm1(-x)), (), (0.05, 30)),
    "tanh": (mp.tanh, (), (-10, 10)),
    "identity": (lambda x: x, (), (-5, 5)),
}
NAMES = sorted(ACTIVATIONS)
EXTREMES = np.array([-1e300, -1e3, -1.0, -1e-300, 0.0, 1e-300, 1.0, 1e3, 1e300])


def _reference(name, x):
    ref = ACTIVATIONS[name][0]
    with mp.workdps(40):
        return np.array([float(ref(mp.mpf(float(v)))) for v in np.ravel(x)]).reshape(np.shape(x))


def _reference_derivative(name, x):
    """mpmath central difference with a relative step (40 digits: exact to float64)."""
    ref = ACTIVATIONS[name][0]
    out = []
    with mp.workdps(60):
        for v in np.ravel(x):
            v = mp.mpf(float(v))
            h = max(abs(v), 1) * mp.mpf(10) ** -25
            out.append(float((ref(v + h) - ref(v - h)) / (2 * h)))
    return np.array(out).reshape(np.shape(x))


def _domain(name):
    return EXTREMES[EXTREMES > 0] if name == "log1mexp" else EXTREMES


def _away_from_kinks(name):
    kinks = np.array(ACTIVATIONS[name][1], float)
    return lambda x: kinks.size == 0 or bool(np.all(np.abs(x[..., None] - kinks) > 0.05))


@pytest.mark.parametrize("name", NAMES)
def test_values_match_mpmath(name):
    lo, hi = ACTIVATIONS[name][2]
    x = np.random.default_rng(0).uniform(lo, hi, 40)
    np.testing.assert_allclose(getattr(nn, name)(x), _reference(name, x), rtol=1e-14,
                               atol=1e-300)


@pytest.mark.parametrize("name", NAMES)
def test_derivatives_to_second_order(name):
    lo, hi = ACTIVATIONS[name][2]
    run_row(getattr(nn, name), [(3,)], floats(lo, hi), assume=_away_from_kinks(name))


@pytest.mark.parametrize("name", NAMES)
def test_extreme_inputs_give_finite_values_and_derivatives(name):
    """At ±1e300, ±1e3, ±1e-300 and 0: values equal mpmath's, first derivatives equal
    mpmath's (away from kinks), second derivatives are finite (none is NaN or inf)."""
    f = getattr(nn, name)
    x = _domain(name)
    x = x[(x != 1e-300) | (name != "log1mexp")]  # log1mexp'' = -1/x^2 overflows there
    np.testing.assert_allclose(f(x), _reference(name, x), rtol=1e-14, atol=1e-300)
    g = fxad.vmap(fxad.grad(f))(x)
    h = fxad.vmap(fxad.grad(fxad.grad(f)))(x)
    assert np.isfinite(g).all() and np.isfinite(h).all(), (g, h)
    kinks = np.array(ACTIVATIONS[name][1], float)
    away = np.all(np.abs(x[:, None] - kinks) > 0.05, axis=1) if kinks.size else \
        np.ones(x.shape, bool)
    np.testing.assert_allclose(g[away], _reference_derivative(name, x[away]), rtol=1e-12,
                               atol=1e-300)


@pytest.mark.parametrize("name", NAMES)
def test_matches_jax_including_the_kinks(name):
    """Values, first and second derivatives equal JAX's, at random points and exactly at
    each kink (where JAX's convention picks a one-sided derivative or splits ties)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    f, jf = getattr(nn, name), getattr(jax.nn, name)
    lo, hi = ACTIVATIONS[name][2]
    x = np.concatenate([np.random.default_rng(1).uniform(lo, hi, 20),
                        np.array(ACTIVATIONS[name][1], float)])
    np.testing.assert_allclose(f(x), jf(x), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(fxad.vmap(fxad.grad(f))(x), jax.vmap(jax.grad(jf))(x),
                               rtol=1e-13, atol=1e-14)
    # second derivatives: JAX's mish'' is off by ~2e-14 where its terms cancel (x ~ 18;
    # fxad's is closer to mpmath's there), hence the absolute tolerance
    np.testing.assert_allclose(fxad.vmap(fxad.grad(fxad.grad(f)))(x),
                               jax.vmap(jax.grad(jax.grad(jf)))(x), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", NAMES)
def test_vmap_jit_and_float32(name):
    f = getattr(nn, name)
    lo, hi = ACTIVATIONS[name][2]
    x = np.random.default_rng(2).uniform(lo, hi, (3, 4))
    want = np.stack([f(r) for r in x])
    np.testing.assert_array_equal(fxad.vmap(f)(x), want)
    np.testing.assert_allclose(fxad.jit(f)(x), want, rtol=1e-15)
    x32 = x.astype(np.float32)
    assert f(x32).dtype == np.float32
    assert fxad.grad(lambda v: f(v).sum())(x32).dtype == np.float32
    np.testing.assert_allclose(f(x32), want, rtol=2e-6, atol=2e-6)


def test_nan_propagates():
    x = np.array([np.nan])
    for name in NAMES:
        with np.errstate(invalid="ignore"):
            assert np.isnan(getattr(nn, name)(x)).all(), name


# --- utilities -----------------------------------------------------------------------------

def test_one_hot():
    x = np.array([[0, 2], [5, -1]])
    got = nn.one_hot(x, 3)
    want = np.zeros((2, 2, 3))
    want[0, 0, 0] = want[0, 1, 2] = 1.0  # 5 and -1 are outside [0, 3): all zeros
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(nn.one_hot(x, 3, axis=0), np.moveaxis(want, -1, 0))
    np.testing.assert_array_equal(nn.one_hot(x, 3, axis=1), np.moveaxis(want, -1, 1))
    assert nn.one_hot(x, 3, dtype=np.float32).dtype == np.float32
    np.testing.assert_array_equal(fxad.jit(lambda x: nn.one_hot(x, 3))(x), want)
    np.testing.assert_array_equal(fxad.vmap(lambda x: nn.one_hot(x, 3))(x), want)
    # a cross-entropy with one-hot labels differentiates in the logits
    z = np.random.default_rng(3).standard_normal((2, 3))
    g = fxad.grad(lambda z: -(nn.one_hot(np.array([2, 0]), 3) * nn.log_softmax(z)).sum())(z)
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    np.testing.assert_allclose(g, p - np.eye(3)[[2, 0]], rtol=1e-12)
    with pytest.raises(FxadValueError, match="axis"):
        nn.one_hot(x, 3, axis=5)


def test_glu():
    x = np.random.default_rng(4).standard_normal((2, 4))
    np.testing.assert_allclose(nn.glu(x), x[:, :2] / (1 + np.exp(-x[:, 2:])), rtol=1e-14)
    np.testing.assert_allclose(nn.glu(x, axis=0)[0], x[0] / (1 + np.exp(-x[1])), rtol=1e-14)
    run_row(nn.glu, [(2, 4)], floats(-3, 3))
    with pytest.raises(FxadValueError, match="odd"):
        nn.glu(x[:, :3])


def _np_standardize(x, axis=-1, mean=None, where=True):
    m = np.mean(x, axis, keepdims=True, where=where) if mean is None else mean
    v = np.mean((x - np.mean(x, axis, keepdims=True, where=where)) ** 2, axis, keepdims=True,
                where=where)
    if mean is not None:  # JAX's 'fast' variance mean(x^2) - m^2, with the given mean
        v = np.mean(x * x, axis, keepdims=True, where=where) - m * m
    return (x - m) / np.sqrt(v + 1e-5)


def test_standardize():
    x = np.random.default_rng(5).standard_normal((3, 5)) * 3 + 1
    where = np.random.default_rng(6).uniform(size=(3, 5)) > 0.3
    np.testing.assert_allclose(nn.standardize(x), _np_standardize(x), rtol=1e-12)
    np.testing.assert_allclose(nn.standardize(x, axis=0), _np_standardize(x, 0), rtol=1e-12)
    np.testing.assert_allclose(nn.standardize(x, where=where), _np_standardize(x, where=where),
                               rtol=1e-12)
    np.testing.assert_allclose(nn.standardize(x, mean=0.5), _np_standardize(x, mean=0.5),
                               rtol=1e-12)
    np.testing.assert_allclose(nn.standardize(x, variance=4.0), (x - x.mean(-1, keepdims=True))
                               / np.sqrt(4.0 + 1e-5), rtol=1e-12)
    run_row(nn.standardize, [(2, 4)], floats(-3, 3))
    big = np.array([[1e300, -1e300, 3e299], [1e-300, -2e-300, 0.0]])
    y = nn.standardize(big)
    xs = big[0] / 1e300  # the variance ~1e600 makes epsilon negligible
    np.testing.assert_allclose(y[0], (xs - xs.mean()) / xs.std(), rtol=1e-12)
    np.testing.assert_allclose(y[1], (big[1] - big[1].mean()) / np.sqrt(1e-5), rtol=1e-12)
    g = fxad.grad(lambda x: (nn.standardize(x) * np.arange(3.0)).sum())(big)
    assert np.isfinite(g).all()
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    for kw in ({}, dict(mean=0.5), dict(where=where), dict(algorithm="stable", mean=0.5)):
        np.testing.assert_allclose(nn.standardize(x, **kw), jax.nn.standardize(x, **kw),
                                   rtol=1e-11)


def test_logmeanexp():
    x = np.random.default_rng(7).standard_normal((3, 4)) * 5
    want = np.log(np.mean(np.exp(x), axis=1))
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1), want, rtol=1e-13)
    np.testing.assert_allclose(nn.logmeanexp(x), np.log(np.mean(np.exp(x))), rtol=1e-13)
    where = np.array([True, False, True, True])
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1, where=where),
                               np.log(np.mean(np.exp(x[:, where]), axis=1)), rtol=1e-13)
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1, keepdims=True), want[:, None],
                               rtol=1e-13)
    run_row(lambda x: nn.logmeanexp(x, axis=0), [(3, 2)], floats(-5, 5))
    huge = np.array([[1e300, 1e300 - 1e285], [-np.inf, -np.inf]])
    y = nn.logmeanexp(huge, axis=1)
    assert y[0] == 1e300 and y[1] == -np.inf
    g = fxad.grad(lambda x: nn.logmeanexp(x, axis=1)[1])(huge)
    np.testing.assert_array_equal(g, np.zeros((2, 2)))  # all -inf row: zero, not NaN
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1, where=where),
                               jax.nn.logmeanexp(x, axis=1, where=where), rtol=1e-13)


def test_jax_nn_names_are_covered():
    """Every jax.nn function fxad has a counterpart for (the scaled_* ones are microscaling
    formats for accelerators; initializers are fxad.nn.initializers' own work)."""
    jax = pytest.importorskip("jax")
    skip = {"initializers", "scaled_dot_general", "scaled_matmul",
            "get_scaled_dot_general_config"}
    missing = [n for n in dir(jax.nn) if not n.startswith("_") and n not in skip
               and not hasattr(nn, n)]
    assert not missing, missing

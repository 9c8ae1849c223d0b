"""fxad.nn.initializers: JAX's set. Fans, the variance each one promises (sample statistics at
fixed keys), bounds, orthogonality, dtypes and shapes, eager == jit == vmap over keys. Values
against JAX's are in tests/random/test_jax_parity.py (the init.* rows)."""
import numpy as np
import pytest

import fxad
from fxad import random as fr
from fxad.errors import FxadValueError
from fxad.nn import initializers as init
from fxad.nn.initializers import compute_fans

K = fr.PRNGKey(3)


def test_fans():
    assert compute_fans((5, 7)) == (5, 7)
    assert compute_fans((3, 3, 4, 8)) == (36, 72)  # HWIO kernel: in * field, out * field
    assert compute_fans((8, 4, 3, 3), in_axis=1, out_axis=0) == (36, 72)
    assert compute_fans((2, 5, 7), batch_axis=0) == (5, 7)
    assert compute_fans((5, 4, 3), in_axis=0, out_axis=(1, 2)) == (5, 12)
    with pytest.raises(FxadValueError, match="in_axis"):
        compute_fans((5,))


SCALED = [  # (initializer, scale, fan)
    (init.glorot_uniform, 1.0, "avg"), (init.glorot_normal, 1.0, "avg"),
    (init.xavier_uniform, 1.0, "avg"), (init.xavier_normal, 1.0, "avg"),
    (init.lecun_uniform, 1.0, "in"), (init.lecun_normal, 1.0, "in"),
    (init.he_uniform, 2.0, "in"), (init.he_normal, 2.0, "in"),
    (init.kaiming_uniform, 2.0, "in"), (init.kaiming_normal, 2.0, "in"),
]


@pytest.mark.parametrize("make, scale, fan", SCALED, ids=[m[0].__name__ for m in SCALED])
def test_variance_scaling_family(make, scale, fan):
    shape = (300, 500)
    n = {"in": 300, "avg": 400}[fan]
    w = make()(K, shape)
    assert w.shape == shape and w.dtype == np.float64
    assert abs(w.var() / (scale / n) - 1) < 0.02  # 1.5e5 draws: a 2% band is > 5 sigma
    assert abs(w.mean()) < 5 * np.sqrt(scale / n / w.size)
    if "uniform" in make.__name__:
        assert np.abs(w).max() <= np.sqrt(3 * scale / n)
    else:  # truncated at two standard deviations of the untruncated normal
        assert np.abs(w).max() <= 2 * np.sqrt(scale / n) / 0.87962566103423978


@pytest.mark.parametrize("mode, distribution", [("fan_out", "normal"), ("fan_geo_avg", "uniform"),
                                                ("fan_in", "truncated_normal")])
def test_variance_scaling_modes(mode, distribution):
    shape = (3, 3, 40, 60)
    fan_in, fan_out = 360, 540
    n = {"fan_in": fan_in, "fan_out": fan_out, "fan_geo_avg": np.sqrt(fan_in * fan_out)}[mode]
    w = init.variance_scaling(0.5, mode, distribution)(K, shape, np.float32)
    assert w.dtype == np.float32 and w.shape == shape
    assert abs(w.var() / (0.5 / n) - 1) < 5 * np.sqrt(2 / w.size)  # 5 standard errors


def test_complex_variance_scaling():
    for dist in ("uniform", "truncated_normal", "normal"):
        w = init.variance_scaling(1.0, "fan_in", dist)(K, (200, 300), np.complex128)
        assert w.dtype == np.complex128
        assert abs(np.mean(np.abs(w) ** 2) / (1 / 200) - 1) < 5 * np.sqrt(2 / w.size), dist


def test_simple_initializers():
    assert np.array_equal(init.zeros(K, (2, 3)), np.zeros((2, 3)))
    assert init.ones(K, (2,), np.float32).dtype == np.float32
    assert np.array_equal(init.constant(-7)(K, (2, 2)), np.full((2, 2), -7.0))
    u = init.uniform(0.5)(K, (10 ** 4,))
    assert u.min() >= 0 and u.max() < 0.5 and abs(u.mean() - 0.25) < 0.01
    z = init.normal(2.0)(K, (10 ** 4,))
    assert abs(z.std() - 2.0) < 0.05
    t = init.truncated_normal(1.0, lower=-1.0, upper=0.5)(K, (10 ** 4,))
    assert t.min() > -1.0 and t.max() < 0.5


@pytest.mark.parametrize("shape, column_axis", [((6, 4), -1), ((4, 6), -1), ((3, 5, 4), -1),
                                                ((5, 3), 0)])
def test_orthogonal(shape, column_axis):
    w = init.orthogonal(scale=2.0, column_axis=column_axis)(K, shape)
    assert w.shape == shape
    m = np.moveaxis(w, column_axis, -1).reshape(-1, shape[column_axis]) / 2.0
    rows, cols = m.shape
    gram = m.T @ m if rows >= cols else m @ m.T
    np.testing.assert_allclose(gram, np.eye(min(rows, cols)), atol=1e-12)
    assert np.array_equal(init.orthogonal()(K, (0, 3)), np.zeros((0, 3)))
    with pytest.raises(FxadValueError, match="2 axes"):
        init.orthogonal()(K, (5,))


@pytest.mark.parametrize("shape", [(3, 4, 6), (3, 5, 2, 2), (3, 3, 3, 4, 4)])
def test_delta_orthogonal(shape):
    w = init.delta_orthogonal()(K, shape)
    assert w.shape == shape
    centre = tuple((k - 1) // 2 for k in shape[:-2])
    m = w[centre]
    np.testing.assert_allclose(m @ m.T, np.eye(shape[-2]), atol=1e-12)
    rest = w.copy()
    rest[centre] = 0
    assert not rest.any()
    with pytest.raises(FxadValueError, match="3-, 4- or 5-d"):
        init.delta_orthogonal()(K, (4, 4))
    with pytest.raises(FxadValueError, match="fan_in"):
        init.delta_orthogonal()(K, (3, 5, 4))


def test_initializers_trace_under_jit_and_vmap():
    keys = fr.split(K, 3)
    for make in (init.glorot_normal(), init.he_uniform(), init.orthogonal(),
                 init.delta_orthogonal(), init.uniform(), init.normal(0.1)):
        shape = (3, 4, 5) if make.__qualname__.startswith("delta") else (4, 5)
        loop = np.stack([make(k, shape) for k in keys])
        np.testing.assert_array_equal(fxad.jit(lambda k: make(k, shape))(keys[1]), loop[1])
        np.testing.assert_array_equal(fxad.vmap(lambda k: make(k, shape))(keys), loop)


def test_initializer_protocol_annotates_every_maker():
    """`Initializer` is JAX's annotation type: what the makers return is called as it says."""
    import typing

    from fxad.nn.initializers import Initializer

    def dense(init: Initializer, key, n_in, n_out):
        return init(key, (n_in, n_out), np.float32)

    assert typing.get_type_hints(dense)["init"] is Initializer
    for make in (init.glorot_normal(), init.zeros, init.constant(2.0)):
        w = dense(make, K, 3, 4)
        assert w.shape == (3, 4) and w.dtype == np.float32

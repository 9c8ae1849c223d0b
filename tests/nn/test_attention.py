"""fxad.nn.dot_product_attention (fxad/nn/attention.py): values against a NumPy reference
(float64, exact) and JAX (whose softmax runs in float32, so agreement is to ~1e-6), grouped
query heads, every kind of mask, derivatives to second order, extreme logits and -inf biases
(finite values and gradients), vmap against a loop, jit against eager."""
import numpy as np
import pytest

import fxad
from fxad import nn
from fxad.errors import FxadTypeError, FxadValueError
from fxad.test_util import check_grads

LARGE_NEGATIVE = -0.7 * float(np.finfo(np.float32).max)


def reference(q, k, v, bias=None, mask=None, scale=None, is_causal=False, q_len=None,
              kv_len=None, window=None):
    """Repeat the key/value heads for each query head and do it step by step."""
    b, t, n, h = q.shape
    s, kh = k.shape[1], k.shape[2]
    k, v = np.repeat(k, n // kh, axis=2), np.repeat(v, n // kh, axis=2)
    logits = np.einsum("btnh,bsnh->bnts", q, k) * (1 / np.sqrt(h) if scale is None else scale)
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep &= mask
    i, j = np.arange(t)[:, None], np.arange(s)[None, :]
    if is_causal:
        keep &= j <= i
    if window is not None:
        keep &= (j >= i - window[0]) & (j <= i + window[1])
    if q_len is not None:
        keep &= np.arange(t)[None, None, :, None] < q_len[:, None, None, None]
    if kv_len is not None:
        keep &= np.arange(s)[None, None, None, :] < kv_len[:, None, None, None]
    logits = np.where(keep, logits, LARGE_NEGATIVE)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = np.einsum("bnts,bsnh->btnh", p, v)
    if q_len is not None:
        out *= (np.arange(t)[None, :] < q_len[:, None])[:, :, None, None]
    return out


SHAPES = [("mha", (2, 5, 4, 3), (2, 7, 4, 3)), ("gqa", (2, 5, 4, 3), (2, 7, 2, 3)),
          ("mqa", (1, 4, 3, 2), (1, 6, 1, 2)), ("self", (2, 4, 2, 5), (2, 4, 2, 5))]


def _qkv(qs, ks, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(qs), rng.standard_normal(ks), rng.standard_normal(ks)


def _options(qs, ks, seed=1):
    rng = np.random.default_rng(seed)
    b, t, n, _ = qs
    s = ks[1]
    return [
        {},
        dict(bias=rng.standard_normal((1, n, t, s))),
        dict(mask=rng.uniform(size=(b, 1, t, s)) > 0.3),
        dict(is_causal=True),
        dict(scale=0.7, bias=rng.standard_normal((b, 1, 1, s)), is_causal=True),
        dict(query_seq_lengths=np.array([t - 1] * b, np.int32),
             key_value_seq_lengths=np.array([max(s - 2, 1)] * b, np.int32)),
        dict(local_window_size=(2, 1)),
        dict(local_window_size=1, mask=rng.uniform(size=(1, n, t, s)) > 0.2),
    ]


def _ref_kwargs(kw):
    w = kw.get("local_window_size")
    return dict(bias=kw.get("bias"), mask=kw.get("mask"), scale=kw.get("scale"),
                is_causal=kw.get("is_causal", False), q_len=kw.get("query_seq_lengths"),
                kv_len=kw.get("key_value_seq_lengths"),
                window=(w, w) if isinstance(w, int) else w)


@pytest.mark.parametrize("name,qs,ks", SHAPES, ids=[s[0] for s in SHAPES])
def test_values_match_the_reference_and_jax(name, qs, ks):
    q, k, v = _qkv(qs, ks)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    for kw in _options(qs, ks):
        got = nn.dot_product_attention(q, k, v, **kw)
        np.testing.assert_allclose(got, reference(q, k, v, **_ref_kwargs(kw)), rtol=1e-12,
                                   atol=1e-13)
        np.testing.assert_allclose(fxad.jit(lambda q, k, v: nn.dot_product_attention(
            q, k, v, **kw))(q, k, v), got, rtol=1e-14, atol=1e-14)
        # JAX computes the softmax in float32 even for float64 inputs
        np.testing.assert_allclose(got, jax.nn.dot_product_attention(q, k, v, **kw),
                                   rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("name,qs,ks", SHAPES, ids=[s[0] for s in SHAPES])
def test_derivatives_to_second_order(name, qs, ks):
    q, k, v = _qkv(qs, ks, seed=2)
    for kw in _options(qs, ks)[:6:2]:
        check_grads(lambda q, k, v, kw=kw: nn.dot_product_attention(q, k, v, **kw), (q, k, v),
                    order=2, modes=("fwd", "rev"))
    bias = np.random.default_rng(3).standard_normal((1, qs[2], qs[1], ks[1]))
    check_grads(lambda b: nn.dot_product_attention(q, k, v, bias=b, is_causal=True), (bias,),
                order=2, modes=("fwd", "rev"))


def test_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    q, k, v = _qkv((2, 5, 4, 3), (2, 6, 2, 3), seed=4)
    c = np.random.default_rng(5).standard_normal(q.shape)
    got = fxad.grad(lambda q, k, v: (nn.dot_product_attention(q, k, v, is_causal=True) * c)
                    .sum(), (0, 1, 2))(q, k, v)
    want = jax.grad(lambda q, k, v: (jax.nn.dot_product_attention(q, k, v, is_causal=True)
                                     * c).sum(), (0, 1, 2))(q, k, v)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_extreme_logits_and_infinite_biases_stay_finite():
    q, k, v = _qkv((1, 3, 2, 4), (1, 3, 2, 4), seed=6)
    # logits of order 1e300: the softmax is shifted by the row maximum
    out = nn.dot_product_attention(q * 1e150, k * 1e150, v)
    np.testing.assert_allclose(out, reference(q * 1e150, k * 1e150, v), rtol=1e-12)
    g = fxad.grad(lambda q, k, v: nn.dot_product_attention(q, k, v).sum(), (0, 1, 2))(
        q * 1e150, k * 1e150, v)
    assert all(np.isfinite(x).all() for x in g)
    # -inf biases: a partly masked row ignores those keys; a row of -inf gives zeros
    bias = np.zeros((1, 2, 3, 3))
    bias[0, 0, 1, :] = -np.inf
    bias[0, 1, 2, 1] = -np.inf
    f = lambda q, k, v, b: nn.dot_product_attention(q, k, v, bias=b)
    out = f(q, k, v, bias)
    np.testing.assert_array_equal(out[0, 1, 0], np.zeros(4))
    finite_bias = np.where(np.isinf(bias), LARGE_NEGATIVE, bias)
    np.testing.assert_allclose(out[0, 2, 1], reference(q, k, v, bias=finite_bias)[0, 2, 1],
                               rtol=1e-12)
    grads = fxad.grad(lambda q, k, v: (f(q, k, v, bias) ** 2).sum(), (0, 1, 2))(q, k, v)
    assert all(np.isfinite(x).all() for x in grads)
    np.testing.assert_array_equal(grads[0][0, 1, 0], np.zeros(4))  # the all -inf row
    # its residual is the log of an empty sum, -inf; the partly masked row's is finite
    _, lse = nn.dot_product_attention(q, k, v, bias=bias, return_residual=True)
    assert lse[0, 1, 0] == -np.inf and np.isfinite(lse[0, 2, 1])
    # a fully masked row (boolean mask) attends uniformly, as in JAX
    mask = np.ones((1, 1, 3, 3), bool)
    mask[..., 0, :] = False
    out = nn.dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(out[0, 0], v[0].mean(0), rtol=1e-12)


def test_residual_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    q, k, v = _qkv((2, 5, 4, 3), (2, 6, 2, 3), seed=7)
    _, lse = nn.dot_product_attention(q, k, v, is_causal=True, return_residual=True)
    _, jlse = jax.nn.dot_product_attention(q, k, v, is_causal=True, return_residual=True)
    np.testing.assert_allclose(lse, jlse, rtol=1e-6)


def test_residual_and_unbatched_inputs():
    q, k, v = _qkv((2, 5, 4, 3), (2, 6, 2, 3), seed=7)
    _, lse = nn.dot_product_attention(q, k, v, is_causal=True, return_residual=True)
    assert lse.shape == (2, 5, 4)
    # the residual is the log-sum-exp of each row's scaled logits, without gradient
    logits = np.einsum("btnh,bsnh->bnts", q, np.repeat(k, 2, 2)) / np.sqrt(3)
    logits = np.where(np.tril(np.ones((5, 6), bool)), logits, LARGE_NEGATIVE)
    m = logits.max(-1, keepdims=True)
    want = (np.log(np.exp(logits - m).sum(-1, keepdims=True)) + m)[..., 0].transpose(0, 2, 1)
    np.testing.assert_allclose(lse, want, rtol=1e-13)
    g = fxad.grad(lambda q: nn.dot_product_attention(q, k, v, return_residual=True)[1].sum())(q)
    np.testing.assert_array_equal(g, np.zeros_like(q))
    np.testing.assert_allclose(nn.dot_product_attention(q[0], k[0], v[0]),
                               nn.dot_product_attention(q, k, v)[0], rtol=1e-14)


def test_vmap_matches_a_loop():
    q, k, v = _qkv((3, 4, 4, 2), (3, 5, 2, 2), seed=8)  # vmapped over the leading axis
    f = lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True)
    want = np.stack([f(*a) for a in zip(q, k, v)])
    np.testing.assert_allclose(fxad.vmap(f)(q, k, v), want, rtol=1e-14)
    np.testing.assert_allclose(fxad.vmap(f, (0, None, None))(q, k[0], v[0]),
                               np.stack([f(a, k[0], v[0]) for a in q]), rtol=1e-14)
    gf = fxad.grad(lambda q, k, v: (f(q, k, v) ** 2).sum(), (0, 1))
    got = fxad.jit(fxad.vmap(gf))(q, k, v)
    for i in range(3):
        for a, b in zip(got, gf(q[i], k[i], v[i])):
            np.testing.assert_allclose(a[i], b, rtol=1e-12)


def test_float32_stays_float32():
    q, k, v = (a.astype(np.float32) for a in _qkv((2, 4, 2, 3), (2, 4, 2, 3), seed=9))
    out = nn.dot_product_attention(q, k, v, is_causal=True)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, reference(*(a.astype(float) for a in (q, k, v)),
                                              is_causal=True), rtol=1e-5, atol=1e-6)
    g = fxad.grad(lambda q: nn.dot_product_attention(q, k, v).sum())(q)
    assert g.dtype == np.float32


@pytest.mark.parametrize("kw,err,match", [
    (dict(key=np.zeros((2, 5, 3, 3)), value=np.zeros((2, 5, 3, 3))), FxadValueError,
     "multiple"),
    (dict(key=np.zeros((2, 5, 2, 4)), value=np.zeros((2, 5, 2, 4))), FxadValueError, "agree"),
    (dict(value=np.zeros((2, 5, 2, 2))), FxadValueError, "value"),
    (dict(mask=np.ones((1, 1, 4, 5))), FxadTypeError, "boolean"),
    (dict(bias=np.ones((1, 3, 4, 5))), FxadValueError, "broadcast"),
    (dict(query_seq_lengths=np.array([1.5, 2.0])), FxadValueError, "integers"),
    (dict(implementation="cudnn"), FxadValueError, "implementation"),
])
def test_bad_arguments_raise_clear_errors(kw, err, match):
    args = dict(query=np.zeros((2, 4, 4, 3)), key=np.zeros((2, 5, 2, 3)),
                value=np.zeros((2, 5, 2, 3)))
    args.update(kw)
    with pytest.raises(err, match=match):
        nn.dot_product_attention(**args)


def test_softmax_is_one_primitive_and_its_backward_one_equation():
    """The softmax is the `softmax` primitive (eager grad derives and caches its pullback;
    a custom_vjp would take the staged path on every call), and its backward pass is one
    `softmax_tangent` equation."""
    q, k, v = _qkv((2, 5, 4, 3), (2, 7, 4, 3))
    f = lambda q: (nn.dot_product_attention(q, k, v, is_causal=True) ** 2).sum()  # noqa: E731
    names = [e.primitive.name for e in fxad.make_jaxpr(fxad.grad(f))(q).jaxpr.eqns]
    assert names.count("softmax") == 1 and names.count("softmax_tangent") == 1
    assert not [n for n in names if n.startswith("custom")]
    np.testing.assert_allclose(fxad.grad(f)(q), fxad.jit(fxad.grad(f))(q), rtol=1e-12)

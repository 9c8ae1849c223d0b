"""fxad.checkpoint (remat): same values and derivatives as the function it wraps, fewer saved
residuals in the linearized program, and recomputation in the backward pass."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import nn


def close(a, b, rtol=1e-12, atol=1e-13):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, np.float64),
                               rtol=rtol, atol=atol)


RNG = np.random.default_rng(7)
DEPTH, WIDTH = 10, 6
WS = [RNG.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH) for _ in range(DEPTH)]
BS = [RNG.standard_normal(WIDTH) * 0.1 for _ in range(DEPTH)]
X = RNG.standard_normal(WIDTH)


def deep(x):
    """10 tanh layers with closed-over weights."""
    for W, b in zip(WS, BS):
        x = fnp.tanh(W @ x + b)
    return x


def deep_params(params, x):
    for W, b in params:
        x = fnp.tanh(W @ x + b)
    return x


PARAMS = list(zip(WS, BS))


def np_deep_grad(x, ct):
    """Hand-written backprop of sum(ct * deep(x)) with respect to x."""
    hs = [x]
    for W, b in zip(WS, BS):
        hs.append(np.tanh(W @ hs[-1] + b))
    g = ct
    for (W, b), h in zip(reversed(list(zip(WS, BS))), reversed(hs[1:])):
        g = W.T @ (g * (1 - h * h))
    return g


def scalar(f):
    return lambda x: fnp.sum(fnp.sin(f(x)))


CK = fxad.checkpoint(deep)


def test_values_identical():
    close(CK(X), deep(X), rtol=0, atol=0)
    B = RNG.standard_normal((3, WIDTH))
    close(fxad.vmap(CK)(B), fxad.vmap(deep)(B))


def test_grad_matches_plain_and_hand_backprop():
    ct = RNG.standard_normal(WIDTH)
    g = fxad.grad(lambda x: fnp.sum(ct * CK(x)))(X)
    close(g, fxad.grad(lambda x: fnp.sum(ct * deep(x)))(X))
    close(g, np_deep_grad(X, ct), rtol=1e-10)
    close(fxad.grad(scalar(CK))(X), fxad.grad(scalar(deep))(X))


def test_hessian_jvp_jacobians_match():
    close(fxad.hessian(scalar(CK))(X), fxad.hessian(scalar(deep))(X), rtol=1e-10, atol=1e-12)
    close(fxad.jacrev(fxad.jacrev(scalar(CK)))(X), fxad.hessian(scalar(deep))(X),
          rtol=1e-10, atol=1e-12)
    v = RNG.standard_normal(WIDTH)
    y, t = fxad.jvp(CK, (X,), (v,))
    y0, t0 = fxad.jvp(deep, (X,), (v,))
    close(y, y0)
    close(t, t0)
    close(fxad.jacfwd(CK)(X), fxad.jacrev(deep)(X))
    close(fxad.jacrev(CK)(X), fxad.jacfwd(deep)(X))


def test_vmap_grad_and_jit_grad_match():
    B = RNG.standard_normal((4, WIDTH))
    close(fxad.vmap(fxad.grad(scalar(CK)))(B), fxad.vmap(fxad.grad(scalar(deep)))(B))
    close(fxad.jit(fxad.grad(scalar(CK)))(X), fxad.grad(scalar(deep))(X))
    close(fxad.grad(fxad.jit(scalar(CK)))(X), fxad.grad(scalar(deep))(X))
    close(fxad.grad(lambda b: fnp.sum(fxad.vmap(scalar(CK))(b)))(B),
          fxad.vmap(fxad.grad(scalar(deep)))(B))


def test_grad_wrt_params_pytree():
    ck = fxad.checkpoint(deep_params)
    loss = lambda p, x: fnp.sum(fnp.sin(ck(p, x)))  # noqa: E731
    loss0 = lambda p, x: fnp.sum(fnp.sin(deep_params(p, x)))  # noqa: E731
    gp, gx = fxad.grad(loss, argnums=(0, 1))(PARAMS, X)
    gp0, gx0 = fxad.grad(loss0, argnums=(0, 1))(PARAMS, X)
    close(gx, gx0)
    assert len(gp) == DEPTH
    for (gW, gb), (gW0, gb0) in zip(gp, gp0):
        close(gW, gW0)
        close(gb, gb0)


def test_per_layer_and_nested_checkpoint():
    layer = fxad.checkpoint(lambda W, b, x: fnp.tanh(W @ x + b))

    def per_layer(x):
        for W, b in zip(WS, BS):
            x = layer(W, b, x)
        return x

    def nested(x):
        h = fxad.checkpoint(lambda x: deep_params(PARAMS[:5], x))(x)
        return fxad.checkpoint(per_layer_tail)(h)

    def per_layer_tail(x):
        for W, b in PARAMS[5:]:
            x = layer(W, b, x)
        return x
    want = fxad.grad(scalar(deep))(X)
    close(fxad.grad(scalar(per_layer))(X), want)
    close(fxad.grad(scalar(nested))(X), want)
    close(fxad.grad(scalar(fxad.checkpoint(fxad.checkpoint(deep))))(X), want)
    close(fxad.hessian(scalar(nested))(X), fxad.hessian(scalar(deep))(X), rtol=1e-10,
          atol=1e-12)


def test_checkpoint_around_custom_rules():
    w = RNG.standard_normal((3, WIDTH))
    B = RNG.standard_normal((3, WIDTH))

    def block(x):
        return nn.gelu(nn.layer_norm(x) * 1.5)
    f = lambda x: fnp.sum(fnp.sin(fxad.checkpoint(block)(x)) * w)  # noqa: E731
    f0 = lambda x: fnp.sum(fnp.sin(block(x)) * w)  # noqa: E731
    close(fxad.grad(f)(B), fxad.grad(f0)(B), rtol=1e-10)
    close(fxad.hessian(f)(B), fxad.hessian(f0)(B), rtol=1e-9, atol=1e-11)


def test_linearize_holds_fewer_residuals():
    g_plain = scalar(deep)
    g_ck = scalar(CK)
    y0, lin0 = fxad.linearize(g_plain, X)
    y1, lin1 = fxad.linearize(g_ck, X)
    close(y1, y0)
    v = RNG.standard_normal(WIDTH)
    close(lin1(v), lin0(v))
    n_plain = len(lin0.jaxpr.consts)
    n_ck = len(lin1.jaxpr.consts)
    assert n_plain >= DEPTH, n_plain  # at least one residual per tanh layer
    assert n_ck < n_plain, (n_ck, n_plain)
    # the saved bytes shrink too
    nbytes = lambda cs: sum(np.asarray(c).nbytes for c in cs)  # noqa: E731
    assert nbytes(lin1.jaxpr.consts) < nbytes(lin0.jaxpr.consts)


def test_linearize_fewer_residual_bytes_when_weights_are_arguments():
    """Differentiating only with respect to x while the weights are arguments of the
    checkpointed blocks: the weights are not differentiated, so nothing weight-sized may be
    saved beyond the weights themselves (no zero tangents, no copies)."""
    width, batch = 16, 4
    params = [(RNG.standard_normal((width, width)) / 4, RNG.standard_normal(width) * 0.1)
              for _ in range(DEPTH)]
    x = RNG.standard_normal((batch, width))
    ck_block = fxad.checkpoint(lambda ps, h: _mlp(ps, h))

    def plain(x):
        return fnp.sum(fnp.sin(_mlp(params, x)))

    def blocks(x):
        h = ck_block(params[:5], x)
        return fnp.sum(fnp.sin(ck_block(params[5:], h)))
    _, lin0 = fxad.linearize(plain, x)
    _, lin1 = fxad.linearize(blocks, x)
    v = RNG.standard_normal(x.shape)
    close(lin1(v), lin0(v))
    close(fxad.grad(blocks)(x), fxad.grad(plain)(x))

    def saved_bytes(consts):  # residuals other than the parameter arrays themselves
        mine = [c for c in consts if not any(c is a for p in params for a in p)]
        return sum(np.asarray(c).nbytes for c in {id(c): c for c in mine}.values())
    b0, b1 = saved_bytes(lin0.jaxpr.consts), saved_bytes(lin1.jaxpr.consts)
    assert b1 < b0, f"checkpointed program saves {b1} bytes, plain saves {b0}"


def _mlp(ps, h):
    for W, b in ps:
        h = fnp.tanh(h @ W + b)
    return h


def test_backward_pass_recomputes():
    calls = []

    def counted(x):
        calls.append(1)
        return deep(x)
    ck = fxad.checkpoint(counted)
    _, pull = fxad.vjp(ck, X)
    n_fwd = len(calls)
    assert n_fwd >= 1
    ct = RNG.standard_normal(WIDTH)
    g = pull(ct)[0]
    assert len(calls) > n_fwd, "checkpoint must rerun the function in the backward pass"
    close(g, np_deep_grad(X, ct), rtol=1e-10)
    # without checkpoint the pullback does not call the function again
    calls.clear()
    _, pull0 = fxad.vjp(counted, X)
    n0 = len(calls)
    pull0(ct)
    assert len(calls) == n0


def test_policy_must_be_a_function():  # policies are tested in tests/api/test_jax_surface.py
    with pytest.raises(TypeError, match="checkpoint_policies"):
        fxad.remat(deep, policy="dots_saveable")


def test_remat_is_checkpoint():
    assert fxad.remat is fxad.checkpoint
    close(fxad.grad(scalar(fxad.remat(deep)))(X), fxad.grad(scalar(deep))(X))


def test_wrapped_keeps_name():
    assert fxad.checkpoint(deep).__name__ == "deep"


def _count_dots(closed):
    """dot_general equations in a program, including those inside call bodies."""
    n = 0
    for e in closed.jaxpr.eqns:
        n += e.primitive.name == "dot_general"
        for p in e.params.values():
            if hasattr(p, "jaxpr") and hasattr(p, "consts"):
                n += _count_dots(p)
    return n


def test_backward_differentiates_only_inputs_with_tangents():
    """d/dx of checkpointed layers that take their weights as arguments recomputes each
    layer and forms x's cotangent, but no weight cotangents (one product fewer per layer
    than differentiating with respect to everything), with unchanged values; vmap over
    it and second order agree with the plain function."""
    layer = fxad.checkpoint(lambda W, b, x: fnp.tanh(W @ x + b))

    def f(params, x):
        for W, b in params:
            x = layer(W, b, x)
        return fnp.sum(fnp.sin(x))
    plain = lambda params, x: fnp.sum(fnp.sin(deep_params(params, x)))  # noqa: E731
    close(fxad.grad(f, 1)(PARAMS, X), fxad.grad(plain, 1)(PARAMS, X))
    gp, gp0 = fxad.grad(f)(PARAMS, X), fxad.grad(plain)(PARAMS, X)
    for (a, b), (c, d) in zip(gp, gp0):
        close(a, c)
        close(b, d)
    dots_x = _count_dots(fxad.make_jaxpr(fxad.grad(f, 1))(PARAMS, X))
    dots_all = _count_dots(fxad.make_jaxpr(fxad.grad(f, (0, 1)))(PARAMS, X))
    # forward, recompute and x's cotangent per layer; W's cotangent only when asked for
    assert dots_x == 3 * DEPTH and dots_all == 4 * DEPTH
    xs = RNG.standard_normal((3, WIDTH))
    close(fxad.vmap(fxad.grad(f, 1), in_axes=(None, 0))(PARAMS, xs),
          np.stack([fxad.grad(plain, 1)(PARAMS, x) for x in xs]))
    close(fxad.hessian(f, 1)(PARAMS, X), fxad.hessian(plain, 1)(PARAMS, X), rtol=1e-10)


def _layer(w, x):
    return fnp.sin(fnp.dot(w, x))


def _three_layers(w1, w2, w3, x):
    return _layer(w3, _layer(w2, _layer(w1, x)))


_WS = (np.ones((5, 4)), np.ones((6, 5)), np.ones((7, 6)), np.ones(4))


@pytest.mark.parametrize("case", ["plain", "checkpoint", "dots", "names"])
def test_saved_residuals_say_what_each_policy_keeps(case, capsys):
    """Each sin layer's reverse pass needs cos(W x) (or sin's input, to recompute it) and the
    next layer needs sin(W x); what is kept of them is the checkpoint policy's choice."""
    f = {"plain": _three_layers,
         "checkpoint": lambda w1, w2, w3, x: _layer(w3, fxad.checkpoint(_layer)(
             w2, fxad.checkpoint(_layer)(w1, x))),
         "dots": fxad.checkpoint(
             _three_layers, policy=fxad.checkpoint_policies.dots_with_no_batch_dims_saveable),
         "names": fxad.checkpoint(
             lambda w1, w2, w3, x: _layer(w3, _layer(w2, fxad.checkpoint_name(
                 _layer(w1, x), "a"))),
             policy=fxad.checkpoint_policies.save_only_these_names("a"))}[case]
    saved = fxad.saved_residuals(f, *_WS)
    args = [(a.shape, o) for a, o in saved if o.startswith("from the argument")]
    made = sorted((a.shape, o) for a, o in saved if not o.startswith("from the argument"))
    assert all(a.dtype == np.float64 for a, _ in saved)
    assert [o for _, o in args] == [f"from the argument {n}" for n in ("w1", "w2", "w3", "x")]
    if case == "plain":
        assert made == [((5,), "output of cos"), ((5,), "output of sin"), ((6,), "output of cos"),
                        ((6,), "output of sin"), ((7,), "output of cos")]
    elif case == "checkpoint":  # checkpointed layers keep their inputs only
        assert made == [((5,), "output of sin"), ((6,), "output of sin"), ((7,), "output of cos")]
    elif case == "dots":
        assert made == [((5,), "output of dot_general"), ((6,), "output of dot_general"),
                        ((7,), "output of dot_general")]
    else:
        assert made == [((5,), "named 'a'")]
    fxad.print_saved_residuals(f, *_WS)
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{a.str_short()} {o}" for a, o in saved]


# --- closures over traced values ---------------------------------------------------------------
# A checkpointed function that closes over a value an enclosing transformation traces (a
# jitted argument, a value being differentiated, a mapped shard) used to fail (the value's
# tracer, kept in the recorded call, was dead when the call ran): the value is now an
# argument of the checkpoint, so it flows, and is differentiated, like one.

def _closing(policy, static=False):
    if static:
        return lambda x, w: fxad.checkpoint(lambda h, k: fnp.sin(h * x) * x ** k,
                                            policy=policy, static_argnums=1)(w, 2)
    return lambda x, w: fxad.checkpoint(lambda h: fnp.sin(h * x) * x, policy=policy)(w)


def _plain(static=False):
    return (lambda x, w: fnp.sin(w * x) * x ** 2) if static else \
        (lambda x, w: fnp.sin(w * x) * x)


CLOSURES = [(None, False), (fxad.checkpoint_policies.dots_saveable, False),
            (fxad.checkpoint_policies.nothing_saveable, False), (None, True),
            (fxad.checkpoint_policies.everything_saveable, True)]


@pytest.mark.parametrize("policy,static", CLOSURES)
def test_closure_over_traced_values(policy, static):
    x, w = np.array([1.0, 2.0, -0.5]), np.array([0.5, -1.5, 0.25])
    f, ref = _closing(policy, static), _plain(static)
    loss = lambda g: lambda x, w: fnp.sum(g(x, w) ** 2)  # noqa: E731
    close(fxad.jit(f)(x, w), ref(x, w))
    for outer in (lambda h: h, fxad.jit):
        for want, got in zip(fxad.grad(loss(ref), (0, 1))(x, w),
                             outer(fxad.grad(loss(f), (0, 1)))(x, w)):
            close(got, want)
        for want, got in zip(fxad.grad(loss(ref), (0, 1))(x, w),
                             fxad.grad(outer(loss(f)), (0, 1))(x, w)):
            close(got, want)
    close(fxad.hessian(fxad.jit(loss(f)))(x, w), fxad.hessian(loss(ref))(x, w))
    close(fxad.hessian(loss(f), 1)(x, w), fxad.hessian(loss(ref), 1)(x, w))
    X = np.stack([x, 2 * x, -x])
    close(fxad.vmap(fxad.jit(f), (0, None))(X, w), fxad.vmap(ref, (0, None))(X, w))
    close(fxad.pmap(f, "i", in_axes=(0, None))(X, w), fxad.vmap(ref, (0, None))(X, w))

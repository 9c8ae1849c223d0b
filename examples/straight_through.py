"""Quantization-aware training with the straight-through estimator (STE).

Rounding has derivative zero almost everywhere, so gradient descent through a quantizer q
does nothing. The STE trick  x + stop_gradient(q(x) - x)  evaluates to q(x) but
differentiates like the identity: the forward pass sees quantized weights, the backward pass
updates float "shadow" weights as if the quantizer were not there.

We fit a small tanh network whose weights are restricted to a 3-bit grid, and compare
quantization-aware training (QAT, with the STE) against post-training quantization (PTQ:
train in float, round at the end).

    python examples/straight_through.py           # full run
    python examples/straight_through.py --smoke   # a few seconds
"""
import argparse

import numpy as np

import fxad
import fxad.numpy as fnp
from fxad.tree_util import tree_map

BITS = 3            # 2**3 = 8 levels per tensor
CLIP = 1.0          # weights live in [-CLIP, CLIP]
STEP = 2 * CLIP / (2 ** BITS - 1)


def quantize(w):
    """Uniform quantizer onto 8 levels in [-1, 1]. Piecewise constant: zero gradient."""
    w = fnp.clip(w, -CLIP, CLIP)
    return fnp.round((w + CLIP) / STEP) * STEP - CLIP


def ste(w):
    """Forward: quantize(w). Backward: identity."""
    return w + fxad.stop_gradient(quantize(w) - w)


def predict(params, x, q):
    h = fnp.tanh(x @ q(params["w1"]) + params["b1"])   # biases stay in float
    return h @ q(params["w2"]) + params["b2"]


def loss(params, x, y, q):
    return fnp.mean((predict(params, x, q) - y) ** 2)


def identity(w):
    return w


def train(params, x, y, q, steps, lr=0.05):
    """Plain Adam (the point here is the estimator, not the optimizer)."""
    vg = fxad.jit(fxad.value_and_grad(lambda p, x, y: loss(p, x, y, q)))
    m = tree_map(np.zeros_like, params)
    v = tree_map(np.zeros_like, params)
    for t in range(1, steps + 1):
        _, g = vg(params, x, y)
        m = tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        params = tree_map(lambda p, m, v: p - lr * (m / (1 - 0.9 ** t)) /
                          (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8), params, m, v)
        # keep shadow weights near the grid's range so the STE's identity stays meaningful
        params = {k: (np.clip(p, -1.5 * CLIP, 1.5 * CLIP) if k[0] == "w" else p)
                  for k, p in params.items()}
    return params


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny run for CI")
    steps = 60 if ap.parse_args().smoke else 1500

    rng = np.random.default_rng(0)
    n, d, hdim = 256, 6, 12
    x = rng.standard_normal((n, d))
    y = np.sin(x[:, :1] + 0.5 * x[:, 1:2]) + 0.3 * x[:, 2:3] * x[:, 3:4]  # a smooth target
    init = {"w1": 0.4 * rng.standard_normal((d, hdim)), "b1": np.zeros(hdim),
            "w2": 0.4 * rng.standard_normal((hdim, 1)), "b2": np.zeros(1)}

    # 1. why the trick is needed: the gradient through the quantizer itself is zero
    g_naive = fxad.grad(loss)(init, x, y, quantize)
    g_ste = fxad.grad(loss)(init, x, y, ste)
    print("grad through round:  |dL/dw1| =", np.abs(g_naive["w1"]).max())
    print("grad through STE:    |dL/dw1| =", np.abs(g_ste["w1"]).max())
    assert np.all(g_naive["w1"] == 0) and np.abs(g_ste["w1"]).max() > 0
    # ...and it is exactly the float network's gradient evaluated at the quantized weights
    qinit = {k: (quantize(p) if k[0] == "w" else p) for k, p in init.items()}
    g_float_at_q = fxad.grad(loss)(qinit, x, y, identity)
    assert all(np.allclose(g_ste[k], g_float_at_q[k]) for k in init)
    print("STE gradient == float gradient at q(w): yes")
    print(fxad.make_jaxpr(ste)(np.linspace(-1, 1, 3)))  # the stop_gradient in the program

    # 2. train: float then round (PTQ) versus quantization-aware (QAT)
    float_params = train(init, x, y, identity, steps)
    qat_params = train(init, x, y, ste, steps)
    rows = [("float weights (no quantization)", loss(float_params, x, y, identity)),
            ("PTQ: float training, then round", loss(float_params, x, y, quantize)),
            ("QAT: trained through the STE", loss(qat_params, x, y, quantize)),
            ("initial, quantized", loss(init, x, y, quantize))]
    print(f"\nmean squared error after {steps} steps, weights on a {BITS}-bit grid:")
    for name, val in rows:
        print(f"  {name:34s} {float(val):.4f}")
    qw = quantize(qat_params["w1"])
    print("distinct values in QAT's w1:", np.unique(np.round(qw, 6)))
    assert len(np.unique(np.round(qw, 9))) <= 2 ** BITS
    assert rows[2][1] < rows[3][1], "QAT did not reduce the loss"
    if steps >= 1000:
        assert rows[2][1] < rows[1][1], "QAT should beat post-training quantization here"


if __name__ == "__main__":
    main()

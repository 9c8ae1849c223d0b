"""An Elman RNN written with fxad.lax.scan, trained to predict the next value of noisy sine
waves. scan stages the step function once, so the program (and its gradient) has one loop
primitive whatever the sequence length, instead of T unrolled copies of the step.

    python examples/rnn_scan.py           # full run
    python examples/rnn_scan.py --smoke   # a few seconds
"""
import argparse
import time

import numpy as np

import fxad
import fxad.numpy as fnp
from fxad.tree_util import tree_map


def rnn(params, xs):
    """xs: (T, B, 1) -> predictions (T, B, 1)."""
    def step(h, x):
        h = fnp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h @ params["wo"] + params["bo"]
    h0 = fnp.zeros((xs.shape[1], params["wh"].shape[0]))
    _, ys = fxad.lax.scan(step, h0, xs)
    return ys


def rnn_unrolled(params, xs):
    """The same network as a Python loop: the reference for scan's gradient."""
    h = fnp.zeros((xs.shape[1], params["wh"].shape[0]))
    ys = []
    for x in xs:
        h = fnp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        ys.append(h @ params["wo"] + params["bo"])
    return fnp.stack(ys)


def loss(params, xs, targets, model=rnn):
    return fnp.mean((model(params, xs) - targets) ** 2)


def batch_of_waves(rng, batch, length):
    """Sine waves with random frequency and phase; target = the next sample."""
    freq = rng.uniform(0.1, 0.3, (1, batch, 1))
    phase = rng.uniform(0, 2 * np.pi, (1, batch, 1))
    t = np.arange(length + 1).reshape(-1, 1, 1)
    s = np.sin(freq * t + phase) + 0.05 * rng.standard_normal((length + 1, batch, 1))
    return s[:-1], s[1:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny run for CI")
    smoke = ap.parse_args().smoke
    hidden, length, batch, steps = (8, 12, 8, 15) if smoke else (24, 40, 32, 300)

    rng = np.random.default_rng(0)
    params = {"wx": 0.5 * rng.standard_normal((1, hidden)),
              "wh": rng.standard_normal((hidden, hidden)) / np.sqrt(hidden),
              "b": np.zeros(hidden),
              "wo": 0.5 * rng.standard_normal((hidden, 1)) / np.sqrt(hidden),
              "bo": np.zeros(1)}

    xs, ys = batch_of_waves(rng, batch, length)
    g_scan = fxad.grad(loss)(params, xs, ys)
    g_loop = fxad.grad(loss)(params, xs, ys, rnn_unrolled)
    err = max(np.abs(g_scan[k] - g_loop[k]).max() for k in params)
    print(f"grad through scan vs unrolled Python loop: max |difference| = {err:.1e}")
    assert err < 1e-10
    n_scan = len(fxad.make_jaxpr(loss)(params, xs, ys).eqns)
    n_loop = len(fxad.make_jaxpr(lambda p, x, y: loss(p, x, y, rnn_unrolled))(params, xs, ys)
                 .eqns)
    print(f"equations in the staged loss: scan {n_scan}, unrolled {n_loop} (T = {length})")

    vg = fxad.jit(fxad.value_and_grad(loss))
    lr, m, v = 1e-2, tree_map(np.zeros_like, params), tree_map(np.zeros_like, params)
    xs_val, ys_val = batch_of_waves(np.random.default_rng(1), 64, length)
    first = float(loss(params, xs_val, ys_val))
    print(f"step    0  validation loss {first:.4f}")
    t0 = time.perf_counter()
    for t in range(1, steps + 1):
        xs, ys = batch_of_waves(rng, batch, length)
        val, g = vg(params, xs, ys)
        m = tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, g)          # Adam
        v = tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        params = tree_map(lambda p, m, v: p - lr * (m / (1 - 0.9 ** t)) /
                          (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8), params, m, v)
        if t % max(1, steps // 10) == 0:
            print(f"step {t:4d}  train loss {float(val):.4f}  "
                  f"validation loss {float(loss(params, xs_val, ys_val)):.4f}")
    last = float(loss(params, xs_val, ys_val))
    print(f"validation loss {first:.4f} -> {last:.4f} in {steps} steps "
          f"({time.perf_counter() - t0:.1f}s)")
    assert last < first, "loss did not decrease"


if __name__ == "__main__":
    main()

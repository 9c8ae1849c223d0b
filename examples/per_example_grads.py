"""Per-example gradients with vmap(grad(loss), in_axes=(None, 0, 0)), and per-example
gradient-norm clipping (the core of DP-SGD), checked against a Python loop over examples.

`in_axes=(None, 0, 0)`: the parameters are shared (not batched), each example (x_i, y_i) is
one slice of the batch. The result has a leading batch axis on every parameter leaf.

    python examples/per_example_grads.py           # batch of 256
    python examples/per_example_grads.py --smoke   # batch of 16
"""
import argparse
import time

import numpy as np

import fxad
import fxad.numpy as fnp
from fxad.tree_util import tree_leaves, tree_map


def predict(params, x):
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


def loss(params, x, y):
    """Loss of ONE example: x has shape (d,), y is a class index."""
    logp = fxad.nn.log_softmax(predict(params, x))
    return -logp[y]


per_example_grads = fxad.vmap(fxad.grad(loss), in_axes=(None, 0, 0))


def clip_and_average(grads, max_norm):
    """Scale each example's whole gradient (all leaves together) to norm <= max_norm, then
    average: no single example can move the parameters by more than max_norm / batch."""
    sq = sum(np.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in tree_leaves(grads))
    norms = np.sqrt(sq)
    scale = np.minimum(1.0, max_norm / np.maximum(norms, 1e-12))
    clipped = tree_map(lambda g: g * scale.reshape((-1,) + (1,) * (g.ndim - 1)), grads)
    return tree_map(lambda g: g.mean(axis=0), clipped), norms


def loop_clip_and_average(params, xs, ys, max_norm):
    """The same computation one example at a time: the reference."""
    total = tree_map(np.zeros_like, params)
    norms = []
    for x, y in zip(xs, ys):
        g = fxad.grad(loss)(params, x, y)
        norm = np.sqrt(sum(np.sum(v ** 2) for v in tree_leaves(g)))
        s = min(1.0, max_norm / max(norm, 1e-12))
        total = tree_map(lambda t, v: t + s * v, total, g)
        norms.append(norm)
    return tree_map(lambda t: t / len(xs), total), np.array(norms)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="small batch for CI")
    batch = 16 if ap.parse_args().smoke else 256
    d, hidden, classes, max_norm = 10, 32, 4, 4.0

    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((d, hidden)) / np.sqrt(d), "b1": np.zeros(hidden),
              "w2": rng.standard_normal((hidden, classes)) / np.sqrt(hidden),
              "b2": np.zeros(classes)}
    xs = rng.standard_normal((batch, d)) * rng.uniform(0.1, 5.0, (batch, 1))  # varied scales
    ys = rng.integers(0, classes, batch)

    t0 = time.perf_counter()
    grads = per_example_grads(params, xs, ys)
    avg, norms = clip_and_average(grads, max_norm)
    t_vmap = time.perf_counter() - t0
    print("per-example gradient shapes:",
          {k: tuple(v.shape) for k, v in sorted(grads.items())})
    print(f"per-example gradient norms: min {norms.min():.3f}, median {np.median(norms):.3f}, "
          f"max {norms.max():.3f}; {np.sum(norms > max_norm)}/{batch} clipped to {max_norm}")

    t0 = time.perf_counter()
    ref_avg, ref_norms = loop_clip_and_average(params, xs, ys, max_norm)
    t_loop = time.perf_counter() - t0
    err = max(np.abs(avg[k] - ref_avg[k]).max() for k in params)
    print(f"vmap vs Python loop: max |difference| = {err:.2e}   "
          f"(vmap {t_vmap * 1e3:.1f} ms, loop {t_loop * 1e3:.1f} ms, "
          f"{t_loop / t_vmap:.1f}x)")
    assert np.allclose(norms, ref_norms) and err < 1e-12

    # Without clipping, the mean of per-example gradients is the gradient of the mean loss.
    batch_grad = fxad.grad(lambda p: fnp.mean(fxad.vmap(loss, (None, 0, 0))(p, xs, ys)))(params)
    assert all(np.allclose(batch_grad[k], grads[k].mean(axis=0)) for k in params)
    print("mean of per-example gradients == gradient of the mean loss: yes")


if __name__ == "__main__":
    main()

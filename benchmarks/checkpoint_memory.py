"""Peak memory of fxad.grad through a deep MLP, with and without fxad.checkpoint.

A 50-layer tanh MLP (width 256, batch 64). Peak memory of one `fxad.grad(loss)` call is
measured with tracemalloc (NumPy reports its buffers to tracemalloc), for:

  plain            no checkpoint: every layer's residuals live until the backward pass
  per-layer        each layer wrapped in fxad.checkpoint (saves each layer's input instead)
  blocks of k      groups of k layers wrapped in fxad.checkpoint (saves 50/k block inputs;
                   the backward pass recomputes one block at a time)

Two gradients are measured: with respect to the input only (the peak is then the saved
activations), and with respect to all parameters and the input (the realistic training case;
the 25 MB of weight gradients are part of every variant's peak, so the ratio is smaller).
For the input-only gradient two more variants checkpoint functions that close over the weights
(so the weights are not arguments of the checkpointed functions). Gradients are checked to
agree with the plain version.

Run: python benchmarks/checkpoint_memory.py
"""
from __future__ import annotations

import time
import tracemalloc

import numpy as np

import fxad
import fxad.numpy as fnp

DEPTH, WIDTH, BATCH = 50, 256, 64


def layer(W, b, h):
    return fnp.tanh(h @ W + b)


def block(params, h):
    for W, b in params:
        h = layer(W, b, h)
    return h


ck_layer = fxad.checkpoint(layer)
ck_block = fxad.checkpoint(block)


def mlp_plain(params, x):
    return block(params, x)


def mlp_per_layer(params, x):
    for W, b in params:
        x = ck_layer(W, b, x)
    return x


def mlp_blocks(k):
    def run(params, x):
        for i in range(0, len(params), k):
            x = ck_block(params[i:i + k], x)
        return x
    run.__name__ = f"blocks_of_{k}"
    return run


def closed_over(params, k):
    """Blocks of k layers that close over concrete weights: the checkpointed functions take
    only the activation, so no weight-sized tangent or cotangent can appear."""
    fns = [fxad.checkpoint(lambda h, ps=params[i:i + k]: block(ps, h))
           for i in range(0, len(params), k)]

    def run(_params, x):
        for f in fns:
            x = f(x)
        return x
    return run


def loss_of(mlp):
    def loss(params, x):
        y = mlp(params, x)
        return fnp.sum(y * y) / BATCH
    return loss


def measure(fn, *args):
    fn(*args)  # warm up caches (staged avals, lru caches) outside the measurement
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    out = fn(*args)
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return out, peak, dt


def tree_max_rel_diff(a, b):
    la, lb = fxad.tree_util.tree_leaves(a), fxad.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y))) /
                     max(np.max(np.abs(np.asarray(y))), 1e-300)) for x, y in zip(la, lb))


def main():
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH),
               rng.standard_normal(WIDTH) * 0.1) for _ in range(DEPTH)]
    x = rng.standard_normal((BATCH, WIDTH))
    act_mb = BATCH * WIDTH * 8 / 2 ** 20
    w_mb = sum(W.nbytes + b.nbytes for W, b in params) / 2 ** 20
    print(f"MLP: {DEPTH} tanh layers, width {WIDTH}, batch {BATCH}, float64")
    print(f"one activation = {act_mb:.3f} MB; all activations = {DEPTH * act_mb:.2f} MB; "
          f"parameters (= their gradient) = {w_mb:.2f} MB\n")

    variants = [("plain", mlp_plain), ("per-layer", mlp_per_layer)] + \
        [(f"blocks of {k}", mlp_blocks(k)) for k in (5, 7, 10)]

    closures = [("closure, per-layer", closed_over(params, 1)),
                ("closure, blocks of 7", closed_over(params, 7))]
    for title, argnums, extra in [("grad wrt input x only", 1, closures),
                                  ("grad wrt params and x", (0, 1), [])]:
        print(f"== {title} ==")
        print(f"{'variant':<22}{'peak MB':>10}{'ratio to plain':>16}{'time s':>9}"
              f"{'max rel diff':>15}")
        ref = ref_peak = None
        for name, mlp in variants + extra:
            g = fxad.grad(loss_of(mlp), argnums=argnums)
            out, peak, dt = measure(g, params, x)
            if ref is None:
                ref, ref_peak = out, peak
                diff = 0.0
            else:
                diff = tree_max_rel_diff(out, ref)
                assert diff < 1e-10, f"{name}: gradients disagree (max rel diff {diff:.3g})"
            print(f"{name:<22}{peak / 2 ** 20:>10.2f}{peak / ref_peak:>16.3f}{dt:>9.2f}"
                  f"{diff:>15.2e}")
        print()
    print("gradients agree across all variants (max rel diff < 1e-10)")


if __name__ == "__main__":
    main()

"""Benchmarks for the JAX-surface constructs, each against a hand-written NumPy floor and, when
installed, JAX (jit, float64, CPU, one thread) and PyTorch (eager, one thread):

  scatter_set      x.at[idx].set(v), 10 000 traced, repeated indices into 1 000 slots
                   (jit; floor: NumPy's fancy assignment, last write wins)
  scatter_min      x.at[idx].min(v), same sizes (jit; floor: np.minimum.at)
  sliding_window   sums of all length-16 windows of a 2 000-sample signal via lax.map over
                   lax.dynamic_slice_in_dim (jit; floor: sliding_window_view(...).sum)
  remat_mlp_grad   grad of an 8-layer tanh MLP (width 256, batch 64) with checkpoint and no
                   policy, and with dots_saveable (eager; floor: hand-written backprop)

    python benchmarks/jax_surface.py [--repeat K] [--quick]

Each variant is checked against the floor, called twice before timing (tracing excluded),
then timed in rounds (order rotating); reported: median per call, and the median ratio to
the floor measured in the same rounds.
"""
from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ[_var] = "1"
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fxad  # noqa: E402
import fxad.numpy as fnp  # noqa: E402
from fxad import checkpoint_policies as cp, lax  # noqa: E402

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:  # pragma: no cover
    jax = None
try:
    import torch
    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    torch = None


def workloads(quick):
    rng = np.random.default_rng(0)
    n, k = (100, 1000) if quick else (1000, 10000)
    x, idx, v = rng.standard_normal(n), rng.integers(0, n, k), rng.standard_normal(k)

    def set_floor():
        out = x.copy()
        out[idx] = v
        return out

    def min_floor():
        out = x.copy()
        np.minimum.at(out, idx, v)
        return out
    out = {}
    f_set = fxad.jit(lambda x, i, v: fnp.at(x)[i].set(v))
    f_min = fxad.jit(lambda x, i, v: fnp.at(x)[i].min(v))
    out["scatter_set"] = {"floor": set_floor, "fxad jit": lambda: f_set(x, idx, v)}
    out["scatter_min"] = {"floor": min_floor, "fxad jit": lambda: f_min(x, idx, v)}
    if jax is not None:
        j_set = jax.jit(lambda x, i, v: x.at[i].set(v))
        j_min = jax.jit(lambda x, i, v: x.at[i].min(v))
        xj, ij, vj = jnp.asarray(x), jnp.asarray(idx), jnp.asarray(v)
        # JAX leaves the winner of repeated set indices unspecified: not compared, only timed
        out["scatter_set"]["jax jit (unchecked)"] = lambda: np.asarray(j_set(xj, ij, vj))
        out["scatter_min"]["jax jit"] = lambda: np.asarray(j_min(xj, ij, vj))
    if torch is not None:
        xt, it, vt = torch.tensor(x), torch.tensor(idx), torch.tensor(v)
        out["scatter_min"]["torch eager"] = lambda: xt.scatter_reduce(
            0, it, vt, "amin", include_self=True).numpy()

    m, w = (200, 8) if quick else (2000, 16)
    sig = rng.standard_normal(m)
    f_win = fxad.jit(lambda s: lax.map(lambda i: fnp.sum(lax.dynamic_slice_in_dim(s, i, w)),
                                       np.arange(m - w + 1)))
    out["sliding_window"] = {
        "floor": lambda: np.lib.stride_tricks.sliding_window_view(sig, w).sum(1),
        "fxad jit": lambda: f_win(sig)}
    if jax is not None:
        j_win = jax.jit(lambda s: jax.lax.map(
            lambda i: jnp.sum(jax.lax.dynamic_slice_in_dim(s, i, w)), jnp.arange(m - w + 1)))
        out["sliding_window"]["jax jit"] = lambda: np.asarray(j_win(jnp.asarray(sig)))

    depth, width, batch = (3, 32, 8) if quick else (8, 256, 64)
    Ws = [rng.standard_normal((width, width)) / np.sqrt(width) for _ in range(depth)]
    X = rng.standard_normal((batch, width))

    def mlp(ws, h):
        for W in ws:
            h = fnp.tanh(h @ W)
        return fnp.sum(h ** 2)

    def floor():
        hs = [X]
        for W in Ws:
            hs.append(np.tanh(hs[-1] @ W))
        g, gs = 2 * hs[-1], []
        for W, h_in, h_out in zip(Ws[::-1], hs[-2::-1], hs[:0:-1]):
            g = g * (1 - h_out ** 2)
            gs.append(h_in.T @ g)
            g = g @ W.T
        return gs[::-1]
    plain = fxad.grad(mlp)
    remat = fxad.grad(fxad.checkpoint(mlp))
    dots = fxad.grad(fxad.checkpoint(mlp, policy=cp.dots_saveable))
    out["remat_mlp_grad"] = {"floor": floor, "fxad eager": lambda: plain(Ws, X),
                             "fxad checkpoint": lambda: remat(Ws, X),
                             "fxad checkpoint dots_saveable": lambda: dots(Ws, X)}
    return out


def close(a, b):
    la, lb = fxad.tree_util.tree_leaves(a), fxad.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(np.allclose(x, y, rtol=1e-9, atol=1e-12)
                                      for x, y in zip(la, lb))


def timed(fn, number):
    t = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t) / number


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = ap.parse_args(argv)
    print(f"{'workload':16s} {'variant':32s} {'median':>10s} {'vs floor':>9s}")
    for name, variants in workloads(args.quick).items():
        want = variants["floor"]()
        for label, fn in variants.items():
            got = [fn(), fn()][-1]
            if label != "floor" and "unchecked" not in label and not close(got, want):
                print(f"{name:16s} {label:32s} FAIL (differs from the floor)")
                variants[label] = None
        variants = {k: f for k, f in variants.items() if f is not None}
        number = max(1, int(0.05 / max(timed(variants["floor"], 1), 1e-6)))
        times = {k: [] for k in variants}
        ratios = {k: [] for k in variants}
        labels = list(variants)
        for r in range(args.repeat):
            order = labels[r % len(labels):] + labels[:r % len(labels)]
            got = {k: timed(variants[k], number) for k in order}
            for k in labels:
                times[k].append(got[k])
                ratios[k].append(got[k] / got["floor"])
        for k in labels:
            print(f"{name:16s} {k:32s} {statistics.median(times[k]) * 1e3:8.3f}ms "
                  f"{statistics.median(ratios[k]):8.2f}x")


if __name__ == "__main__":
    main()

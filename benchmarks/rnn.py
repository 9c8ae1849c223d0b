"""Benchmark: gradients of an Elman RNN through fxad control flow, against hand-written NumPy
backpropagation through time (the floor).

    python benchmarks/rnn.py [--repeat 9] [--steps 200]

Not a test; CI does not run it. One BLAS thread (set before NumPy is imported), median wall
time over >= 7 timed runs after a warmup, the variants' runs interleaved (a b c d a b ...)
so that drifting machine load affects all alike; each run repeats the call enough times to
last >= 20 ms, and the time reported is per call (the minimum is shown too). Every result
is checked against the floor (rtol 1e-6).

    h_t = tanh(W h_{t-1} + U x_t + b),   hidden 64, input 32, 200 steps, h_0 = 0
    loss = sum(h_T ** 2) + sum_t mean(h_t)
    gradients w.r.t. W, U, b

(a) floor: NumPy forward + backward (BPTT), written by hand
(b) fxad.grad through lax.scan (eager)
(c) fxad.jit(fxad.grad(...)) through lax.scan
(d) fxad.grad of the same loop written in Python (unrolled by tracing)
Targets (issue 6): (b) <= 3x the floor, (c) <= 1.5x.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fxad  # noqa: E402
import fxad.numpy as fnp  # noqa: E402
from fxad import lax  # noqa: E402

HIDDEN, N_IN = 64, 32


def _calibrate(fn, min_run):
    """Warm up, then pick `number` so that one run of `number` calls lasts >= min_run."""
    fn()  # warmup (and first-call caches: staging, compilation)
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_run or number >= 1 << 16:
            return number
        number *= 2 if dt <= 0 else max(2, int(min_run / dt * 1.2))


def interleaved_times(fns, repeat, min_run=0.02):
    """timeit-style per-call times, `repeat` runs of every function, interleaved (a, b, c, d,
    a, b, ...) so that drifting machine load affects all variants alike. Returns, per
    function, the list of per-call times."""
    numbers = [_calibrate(fn, min_run) for fn in fns]
    runs = [[] for _ in fns]
    for _ in range(repeat):
        for fn, number, out in zip(fns, numbers, runs):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            out.append((time.perf_counter() - t0) / number)
    return runs


# --- (a) the floor: hand-written BPTT --------------------------------------------------------

def numpy_bptt(W, U, b, h0, xs):
    T, H = xs.shape[0], W.shape[0]
    hs = np.empty((T + 1, H))
    hs[0] = h0
    pre_x = xs @ U.T + b  # all input projections at once
    for t in range(T):
        hs[t + 1] = np.tanh(W @ hs[t] + pre_x[t])
    loss = np.sum(hs[T] ** 2) + np.sum(hs[1:].mean(axis=1))
    dW, dz_all = np.zeros_like(W), np.empty((T, H))
    dh = 2.0 * hs[T]
    for t in range(T - 1, -1, -1):
        dh = dh + 1.0 / H  # d mean(h_t) / d h_t
        dz = dh * (1.0 - hs[t + 1] ** 2)
        dz_all[t] = dz
        dh = W.T @ dz
    dW = dz_all.T @ hs[:T]
    dU = dz_all.T @ xs
    db = dz_all.sum(axis=0)
    return loss, (dW, dU, db)


# --- (b), (c) fxad through scan; (d) a Python loop ---------------------------------------------

def loss_scan(W, U, b, h0, xs):
    def step(h, x):
        h = fnp.tanh(W @ h + U @ x + b)
        return h, fnp.mean(h)
    h, means = lax.scan(step, h0, xs)
    return fnp.sum(h ** 2) + fnp.sum(means)


def loss_loop(W, U, b, h0, xs):
    h, total = h0, 0.0
    for t in range(xs.shape[0]):
        h = fnp.tanh(W @ h + U @ xs[t] + b)
        total = total + fnp.mean(h)
    return fnp.sum(h ** 2) + total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--steps", type=int, default=200)
    opts = ap.parse_args()
    repeat = max(7, opts.repeat)
    r = np.random.default_rng(0)
    W = r.normal(size=(HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)
    U = r.normal(size=(HIDDEN, N_IN)) / np.sqrt(N_IN)
    b = r.normal(size=HIDDEN) * 0.1
    h0 = np.zeros(HIDDEN)
    xs = r.normal(size=(opts.steps, N_IN))

    grad_scan = fxad.grad(loss_scan, argnums=(0, 1, 2))
    grad_jit = fxad.jit(fxad.grad(loss_scan, argnums=(0, 1, 2)))
    grad_loop = fxad.grad(loss_loop, argnums=(0, 1, 2))
    variants = [
        ("(a) NumPy BPTT (floor)", lambda: numpy_bptt(W, U, b, h0, xs)[1]),
        ("(b) grad(scan), eager", lambda: grad_scan(W, U, b, h0, xs)),
        ("(c) jit(grad(scan))", lambda: grad_jit(W, U, b, h0, xs)),
        ("(d) grad(Python loop)", lambda: grad_loop(W, U, b, h0, xs)),
    ]
    target = {"(b) grad(scan), eager": 3.0, "(c) jit(grad(scan))": 1.5}

    loss_floor, floor = numpy_bptt(W, U, b, h0, xs)
    np.testing.assert_allclose(loss_scan(W, U, b, h0, xs), loss_floor, rtol=1e-10)
    np.testing.assert_allclose(loss_loop(W, U, b, h0, xs), loss_floor, rtol=1e-10)
    for name, fn in variants[1:]:
        for got, want, what in zip(fn(), floor, ("W", "U", "b")):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-12,
                                       err_msg=f"{name}: d loss / d {what}")

    print(f"Elman RNN, hidden {HIDDEN}, input {N_IN}, {opts.steps} steps; gradients w.r.t. "
          f"W, U, b (all checked against the floor, rtol 1e-6)")
    print(f"python {platform.python_version()}, numpy {np.__version__}, one BLAS thread, "
          f"median of {repeat} interleaved runs after warmup")
    print()
    runs = interleaved_times([fn for _, fn in variants], repeat)
    med = [statistics.median(r) for r in runs]
    best = [min(r) for r in runs]
    print(f"| {'variant':<26} | {'median (ms)':>11} | {'x floor':>7} | {'min (ms)':>8} | "
          f"{'x floor':>7} | {'target':>6} |")
    print(f"|{'-' * 28}|{'-' * 12}:|{'-' * 8}:|{'-' * 9}:|{'-' * 8}:|{'-' * 7}:|")
    for (name, _), m, b in zip(variants, med, best):
        tgt = f"<= {target[name]:g}" if name in target else ""
        print(f"| {name:<26} | {m * 1e3:>11.3f} | {m / med[0]:>7.2f} | {b * 1e3:>8.3f} | "
              f"{b / best[0]:>7.2f} | {tgt:>6} |")


if __name__ == "__main__":
    main()

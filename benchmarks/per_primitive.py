"""Eager reverse mode's cost per primitive, forward (`vjp`) and backward (the pullback), on the
tape of derived pullbacks and on the staged path (linearize, then transpose), in one process:

    python benchmarks/per_primitive.py [--reps N]

The program is the scalar-chain workload's loop, sin(x) * 1.01 + 0.1 * cos(x) 25 times (125
primitives), on a float64 scalar and on a 64-element vector. Medians over N calls, divided by
the number of primitives. Not a test; CI does not run it."""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import fxad
import fxad.numpy as fnp

STEPS, PRIMS_PER_STEP = 25, 5  # sin, mul, cos, mul, add


def chain(x):
    for _ in range(STEPS):
        x = fnp.sin(x) * 1.01 + 0.1 * fnp.cos(x)
    return fnp.sum(x) if np.ndim(x) else x


def measure(x, tape, reps):
    old, fxad.config.eager_tape = fxad.config.eager_tape, tape
    try:
        fw, bw = [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            out, pull = fxad.vjp(chain, x)
            t1 = time.perf_counter()
            pull(np.ones_like(out))
            t2 = time.perf_counter()
            fw.append(t1 - t0)
            bw.append(t2 - t1)
    finally:
        fxad.config.eager_tape = old
    n = STEPS * PRIMS_PER_STEP
    return statistics.median(fw) / n * 1e6, statistics.median(bw) / n * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    reps = ap.parse_args().reps
    print("| operand | path | forward µs/primitive | pullback µs/primitive | total |")
    print("|---|---|---:|---:|---:|")
    for name, x in (("scalar", np.float64(0.3)), ("64-vector", np.linspace(-1.0, 1.0, 64))):
        for tape in (False, True):
            measure(x, tape, 20)  # warm-up: derivations and caches
            f, b = measure(x, tape, reps)
            path = "tape" if tape else "staged"
            print(f"| {name} | {path} | {f:.2f} | {b:.2f} | {f + b:.2f} |")


if __name__ == "__main__":
    main()

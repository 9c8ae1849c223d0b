"""Benchmark: grad of sum(solve(A, b)) with respect to A and b, against the floor.

    python benchmarks/solve.py [--n 400] [--repeat 9]

Not a test; CI does not run it. One BLAS thread (set before NumPy is imported), median wall
time over >= 7 timed runs after a warmup, the floor's and fxad's runs interleaved (the
machine may be shared); each run repeats the call enough times to last >= 20 ms, and the
time reported is per call. The result is checked against the floor.

Floor (what any reverse mode must do): one LU factorization, x = A⁻¹b, y = A⁻ᵀ1 (two
lu_solve calls with the same factors), db = y, dA = -y xᵀ (the outer product).
fxad factors once as well (notes/linalg.md), so the target ratio is <= 1.1x.
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
import scipy  # noqa: E402
import scipy.linalg as sl  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fxad  # noqa: E402
import fxad.numpy as fnp  # noqa: E402


def _calls_per_run(fn, min_run):
    """timeit-style: how many calls make one run last >= min_run."""
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_run or number >= 1 << 16:
            return number
        number *= 2 if dt <= 0 else max(2, int(min_run / dt * 1.2))


def interleaved_medians(fns, repeat, min_run=0.02):
    """Median per-call time of each function over `repeat` runs, the runs of the functions
    interleaved so that drift in machine load affects them alike."""
    for fn in fns:
        fn()  # warmup
    numbers = [_calls_per_run(fn, min_run) for fn in fns]
    runs = [[] for _ in fns]
    for _ in range(repeat):
        for fn, number, out in zip(fns, numbers, runs):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            out.append((time.perf_counter() - t0) / number)
    return [statistics.median(r) for r in runs], runs


def floor(A, b):
    lu_piv = sl.lu_factor(A, check_finite=False)
    x = sl.lu_solve(lu_piv, b, check_finite=False)
    y = sl.lu_solve(lu_piv, np.ones_like(b), trans=1, check_finite=False)
    return np.outer(-y, x), y  # the sign folded into the vector: one n² pass


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=400)
    p.add_argument("--repeat", type=int, default=9)
    args = p.parse_args(argv)
    if args.repeat < 7:
        p.error("--repeat must be >= 7")
    rng = np.random.default_rng(0)
    A = rng.standard_normal((args.n, args.n)) + args.n ** 0.5 * np.eye(args.n)
    b = rng.standard_normal(args.n)

    g = fxad.grad(lambda A, b: fnp.sum(fnp.linalg.solve(A, b)), argnums=(0, 1))
    for got, want in zip(g(A, b), floor(A, b)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)

    (t_floor, t_fxad), (r_floor, r_fxad) = interleaved_medians(
        [lambda: floor(A, b), lambda: g(A, b)], args.repeat)
    per_run = statistics.median(x / y for x, y in zip(r_fxad, r_floor))
    print(f"python {platform.python_version()}, numpy {np.__version__}, scipy "
          f"{scipy.__version__}, 1 BLAS thread, n={args.n}, median of {args.repeat} runs")
    print(f"  floor (lu_factor + 2 lu_solve + outer): {t_floor * 1e3:8.3f} ms")
    print(f"  fxad grad(sum(solve(A, b))), (A, b):     {t_fxad * 1e3:8.3f} ms")
    print(f"  ratio: {t_fxad / t_floor:.3f}x  (target <= 1.1x); median of the per-run "
          f"ratios {per_run:.3f}x")


if __name__ == "__main__":
    main()

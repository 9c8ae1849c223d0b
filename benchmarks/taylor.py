"""Benchmark: Taylor mode (issue 27's targets).

1. The Laplacian of an MLP 64 -> 256 -> 256 -> 1 (tanh), batch 256, under jit:
   fxad.laplacian(method="collapsed") vs "taylor" vs "nested" (trace of the Hessian), and JAX's
   jit of trace(jacfwd(jacrev)) when `jax` is importable (run with a Python that has it).
2. The order-6 derivative of a scalar function along a direction: one jet vs six nested jvps
   (eager), and their agreement.
3. Peak memory (tracemalloc, eager, batch 32) of the collapsed Laplacian vs nested.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python -m benchmarks.taylor [--dtype float64|float32|both] [--batch 256] [--repeat 3]

(from the repository root). JAX's row needs a Python with jax installed.

Every variant is checked against "nested" before timing (relative max error printed).
Timing: two warm-up calls (tracing excluded), then the median over --repeat rounds of the
time per call (each round >= 0.5 s of calls).
"""
from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = "1"
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
import fxad  # noqa: E402
import fxad.numpy as fnp  # noqa: E402

SIZES = (64, 256, 256, 1)


def params(dtype, seed=0):
    rng = np.random.default_rng(seed)
    ws = []
    for a, b in zip(SIZES[:-1], SIZES[1:]):
        ws.append(((rng.standard_normal((a, b)) / np.sqrt(a)).astype(dtype),
                   (0.1 * rng.standard_normal(b)).astype(dtype)))
    return ws


def mlp(ws, x, np_=fnp):
    for i, (w, b) in enumerate(ws):
        x = x @ w + b
        if i < len(ws) - 1:
            x = np_.tanh(x)
    return x[0]


def fxad_laplacians(ws, method):
    lap = fxad.laplacian(lambda x: mlp(ws, x), method=method)
    return fxad.jit(fxad.vmap(lap))


def jax_laplacian(ws):
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    jws = [(jnp.asarray(w), jnp.asarray(b)) for w, b in ws]

    def lap(x):
        h = jax.jacfwd(jax.jacrev(lambda y: mlp(jws, y, jnp)))(x)
        return jnp.trace(h)
    f = jax.jit(jax.vmap(lap))
    return lambda x: np.asarray(f(x).block_until_ready())


def timeit(fn, arg, repeat, min_run=0.5):
    fn(arg)
    fn(arg)
    rounds = []
    for _ in range(repeat):
        n, t0 = 0, time.perf_counter()
        while True:
            fn(arg)
            n += 1
            t = time.perf_counter() - t0
            if t >= min_run:
                break
        rounds.append(t / n)
    return statistics.median(rounds)


def rel_err(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def laplacian_table(dtype, batch, repeat):
    ws = params(dtype)
    x = np.random.default_rng(1).standard_normal((batch, SIZES[0])).astype(dtype)
    fns = {m: fxad_laplacians(ws, m) for m in ("nested", "taylor", "collapsed")}
    try:
        fns["jax trace(jacfwd(jacrev))"] = jax_laplacian(ws) if dtype == np.float64 else None
    except ImportError:
        pass
    fns = {k: v for k, v in fns.items() if v is not None}
    ref = np.asarray(fns["nested"](x))
    times = {}
    for name, fn in fns.items():
        err = rel_err(fn(x), ref)
        times[name] = timeit(fn, x, repeat)
        print(f"  laplacian {np.dtype(dtype).name:8} {name:28} {times[name] * 1e3:9.1f} ms"
              f"   err vs nested {err:.1e}", flush=True)
    nested = times["nested"]
    for name, t in times.items():
        print(f"    ratio {name:28} {t / nested:6.2f}x nested" + (
            f"  {t / times['jax trace(jacfwd(jacrev))']:6.2f}x jax"
            if "jax trace(jacfwd(jacrev))" in times else ""))


def order6(dtype, repeat):
    f = lambda x: fnp.sum(fnp.tanh(fnp.sin(x) * fnp.exp(0.3 * x)))
    x = np.linspace(-1, 1, 16).astype(dtype)
    v = np.cos(np.arange(16.0)).astype(dtype)
    zeros = (np.zeros_like(v),) * 5

    def by_jet(x):
        return fxad.jet(f, (x,), ((v,) + zeros,))[1][5]

    def by_nested(x):
        g = f
        for _ in range(6):
            g = (lambda h: lambda y: fxad.jvp(h, (y,), (v,))[1])(g)
        return g(x)
    err = rel_err(by_jet(x), by_nested(x))
    tj, tn = timeit(by_jet, x, repeat), timeit(by_nested, x, repeat)
    print(f"  order-6 {np.dtype(dtype).name:8} jet {tj * 1e3:8.2f} ms   six nested jvps "
          f"{tn * 1e3:8.2f} ms   speedup {tn / tj:5.1f}x   rel diff {err:.1e}", flush=True)


def memory(dtype, batch=32):
    ws = params(dtype)
    x = np.random.default_rng(1).standard_normal((batch, SIZES[0])).astype(dtype)
    peaks = {}
    for m in ("nested", "collapsed"):
        lap = fxad.vmap(fxad.laplacian(lambda y: mlp(ws, y), method=m))
        lap(x)
        tracemalloc.start()
        lap(x)
        peaks[m] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(f"  peak memory {np.dtype(dtype).name:8} batch {batch}: nested "
          f"{peaks['nested'] / 2**20:7.1f} MiB, collapsed {peaks['collapsed'] / 2**20:7.1f} "
          f"MiB ({peaks['collapsed'] / peaks['nested']:.2f}x)", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="both", choices=["float64", "float32", "both"])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip", default="", help="comma list of laplacian,order6,memory")
    a = ap.parse_args()
    dtypes = [np.float64, np.float32] if a.dtype == "both" else [np.dtype(a.dtype).type]
    skip = set(a.skip.split(","))
    for dt in dtypes:
        if "laplacian" not in skip:
            laplacian_table(dt, a.batch, a.repeat)
        if "order6" not in skip:
            order6(dt, a.repeat)
        if "memory" not in skip:
            memory(dt)


if __name__ == "__main__":
    main()

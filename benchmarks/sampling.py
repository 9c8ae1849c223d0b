"""Random numbers: 10^6 raw bits / uniforms / normals and a dropout mask applied to 10^6
values, fxad eager and jit against NumPy's Generator (PCG64: the floor a NumPy-backed
library cannot beat) and, when importable, JAX jit (float64, CPU, one thread) and PyTorch
eager, in one run.

    python benchmarks/sampling.py [--repeat K] [--min-run S] [--quick] [--markdown]
                                [--peers jax,torch | --peers none]

Timing as benchmarks/run.py (whose harness this reuses): one BLAS thread, two warm-up calls
(jit compilation excluded), calibrated runs, interleaved rounds, medians, 'x floor' the median
over rounds of variant / floor. The generators differ (Threefry in fxad and JAX, PCG64 in
NumPy, Philox/MT in PyTorch), so results are checked by their statistics, not their values:
mean and spread within 5 standard errors of the distribution's, and for dropout the kept
fraction and the kept values' scaling.
"""
from __future__ import annotations

import os
import sys

if __name__ == "__main__":  # one thread, before NumPy is imported (as run.py)
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ[_var] = "1"
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, ".."))
_spec = importlib.util.spec_from_file_location("fxad_benchmarks_run", os.path.join(_HERE,
                                                                                     "run.py"))
run = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = run  # (dataclasses look their module up)
_spec.loader.exec_module(run)

import fxad  # noqa: E402
from fxad import nn  # noqa: E402
from fxad import random as fr  # noqa: E402


def _moments_check(mean, var):
    def check(out, n):
        x = run.leaves(out)[0].astype(np.float64)
        if x.shape != (n,):
            return False, f"shape {x.shape}"
        m, v = x.mean(), x.var()
        if abs(m - mean) > 5 * np.sqrt(var / n) or abs(v / var - 1) > 5 * np.sqrt(3 / n):
            return False, f"mean {m:.4g}, variance {v:.4g}: not the distribution's"
        return True, ""
    return check


def _bits_check(out, n):
    x = run.leaves(out)[0]
    if x.shape != (n,) or x.dtype != np.uint32:
        return False, f"shape {x.shape}, dtype {x.dtype}"
    ones = np.unpackbits(x.view(np.uint8)).mean()
    return (abs(ones - 0.5) < 5 * np.sqrt(0.25 / (32 * n))), f"fraction of 1 bits {ones:.5f}"


RATE = 0.1


def _dropout_check(out, n):
    y = run.leaves(out)[0]
    kept = y != 0
    frac = kept.mean()
    if abs(frac - (1 - RATE)) > 5 * np.sqrt(RATE * (1 - RATE) / n):
        return False, f"kept fraction {frac:.4f}"
    if not np.allclose(y[kept], np.float32(1.5 / (1 - RATE)), rtol=1e-6):
        return False, "kept values not scaled by 1/(1-rate)"
    return True, ""


def workloads(n, peers):
    """(name, title, check, [Variant...]): variants[0] is the floor."""
    rng = np.random.default_rng(0)
    key = fr.PRNGKey(0)
    x = np.full(n, 1.5, np.float32)
    V = run.Variant
    out = []
    jit_bits = fxad.jit(lambda k: fr.bits(k, (n,), np.uint32))
    jit_uniform = fxad.jit(lambda k: fr.uniform(k, (n,)))
    jit_normal = fxad.jit(lambda k: fr.normal(k, (n,)))
    jit_dropout = fxad.jit(lambda k, x: nn.dropout(k, x, RATE))
    spec = {
        "bits": ("uint32 bits", _bits_check,
                 [V("numpy Generator.integers", lambda: rng.integers(0, 2 ** 32, n, np.uint32),
                    "numpy"),
                  V("fxad eager", lambda: fr.bits(key, (n,), np.uint32)),
                  V("fxad jit", lambda: jit_bits(key))]),
        "uniform": ("float64 uniforms on [0, 1)", _moments_check(0.5, 1 / 12),
                    [V("numpy Generator.random", lambda: rng.random(n), "numpy"),
                     V("fxad eager", lambda: fr.uniform(key, (n,))),
                     V("fxad jit", lambda: jit_uniform(key))]),
        "normal": ("float64 standard normals", _moments_check(0.0, 1.0),
                   [V("numpy Generator.standard_normal", lambda: rng.standard_normal(n),
                      "numpy"),
                    V("fxad eager", lambda: fr.normal(key, (n,))),
                    V("fxad jit", lambda: jit_normal(key))]),
        "dropout": (f"dropout (rate {RATE}) of float32 values", _dropout_check,
                    [V("numpy Generator.random mask",
                       lambda: np.where(rng.random(n) >= RATE, x / np.float32(1 - RATE),
                                        np.float32(0)), "numpy"),
                     V("fxad eager", lambda: nn.dropout(key, x, RATE)),
                     V("fxad jit", lambda: jit_dropout(key, x))]),
    }
    if "jax" in peers:
        jax, jnp = peers["jax"].jax, peers["jax"].np
        kj, xj = jax.random.PRNGKey(0), jnp.asarray(x)
        jb = jax.jit(lambda k: jax.random.bits(k, (n,), jnp.uint32))
        ju = jax.jit(lambda k: jax.random.uniform(k, (n,), jnp.float64))
        jn = jax.jit(lambda k: jax.random.normal(k, (n,), jnp.float64))
        jd = jax.jit(lambda k, x: jnp.where(jax.random.bernoulli(k, 1 - RATE, x.shape),
                                            x / (1 - RATE), 0))
        for name, f, args in (("bits", jb, (kj,)), ("uniform", ju, (kj,)),
                              ("normal", jn, (kj,)), ("dropout", jd, (kj, xj))):
            spec[name][2].append(V("jax jit", lambda f=f, args=args: run._jax_ready(f(*args)),
                                   "jax"))
    if "torch" in peers:
        torch, F = peers["torch"].torch, peers["torch"].F
        xt = torch.from_numpy(x)
        spec["uniform"][2].append(V("torch eager", lambda: torch.rand(n, dtype=torch.float64),
                                    "torch"))
        spec["normal"][2].append(V("torch eager", lambda: torch.randn(n, dtype=torch.float64),
                                   "torch"))
        spec["dropout"][2].append(V("torch eager", lambda: F.dropout(xt, RATE, training=True),
                                    "torch"))
    for name, (title, check, variants) in spec.items():
        out.append((name, title, check, variants))
    return out


def run_one(name, check, variants, n, repeat, min_run):
    """run.py's run_workload, with a statistical check instead of equality to the floor."""
    rows, live = [], []
    for v in variants:
        row = run.Row(name, v.name, v.lib)
        rows.append(row)
        try:
            for which, res in (("first call", v.fn()), ("second call", v.fn())):
                ok, msg = check(res, n)
                if not ok:
                    row.status, row.detail = "FAIL", f"{which}: {msg}"
                    break
        except Exception as e:  # noqa: BLE001 - reported in the table
            row.status, row.detail = "CRASH", run._exc_text(e)
            continue
        live.append((row, v.fn))
    numbers = [run._calls_per_run(fn, min_run) if min_run > 0 else 1 for _, fn in live]
    times = [[] for _ in live]
    for r in range(repeat):
        for k in range(len(live)):
            i = (k + r) % len(live)
            t0 = time.perf_counter()
            for _ in range(numbers[i]):
                live[i][1]()
            times[i].append((time.perf_counter() - t0) / numbers[i])
    floor = times[0] if live and live[0][0] is rows[0] else None
    for (row, _), ts in zip(live, times):
        row.seconds = statistics.median(ts)
        if len(ts) >= 3:
            q1, q3 = run._quartiles(ts)
            row.iqr = (q3 - q1) / row.seconds
        if floor is not None:
            row.ratio = statistics.median(t / f for t, f in zip(ts, floor))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=None, help="timed rounds (default 9)")
    ap.add_argument("--min-run", type=float, default=None, help="seconds per run (default 0.2)")
    ap.add_argument("--quick", action="store_true", help="10^4 values, 1 round")
    ap.add_argument("--peers", default="jax,torch")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    n = 10 ** 4 if args.quick else 10 ** 6
    repeat = args.repeat or (1 if args.quick else 9)
    min_run = args.min_run if args.min_run is not None else (0.0 if args.quick else 0.2)
    limiter, thread_note = run._limit_threads()  # noqa: F841 - keep the limit alive
    wanted = () if args.peers.strip() == "none" else tuple(p for p in args.peers.split(",") if p)
    peers, skipped = run.load_peers(wanted)
    info = run.machine_info(run.Config(peers=peers, skipped=skipped), thread_note)
    rows = []
    for name, title, check, variants in workloads(n, peers):
        print(f"[{name}] {title}, n = {n} ...", file=sys.stderr, flush=True)
        rows += run_one(name, check, variants, n, repeat, min_run)
    print()
    for line in info + [f"settings: n = {n}, {repeat} interleaved rounds, runs >= {min_run:g} s"]:
        print(f"- {line}" if args.markdown else line)
    print()
    print(run.format_table(rows, markdown=args.markdown))
    for k, v in skipped.items():
        print(f"{k}: skipped, {v}")
    return 1 if any(r.status != "ok" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

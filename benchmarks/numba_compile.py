"""Compile times of jit's numba backend (issue 22's targets), each in a fresh process:

    python benchmarks/numba_compile.py [--rounds K] [--quick]

  cold  first call of jit(grad(mlp_loss)) (the MLP of benchmarks/run.py) with an empty
        on-disk cache: staging, code generation and Numba compiling everything (target <= 2 s)
  warm  the same in a new process, the cache filled by the cold run: Numba loads the machine
        code (target <= 0.2 s)
  auto  jit(grad(mlp_loss), backend="auto") with an empty cache: the first call runs the NumPy
        program while Numba compiles in a background thread (target <= 0.05 s); then the
        process keeps calling it, as a training loop would, until calls run the compiled
        program: "compiled after" is the wall time from the first call to that switch
        (target <= 5 s), and the per-call times before and after it are reported, and the
        NumPy program's alone (backend "numpy", after the switch)

Each round runs both in new processes (one BLAS thread). Reported: medians over the rounds of
the first call's wall time and of its CPU time (process_time: on a shared, loaded machine the
wall time also counts waiting for a core, the CPU time is what the call itself costs), and of
the import times (`import fxad`, `import numba`), which the first-call times exclude ("auto"
does not import Numba before its first call).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

CHILD = r"""
import json, time
t0, c0 = time.perf_counter(), time.process_time()
import numpy as np
import fxad, fxad.numpy as fnp
t1, c1 = time.perf_counter(), time.process_time()
if BACKEND != "auto":  # "auto" imports Numba in its background thread
    import numba  # noqa: F401
t2, c2 = time.perf_counter(), time.process_time()
sizes, batch = SIZES, BATCH
rng = np.random.default_rng(0)
params = [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
           (0.1 * rng.standard_normal(b)).astype(np.float32)) for a, b in zip(sizes, sizes[1:])]
X = rng.standard_normal((batch, sizes[0])).astype(np.float32)
Y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]

def loss(params, X, Y):
    h = X
    for W, b in params[:-1]:
        h = fnp.tanh(h @ W + b)
    W, b = params[-1]
    z = h @ W + b
    m = fxad.stop_gradient(fnp.max(z, axis=1, keepdims=True))
    lse = fnp.log(fnp.sum(fnp.exp(z - m), axis=1)) + m[:, 0]
    return fnp.mean(lse - fnp.sum(Y * z, axis=1))

g = fxad.jit(fxad.grad(loss), backend=BACKEND)
t3, c3 = time.perf_counter(), time.process_time()
g(params, X, Y)
t4, c4 = time.perf_counter(), time.process_time()
program = g.lower(params, X, Y).compiled
row = {"import_fxad": t1 - t0, "import_numba": t2 - t1, "first_wall": t4 - t3,
       "first_cpu": c4 - c3}
if BACKEND == "auto":
    before, n = [], 0
    while program.state not in ("numba", "failed") and time.perf_counter() - t4 < 120:
        s = time.perf_counter()
        g(params, X, Y)
        before.append(time.perf_counter() - s)
    row["switched_after"] = time.perf_counter() - t3
    row["state"] = program.state
    after = []
    for _ in range(20):
        s = time.perf_counter()
        g(params, X, Y)
        after.append(time.perf_counter() - s)
    gn = fxad.jit(fxad.grad(loss), backend="numpy")
    gn(params, X, Y)
    alone = []
    for _ in range(20):
        s = time.perf_counter()
        gn(params, X, Y)
        alone.append(time.perf_counter() - s)
    row["call_numpy"] = sorted(alone)[len(alone) // 2]
    row["calls_before"] = len(before)
    row["call_before"] = sorted(before)[len(before) // 2] if before else float("nan")
    row["call_after"] = sorted(after)[len(after) // 2]
    program = program.numba_program
row["how"] = [h for _, _, h in program.report.entries] if program is not None else []
print(json.dumps(row))
"""


def child(cache, sizes, batch, backend="numba"):
    env = dict(os.environ, FXAD_CACHE_DIR=cache, PYTHONPATH=ROOT, OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    code = CHILD.replace("SIZES", repr(sizes)).replace("BATCH", repr(batch)).replace(
        "BACKEND", repr(backend))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="a tiny MLP (checks the harness)")
    args = ap.parse_args(argv)
    sizes, batch = ((20, 16, 16, 5), 8) if args.quick else ((784, 256, 256, 10), 128)
    rows = {"cold": [], "warm": [], "auto": []}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as cache:
            rows["cold"].append(child(cache, sizes, batch))
            rows["warm"].append(child(cache, sizes, batch))
        with tempfile.TemporaryDirectory() as cache:
            rows["auto"].append(child(cache, sizes, batch, "auto"))
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"jit(grad(mlp_loss)), MLP {'-'.join(map(str, sizes))}, batch {batch}, float32; "
          f"{args.rounds} rounds; load average at the end {load}")
    print(f"{'':6} {'first call (wall)':>18} {'first call (CPU)':>17} {'import fxad':>12} "
          f"{'import numba':>13}  segments")
    for kind, target in (("cold", 2.0), ("warm", 0.2), ("auto", 0.05)):
        rs = rows[kind]
        med = {k: statistics.median(r[k] for r in rs) for k in
               ("first_wall", "first_cpu", "import_fxad", "import_numba")}
        print(f"{kind:6} {med['first_wall']:16.2f} s {med['first_cpu']:15.2f} s "
              f"{med['import_fxad']:10.2f} s {med['import_numba']:11.2f} s  {rs[0]['how']}"
              f"  (target <= {target} s)")
    auto = rows["auto"]
    med = {k: statistics.median(r[k] for r in auto) for k in
           ("switched_after", "calls_before", "call_before", "call_after", "call_numpy")}
    print(f"auto: compiled after {med['switched_after']:.2f} s (target <= 5 s; states "
          f"{sorted(set(r['state'] for r in auto))}), {med['calls_before']:.0f} calls before "
          f"the switch at {1e3 * med['call_before']:.2f} ms each (NumPy program, compiling "
          f"alongside; {1e3 * med['call_numpy']:.2f} ms alone), "
          f"{1e3 * med['call_after']:.2f} ms each after it")
    return 0


if __name__ == "__main__":
    sys.exit(main())

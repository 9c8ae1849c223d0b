"""Benchmark: fxad.jit(fxad.grad(f)) against hand-written NumPy (the floor) and eager grad.

    python benchmarks/jit.py [--repeat 9]

Not a test; CI does not run it. One BLAS thread (set before NumPy is imported), median wall
time over >= 7 timed runs after a warm-up (the warm-up also traces and compiles the jitted
function); each run repeats the call enough times to last >= 20 ms, and the time reported is
per call. Every result is checked against the floor.

(a) Gradient of a 784-256-256-10 tanh MLP's softmax cross-entropy (max-subtracted
    logsumexp), batch 128, float32 parameters and data. Floor: the hand-written backward
    pass (dz = (softmax - onehot) / B, then back through the two tanh layers).
(b) Derivative of a scalar chain: x -> 25 x (sin(x) * 1.01 + 0.1 * cos(x)), float64. Floor:
    the same loop in NumPy carrying (value, derivative). This measures per-primitive
    overhead: the arrays are 0-d, so almost all the time is Python dispatch.
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

SIZES = (784, 256, 256, 10)
BATCH = 128
CHAIN_STEPS = 25


def median_time(fn, repeat, min_run=0.02):
    """timeit-style: warm up, pick `number` so one run lasts >= min_run, then the median over
    `repeat` runs of the per-call time."""
    fn()  # warm-up (tracing, compilation, first-call caches)
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_run or number >= 1 << 16:
            break
        number *= 2 if dt <= 0 else max(2, int(min_run / dt * 1.2))
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - t0) / number)
    return statistics.median(runs)


# --- (a) MLP -------------------------------------------------------------------------------------

def init_mlp(rng):
    params = []
    for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
        W = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)
        b = (0.1 * rng.standard_normal(n_out)).astype(np.float32)
        params.append((W, b))
    X = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    labels = rng.integers(0, SIZES[-1], BATCH)
    Y = np.eye(SIZES[-1], dtype=np.float32)[labels]
    return params, X, Y


def mlp_loss(params, X, Y):
    h = X
    for W, b in params[:-1]:
        h = fnp.tanh(h @ W + b)
    W, b = params[-1]
    z = h @ W + b
    m = fxad.stop_gradient(fnp.max(z, axis=1, keepdims=True))
    lse = fnp.log(fnp.sum(fnp.exp(z - m), axis=1)) + m[:, 0]
    return fnp.mean(lse - fnp.sum(Y * z, axis=1))


def mlp_floor(params, X, Y):
    """Hand-written forward + backward; returns the gradient in the params' structure."""
    (W1, b1), (W2, b2), (W3, b3) = params
    h1 = np.tanh(X @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    dz = (p - Y) * np.float32(1.0 / X.shape[0])
    dh2 = dz @ W3.T
    da2 = dh2 * (1 - h2 * h2)
    dh1 = da2 @ W2.T
    da1 = dh1 * (1 - h1 * h1)
    return [(X.T @ da1, da1.sum(0)), (h1.T @ da2, da2.sum(0)), (h2.T @ dz, dz.sum(0))]


# --- (b) scalar chain ----------------------------------------------------------------------------

def chain(x):
    for _ in range(CHAIN_STEPS):
        x = fnp.sin(x) * 1.01 + 0.1 * fnp.cos(x)
    return x


def chain_floor(x):
    """(value, derivative) carried through the same loop."""
    d = np.float64(1.0)
    for _ in range(CHAIN_STEPS):
        s, c = np.sin(x), np.cos(x)
        d = d * (1.01 * c - 0.1 * s)
        x = s * 1.01 + 0.1 * c
    return x, d


def chain_floor_grad(x):
    return chain_floor(x)[1]


# --- run -----------------------------------------------------------------------------------------

def _leaves(x):
    return [np.asarray(v) for v in fxad.tree_util.tree_flatten(x)[0]]


def _agree(got, ref, rtol):
    g, r = _leaves(got), _leaves(ref)
    if len(g) != len(r):
        return False
    for a, b in zip(g, r):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if not np.allclose(a, b, rtol=rtol, atol=rtol * float(np.max(np.abs(b)))):
            return False
    return True


def main():
    global CHAIN_STEPS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9, help="timed runs (>= 7)")
    ap.add_argument("--chain-steps", type=int, default=CHAIN_STEPS,
                    help="steps of the scalar chain in (b)")
    args = ap.parse_args()
    repeat = max(7, args.repeat)
    CHAIN_STEPS = args.chain_steps

    rng = np.random.default_rng(0)
    params, X, Y = init_mlp(rng)
    x0 = np.float64(0.3)

    jit_mlp = fxad.jit(fxad.grad(mlp_loss))
    eager_mlp = fxad.grad(mlp_loss)
    jit_chain = fxad.jit(fxad.grad(chain))
    eager_chain = fxad.grad(chain)

    def compiled_eqns(jitted, *a):
        try:
            return str(len(jitted.lower(*a).as_text().splitlines()) - 2)
        except Exception as e:  # noqa: BLE001 - reported in the table
            return f"? ({type(e).__name__})"

    n_chain_prims = len(fxad.make_jaxpr(chain)(x0).eqns)
    n_chain_grad = len(fxad.make_jaxpr(fxad.grad(chain))(x0).eqns)
    n_chain_compiled = compiled_eqns(jit_chain, x0)
    n_mlp_grad = len(fxad.make_jaxpr(fxad.grad(mlp_loss))(params, X, Y).eqns)
    n_mlp_compiled = compiled_eqns(jit_mlp, params, X, Y)

    sections = [
        (f"(a) grad of MLP {'-'.join(map(str, SIZES))} tanh, softmax CE, batch {BATCH}, "
         f"float32 (grad program: {n_mlp_grad} eqns staged, {n_mlp_compiled} compiled)",
         mlp_floor(params, X, Y), 1e-4, [
             ("numpy floor (hand-written backward)", lambda: mlp_floor(params, X, Y)),
             ("fxad.jit(fxad.grad(loss))", lambda: jit_mlp(params, X, Y)),
             ("fxad.grad(loss) (eager)", lambda: eager_mlp(params, X, Y)),
         ]),
        (f"(b) d/dx of a scalar chain, {CHAIN_STEPS} x (sin(x)*1.01 + 0.1*cos(x)), float64 "
         f"({n_chain_prims} primitives; grad program: {n_chain_grad} eqns staged, "
         f"{n_chain_compiled} compiled)",
         chain_floor_grad(x0), 1e-12, [
             ("numpy floor (value + derivative loop)", lambda: chain_floor_grad(x0)),
             ("fxad.jit(fxad.grad(chain))", lambda: jit_chain(x0)),
             ("fxad.grad(chain) (eager)", lambda: eager_chain(x0)),
         ]),
    ]

    print(f"python {platform.python_version()}, numpy {np.__version__}, fxad "
          f"{fxad.__version__}, 1 BLAS thread, median of {repeat} runs (per call, after "
          "warm-up)")
    ok_all = True
    for title, ref, rtol, entries in sections:
        print()
        print(title)
        print(f"  {'name':<40} {'median':>12} {'x floor':>9}  check (rtol {rtol:g})")
        floor = None
        for name, thunk in entries:
            try:
                ok = _agree(thunk(), ref, rtol)
            except Exception as e:  # noqa: BLE001 - a failing entry is reported, not fatal
                ok_all = False
                msg = str(e).strip().splitlines()[-1] if str(e).strip() else ""
                print(f"  {name:<40} {'FAILED':>12} {'':>9}  {type(e).__name__}: {msg[:60]}")
                continue
            ok_all &= ok
            t = median_time(thunk, repeat)
            floor = t if floor is None else floor
            unit = f"{t * 1e6:9.1f} us" if t < 1e-3 else f"{t * 1e3:9.3f} ms"
            print(f"  {name:<40} {unit:>12} {t / floor:>9.2f}  {'ok' if ok else 'MISMATCH'}")
    if not ok_all:
        print("\nsome results did not match the floor", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

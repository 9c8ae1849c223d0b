"""Benchmark: sparse Jacobians (issue "Sparse derivatives, fed to SciPy's solvers").

1. The 1-D Brusselator (2 species, n/2 grid points each; stiff), BDF, rtol 1e-6, t in
   [0, 10], one call timed whole (for fxad: sparsity detection, coloring, tracing and
   compiling included — a fresh right-hand side function each call, so nothing is cached):
   - SciPy, finite differences with a hand-written `jac_sparsity` (the floor);
   - fxad's solve_ivp, no pattern from the user (detected);
   - fxad's solve_ivp with the dense exact Jacobian (the path before sparse Jacobians;
     `--dense-max` states at most, it is slow).
2. A tridiagonal Jacobian of n = 1e5 (jit'ed fxad.sparse.jacfwd with a given pattern) against
   one JVP of the same function: the ratio should be <= colors + 1.
3. Sparsity detection of a 1e4-variable program.

    python benchmarks/sparse_jacobians.py [--states 1000 4000] [--dense-max 4000]

One BLAS thread (set below before NumPy loads). Results agree with SciPy's to the tolerance
(checked: the final states' max difference is printed).
"""
from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.integrate  # noqa: E402
import scipy.sparse as sp  # noqa: E402

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
import fxad  # noqa: E402
import fxad.numpy as fnp  # noqa: E402
import fxad.sparse  # noqa: E402
from fxad.scipy.integrate import solve_ivp  # noqa: E402
from fxad.scipy.integrate import _odecore  # noqa: E402

A, B, ALPHA = 1.0, 3.0, 0.02


def brusselator(xp):
    """The right-hand side in the array library xp (numpy or fxad.numpy): a new function
    object per call, so fxad's caches on the function do not carry over."""
    def f(t, y):
        n = y.shape[0] // 2
        u, v = y[:n], y[n:]
        c = ALPHA * (n + 1) ** 2
        up = xp.concatenate([xp.ones(1), u, xp.ones(1)])
        vp = xp.concatenate([3 * xp.ones(1), v, 3 * xp.ones(1)])
        du = A + u * u * v - (B + 1) * u + c * (up[:-2] - 2 * u + up[2:])
        dv = B * u - u * u * v + c * (vp[:-2] - 2 * v + vp[2:])
        return xp.concatenate([du, dv])
    return f


def hand_pattern(N):
    n = N // 2
    T = sp.diags([1, 1, 1], [-1, 0, 1], shape=(n, n), dtype=bool)
    eye = sp.eye(n, dtype=bool)
    return sp.bmat([[T, eye], [eye, T]]).tocsr()


def initial(N):
    n = N // 2
    x = np.arange(1, n + 1) / (n + 1)
    return np.concatenate([1 + np.sin(2 * np.pi * x), np.full(n, 3.0)])


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def ode(states, dense_max):
    print("Brusselator 1-D, BDF, rtol 1e-6, t in [0, 10]; one call timed whole")
    print(f"{'states':>7} {'SciPy+pattern':>14} {'fxad sparse':>12} {'ratio':>6} "
          f"{'fxad dense':>11} {'speed-up':>9} {'max |diff|':>10}")
    for N in states:
        y0 = initial(N)
        ts, ref = timed(lambda: scipy.integrate.solve_ivp(
            brusselator(np), (0, 10), y0, method="BDF", rtol=1e-6, jac_sparsity=hand_pattern(N)))
        tf, got = timed(lambda: solve_ivp(brusselator(fnp), (0, 10), y0, method="BDF",
                                          rtol=1e-6))
        diff = float(np.abs(ref.y[:, -1] - np.asarray(got.y[:, -1])).max())
        td = float("nan")
        if N <= dense_max:
            saved = _odecore.sparse_plan
            _odecore.sparse_plan = lambda rhs, user: None  # the dense exact path
            try:
                td, dense = timed(lambda: solve_ivp(brusselator(fnp), (0, 10), y0,
                                                    method="BDF", rtol=1e-6))
            finally:
                _odecore.sparse_plan = saved
            diff = max(diff, float(np.abs(np.asarray(dense.y[:, -1]) -
                                          np.asarray(got.y[:, -1])).max()))
        print(f"{N:>7} {ts:>13.3f}s {tf:>11.3f}s {tf / ts:>6.2f} {td:>10.3f}s "
              f"{td / tf:>8.0f}× {diff:>10.1e}")


def best(fn, k=7):
    fn()
    return min(timed(fn)[0] for _ in range(k))


def tridiagonal(n=100_000):
    def f(x):
        lap = fnp.concatenate([x[1:2] - 2 * x[:1], x[2:] - 2 * x[1:-1] + x[:-2],
                               x[-2:-1] - 2 * x[-1:]])
        return fnp.sin(lap) * x + x ** 2
    x = np.linspace(0, 1, n)
    P = fxad.sparse.jacobian_sparsity(f, x)
    colors = int(fxad.sparse.color_columns(P).max()) + 1
    jac = fxad.jit(fxad.sparse.jacfwd(f, sparsity=P))
    jvp = fxad.jit(lambda x, v: fxad.jvp(f, (x,), (v,))[1])
    tj, tv = best(lambda: jac(x)), best(lambda: jvp(x, x))
    print(f"tridiagonal Jacobian, n = {n}: {colors} colors; sparse jacfwd (jit) {tj * 1e3:.2f} ms"
          f", one JVP (jit) {tv * 1e3:.2f} ms: {tj / tv:.1f} JVPs (target <= {colors + 1})")
    te, _ = timed(lambda: fxad.sparse.jacfwd(f)(x))
    print(f"  eager, detection and coloring included: {te * 1e3:.0f} ms")


def detection(n=10_000):
    f = brusselator(fnp)
    x = initial(n)
    t, P = timed(lambda: fxad.sparse.jacobian_sparsity(lambda y: f(0.0, y), x))
    assert (P != hand_pattern(n)).nnz == 0
    print(f"sparsity detection, Brusselator with {n} variables: {t * 1e3:.0f} ms (exact)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--states", type=int, nargs="*", default=[1000, 4000])
    ap.add_argument("--dense-max", type=int, default=4000)
    a = ap.parse_args()
    detection()
    tridiagonal()
    ode(a.states, a.dense_max)

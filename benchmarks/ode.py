"""Benchmark: the gradient of an ODE fit's loss (Lotka–Volterra, 4 parameters + 2 initial
states, observations at T times) by fxad's adjoint method, by fxad's forward sensitivities,
and by JAX's `jax.experimental.ode.odeint` (adjoint, jit, float64) when importable, against a
floor: SciPy's odeint on the hand-written forward-sensitivity system (the gradient a SciPy
user writes by hand).

    python benchmarks/ode.py [--obs T] [--repeat K] [--min-run S] [--rtol R]

Every variant's gradient is checked against the floor first (relative max error <= 1e-4 at the
default tolerances; a mismatch prints FAIL and the exit status is 1). Timing follows
benchmarks/run.py: one BLAS thread, two warm-up calls (jit tracing excluded), runs of `number`
calls lasting >= --min-run seconds, --repeat rounds with the order rotating; reported: the
median per-call time and the median over rounds of the ratio to the floor's run.
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
import scipy.integrate  # noqa: E402

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
import fxad  # noqa: E402
import fxad.numpy as fnp  # noqa: E402
from fxad.scipy.integrate import odeint  # noqa: E402

THETA = np.array([1.0, 0.1, 1.5, 0.075, 10.0, 5.0])  # a, b, c, d, prey0, pred0


def problem(n_obs, rtol):
    t = np.linspace(0.0, 15.0, n_obs + 1)
    data = scipy.integrate.odeint(
        lambda y, t, a, b, c, d: [a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]],
        THETA[4:], t, args=tuple(THETA[:4] * 1.05), rtol=1e-10, atol=1e-10)
    return t, data, dict(rtol=rtol, atol=rtol)


# --- the floor: SciPy's odeint on the hand-written sensitivity system --------------------

def floor_grad(theta, t, data, tol):
    a, b, c, d = theta[:4]

    def aug(z, _t):
        x, p, S = z[0], z[1], z[2:].reshape(2, 6)
        J = np.array([[a - b * p, -b * x], [d * p, -c + d * x]])
        F = np.zeros((2, 6))
        F[0, 0], F[0, 1] = x, -x * p
        F[1, 2], F[1, 3] = -p, x * p
        return np.concatenate([[a * x - b * x * p, -c * p + d * x * p], (J @ S + F).ravel()])
    S0 = np.zeros((2, 6))
    S0[0, 4] = S0[1, 5] = 1.0
    Z = scipy.integrate.odeint(aug, np.concatenate([theta[4:], S0.ravel()]), t, **tol)
    Y, S = Z[:, :2], Z[:, 2:].reshape(-1, 2, 6)
    r = Y - data
    return np.sum(r ** 2), 2 * np.einsum("ti,tij->j", r, S)


# --- fxad -----------------------------------------------------------------------------------

def lv(y, t, a, b, c, d):
    return fnp.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])


def fxad_loss(t, data, tol):
    def loss(theta):
        Y = odeint(lv, theta[4:], t, args=tuple(theta[:4]), **tol)
        return fnp.sum((Y - data) ** 2)
    return loss


# --- JAX --------------------------------------------------------------------------------------

def jax_grad(t, data, tol):
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        from jax.experimental.ode import odeint as jodeint
    except Exception as e:  # noqa: BLE001
        return None, f"JAX not importable ({type(e).__name__})"

    def f(y, t, a, b, c, d):
        return jnp.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])

    def loss(theta):
        Y = jodeint(f, theta[4:], jnp.asarray(t), *[theta[i] for i in range(4)], **tol)
        return jnp.sum((Y - data) ** 2)
    g = jax.jit(jax.value_and_grad(loss))
    return (lambda th: tuple(np.asarray(v) for v in g(jnp.asarray(th)))), \
        f"JAX {jax.__version__}: jit(value_and_grad), odeint = adjoint, Dormand-Prince"


# --- harness -----------------------------------------------------------------------------------

def calibrate(fn, min_run):
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - t0 >= min_run or number >= 1 << 16:
            return number
        number *= 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--obs", type=int, default=20, help="observation times (default 20)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--min-run", type=float, default=0.5)
    ap.add_argument("--rtol", type=float, default=1e-8, help="rtol = atol of every solver")
    args = ap.parse_args()
    t, data, tol = problem(args.obs, args.rtol)
    loss = fxad_loss(t, data, tol)
    variants = {
        "floor: SciPy odeint, hand-written sensitivities": lambda th: floor_grad(th, t, data,
                                                                                tol),
        "fxad adjoint: value_and_grad": fxad.value_and_grad(loss),
        "fxad adjoint: jit(value_and_grad)": fxad.jit(fxad.value_and_grad(loss)),
        "fxad forward sensitivities: jacfwd": lambda th: (None, fxad.jacfwd(loss)(th)),
    }
    notes = []
    jg, note = jax_grad(t, data, tol)
    notes.append(note)
    if jg is not None:
        variants["JAX: jax.experimental.ode.odeint"] = jg
    theta = THETA * np.array([1.1, 0.9, 1.05, 0.95, 1.0, 1.0])
    ref = variants[next(iter(variants))](theta)[1]
    status, ok = {}, True
    for name, fn in variants.items():
        fn(theta)  # warm-up (traces and compiles)
        g = np.asarray(fn(theta)[1])
        err = np.max(np.abs(g - ref)) / np.max(np.abs(ref))
        status[name] = f"{err:.1e}" if err <= 1e-4 else f"FAIL {err:.1e}"
        ok &= err <= 1e-4
    calls = {n: (lambda fn=fn: fn(theta)) for n, fn in variants.items()}
    numbers = {n: calibrate(c, args.min_run) for n, c in calls.items()}
    per_call = {n: [] for n in calls}
    ratios = {n: [] for n in calls}
    names = list(calls)
    for r in range(args.repeat):
        run = {}
        for n in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.perf_counter()
            for _ in range(numbers[n]):
                calls[n]()
            run[n] = (time.perf_counter() - t0) / numbers[n]
            per_call[n].append(run[n])
        for n in names:
            ratios[n].append(run[n] / run[names[0]])
    print(f"ODE gradient: Lotka-Volterra, 6 parameters, {args.obs} observations, "
          f"rtol = atol = {args.rtol:g}, one thread, {args.repeat} rounds")
    print(f"{'variant':52s} {'median':>10s} {'x floor':>8s}  {'grad error':>10s}")
    for n in names:
        print(f"{n:52s} {1e3 * statistics.median(per_call[n]):8.2f}ms "
              f"{statistics.median(ratios[n]):8.2f}  {status[n]:>10s}")
    for note in notes:
        print("note:", note)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

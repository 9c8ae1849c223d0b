"""Benchmark: fxad Hessians and Jacobians against hand-written NumPy (the floor).

    python benchmarks/jacobians.py [--repeat 9]

Not a test; CI does not run it. One BLAS thread (set before NumPy is imported), median wall
time over >= 7 timed runs after a warmup; each run repeats the call enough times to last
>= 20 ms, and the time reported is per call. Every result is checked against the floor.

(a) Hessian of f(x) = sum(softplus(A @ x)) + 0.5 * sum(x**2), A: 100x100, x: 100.
    Floor: A.T @ diag(s * (1 - s)) @ A + I with s = sigmoid(A @ x)  (softplus'' = s (1 - s)).
(b) Jacobian of g(x) = tanh(A @ x) * x, A: 200x200.
    Floor: diag(x) diag(1 - tanh(Ax)^2) A + diag(tanh(Ax)).
autograd / jax / torch versions are timed too if they are importable (never installed here).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fxad  # noqa: E402
import fxad.numpy as fnp  # noqa: E402

N_HESS, N_JAC = 100, 200


def median_time(fn, repeat, min_run=0.02):
    """timeit-style: warm up, pick `number` so one run lasts >= min_run, then the median over
    `repeat` runs of the per-call time."""
    fn()  # warmup (and first-call caches)
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


# --- problems --------------------------------------------------------------------------------

rng = np.random.default_rng(0)
A_h = rng.normal(size=(N_HESS, N_HESS)) / np.sqrt(N_HESS)
x_h = rng.normal(size=N_HESS)
A_j = rng.normal(size=(N_JAC, N_JAC)) / np.sqrt(N_JAC)
x_j = rng.normal(size=N_JAC)


def f_fxad(x):
    z = A_h @ x
    softplus = fnp.log1p(fnp.exp(-fnp.abs(z))) + fnp.maximum(z, 0)
    return fnp.sum(softplus) + 0.5 * fnp.sum(x ** 2)


def hess_floor(x):
    s = 1.0 / (1.0 + np.exp(-(A_h @ x)))
    return (A_h.T * (s * (1.0 - s))) @ A_h + np.eye(len(x))


def g_fxad(x):
    return fnp.tanh(A_j @ x) * x


def jac_floor(x):
    t = np.tanh(A_j @ x)
    J = (x * (1.0 - t * t))[:, None] * A_j
    J[np.diag_indices_from(J)] += t
    return J


# --- optional other libraries (only if already installed) -------------------------------------

def other_libraries():
    """(section, name, thunk) for each importable library; thunks return NumPy arrays."""
    out = []
    try:
        import autograd
        import autograd.numpy as anp

        def f_ag(x):
            z = anp.dot(A_h, x)
            return anp.sum(anp.log1p(anp.exp(-anp.abs(z))) + anp.maximum(z, 0)) + \
                0.5 * anp.sum(x ** 2)

        g_ag = lambda x: anp.tanh(anp.dot(A_j, x)) * x
        h_ag, j_ag = autograd.hessian(f_ag), autograd.jacobian(g_ag)
        out += [("hess", "autograd hessian", lambda: h_ag(x_h)),
                ("jac", "autograd jacobian (reverse)", lambda: j_ag(x_j))]
    except ImportError:
        out.append(("skip", "autograd", None))
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        Ah, Aj = jnp.asarray(A_h), jnp.asarray(A_j)
        xh, xj = jnp.asarray(x_h), jnp.asarray(x_j)

        def f_jax(x):
            z = Ah @ x
            return jnp.sum(jnp.log1p(jnp.exp(-jnp.abs(z))) + jnp.maximum(z, 0)) + \
                0.5 * jnp.sum(x ** 2)

        g_jax = lambda x: jnp.tanh(Aj @ x) * x
        h_jit = jax.jit(jax.hessian(f_jax))
        jf_jit, jr_jit = jax.jit(jax.jacfwd(g_jax)), jax.jit(jax.jacrev(g_jax))
        out += [("hess", "jax jit(hessian)", lambda: np.asarray(h_jit(xh).block_until_ready())),
                ("jac", "jax jit(jacfwd)", lambda: np.asarray(jf_jit(xj).block_until_ready())),
                ("jac", "jax jit(jacrev)", lambda: np.asarray(jr_jit(xj).block_until_ready()))]
    except ImportError:
        out.append(("skip", "jax", None))
    try:
        import torch
        torch.set_num_threads(1)
        Ah, Aj = torch.from_numpy(A_h), torch.from_numpy(A_j)
        xh, xj = torch.from_numpy(x_h), torch.from_numpy(x_j)

        def f_t(x):
            z = Ah @ x
            return torch.sum(torch.log1p(torch.exp(-z.abs())) + torch.clamp(z, min=0)) + \
                0.5 * torch.sum(x ** 2)

        g_t = lambda x: torch.tanh(Aj @ x) * x
        from torch.autograd.functional import hessian as th, jacobian as tj
        out += [("hess", "torch hessian (vectorize)",
                 lambda: th(f_t, xh, vectorize=True).numpy()),
                ("jac", "torch jacobian fwd (vectorize)",
                 lambda: tj(g_t, xj, vectorize=True, strategy="forward-mode").numpy()),
                ("jac", "torch jacobian rev (vectorize)",
                 lambda: tj(g_t, xj, vectorize=True).numpy())]
    except ImportError:
        out.append(("skip", "torch", None))
    return out


# --- run -------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9, help="timed runs (>= 7)")
    args = ap.parse_args()
    repeat = max(7, args.repeat)

    H_ref, J_ref = hess_floor(x_h), jac_floor(x_j)
    sections = {
        "hess": (f"(a) Hessian, n={N_HESS}: sum(softplus(A x)) + |x|^2/2", H_ref, [
            ("numpy floor A^T diag(s(1-s)) A + I", lambda: hess_floor(x_h)),
            ("fxad.hessian (= jacfwd(jacrev))", lambda: fxad.hessian(f_fxad)(x_h)),
            ("fxad jacrev(jacrev)", lambda: fxad.jacrev(fxad.jacrev(f_fxad))(x_h)),
            ("fxad jacrev(jacfwd)", lambda: fxad.jacrev(fxad.jacfwd(f_fxad))(x_h)),
            ("fxad jacfwd(jacfwd)", lambda: fxad.jacfwd(fxad.jacfwd(f_fxad))(x_h)),
        ]),
        "jac": (f"(b) Jacobian, {N_JAC}x{N_JAC}: tanh(A x) * x", J_ref, [
            ("numpy floor diag(x)(1-t^2)A + diag(t)", lambda: jac_floor(x_j)),
            ("fxad.jacfwd", lambda: fxad.jacfwd(g_fxad)(x_j)),
            ("fxad.jacrev", lambda: fxad.jacrev(g_fxad)(x_j)),
        ]),
    }
    skipped = []
    for sec, name, thunk in other_libraries():
        if sec == "skip":
            skipped.append(name)
        else:
            sections[sec][2].append((name, thunk))

    print(f"python {platform.python_version()}, numpy {np.__version__}, fxad "
          f"{fxad.__version__}, 1 BLAS thread, median of {repeat} runs (per call)")
    if skipped:
        print(f"not installed (skipped): {', '.join(skipped)}")
    ok_all = True
    for title, ref, entries in sections.values():
        print()
        print(title)
        print(f"  {'name':<40} {'median s':>11} {'x floor':>9}  check")
        floor = None
        for name, thunk in entries:
            res = np.asarray(thunk())
            ok = res.shape == ref.shape and np.allclose(res, ref, rtol=1e-9, atol=1e-12)
            ok_all &= ok
            t = median_time(thunk, repeat)
            floor = t if floor is None else floor
            print(f"  {name:<40} {t:>11.6f} {t / floor:>9.1f}  {'ok' if ok else 'MISMATCH'}")
    if not ok_all:
        print("\nsome results did not match the floor", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

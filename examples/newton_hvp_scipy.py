"""Newton-CG on the n-dimensional Rosenbrock function, with SciPy doing the optimisation and
fxad supplying the derivatives: value_and_grad for (f, ∇f) in one pass (jac=True) and hvp for
Hessian-vector products (forward over reverse, the Hessian is never formed).

    python examples/newton_hvp_scipy.py           # n = 200
    python examples/newton_hvp_scipy.py --smoke   # n = 10
"""
import argparse
import time

import numpy as np
from scipy.optimize import minimize, rosen, rosen_der, rosen_hess_prod

import fxad
import fxad.numpy as fnp


def rosenbrock(x):
    return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


value_and_grad = fxad.value_and_grad(rosenbrock)


def hessp(x, p):
    (hp,) = fxad.hvp(rosenbrock, (x,), (p,))   # one result per primal
    return hp


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="small problem for CI")
    n = 10 if ap.parse_args().smoke else 200

    rng = np.random.default_rng(0)
    x0 = rng.uniform(-2.0, 2.0, n)
    p = rng.standard_normal(n)
    # fxad against SciPy's hand-written derivatives before trusting it with the optimiser
    f0, g0 = value_and_grad(x0)
    assert np.isclose(f0, rosen(x0)), (f0, rosen(x0))
    assert np.allclose(g0, rosen_der(x0)), "gradient mismatch"
    assert np.allclose(hessp(x0, p), rosen_hess_prod(x0, p)), "hvp mismatch"
    print(f"n = {n}: f, grad and Hessian-vector product agree with scipy.optimize.rosen*")

    calls = {"fg": 0, "hvp": 0}

    def fun(x):
        calls["fg"] += 1
        return value_and_grad(x)

    def hvp(x, v):
        calls["hvp"] += 1
        return hessp(x, v)

    t0 = time.perf_counter()
    res = minimize(fun, x0, jac=True, hessp=hvp, method="Newton-CG",
                   options={"xtol": 1e-10, "maxiter": 10 * n})
    dt = time.perf_counter() - t0
    err = np.max(np.abs(res.x - 1.0))
    print(f"{res.message}  (success={res.success})")
    print(f"f(x*) = {res.fun:.3e}, max |x* - 1| = {err:.2e}, {res.nit} Newton iterations, "
          f"{calls['fg']} value_and_grad calls, {calls['hvp']} hvp calls, {dt:.2f}s")
    print("x* =", np.array2string(res.x[:6], precision=6), "..." if n > 6 else "")
    assert err < 1e-6, f"did not reach (1, ..., 1): max error {err}"
    print("reached (1, ..., 1)")


if __name__ == "__main__":
    main()

"""The Taylor-series method for an ODE: many coefficients of the solution by jets through a
loop, checked against SciPy's solve_ivp.

For y' = g(y), the raw Taylor coefficients of the solution through y_0 obey
y_(k+1) = [g(y(t))]_k / (k + 1): knowing y_0..y_k, one `jet` of g (order k, raw coefficients)
gives its coefficient k, hence y_(k+1). K jets give a degree-K polynomial; a step of size h
sums it at h (Horner). The system here is a pendulum with a cubic spring:
    q' = p,   p' = -sin(q) - 0.1 q^3.

    python examples/taylor_ode.py [--order 16] [--step 0.25] [--t-end 10]
    python examples/taylor_ode.py --smoke
"""
import argparse
import time

import numpy as np
from scipy.integrate import solve_ivp

import fxad
import fxad.numpy as fnp


def g(y):
    q, p = y[0], y[1]
    return fnp.stack([p, -fnp.sin(q) - 0.1 * q ** 3])


def taylor_coefficients(y0, order):
    """[y_0, y_1, ..., y_order]: raw Taylor coefficients of the solution at y0."""
    coeffs = [np.asarray(y0, float)]
    for k in range(order):
        # the jet of g along the known part of the path (order k; zero path when k = 0)
        if k == 0:
            gk = g(coeffs[0])
        else:
            _, series = fxad.jet(g, (coeffs[0],), (tuple(coeffs[1:k + 1]),), raw=True)
            gk = series[k - 1]
        coeffs.append(np.asarray(gk) / (k + 1))
    return coeffs


def step(y, h, order):
    c = taylor_coefficients(y, order)
    out = c[-1]
    for ck in reversed(c[:-1]):  # Horner
        out = ck + h * out
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--order", type=int, default=16)
    ap.add_argument("--step", type=float, default=0.25)
    ap.add_argument("--t-end", type=float, default=10.0)
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    if a.smoke:
        a.t_end = 3.0
    y0 = np.array([1.2, 0.0])
    n = int(round(a.t_end / a.step))
    t0 = time.perf_counter()
    y = y0
    for _ in range(n):
        y = step(y, a.step, a.order)
    elapsed = time.perf_counter() - t0
    ref = solve_ivp(lambda t, y: [y[1], -np.sin(y[0]) - 0.1 * y[0] ** 3], (0, n * a.step), y0,
                    method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]
    err = np.max(np.abs(y - ref))
    print(f"{n} Taylor steps of order {a.order} (h = {a.step}) in {elapsed:.2f} s: y({n * a.step:g})"
          f" = {np.round(y, 8)}; solve_ivp (DOP853, rtol 1e-13): {np.round(ref, 8)}; "
          f"max difference {err:.1e}")
    # one step's coefficients against nested derivatives: y'' = d/dt g(y) = g'(y) g(y)
    c = taylor_coefficients(y0, 3)
    y2 = fxad.jvp(g, (y0,), (g(y0),))[1] / 2
    assert np.allclose(c[2], y2, rtol=1e-13), (c[2], y2)
    assert err < 1e-9, err
    print("Taylor-series integrator agrees with solve_ivp")


if __name__ == "__main__":
    main()

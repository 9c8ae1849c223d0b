"""Gaussian-process regression: fit the kernel's hyperparameters by maximizing the marginal
likelihood, written with scipy.stats' multivariate_normal.logpdf, with SciPy's L-BFGS-B doing
the optimization and fxad supplying the gradient (value_and_grad) and, at the optimum, the
Hessian (a Laplace approximation of the hyperparameters' uncertainty).

    python examples/gaussian_process.py           # n = 200 noisy samples
    python examples/gaussian_process.py --smoke   # n = 30
    python examples/gaussian_process.py --out-dir DIR   # the posterior's PNG goes there
"""
import argparse
import time

import numpy as np
from scipy.optimize import minimize

import fxad
import fxad.numpy as fnp
import _figures as figures
from fxad.scipy.stats import multivariate_normal


def kernel(x1, x2, log_ell, log_sf):
    """Squared-exponential covariance sf² exp(-|x1 - x2|² / (2 ell²))."""
    d = (x1[:, None] - x2[None, :]) / fnp.exp(log_ell)
    return fnp.exp(2 * log_sf) * fnp.exp(-0.5 * d * d)


def neg_log_marginal_likelihood(theta, x, y):
    log_ell, log_sf, log_sn = theta[0], theta[1], theta[2]
    cov = kernel(x, x, log_ell, log_sf) + fnp.exp(2 * log_sn) * fnp.eye(len(x))
    return -multivariate_normal.logpdf(y, mean=np.zeros(len(x)), cov=cov)


def closed_form_gradient(theta, x, y):
    """d(-log p)/dθ = -½ tr((α αᵀ - K⁻¹) dK/dθ), α = K⁻¹ y (Rasmussen & Williams, eq. 5.9)."""
    ell, sf, sn = np.exp(theta)
    r2 = (x[:, None] - x[None, :]) ** 2
    k = sf ** 2 * np.exp(-0.5 * r2 / ell ** 2)
    big_k = k + sn ** 2 * np.eye(len(x))
    kinv = np.linalg.inv(big_k)
    alpha = kinv @ y
    inner = np.outer(alpha, alpha) - kinv
    dks = [k * r2 / ell ** 2, 2 * k, 2 * sn ** 2 * np.eye(len(x))]  # d/d log ell, log sf, log sn
    return np.array([-0.5 * np.sum(inner * dk) for dk in dks])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="small problem for CI")
    figures.add_argument(ap)
    args = ap.parse_args()
    n = 30 if args.smoke else 200

    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-3, 3, n))
    true = np.log([0.7, 1.2, 0.1])  # ell, sf, sn
    ell, sf, sn = np.exp(true)
    r2 = (x[:, None] - x[None, :]) ** 2
    cov = sf ** 2 * np.exp(-0.5 * r2 / ell ** 2) + (sn ** 2 + 1e-10) * np.eye(n)
    y = np.linalg.cholesky(cov) @ rng.standard_normal(n)  # a draw from the true GP

    nll = lambda th: neg_log_marginal_likelihood(th, x, y)  # noqa: E731
    value_and_grad = fxad.jit(fxad.value_and_grad(nll))
    theta0 = np.log([2.0, 0.5, 0.5])
    f0, g0 = value_and_grad(theta0)
    assert np.allclose(g0, closed_form_gradient(theta0, x, y), rtol=1e-8), g0
    print(f"n = {n}: the gradient of multivariate_normal.logpdf matches the closed-form GP "
          "gradient")

    calls = [0]

    def fun(th):
        calls[0] += 1
        v, g = value_and_grad(th)
        return float(v), np.asarray(g, float)

    t0 = time.perf_counter()
    res = minimize(fun, theta0, jac=True, method="L-BFGS-B")
    dt = time.perf_counter() - t0
    assert res.success and res.fun < f0, res
    assert np.linalg.norm(closed_form_gradient(res.x, x, y)) < 1e-3 * max(1.0, abs(res.fun))
    print(f"L-BFGS-B: {res.nit} iterations, {calls[0]} value_and_grad calls, {dt:.2f}s; "
          f"-log p from {f0:.2f} to {res.fun:.2f}")

    hess = fxad.hessian(nll)(res.x)  # forward over reverse, through the Cholesky factor
    assert np.allclose(hess, hess.T, atol=1e-8) and np.all(np.linalg.eigvalsh(hess) > 0)
    stderr = np.sqrt(np.diag(np.linalg.inv(hess)))
    for name, t, s, tr in zip(["ell", "sf", "sn"], res.x, stderr, true):
        print(f"  {name:>3} = {np.exp(t):.3f}  (log {t:+.3f} ± {s:.3f}; true {np.exp(tr):.3f})")
    print("GP hyperparameters fitted by gradient: a positive definite Hessian at the optimum")
    plot(res.x, x, y, args)


def plot(theta, x, y, args):
    """The posterior mean of f with its 95% band (the noise-free f), and the data."""
    plt = figures.pyplot()
    if plt is None:
        return
    log_ell, log_sf, log_sn = theta
    xs = np.linspace(x.min() - 0.5, x.max() + 0.5, 300)
    big_k = np.asarray(kernel(x, x, log_ell, log_sf)) + np.exp(2 * log_sn) * np.eye(len(x))
    k_star = np.asarray(kernel(xs, x, log_ell, log_sf))
    chol = np.linalg.cholesky(big_k)
    mean = k_star @ np.linalg.solve(chol.T, np.linalg.solve(chol, y))
    v = np.linalg.solve(chol, k_star.T)
    sd = np.sqrt(np.maximum(np.exp(2 * log_sf) - np.sum(v * v, axis=0), 0.0))
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.fill_between(xs, mean - 1.96 * sd, mean + 1.96 * sd, color="C0", alpha=0.25,
                    label="95% band")
    ax.plot(xs, mean, color="C0", label="posterior mean")
    ax.plot(x, y, "k.", ms=4, label="data")
    ax.set(title=f"GP posterior, hyperparameters fitted by gradient (ell = {np.exp(log_ell):.2f}, "
           f"sf = {np.exp(log_sf):.2f}, sn = {np.exp(log_sn):.2f})", xlabel="x")
    ax.legend(loc="upper left")
    fig.tight_layout()
    figures.save(fig, args, "gaussian_process.png")


if __name__ == "__main__":
    main()

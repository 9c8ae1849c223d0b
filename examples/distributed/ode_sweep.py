"""A parameter sweep of an ODE fit across Dask workers: from each starting guess, fit the
growth rate and capacity of a logistic ODE (integrated by RK4 in a scan) to noisy data by
gradient descent; every guess is one shard of a pmap, and the best fit is chosen by pmin.

    python examples/distributed/ode_sweep.py [--smoke]
"""
import sys

import numpy as np

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.distributed import DaskExecutor

from _cluster import client as make_client

DT, N_T = 0.1, 60


def trajectory(theta, y0=0.1):
    r, k = theta[0], theta[1]

    def rk4(y, _):
        f = lambda y: r * y * (1 - y / k)  # noqa: E731
        k1 = f(y)
        k2 = f(y + 0.5 * DT * k1)
        k3 = f(y + 0.5 * DT * k2)
        k4 = f(y + DT * k3)
        y = y + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y, y
    return lax.scan(rk4, fnp.asarray(y0), None, length=N_T)[1]


def fit(theta, data, steps):
    """Gradient descent from one starting guess; its final loss, and which guess is best."""
    loss = lambda th: fnp.mean((trajectory(th) - data) ** 2)  # noqa: E731
    def descend(_, theta):
        grad = fxad.grad(loss)(theta)
        return theta - 0.5 * grad / (1.0 + fnp.linalg.norm(grad))
    theta = lax.fori_loop(0, steps, descend, theta)
    value = loss(theta)
    best = lax.pmin(value, "guess")
    return theta, value, value == best


def main(smoke):
    n_guess, steps = (4, 5) if smoke else (8, 200)
    truth = np.array([0.8, 2.0])
    data = np.asarray(trajectory(truth)) + np.random.default_rng(0).normal(0, 0.01, N_T)
    guesses = np.stack([np.linspace(0.3, 1.5, n_guess), np.linspace(1.0, 3.0, n_guess)], 1)
    client = make_client()
    try:
        sweep = fxad.pmap(lambda th, d: fit(th, d, steps), "guess", in_axes=(0, None),
                          executor=DaskExecutor(client))
        thetas, losses, best = sweep(guesses, data)
        ref = fxad.pmap(lambda th, d: fit(th, d, steps), "guess", in_axes=(0, None))(guesses,
                                                                                    data)
        np.testing.assert_allclose(thetas, ref[0], rtol=1e-10)
        i = int(np.argmax(best))
        assert losses[i] == losses.min()
        print(f"swept {n_guess} starting guesses on the workers; best fit "
              f"rate={thetas[i, 0]:.3f} capacity={thetas[i, 1]:.3f} (loss {losses[i]:.2e})")
    finally:
        client.close()


if __name__ == "__main__":
    main("--smoke" in sys.argv[1:])

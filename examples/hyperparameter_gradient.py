"""The gradient of a validation loss with respect to a ridge penalty, through the solution of
the training problem: fxad.scipy.optimize.minimize runs SciPy's optimizer, and fxad
differentiates its solution by the implicit function theorem (∇_w L_train(w*, λ) = 0), never
through the optimizer's iterations. Checked against finite differences of the whole
train-then-validate pipeline, then used (with the second derivative, also implicit) to tune
λ by Newton's method on log λ.

    python examples/hyperparameter_gradient.py           # 200 samples, 30 features
    python examples/hyperparameter_gradient.py --smoke   # a few seconds
"""
import argparse

import numpy as np

import fxad
import fxad.numpy as fnp
from fxad.scipy.optimize import minimize


def make_data(rng, n, d):
    w_true = rng.standard_normal(d) * (rng.random(d) < 0.3)  # a few features matter
    X = rng.standard_normal((n, d))
    y = X @ w_true + 0.5 * rng.standard_normal(n)
    return X, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="small problem for CI")
    smoke = ap.parse_args().smoke
    n, d, steps = (60, 10, 4) if smoke else (200, 30, 10)

    rng = np.random.default_rng(0)
    X, y = make_data(rng, 2 * n, d)
    Xt, yt, Xv, yv = X[:n], y[:n], X[n:], y[n:]

    def train_loss(w, lam):  # a smooth, non-quadratic fit (log-cosh), ridge penalty
        r = Xt @ w - yt
        return fnp.mean(fnp.logaddexp(r, -r) - np.log(2.0)) + lam * fnp.sum(w ** 2)

    def weights(log_lam):
        res = minimize(train_loss, np.zeros(d), args=(fnp.exp(log_lam),), method="BFGS",
                       options=dict(gtol=1e-9))
        return res.x

    def val_loss(log_lam):
        return fnp.mean((Xv @ weights(log_lam) - yv) ** 2)

    log_lam = np.log(0.1)
    v, g = fxad.value_and_grad(val_loss)(log_lam)
    h = 1e-4
    fd = (val_loss(log_lam + h) - val_loss(log_lam - h)) / (2 * h)
    print(f"validation loss {v:.5f} at lambda = {np.exp(log_lam):.3g}")
    print(f"d val_loss / d log(lambda): implicit {g:.8f}, finite differences {fd:.8f}")
    assert abs(g - fd) <= 1e-5 * max(1.0, abs(fd)), (g, fd)
    print("implicit gradient matches finite differences")

    curv = fxad.hessian(val_loss)(log_lam)  # second order through the solution, too
    print(f"d2 val_loss / d log(lambda)2 = {curv:.6f}")

    for k in range(steps):  # Newton's method on log(lambda), steps capped at 1
        v, g = fxad.value_and_grad(val_loss)(log_lam)
        curv = fxad.hessian(val_loss)(log_lam)
        step = -g / curv if curv > 0 else -np.sign(g)
        log_lam = log_lam + float(np.clip(step, -1.0, 1.0))
        print(f"step {k}: lambda = {np.exp(log_lam):.4g} (validation loss before {v:.5f}, "
              f"gradient {g:.2e})")
        if abs(g) < 1e-7:
            break
    final = val_loss(log_lam)
    print(f"tuned lambda = {np.exp(log_lam):.4g}, validation loss {final:.5f}")
    assert final <= val_loss(np.log(0.1)) + 1e-12


if __name__ == "__main__":
    main()

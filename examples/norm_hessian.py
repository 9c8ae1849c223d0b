"""The Hessian of a loss through fxad.nn.layer_norm, forward over reverse (fxad.hessian =
jacfwd(jacrev)), checked against reverse over reverse (jacrev(jacrev)), against the Hessian
of a plain, rule-free layer norm, and against finite differences of the gradient.

layer_norm is a custom_vjp "fused kernel": its fwd saves the mean and 1/std and its bwd uses
them. Forward over reverse differentiates that bwd; it is exact because under the outer jvp
the saved statistics are tracers that still depend on x (no recompute-in-backward trick).

    python examples/norm_hessian.py           # width 24
    python examples/norm_hessian.py --smoke   # width 6
"""
import argparse
import time

import numpy as np

import fxad
import fxad.numpy as fnp


def plain_layer_norm(x, gamma, beta, eps=1e-5):
    """The textbook formula: differentiated primitive by primitive, no custom rule."""
    mean = fnp.mean(x, axis=-1, keepdims=True)
    var = fnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / fnp.sqrt(var + eps) * gamma + beta


def make_loss(norm, gamma, beta, w):
    """A scalar, non-quadratic function of the normalized activations."""
    def loss(x):
        return fnp.sum(fnp.tanh(norm(x, gamma, beta)) * w)
    return loss


def fxad_layer_norm(x, gamma, beta):
    return fxad.nn.layer_norm(x, gamma, beta)


def timed(f, *args):
    t0 = time.perf_counter()
    out = f(*args)
    return out, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="small width for CI")
    n = 6 if ap.parse_args().smoke else 24
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, n))          # two rows, normalized independently
    gamma, beta, w = rng.uniform(0.5, 1.5, n), 0.1 * rng.standard_normal(n), \
        rng.standard_normal((2, n))
    loss = make_loss(fxad_layer_norm, gamma, beta, w)

    H_fwd_rev, t1 = timed(fxad.hessian(loss), x)                  # forward over reverse
    H_rev_rev, t2 = timed(fxad.jacrev(fxad.jacrev(loss)), x)      # reverse over reverse
    H_plain, t3 = timed(fxad.hessian(make_loss(plain_layer_norm, gamma, beta, w)), x)
    print(f"Hessian shape {H_fwd_rev.shape} (x has shape {x.shape})")
    print(f"  forward over reverse (hessian)   {t1 * 1e3:7.1f} ms")
    print(f"  reverse over reverse (jacrev^2)  {t2 * 1e3:7.1f} ms   "
          f"max |diff| = {np.abs(H_fwd_rev - H_rev_rev).max():.1e}")
    print(f"  plain layer norm, no custom rule {t3 * 1e3:7.1f} ms   "
          f"max |diff| = {np.abs(H_fwd_rev - H_plain).max():.1e}")
    assert np.allclose(H_fwd_rev, H_rev_rev, rtol=1e-9, atol=1e-9)
    assert np.allclose(H_fwd_rev, H_plain, rtol=1e-7, atol=1e-7)

    # central differences of the gradient, one column of H per direction
    g = fxad.grad(loss)
    h = 1e-5
    Hm = H_fwd_rev.reshape(x.size, x.size)
    fd = np.stack([((g(x + h * e.reshape(x.shape)) - g(x - h * e.reshape(x.shape))) / (2 * h))
                   .ravel() for e in np.eye(x.size)], axis=1)
    print(f"  central differences of grad      max |diff| = {np.abs(Hm - fd).max():.1e}")
    assert np.allclose(Hm, fd, atol=1e-6)

    # structure a reader can check: symmetric; rows do not interact (block diagonal);
    # layer norm is shift invariant, so H·1 = 0 within each row.
    assert np.allclose(Hm, Hm.T, atol=1e-10)
    assert np.allclose(H_fwd_rev[0, :, 1, :], 0) and np.allclose(H_fwd_rev[1, :, 0, :], 0)
    ones_row0 = np.zeros_like(x)
    ones_row0[0] = 1.0
    (hv,) = fxad.hvp(loss, (x,), (ones_row0,))
    print(f"symmetric, block diagonal over rows, |H·(1 on row 0)| = {np.abs(hv).max():.1e} "
          "(shift invariance)")
    assert np.abs(hv).max() < 1e-8
    print("eigenvalues of row 0's block:",
          np.array2string(np.linalg.eigvalsh(H_fwd_rev[0, :, 0, :])[:4], precision=4), "...")

    # The scale gamma too: a nested tuple of blocks, H[i][j] = d2 loss / d arg_i d arg_j.
    def loss2(x, gamma):
        return fnp.sum(fnp.tanh(fxad.nn.layer_norm(x, gamma, beta)) * w)
    blocks = fxad.hessian(loss2, argnums=(0, 1))(x, gamma)
    ref = fxad.jacrev(fxad.jacrev(loss2, argnums=(0, 1)), argnums=(0, 1))(x, gamma)
    err = max(np.abs(blocks[i][j] - ref[i][j]).max() for i in range(2) for j in range(2))
    print(f"Hessian in (x, gamma): blocks {[[b.shape for b in row] for row in blocks]}, "
          f"max |fwd-rev - rev-rev| = {err:.1e}")
    assert err < 1e-9


if __name__ == "__main__":
    main()

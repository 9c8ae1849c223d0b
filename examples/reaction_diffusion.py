"""A 2-D reaction–diffusion system (the Brusselator on an m x m periodic grid: 2 m² unknowns,
20,000 at the default m = 100), solved with solve_ivp(method="BDF") — fxad detects the
Jacobian's sparsity (a 5-point stencil plus the local reaction), colors it, and hands BDF an
exact sparse Jacobian — and its two reaction parameters fitted to a snapshot of the solution
by Gauss–Newton, the Jacobian of the snapshot in the parameters coming from forward
sensitivities through the solve (fxad.jacfwd).

    python examples/reaction_diffusion.py            # m = 100: 20,000 unknowns (slow: below)
    python examples/reaction_diffusion.py --grid 32  # 2,048 unknowns: seconds
    python examples/reaction_diffusion.py --smoke    # m = 8, for CI

At m = 100 one solve takes ~20 s, but each Gauss-Newton step's forward-sensitivity solve
(60,000 coupled unknowns, factored together) takes minutes (notes/15_sparse_and_extend.md).
"""
import argparse
import time

import numpy as np
import scipy.sparse as sp

import fxad
import fxad.numpy as fnp
import fxad.sparse
from fxad.scipy.integrate import solve_ivp

TRUE = np.array([1.0, 3.4])  # the Brusselator's a and b
DU, DV, T_END = 2e-3, 1e-3, 1.0


def laplacian(z, h):
    """The periodic 5-point Laplacian of an m x m field."""
    return (fnp.roll(z, 1, 0) + fnp.roll(z, -1, 0) + fnp.roll(z, 1, 1) + fnp.roll(z, -1, 1)
            - 4 * z) / h ** 2


def rhs(t, y, a, b, m):
    u, v = fnp.reshape(y[:m * m], (m, m)), fnp.reshape(y[m * m:], (m, m))
    h = 1.0 / m
    du = DU * laplacian(u, h) + a - (b + 1) * u + u * u * v
    dv = DV * laplacian(v, h) + b * u - u * u * v
    return fnp.concatenate([fnp.ravel(du), fnp.ravel(dv)])


def initial(m):
    x = np.arange(m) / m
    X, Y = np.meshgrid(x, x, indexing="ij")
    u = 1.0 + 0.5 * np.sin(2 * np.pi * X) * np.cos(2 * np.pi * Y)
    v = 3.0 + 0.3 * np.cos(2 * np.pi * (X + Y))
    return np.concatenate([u.ravel(), v.ravel()])


def snapshot(theta, m):
    sol = solve_ivp(lambda t, y, a, b: rhs(t, y, a, b, m), (0.0, T_END), initial(m),
                    method="BDF", rtol=1e-6, atol=1e-8, args=(theta[0], theta[1]))
    return sol.y[:, -1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="an 8 x 8 grid, for CI")
    ap.add_argument("--grid", type=int, default=100)
    a = ap.parse_args()
    m = 8 if a.smoke else a.grid
    n = 2 * m * m

    P = fxad.sparse.jacobian_sparsity(lambda y: rhs(0.0, y, *TRUE, m), initial(m))
    colors = int(fxad.sparse.color_columns(P).max()) + 1
    # the stencil: each u couples to its 4 neighbours, itself and its v (v likewise)
    assert P.nnz == 6 * n and (P != P.T).nnz == 0
    print(f"{n} unknowns: Jacobian pattern with {P.nnz} nonzeros, {colors} colors")

    t0 = time.perf_counter()
    data = np.asarray(snapshot(TRUE, m))
    print(f"one BDF solve: {time.perf_counter() - t0:.2f} s")

    theta = np.array([0.8, 3.0])
    residual = lambda th: snapshot(th, m) - data  # noqa: E731
    jac = fxad.jacfwd(residual)  # forward sensitivities: one augmented solve
    for it in range(8):
        r = np.asarray(residual(theta))
        J = np.asarray(jac(theta))
        step = np.linalg.lstsq(J, -r, rcond=None)[0]
        theta = theta + step
        print(f"  Gauss-Newton {it}: |r| = {np.linalg.norm(r):.3e}, theta = {theta}")
        if np.abs(step).max() < 1e-8:
            break
    assert np.allclose(theta, TRUE, rtol=1e-5), theta
    # the sparse Jacobian fxad gave BDF is the dense one
    y = initial(m)
    Js = fxad.sparse.jacfwd(lambda y: rhs(0.0, y, *TRUE, m))(y)
    assert sp.issparse(Js)
    if n <= 2000:
        assert np.allclose(Js.toarray(), fxad.jacfwd(lambda y: rhs(0.0, y, *TRUE, m))(y))
    print(f"fitted reaction-diffusion parameters a = {theta[0]:.6f}, b = {theta[1]:.6f} "
          f"(true {TRUE[0]}, {TRUE[1]})")


if __name__ == "__main__":
    main()

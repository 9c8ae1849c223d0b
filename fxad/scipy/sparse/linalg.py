"""Iterative solvers of A x = b with JAX's signatures (`cg`, `bicgstab`, `gmres`): A a matrix or a
function applying the linear map (to arrays or pytrees), M an optional preconditioner (the
same kinds), x0 an initial guess. The iterations run in `lax.while_loop` (so they stage under
jit and batch under vmap), and the solution is differentiated as the solution of the linear
system (`lax.custom_linear_solve`: reverse mode solves the transposed system with the same
method), not through the iterations. Returns (x, None), as JAX's (the second value is SciPy's
info, which JAX does not compute)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import lax
from ... import numpy as fnp
from ...control_flow import while_loop
from ...errors import FxadValueError
from ...flatten_util import ravel_pytree
from ...tree_util import tree_leaves, tree_map


def _operator(A, name, what):
    if callable(A):
        return A
    a = fnp.asarray(A)
    if fnp.ndim(a) != 2:
        raise FxadValueError(f"{name}: {what} must be a 2-d array or a function, got shape "
                             f"{fnp.shape(a)}")
    return lambda x: fnp.matmul(a, x)


def _vdot(x, y):
    return sum(fnp.sum(fnp.conj(a) * b) for a, b in zip(tree_leaves(x), tree_leaves(y)))


def _axpy(alpha, x, y):  # alpha * x + y
    return tree_map(lambda a, b: alpha * a + b, x, y)


def _sub(x, y):
    return tree_map(lambda a, b: a - b, x, y)


def _settle(name, b, x0, tol, atol, maxiter, M):
    if x0 is None:
        x0 = tree_map(fnp.zeros_like, b)
    size = sum(int(np.prod(fnp.shape(x))) for x in tree_leaves(b))
    maxiter = 10 * size if maxiter is None else int(maxiter)
    precond = (lambda x: x) if M is None else _operator(M, name, "M")
    b_norm2 = fnp.real(_vdot(b, b))
    stop2 = fnp.maximum(tol * tol * b_norm2, atol * atol)  # |r|^2 at which to stop
    return x0, maxiter, precond, stop2


def _solve(name, iterate, A, b, x0, tol, atol, maxiter, M, symmetric=False):
    """x with A x = b by `iterate(matvec, b, x0, maxiter, precond, stop2)`, differentiated as
    the linear system's solution (the transposed system solved the same way); (x, None)."""
    matvec = _operator(A, name, "A")
    x0, maxiter, precond, stop2 = _settle(name, b, x0, tol, atol, maxiter, M)
    x0 = lax.stop_gradient(x0)  # the solution does not depend on the guess

    def solve(mv, rhs):
        return iterate(mv, rhs, x0, maxiter, precond, stop2)

    if symmetric:
        return lax.custom_linear_solve(matvec, b, solve, symmetric=True), None
    return lax.custom_linear_solve(matvec, b, solve, transpose_solve=solve), None


def _cg_iterate(matvec, b, x0, maxiter, precond, stop2):
    r = _sub(b, matvec(x0))
    z = precond(r)
    state = (x0, r, z, _vdot(r, z), 0)

    def cond(s):
        return (fnp.real(_vdot(s[1], s[1])) > stop2) & (s[4] < maxiter)

    def body(s):
        x, r, p, gamma, k = s
        q = matvec(p)
        alpha = gamma / _vdot(p, q)
        x, r = _axpy(alpha, p, x), _axpy(-alpha, q, r)
        z = precond(r)
        gamma_new = _vdot(r, z)
        p = _axpy(gamma_new / gamma, p, z)
        return x, r, p, gamma_new, k + 1

    return while_loop(cond, body, state)[0]


def cg(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
       maxiter: int | None = None, M: Any = None):
    """Conjugate gradients for a Hermitian positive definite A: iterates until
    |b - A x| <= max(tol |b|, atol) or maxiter steps (default 10 times b's size)."""
    return _solve("cg", _cg_iterate, A, b, x0, tol, atol, maxiter, M, symmetric=True)


def _bicgstab_iterate(matvec, b, x0, maxiter, precond, stop2):
    r = _sub(b, matvec(x0))
    zeros = tree_map(fnp.zeros_like, r)
    one = fnp.ones((), fnp.result_type(*tree_leaves(r)))
    state = (x0, r, r, zeros, zeros, one, one, one, 0)  # x, r, r_hat, p, v, rho, alpha, omega

    def cond(s):
        return (fnp.real(_vdot(s[1], s[1])) > stop2) & (s[8] < maxiter)

    def body(s):
        x, r, rhat, p, v, rho, alpha, omega, k = s
        rho_new = _vdot(rhat, r)
        beta = (rho_new / rho) * (alpha / omega)
        p = _axpy(beta, _axpy(-omega, v, p), r)
        phat = precond(p)
        v = matvec(phat)
        alpha = rho_new / _vdot(rhat, v)
        s_ = _axpy(-alpha, v, r)
        shat = precond(s_)
        t = matvec(shat)
        tt = _vdot(t, t)
        # where s is already zero, t is too: a zero step rather than 0 / 0
        omega = fnp.where(fnp.real(tt) > 0, _vdot(t, s_) / fnp.where(fnp.real(tt) > 0, tt, 1),
                          0)
        x = _axpy(omega, shat, _axpy(alpha, phat, x))
        r = _axpy(-omega, t, s_)
        return x, r, rhat, p, v, rho_new, alpha, fnp.where(omega == 0, one, omega), k + 1

    return while_loop(cond, body, state)[0]


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
             maxiter: int | None = None, M: Any = None):
    """BiCGSTAB for a general (non-singular) A: iterates until |b - A x| <= max(tol |b|,
    atol) or maxiter steps (default 10 times b's size)."""
    return _solve("bicgstab", _bicgstab_iterate, A, b, x0, tol, atol, maxiter, M)


def _gmres_iterate(matvec, b, x0, restart, maxiter, precond, stop2):
    """Restarted GMRES on flat vectors: each cycle builds an orthonormal Krylov basis of
    M A (Arnoldi, Gram-Schmidt applied twice) from the preconditioned residual and takes the
    combination minimizing the residual in it (a small least-squares problem)."""
    n = fnp.shape(b)[0]
    dt = fnp.result_type(b, x0)

    def cycle(x):
        r = precond(b - matvec(x))
        beta = fnp.sqrt(fnp.real(fnp.sum(fnp.conj(r) * r)))
        basis = fnp.zeros((restart + 1, n), dt).at[0].set(r / fnp.where(beta > 0, beta, 1))
        hess = fnp.zeros((restart + 1, restart), dt)

        def arnoldi(j, carry):
            basis, hess = carry
            w = precond(matvec(basis[j]))
            live = (fnp.arange(restart + 1) <= j)[:, None]
            h = fnp.zeros((restart + 1,), dt)
            for _ in range(2):  # twice, for orthogonality in floating point
                c = fnp.sum(fnp.conj(basis) * w, axis=1) * live[:, 0]
                w = w - fnp.sum(c[:, None] * basis, axis=0)
                h = h + c
            norm = fnp.sqrt(fnp.real(fnp.sum(fnp.conj(w) * w)))
            h = h.at[j + 1].set(norm)
            basis = basis.at[j + 1].set(w / fnp.where(norm > 0, norm, 1))
            return basis, hess.at[:, j].set(h)

        basis, hess = lax.fori_loop(0, restart, arnoldi, (basis, hess))
        rhs = fnp.zeros((restart + 1,), dt).at[0].set(beta)
        y = fnp.linalg.lstsq(hess, rhs)[0]
        return x + fnp.sum(y[:, None] * basis[:restart], axis=0)

    def cond(s):
        r = b - matvec(s[0])
        return (fnp.real(fnp.sum(fnp.conj(r) * r)) > stop2) & (s[1] < maxiter)

    return while_loop(cond, lambda s: (cycle(s[0]), s[1] + 1), (x0, 0))[0]


def gmres(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
          restart: int = 20, maxiter: int | None = None, M: Any = None,
          solve_method: str = "batched"):
    """Restarted GMRES for a general (non-singular) A: Krylov spaces of size `restart`
    (at most b's size), rebuilt from the current solution until |b - A x| <= max(tol |b|,
    atol) or maxiter times (default 10 times b's size). M preconditions on the left.
    solve_method ('batched' or 'incremental', JAX's) is accepted: both give the same
    minimizer; fxad solves the small least-squares problem once per restart."""
    if solve_method not in ("batched", "incremental"):
        raise FxadValueError(f"gmres: solve_method must be 'batched' or 'incremental', got "
                             f"{solve_method!r}")
    def iterate(mv, rhs, x0, maxiter, precond, stop2):  # on flat vectors
        flat_b, unravel = ravel_pytree(rhs)
        k = max(1, min(int(restart), fnp.shape(flat_b)[0]))
        flat_mv = lambda v: ravel_pytree(mv(unravel(v)))[0]
        flat_m = lambda v: ravel_pytree(precond(unravel(v)))[0]
        return unravel(_gmres_iterate(flat_mv, flat_b, ravel_pytree(x0)[0], k, maxiter, flat_m,
                                      stop2))

    return _solve("gmres", iterate, A, b, x0, tol, atol, maxiter, M)


__all__ = ["cg", "bicgstab", "gmres"]

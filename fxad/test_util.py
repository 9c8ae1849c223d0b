"""check_grads: derivatives checked against finite differences and the transpose identity.

Forward mode: jvp(f)(x; v) against the central difference (f(x+εv) - f(x-εv)) / 2ε along a
random direction v. Reverse mode: for a random cotangent c, ⟨c, J v⟩ from finite differences
against ⟨vjpᵀ(c), v⟩, and the transpose identity ⟨c, jvp(v)⟩ = ⟨vjp(c), v⟩ to rounding error
(reverse-only checks skip it where forward mode cannot differentiate f).
Higher orders recurse: the checks are applied to x ↦ jvp(f)(x; v) and x ↦ vjp(f)(x)(c).
Taylor mode: check_jet compares the jet of f along x + t v with K nested jvps.
"""
from __future__ import annotations

import numpy as np

from .api import jvp, vjp
from .api.taylor import jet
from .errors import OpaqueFunctionError, RuleNotImplementedError
from .tree_util import tree_flatten, tree_map


def _flat(tree):
    leaves = tree_flatten(tree)[0]
    if not leaves:
        return np.zeros(0)
    return np.concatenate([np.ravel(np.asarray(x, dtype=np.result_type(x, np.float64)))
                           for x in leaves])


def _vdot(a, b):
    """The real pairing Re(sum(a * b)) (no conjugation): the one under which fxad's (and
    JAX's) transposes of complex-linear maps satisfy the transpose identity."""
    return float(np.real(np.sum(_flat(a) * _flat(b))))


def _random_like(tree, rng):
    def one(x):
        x = np.asarray(x)
        if not np.issubdtype(x.dtype, np.inexact):
            return np.zeros(x.shape, x.dtype)
        if np.issubdtype(x.dtype, np.complexfloating):
            return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)).astype(x.dtype)
        return rng.standard_normal(x.shape).astype(x.dtype)
    return tree_map(one, tree)


def _close(name, got, want, atol, rtol, order):
    got, want = _flat(got), _flat(want)
    if got.shape != want.shape:
        raise AssertionError(f"{name} (order {order}): shapes differ {got.shape} vs {want.shape}")
    scale = np.max(np.abs(want), initial=0.0)
    err = np.max(np.abs(got - want), initial=0.0)
    if not err <= atol + rtol * scale:  # also fails on NaN
        raise AssertionError(f"{name} (order {order}): max error {err:.3g} exceeds "
                             f"{atol:.1g} + {rtol:.1g} * {scale:.3g}\n  got  {got}\n  want {want}")


def _shift(args, v, eps):
    return tree_map(lambda x, t: x + eps * t if np.issubdtype(np.asarray(x).dtype, np.inexact)
                    else x, args, v)


def _numerical_jvp(f, args, v, eps):
    plus = f(*_shift(args, v, eps))
    minus = f(*_shift(args, v, -eps))
    return tree_map(lambda a, b: (np.asarray(a) - np.asarray(b)) / (2 * eps), plus, minus)


def check_jvp(f, args, v, eps, atol, rtol, order=1):
    """Assert that jvp(f, args, v)'s tangent matches the central difference of f along v with
    step eps (within atol/rtol); `order` names the derivative order in the error message."""
    _, t = jvp(f, args, v)
    _close("jvp vs finite differences", t, _numerical_jvp(f, args, v, eps), atol, rtol, order)


def check_vjp(f, args, v, ct, eps, atol, rtol, order=1, transpose_identity=True):
    """Assert that the VJP of f agrees with finite differences: <ct, J v> from the central
    difference along v equals <vjp(ct), v>; and, when forward mode can differentiate f, the
    transpose identity <ct, jvp(v)> = <vjp(ct), v> to rounding. `transpose_identity=False`
    skips that check only where forward mode cannot differentiate f."""
    _, f_vjp = vjp(f, *args)
    ct_in = f_vjp(ct)
    lhs_num = _vdot(ct, _numerical_jvp(f, args, v, eps))
    rhs = _vdot(ct_in, v)
    _close("vjp vs finite differences ⟨c, J v⟩", rhs, lhs_num, atol, rtol, order)
    try:
        lhs = _vdot(ct, jvp(f, args, v)[1])
    except (RuleNotImplementedError, OpaqueFunctionError):
        if transpose_identity:
            raise
        return  # reverse mode only, for a function forward mode cannot differentiate
    _close("transpose identity ⟨c, jvp(v)⟩ = ⟨vjp(c), v⟩", rhs, lhs, 1e-10, 1e-9, order)


def check_grads(f, args, order=2, modes=("fwd", "rev"), eps=1e-5, atol=1e-6, rtol=1e-5,
                seed=0):
    """Check f's derivatives at `args` (a tuple) in the given modes, recursively to `order`.
    Raises AssertionError naming the check, the order and the error. Tolerances are for
    float64; a rule that is off by 0.1% fails. Reverse mode is also checked against forward
    mode (the transpose identity); with `modes=("rev",)` that check is left out where forward
    mode cannot differentiate the function (a missing rule, an opaque callback), so that, as
    JAX's, a reverse-only check needs no forward mode."""
    args = tuple(args)
    rng = np.random.default_rng(seed)

    def check(f, order_now):
        v = _random_like(args, rng)
        out = f(*args)
        ct = _random_like(out, rng)
        if "fwd" in modes:
            check_jvp(f, args, v, eps, atol, rtol, order_now)
        if "rev" in modes:
            check_vjp(f, args, v, ct, eps, atol, rtol, order_now, "fwd" in modes)
        if order_now < order:
            if "fwd" in modes:
                check(lambda *a: jvp(f, a, v)[1], order_now + 1)
            if "rev" in modes:
                check(lambda *a: vjp(f, *a)[1](ct), order_now + 1)
    check(f, 1)


def check_jet(f, args, order=5, rtol=1e-9, atol=1e-12, seed=0):
    """Check Taylor mode: `jet(f)` along the line args + t v (a random direction v) against
    `order` nested `jvp`s, term by term (term k is the k-th derivative along v). Raises
    AssertionError naming the first term that differs. The nested jvps are exact
    derivatives of the same rules by another road (each order from the JVP rules alone), so
    the tolerance is rounding error: a jet rule wrong in any coefficient fails."""
    args = tuple(args)
    v = _random_like(args, np.random.default_rng(seed))
    zeros = tree_map(lambda x: np.zeros_like(np.asarray(x)), v)
    _, terms = jet(f, args, tuple((vi,) + (zi,) * (order - 1) for vi, zi in zip(v, zeros)))
    leaves = tree_flatten(terms, is_leaf=lambda t: isinstance(t, list))[0]
    g = f
    for k in range(order):
        g = (lambda h: lambda *a: jvp(h, a, v)[1])(g)
        _close(f"jet term {k + 1} vs {k + 1} nested jvps", [c[k] for c in leaves], g(*args),
               atol, rtol, k + 1)


__all__ = ["check_grads", "check_jet", "check_jvp", "check_vjp"]

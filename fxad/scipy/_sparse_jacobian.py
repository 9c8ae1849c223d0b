"""The Jacobian fxad hands SciPy's solvers (implicit integrators, least_squares): exact, and
sparse when it pays.

For a function f(x, *rest) staged as a jaxpr (an ODE's right-hand side f(y, t, *params), a
residual f(x, *params)), the pattern of ∂f/∂x is detected once (fxad.sparse, global: valid for
every x and rest) or taken from the user's `jac_sparsity`; when a column coloring needs few
colors, the Jacobian is one batched JVP per color (a compiled program computing the nonzeros)
and the solver gets a scipy.sparse matrix (BDF/Radau factor it with SuperLU, least_squares
uses LSMR). Solvers that take dense matrices only (LSODA, odeint) get the same cheap
computation, densified. Otherwise the caller uses its dense jacfwd program."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import FxadValueError
from ..ir.jaxpr import eval_jaxpr
from ..ir.staging import stage

SPARSE_MIN_STATES = 32  # below this a dense Jacobian is as cheap as anything
MAX_COLOR_FRACTION = 0.25  # sparse only when colors <= this fraction of the states


class UserPattern:
    """A user's jac_sparsity as a hashable value (it is part of the solve's cache key)."""
    __slots__ = ("matrix", "key")

    def __init__(self, pattern, shape):
        m = sp.csr_array(pattern, dtype=bool)
        if m.shape != tuple(shape):
            raise FxadValueError(f"jac_sparsity must have shape {tuple(shape)} (outputs, "
                                 f"variables), got {m.shape}")
        m.sum_duplicates()
        m.eliminate_zeros()
        m.sort_indices()
        self.matrix = m
        self.key = (m.shape, m.indptr.tobytes(), m.indices.tobytes())

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, UserPattern) and self.key == other.key


def sparse_plan(rhs, user):
    """(pattern, staged program (x, *rest) -> [nonzero values]) or None when a dense
    Jacobian is the better choice; cached on the (interned) program."""
    key = ("sparse jacobian", user)
    hit = rhs.cache.get(key, _MISSING)
    if hit is _MISSING:
        hit = rhs.cache[key] = _plan(rhs, user)
    return hit


_MISSING = object()


def _plan(rhs, user):
    from ..sparse import color_columns, jacfwd as sparse_jacfwd
    from ..sparse.detect import pattern_of_program
    n = rhs.in_avals[0].shape[0]
    if user is not None:
        pattern = user.matrix
    else:
        if n < SPARSE_MIN_STATES:
            return None
        pattern = sp.csr_array(pattern_of_program(rhs)[0][:, :n])
        if int(color_columns(pattern).max(initial=-1)) + 1 > MAX_COLOR_FRACTION * n:
            return None

    def values(x, *rest):
        f = lambda x_: eval_jaxpr(rhs.jaxpr, rhs.consts, x_, *rest)[0]  # noqa: E731
        return [sparse_jacfwd(f, sparsity=pattern)(x)]
    return pattern, stage(values, rhs.in_avals, name="sparse jacobian")


def sparse_jac(plan, run, params, dense):
    """jac(t, y) for SciPy's integrators from a plan and its compiled program: a scipy.sparse
    matrix, or for the dense-only integrators (`dense`) the band in LAPACK's packed form when
    the pattern is banded — `jac.band` is then (lower, upper) bandwidths, for solve_ivp's
    lband/uband and odeint's ml/mu — else a dense array."""
    values = lambda t, y: run(y, np.float64(t), *params)[0]  # noqa: E731
    band = _band(plan[0]) if dense else None
    if band is None:
        return _matrix_fn(plan, values, dense)
    lower, upper = band
    pattern = plan[0]
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    where = (upper + rows - pattern.indices, pattern.indices)
    shape = (lower + upper + 1, pattern.shape[1])

    def jac(t, y):
        packed = np.zeros(shape)
        packed[where] = np.asarray(values(t, y), dtype=np.float64)
        return packed
    jac.band = band
    return jac


def _band(pattern):
    """(lower, upper) bandwidths when the band is narrow enough to pay, else None."""
    if pattern.nnz == 0:
        return None
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    d = rows - pattern.indices
    lower, upper = max(int(d.max()), 0), max(int(-d.min()), 0)
    return (lower, upper) if lower + upper + 1 <= MAX_COLOR_FRACTION * pattern.shape[0] else None


def sparse_jac_of_x(plan, run, params):
    """jac(x) for least_squares."""
    return _matrix_fn(plan, lambda x: run(np.asarray(x, np.float64), *params)[0], False)


def _matrix_fn(plan, values, dense):
    pattern, _ = plan
    indices, indptr, shape = pattern.indices, pattern.indptr, pattern.shape

    def jac(*a):
        vals = np.asarray(values(*a), dtype=np.float64)
        # the solver (and, through its result, the user) gets index arrays of its own: an
        # in-place eliminate_zeros() on one must not rewrite the cached pattern
        m = sp.csr_matrix((vals, indices.copy(), indptr.copy()), shape=shape)
        return m.toarray() if dense else m
    return jac


def sparse_hessian_plan(objective):
    """For a scalar objective f(x, *rest) staged as a jaxpr: (pattern, staged program
    (x, *rest) -> [Hessian nonzeros in x]) when a star coloring needs few colors, else None.
    The pattern is the Jacobian pattern in x of the staged gradient program, the rest being
    inputs of the program (so it holds for every value of them), made symmetric."""
    key = ("sparse hessian",)
    hit = objective.cache.get(key, _MISSING)
    if hit is _MISSING:
        hit = objective.cache[key] = _hessian_plan(objective)
    return hit


def _hessian_plan(objective):
    from ..api import grad
    from ..sparse import hessian as sparse_hessian, star_color
    from ..sparse.detect import pattern_of_program
    n = objective.in_avals[0].shape[0]
    if n < SPARSE_MIN_STATES:
        return None

    def value(x, *rest):
        return eval_jaxpr(objective.jaxpr, objective.consts, x, *rest)[0]
    grad_program = stage(lambda x, *rest: [grad(value)(x, *rest)], objective.in_avals,
                         name="gradient")
    p = sp.csr_array(pattern_of_program(grad_program)[0][:, :n])
    p = sp.csr_array(p + p.T, dtype=bool)
    p.sort_indices()
    if int(star_color(p).max(initial=-1)) + 1 > MAX_COLOR_FRACTION * n:
        return None

    def values(x, *rest):
        return [sparse_hessian(lambda y: value(y, *rest), sparsity=p)(x)]
    return p, stage(values, objective.in_avals, name="sparse hessian")

"""The Jacobian fxad hands SciPy's implicit integrators: exact, and sparse when it pays.

For a right-hand side f(y, t, *params) staged as a jaxpr, the pattern of ∂f/∂y is detected
once (fxad.sparse, global: valid for every y, t and params) or taken from the user's
`jac_sparsity`; when a column coloring needs few colors, the Jacobian is one batched JVP per
color (a compiled program computing the nonzeros) and BDF/Radau get a scipy.sparse matrix
(they then factor with SuperLU). LSODA and odeint take dense matrices: they get the same
cheap computation, densified. Otherwise the dense jacfwd program is used."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...errors import FxadValueError
from ...ir.jaxpr import eval_jaxpr
from ...ir.staging import stage

SPARSE_MIN_STATES = 32  # below this a dense Jacobian is as cheap as anything
MAX_COLOR_FRACTION = 0.25  # sparse only when colors <= this fraction of the states


class UserPattern:
    """A user's jac_sparsity as a hashable value (it is part of the solve's cache key)."""
    __slots__ = ("matrix", "key")

    def __init__(self, pattern, n):
        m = sp.csr_array(pattern, dtype=bool)
        if m.shape != (n, n):
            raise FxadValueError(f"jac_sparsity must have shape {(n, n)} for a state of {n}, "
                                 f"got {m.shape}")
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
    """(pattern, staged program (y, t, *params) -> [nonzero values]) or None when a dense
    Jacobian is the better choice; cached on the right-hand side."""
    key = ("ode sparse jacobian", user)
    hit = rhs.cache.get(key, _MISSING)
    if hit is _MISSING:
        hit = rhs.cache[key] = _plan(rhs, user)
    return hit


_MISSING = object()


def _plan(rhs, user):
    from ...sparse import color_columns, jacfwd as sparse_jacfwd
    from ...sparse.detect import pattern_of_program
    n = rhs.in_avals[0].shape[0]
    if user is not None:
        pattern = user.matrix
    else:
        if n < SPARSE_MIN_STATES:
            return None
        pattern = sp.csr_array(pattern_of_program(rhs)[0][:, :n])
        if int(color_columns(pattern).max(initial=-1)) + 1 > MAX_COLOR_FRACTION * n:
            return None

    def values(y, t, *p):
        f = lambda y_: eval_jaxpr(rhs.jaxpr, rhs.consts, y_, t, *p)[0]  # noqa: E731
        return [sparse_jacfwd(f, sparsity=pattern)(y)]
    return pattern, stage(values, rhs.in_avals, name="ode sparse jacobian")


def sparse_jac(plan, run, params, dense):
    """jac(t, y) for SciPy from a plan and its compiled program."""
    pattern, _ = plan
    indices, indptr, shape = pattern.indices, pattern.indptr, pattern.shape

    def jac(t, y):
        vals = np.asarray(run(y, np.float64(t), *params)[0], dtype=np.float64)
        m = sp.csr_matrix((vals, indices, indptr), shape=shape)
        return m.toarray() if dense else m
    return jac

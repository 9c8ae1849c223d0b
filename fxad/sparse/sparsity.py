"""jacobian_sparsity and hessian_sparsity: the global (input-value independent) patterns of a
function's derivatives, from the detector in fxad/sparse/detect.py."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from .. import extend as fe
from ..api import grad, make_jaxpr
from .. import numpy as fnp
from ..errors import FxadTypeError
from .detect import is_float_aval, pattern_of_program

__all__ = ["jacobian_sparsity", "hessian_sparsity", "pattern_at"]


def jacobian_sparsity(f: Callable, *args: Any) -> sp.csr_array:
    """The sparsity pattern of the Jacobian of `f` at arguments of the shapes and dtypes of
    `args`, as a boolean `scipy.sparse.csr_array` of shape (outputs, inputs): rows are the
    elements of all of f's outputs (pytree leaves in order, each in C order), columns the
    elements of all float arguments (leaves in order; integer and boolean arguments have no
    columns).

    Global and conservative: an entry is False only if that output element does not depend
    on that input element for *any* input values, so the pattern contains every nonzero of
    every Jacobian of f. It over-approximates where the program's structure depends on
    values it only knows when it runs: both branches of `cond`, loop bodies iterated to a
    fixed point (every iteration counted as every other), cumulative sums (each element on
    its whole line), indexing by traced indices (every element of the operand), and
    primitives no rule knows (every output element on every input element). Indexing with
    constants (slices, index arrays the program builds from constants) is exact. Unlike
    JAX's `jax.jacfwd` it never evaluates derivatives: only the program's structure."""
    closed = make_jaxpr(f)(*args)
    return pattern_of_program(closed)[0]


def pattern_at(f: Callable, aval) -> sp.csr_array:
    """The Jacobian pattern of a function of one array `f(x) -> array` at the abstract value
    `aval` (a ShapedArray or anything with shape and dtype): what fxad.sparse.jacfwd and
    jacrev use, also under a transformation."""
    aval = fe.ShapedArray(tuple(aval.shape), np.dtype(aval.dtype))
    if not is_float_aval(aval):
        raise FxadTypeError(f"sparse derivatives need a float argument, got {aval.str_short()}")
    closed = fe.stage(lambda x: [fnp.asarray(f(x))], [aval], name="sparsity")
    return pattern_of_program(closed)[0]


def hessian_sparsity(f: Callable, *args: Any) -> sp.csr_array:
    """The sparsity pattern of the Hessian of a scalar `f` with respect to all its arguments
    (every leaf must be a float array; the Hessian's rows and columns are their elements in
    order), as a symmetric boolean `scipy.sparse.csr_array`. It is the Jacobian pattern of
    the gradient program (fxad.grad of f), with the over-approximations
    `jacobian_sparsity` lists, made symmetric. Where the gradient cannot be staged (reverse
    mode through a `while_loop` of unknown trip count) it falls back to PᵀP for f's Jacobian
    pattern P (i and j both reach f's output): valid, coarser."""
    argnums = tuple(range(len(args)))
    try:
        p = jacobian_sparsity(lambda *a: grad(f, argnums=argnums)(*a), *args)
    except FxadTypeError:
        j = jacobian_sparsity(f, *args)
        p = sp.csr_array(j.T.astype(np.int64) @ j.astype(np.int64), dtype=bool)
    p = sp.csr_array(p + p.T, dtype=bool)
    p.sort_indices()
    return p

"""Reductions with JAX's lax signatures: argmax/argmin with an index dtype, reduce_and/or,
and running reductions along an axis with `reverse`."""
from __future__ import annotations

import numpy as np

from ..core import ShapedArray
from ..errors import FxadValueError
from ..ir.staging import stage
from ..rules import ops
from ..rules.helpers import dtype_of
from ._axes import _axis, _ndim


def _arg(op, operand, axis, index_dtype, keepdims):
    if isinstance(index_dtype, (bool, np.bool_)):  # the (x, axis, keepdims) form of ops.argmax
        index_dtype, keepdims = None, bool(index_dtype)
    out = op(operand, axis, keepdims)
    return out if index_dtype is None else ops.convert_element_type(out, index_dtype)


def argmax(operand, axis, index_dtype=None, keepdims=False):
    """JAX's signature: the third argument is the index dtype (default intp); a bool there
    is taken as keepdims (the primitive's own (x, axis, keepdims) form)."""
    return _arg(ops.argmax, operand, axis, index_dtype, keepdims)


def argmin(operand, axis, index_dtype=None, keepdims=False):
    """The index of the smallest element along `axis` (the first among ties), as JAX's
    `lax.argmin`; an integer result, so not differentiable."""
    return _arg(ops.argmin, operand, axis, index_dtype, keepdims)


def _running(op, operand, axis, reverse):
    axis = _axis(axis, _ndim(operand), f"{op.__name__}: axis")
    if not reverse:
        return op(operand, axis)
    return ops.flip(op(ops.flip(operand, (axis,)), axis), (axis,))


def cumsum(operand, axis=0, reverse=False):
    """The running sum along `axis` (from the end if `reverse`); differentiable to any order in
    forward and reverse mode."""
    return _running(ops.cumsum, operand, axis, reverse)


def cumprod(operand, axis=0, reverse=False):
    """The running product along `axis` (from the end if `reverse`); differentiable to any order
    in forward and reverse mode, zeros included."""
    return _running(ops.cumprod, operand, axis, reverse)


def cummax(operand, axis=0, reverse=False):
    """The running maximum along `axis` (from the end if `reverse`); differentiable to any order
    in forward and reverse mode, the derivative going to the element that holds the maximum."""
    return _running(ops.cummax, operand, axis, reverse)


def cummin(operand, axis=0, reverse=False):
    """The running minimum along `axis` (from the end if `reverse`); differentiable to any order
    in forward and reverse mode, the derivative going to the element that holds the minimum."""
    return _running(ops.cummin, operand, axis, reverse)


def cumlogsumexp(operand, axis=0, reverse=False):
    """log(cumsum(exp(operand))) along `axis` without overflow (from the end if `reverse`);
    differentiable to any order in forward and reverse mode."""
    return _running(ops.cumlogsumexp, operand, axis, reverse)


def reduce_and(operand, axes):
    """Whether every element is true along `axes`; boolean."""
    return ops.eq(ops.reduce_sum(ops.convert_element_type(ops.logical_not(operand), np.int64),
                                 tuple(axes)), 0)


def reduce_or(operand, axes):
    """Whether any element is true along `axes`; boolean."""
    return ops.ne(ops.reduce_sum(ops.convert_element_type(ops.ne(operand, 0), np.int64),
                                 tuple(axes)), 0)


# The monoids `reduce` recognizes: the primitive the computation must be, the reduction that
# does its work, and whether it applies only to booleans.
_MONOIDS = {
    "add": (ops.reduce_sum, False), "mul": (ops.reduce_prod, False),
    "max": (ops.reduce_max, False), "min": (ops.reduce_min, False),
    "logical_and": (reduce_and, True), "logical_or": (reduce_or, True),
    "bitwise_and": (reduce_and, True), "bitwise_or": (reduce_or, True)}


def _monoid(computation, dtype):
    """The name of the one primitive `computation(a, b)` applies to its two scalar arguments,
    or None when it is anything else."""
    scalar = ShapedArray((), dtype)
    try:
        jaxpr = stage(lambda a, b: [computation(a, b)], [scalar, scalar],
                      name="lax.reduce computation").jaxpr
    except Exception:  # not traceable as (scalar, scalar) -> scalar: not a recognized monoid
        return None
    if len(jaxpr.eqns) != 1 or len(jaxpr.outvars) != 1:
        return None
    eqn = jaxpr.eqns[0]
    if (eqn.params or list(eqn.outvars) != list(jaxpr.outvars)
            or sorted(map(id, eqn.invars)) != sorted(map(id, jaxpr.invars))):
        return None
    return eqn.primitive.name


def reduce(operands, init_values, computation, dimensions):
    """Reduce `operands` over `dimensions` with the binary `computation`, starting from
    `init_values`, as JAX's `lax.reduce` for one operand and a computation that is one of the
    monoids JAX recognizes: addition, multiplication, maximum, minimum (any dtype), and
    logical/bitwise and and or (booleans). `init_values` need not be the identity: the result
    is computation(init, reduction), as XLA's reduce gives. The result keeps the operand's dtype
    (integer sums wrap as in JAX) and is differentiable as the matching fxad reduction (and in
    the initial value). Anything else (several operands, another computation) raises
    FxadValueError naming what is supported: write the reduction with `fxad.lax.reduce_sum`,
    `fxad.lax.scan`, ... instead."""
    from ..tree_util import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if len(leaves) != 1 or len(inits) != 1:
        raise FxadValueError(
            f"lax.reduce: fxad reduces one operand at a time (got {len(leaves)} operands and "
            f"{len(inits)} initial values); reduce each separately, or write a variadic "
            "reduction (argmax-like) with fxad.lax.argmax or fxad.lax.scan")
    x, init = leaves[0], inits[0]
    dtype = np.dtype(dtype_of(x))
    name = _monoid(computation, dtype)
    if name not in _MONOIDS or (_MONOIDS[name][1] and dtype != np.bool_):
        found = "a computation of several operations" if name is None else f"'{name}'"
        raise FxadValueError(
            f"lax.reduce: the computation is {found} on {dtype}; fxad recognizes add, mul, "
            "max and min (any dtype) and and/or (bool) as one lax operation on its two "
            "arguments (e.g. lax.add, operator.mul, lambda a, b: lax.max(a, b))")
    axes = tuple(sorted(_axis(d, _ndim(x), "lax.reduce: dimension") for d in dimensions))
    if len(set(axes)) != len(axes):
        raise FxadValueError(f"lax.reduce: repeated dimension in {tuple(dimensions)}")
    out = _MONOIDS[name][0](x, axes)
    if dtype_of(out) != dtype:  # (NumPy sums small integers in int64; JAX's wrap in place)
        out = ops.convert_element_type(out, dtype)
    out = computation(ops.convert_element_type(init, dtype), out)
    return tree_unflatten(tree, [out])


__all__ = ["reduce", "argmax", "argmin", "reduce_and", "reduce_or", "cumsum", "cumprod", "cummax", "cummin",
           "cumlogsumexp"]

"""Reductions with JAX's lax signatures: argmax/argmin with an index dtype, reduce_and/or,
and running reductions along an axis with `reverse`."""
from __future__ import annotations

import numpy as np

from ..rules import ops
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


__all__ = ["argmax", "argmin", "reduce_and", "reduce_or", "cumsum", "cumprod", "cummax", "cummin",
           "cumlogsumexp"]

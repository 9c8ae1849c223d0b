"""Products with JAX's lax signatures (dot, dot_general, batch_matmul), all on the one
dot_general primitive."""
from __future__ import annotations

from ..rules import ops
from ._axes import _ndim


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None):
    """Vector/matrix products contracting lhs's last axis with rhs's first (or
    `dimension_numbers`); `precision` is accepted (NumPy always computes in full)."""
    if dimension_numbers is None:
        dimension_numbers = (((_ndim(lhs) - 1,), (0,)), ((), ()))
    out = ops.dot_general(lhs, rhs, dimension_numbers)
    return out if preferred_element_type is None else \
        ops.convert_element_type(out, preferred_element_type)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    out = ops.dot_general(lhs, rhs, dimension_numbers)
    return out if preferred_element_type is None else \
        ops.convert_element_type(out, preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    nd = _ndim(lhs)
    batch = tuple(range(nd - 2))
    return ops.dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)))


__all__ = ["dot", "dot_general", "batch_matmul"]

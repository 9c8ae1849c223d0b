"""Elementwise functions of JAX's lax beyond one-primitive wrappers (square, reciprocal,
select_n, clamp) and JAX's spellings of primitives fxad names as NumPy does (acos, atan2,
is_finite, ...)."""
from __future__ import annotations

import numpy as np

from ..errors import FxadValueError
from ..rules import ops
from ..rules.helpers import dtype_of, shape_of
from ..rules.ops import (  # noqa: F401  (lax spells them differently)
    arccos as acos, arccosh as acosh, arcsin as asin, arcsinh as asinh, arctan as atan,
    arctan2 as atan2, arctanh as atanh, isfinite as is_finite)


def square(x):
    """x * x, elementwise, with NumPy broadcasting; differentiable to any order in forward and
    reverse mode."""
    return ops.integer_pow(x, 2)


def reciprocal(x):
    """1 / x, elementwise, with NumPy broadcasting; differentiable to any order in forward and
    reverse mode."""
    return ops.integer_pow(x, -1)


def select_n(which, *cases):
    """cases[which] elementwise (`which` boolean for two cases, else an integer)."""
    if not cases:
        raise FxadValueError("select_n needs at least one case")
    if len(cases) == 1:
        return cases[0]
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        out = ops.select(ops.eq(which, i) if dtype_of(which) != np.bool_ or i else
                         ops.logical_not(which), cases[i], out)
    return out


def clamp(min, x, max):  # noqa: A002  (JAX's argument names and order)
    """x clipped into [min, max]. Its derivative is x's strictly inside and the bound's at
    and beyond it (JAX gives 0 to x at the bounds too)."""
    inside = ops.logical_and(ops.gt(x, min), ops.lt(x, max))
    lo = ops.broadcast_to(ops.convert_element_type(min, dtype_of(x)), shape_of(x))
    hi = ops.broadcast_to(ops.convert_element_type(max, dtype_of(x)), shape_of(x))
    return ops.select(inside, x, ops.select(ops.le(x, min), lo, hi))


__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "is_finite", "square",
           "reciprocal", "select_n", "clamp"]

"""Axis arguments with NumPy's conventions: None for all axes, negative axes counted from the
end, checked against the rank."""
from __future__ import annotations

import builtins

import numpy as np

from ..errors import FxadValueError


def normalize_axes(axis, ndim):
    """None -> all axes; an int or tuple -> sorted, non-negative, checked."""
    if axis is None:
        return tuple(range(ndim))
    if type(axis) is int and 0 <= axis < ndim:  # the common case
        return (axis,)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < builtins.max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise FxadValueError(f"axis {a} is out of bounds for an array of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise FxadValueError(f"repeated axis in {axis}")
    return tuple(sorted(out)) if ndim else ()

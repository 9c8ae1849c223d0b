"""Axis arguments of fxad.lax's functions: ranks and negative axes, checked with a message
naming the function."""
from __future__ import annotations

import builtins

from ..errors import FxadValueError
from ..rules.helpers import shape_of


def _ndim(x):
    return len(shape_of(x))


def _axis(axis, nd, what="axis"):
    if not -nd <= axis < builtins.max(nd, 1):
        raise FxadValueError(f"{what} {axis} is out of range for an array of rank {nd}")
    return axis % nd if nd else 0

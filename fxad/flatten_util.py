"""ravel_pytree: a pytree of arrays as one flat vector, and the function that undoes it."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import numpy as fnp
from .core import get_aval
from .errors import FxadValueError
from .tree_util import tree_flatten, tree_unflatten


def ravel_pytree(pytree: Any) -> tuple[Any, Callable]:
    """(flat, unravel): `flat` is every leaf raveled and concatenated, in the leaves' common
    dtype; `unravel(flat)` rebuilds the tree with each leaf's shape and dtype. Both are
    differentiable (concatenation and slices), so optimizers written for vectors work on
    parameter trees."""
    leaves, tree = tree_flatten(pytree)
    avals = [get_aval(x) for x in leaves]
    dtype = np.result_type(*[a.dtype for a in avals]) if avals else np.dtype(np.float64)
    sizes = [a.size for a in avals]
    flat = fnp.concatenate([fnp.ravel(fnp.asarray(x, dtype)) for x in leaves]) if leaves \
        else np.zeros(0, dtype)
    total = sum(sizes)

    def unravel(v):
        a = get_aval(v)
        if a.shape != (total,):
            raise FxadValueError(f"unravel expects a vector of shape ({total},), got "
                                 f"{a.shape}")
        out, start = [], 0
        for av, n in zip(avals, sizes):
            piece = fnp.reshape(v[start:start + n], av.shape)
            out.append(piece if av.dtype == a.dtype else fnp.asarray(piece, av.dtype))
            start += n
        return tree_unflatten(tree, out)
    return flat, unravel


__all__ = ["ravel_pytree"]

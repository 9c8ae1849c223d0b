"""Sorting (JAX's lax signatures): sort by one or several keys, sort_key_val, top_k. Values
carry derivatives through a gather; the order itself has none."""
from __future__ import annotations

import numpy as np

from ..errors import FxadValueError
from ..rules import ops
from ..rules.helpers import shape_of
from ._axes import _axis, _ndim


def _take(x, perm, axis):
    nd = _ndim(x)
    idx = [np.arange(n).reshape(tuple(n if j == i else 1 for j in range(nd)))
           for i, n in enumerate(shape_of(x))]
    idx[axis] = perm
    return ops.getitem(x, tuple(idx))


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort along `dimension`; with several operands, all are permuted by the order of the
    first `num_keys` (lexicographic, the first key primary). Sorting is always stable here.
    Values carry derivatives (a gather); the order itself has none."""
    single = not isinstance(operand, (tuple, list))
    ops_ = [operand] if single else list(operand)
    if not 1 <= num_keys <= len(ops_):
        raise FxadValueError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                             f"operands ({len(ops_)})")
    if any(shape_of(o) != shape_of(ops_[0]) for o in ops_):
        raise FxadValueError("sort: every operand must have the same shape")
    if not shape_of(ops_[0]):
        return operand
    axis = _axis(dimension, _ndim(ops_[0]), "dimension")
    perm = ops.argsort(ops_[0], axis) if num_keys == 1 else ops.lexsort(*ops_[:num_keys],
                                                                       axis=axis)
    out = [_take(o, perm, axis) for o in ops_]
    return out[0] if single else tuple(out)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """(keys sorted along `dimension`, values permuted the same way), stable by default;
    differentiable in keys and values (through the permutation)."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


def top_k(operand, k, *, axis=-1):
    """(values, indices) of the k largest along `axis`, largest first (ties in index order;
    NaN counts as largest, as in np.sort)."""
    nd = _ndim(operand)
    axis = _axis(axis, nd)
    if axis == nd - 1:
        return tuple(ops.top_k(operand, k))
    perm = tuple(i for i in range(nd) if i != axis) + (axis,)
    back = tuple(np.argsort(perm))
    v, i = ops.top_k(ops.transpose(operand, perm), k)
    return ops.transpose(v, back), ops.transpose(i, back)


__all__ = ["sort", "sort_key_val", "top_k"]

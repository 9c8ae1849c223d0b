"""NumPy's index helpers: r_, c_ (joining arrays, traced ones too), s_, index_exp, mgrid,
ogrid, ix_."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..core import Tracer
from ..errors import FxadValueError
from ..rules.helpers import shape_of
from .creation import asarray
from .manipulation import concatenate


def _has_tracer(items):
    return any(isinstance(i, Tracer) for i in items)


class _Concatenator:
    """`r_[...]` / `c_[...]`, NumPy's rules for traced pieces too: slices become aranges (or
    linspaces, for a complex step), every piece gets at least `ndmin` dimensions (a 1-d one
    placed along `trans1d`), numbers take part in the dtype as NumPy's weak scalars, and the
    pieces are joined along `axis`. A leading string sets 'axis[,ndmin[,trans1d]]'; the
    matrix directives 'r' and 'c' need a matrix type fxad does not have."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        if items and isinstance(items[0], str) and items[0] in ("r", "c"):
            raise FxadValueError("r_/c_: the 'r' and 'c' matrix directives are not supported "
                                 "(fxad has no matrix type)")
        if not _has_tracer(items):
            return asarray((np.r_ if self.trans1d == -1 else np.c_)[key])
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        pieces, kinds = [], []
        for k, it in enumerate(items):
            if isinstance(it, str):
                if k != 0:
                    raise FxadValueError("special directives must be the first entry.")
                parts = [int(p) for p in it.split(",")]
                axis = parts[0]
                if len(parts) > 1:
                    ndmin = parts[1]
                if len(parts) > 2:
                    trans1d = parts[2]
                continue
            if type(it) in np.ScalarType:  # a number: NumPy's weak scalar, no trans1d
                pieces.append(("scalar", it))
                kinds.append(it)
                continue
            if isinstance(it, slice):
                a, nd = asarray(np.r_[it]), 1
            else:
                a, nd = asarray(it), np.ndim(it) if not isinstance(it, Tracer) else it.ndim
            a = _at_least(a, ndmin)
            if trans1d != -1 and nd < ndmin:
                k2, k1 = ndmin - nd, trans1d
                if k1 < 0:
                    k1 += k2 + 1
                order = list(range(ndmin))
                a = lax.transpose(a, tuple(order[:k1] + order[k2:] + order[k1:k2]))
            pieces.append(("array", a))
            kinds.append(a.dtype)
        dtype = np.result_type(*kinds)
        arrays = [_at_least(asarray(v, dtype=dtype), ndmin) for _, v in pieces]
        return concatenate(arrays, axis)


def _at_least(a, ndmin):
    """a with leading length-1 axes up to ndmin dimensions (np.array's ndmin=)."""
    nd = len(shape_of(a))
    return a if nd >= ndmin else lax.reshape(a, (1,) * (ndmin - nd) + tuple(shape_of(a)))


r_ = _Concatenator(0, 1, -1)
c_ = _Concatenator(-1, 2, 0)
s_ = np.s_
index_exp = np.index_exp
mgrid = np.mgrid
ogrid = np.ogrid


def ix_(*args):
    """Open-mesh index arrays: the k-th has shape (1, ..., n_k, ..., 1) (traced ones too)."""
    n = len(args)
    out = []
    for k, a in enumerate(args):
        a = asarray(a)
        if a.ndim != 1:
            raise FxadValueError("ix_: cross index must be 1 dimensional")
        if a.dtype == np.bool_:
            a = np.nonzero(np.asarray(a))[0] if not isinstance(a, Tracer) else a
        out.append(lax.reshape(a, tuple(shape_of(a)[0] if j == k else 1 for j in range(n))))
    return tuple(out)


__all__ = ["r_", "c_", "s_", "index_exp", "mgrid", "ogrid", "ix_"]

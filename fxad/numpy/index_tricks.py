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
    """`r_[...]` / `c_[...]`: slices become aranges (or linspaces, for a complex step),
    arrays and numbers are joined along `axis` (r_: 0; c_: the last, 1-d ones as columns).
    A leading string sets the axis ('1'), or 'r'/'c' for matrices, as NumPy's."""

    def __init__(self, axis, columns):
        self.axis, self.columns = axis, columns

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, columns = self.axis, 1, self.columns
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive in ("r", "c"):
                raise FxadValueError("r_/c_: the 'r' and 'c' matrix directives are not "
                                     "supported (fxad has no matrix type)")
            parts = [int(p) for p in directive.split(",")]
            axis = parts[0]
            ndmin = parts[1] if len(parts) > 1 else 1
            columns = False
        if not _has_tracer(items) and not any(isinstance(i, Tracer) for i in items):
            out = (np.c_ if self.columns and columns else np.r_)[key]
            return asarray(out)
        arrays = []
        for it in items:
            if isinstance(it, slice):
                it = np.r_[it]
            a = asarray(it)
            while a.ndim < ndmin:
                a = lax.reshape(a, (1,) + tuple(shape_of(a))) if not columns else \
                    lax.reshape(a, tuple(shape_of(a)) + (1,))
            if columns and a.ndim == 1:
                a = lax.reshape(a, (shape_of(a)[0], 1))
            arrays.append(a)
        if columns:
            return concatenate(arrays, -1)
        return concatenate(arrays, axis)


r_ = _Concatenator(0, False)
c_ = _Concatenator(-1, True)
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

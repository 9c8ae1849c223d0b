"""mode, rankdata, sem with SciPy's signatures. rankdata's ranks and mode's position are
piecewise constant (primitives with zero derivatives, fxad/rules/special/piecewise_stats.py); mode's value
is gathered from the data, so its derivative flows to the first occurrence of the mode."""
from __future__ import annotations

from collections import namedtuple

from ... import lax
from ... import numpy as fnp
from ...errors import FxadValueError
from ...rules.special.piecewise_stats import mode_index, rankdata as _rankdata
from ._common import f

ModeResult = namedtuple("ModeResult", ["mode", "count"])

_METHODS = ("average", "min", "max", "dense", "ordinal")


def _propagate(name, nan_policy):
    if nan_policy != "propagate":
        raise FxadValueError(f"{name}: only nan_policy='propagate' is supported; remove NaNs "
                             "first (fxad.numpy.where) for the other policies")


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks of the data, 1 for the smallest, ties by `method` ("average", "min", "max",
    "dense", "ordinal"), as `scipy.stats.rankdata`. Ranks are piecewise constant in the data:
    their derivative is 0."""
    _propagate("rankdata", nan_policy)
    if method not in _METHODS:
        raise FxadValueError(f"rankdata: unknown method {method!r}; use one of {_METHODS}")
    a = fnp.asarray(a)
    if axis is not None:
        axis = int(axis) % max(len(fnp.shape(a)), 1)
    return _rankdata(a, method, axis)


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most frequent value along axis and its count (the smallest value among ties), as
    `scipy.stats.mode`."""
    _propagate("mode", nan_policy)
    a = fnp.asarray(a)
    if axis is None:
        a, axis = fnp.ravel(a), 0
    nd = len(fnp.shape(a))
    if nd == 0:
        a, nd = fnp.reshape(a, (1,)), 1
    axis = int(axis) % nd
    idx = mode_index(a, axis)
    value = fnp.take_along_axis(a, idx, axis)
    count = fnp.sum(lax.eq(a, lax.stop_gradient(value)), axis=axis, keepdims=True)
    if not keepdims:
        value, count = fnp.squeeze(value, axis=axis), fnp.squeeze(count, axis=axis)
    return ModeResult(value, count)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean: std(a, ddof) / sqrt(n)."""
    _propagate("sem", nan_policy)
    a = f(a)
    if axis is None:
        a, axis = fnp.ravel(a), 0
    n = fnp.shape(a)[axis]
    return lax.div(fnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims), float(n) ** 0.5)


__all__ = ["mode", "rankdata", "sem", "ModeResult"]

"""scipy.ndimage.map_coordinates for order 0 (nearest sample) and 1 (linear), JAX's orders,
with SciPy's modes and their meanings (notes/07_differences.md: JAX's 'constant' and 'wrap'
are SciPy's 'grid-constant' and 'grid-wrap').

The value at a point is a weighted sum of samples at integer indices near it: the indices
are mapped into the array by the mode (clamped, reflected, mirrored or wrapped), or read as
`cval` outside it ('grid-constant'), and the weights are the linear interpolation's, so the
result is differentiable in the input and (order 1) in the coordinates, and batches and
stages like any composite.
"""
from __future__ import annotations

import itertools

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..errors import FxadValueError

_MODES = ("constant", "nearest", "wrap", "mirror", "reflect", "grid-constant", "grid-wrap",
          "grid-mirror")


def _index(i, n, mode):
    """Integer sample indices i (an int array) mapped into [0, n) by the mode."""
    if mode in ("nearest", "constant", "wrap", "grid-constant"):  # (the last two: in range)
        return fnp.clip(i, 0, n - 1)
    if mode in ("reflect", "grid-mirror"):  # d c b a | a b c d | d c b a
        i = fnp.mod(i, 2 * n)
        return fnp.where(i >= n, 2 * n - 1 - i, i)
    if mode == "mirror":  # d c b | a b c d | c b a
        if n == 1:
            return fnp.zeros_like(i)
        i = fnp.mod(i, 2 * (n - 1))
        return fnp.where(i >= n, 2 * (n - 1) - i, i)
    return fnp.mod(i, n)  # grid-wrap


def _fold(c, n):
    """SciPy's 'wrap': a coordinate outside [0, n - 1] moved into it by whole periods of
    n - 1 (SciPy's own convention; 'grid-wrap' is periodic with period n)."""
    if n == 1:
        return fnp.zeros_like(c)
    p = n - 1
    up = c + p * fnp.ceil(-c / p)
    down = c - p * fnp.ceil((c - p) / p)
    return fnp.where(c < 0, up, fnp.where(c > p, down, c))


def corner_weight(weights):
    """The product of a stencil corner's per-axis weights (None standing for 1), or None when
    every one is 1 (a nearest-sample stencil). RegularGridInterpolator shares it."""
    out = None
    for w in weights:
        if w is not None:
            out = w if out is None else out * w
    return out


def _round_half_away(v):
    return fnp.sign(v) * fnp.floor(fnp.abs(v) + 0.5)


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0, output=None,
                    prefilter=True):
    """The input's values at `coordinates` (one array of positions per input axis, all of
    one shape, the result's), by the nearest sample (order=0) or linear interpolation
    (order=1), SciPy's `mode` ('constant', 'nearest', 'wrap', 'mirror', 'reflect',
    'grid-constant', 'grid-wrap', 'grid-mirror') deciding what lies beyond the edges.
    Integer inputs give rounded integer results, as SciPy's. `prefilter` is moot for these
    orders; `output` must be None (the result is returned)."""
    if order not in (0, 1):
        raise FxadValueError(f"map_coordinates: order must be 0 or 1 (as in JAX), got {order!r}")
    if mode not in _MODES:
        raise FxadValueError(f"map_coordinates: mode must be one of {list(_MODES)}, got "
                             f"{mode!r}")
    if output is not None:
        raise FxadValueError("map_coordinates: output= is not supported; the result is "
                             "returned")
    x = fnp.asarray(input)
    shape = fnp.shape(x)
    coords = [fnp.asarray(c) for c in coordinates]
    if len(coords) != len(shape):
        raise FxadValueError(f"map_coordinates: {len(coords)} coordinate arrays for an input "
                             f"of {len(shape)} dimensions")
    kind = fnp.result_type(x).kind
    work = fnp.result_type(x, np.float32) if kind in "fc" else np.dtype(np.float64)
    real = np.finfo(work).dtype
    coords = [fnp.astype(c, real) if fnp.result_type(c) != real else c for c in coords]
    coords = fnp.broadcast_arrays(*coords)
    inside = None
    per_axis = []  # for each axis: [(mapped index, weight, in range)] over the stencil
    for c, n in zip(coords, shape):
        if mode == "constant":
            ok = (c >= 0) & (c <= n - 1)
            inside = ok if inside is None else inside & ok
        if mode == "wrap":
            c = _fold(c, n)
        if order == 0:
            base, stencil = lax.convert_element_type(fnp.floor(c + 0.5), np.int64), [(0, None)]
        else:
            f = fnp.floor(c)
            w = c - f
            base, stencil = lax.convert_element_type(f, np.int64), [(0, 1 - w), (1, w)]
        terms = []
        for off, w in stencil:
            i = base + off
            terms.append((_index(i, n, mode), w, (i >= 0) & (i < n)))
        per_axis.append(terms)
    out = None
    for corner in itertools.product(*per_axis):
        value = fnp.astype(x[tuple(t[0] for t in corner)], work)
        if mode == "grid-constant":
            ok = corner[0][2]
            for t in corner[1:]:
                ok = ok & t[2]
            value = fnp.where(ok, value, fnp.asarray(cval, work))
        weight = corner_weight(t[1] for t in corner)
        term = value if weight is None else value * weight
        out = term if out is None else out + term
    if inside is not None:
        out = fnp.where(inside, out, fnp.asarray(cval, work))
    if kind not in "fc":
        out = fnp.astype(_round_half_away(out), fnp.result_type(x))
    return out


__all__ = ["map_coordinates"]

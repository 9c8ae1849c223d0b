"""scipy.interpolate.RegularGridInterpolator for methods 'linear' and 'nearest' (JAX's).

The grid's points are concrete (strictly ascending or descending per axis, as SciPy's); the
values and the query points may be traced. A point's interval on each axis is found by
`searchsorted` (SciPy's choice at the grid points: the interval to the left), and its value
is the multilinear combination of the interval's corners, so the result is differentiable in
the values and in the points (piecewise linear; 'nearest' is piecewise constant).
"""
from __future__ import annotations

import itertools

import numpy as np

from .. import numpy as fnp
from ..core import Tracer
from ..errors import FxadValueError
from ..numpy.linalg import as_float
from .ndimage import corner_weight

_METHODS = ("linear", "nearest")


class RegularGridInterpolator:
    """Interpolation on a rectilinear grid in any number of dimensions, as SciPy's class:
    `RegularGridInterpolator(points, values, method, bounds_error, fill_value)(xi)`. values
    may have trailing axes beyond the grid's (the result keeps them). Outside the grid:
    bounds_error=True raises (for concrete query points; traced ones need
    bounds_error=False), else the result is fill_value, or, with fill_value=None,
    extrapolated from the edge intervals."""

    def __init__(self, points, values, method="linear", bounds_error=True, fill_value=np.nan,
                 *, solver=None, solver_args=None):
        if method not in _METHODS:
            raise FxadValueError(f"RegularGridInterpolator: method must be one of "
                                 f"{list(_METHODS)} (SciPy's others are not supported), got "
                                 f"{method!r}")
        if solver is not None or solver_args is not None:
            raise FxadValueError("RegularGridInterpolator: solver and solver_args apply to "
                                 "SciPy's spline methods only")
        values = as_float(values)
        points = tuple(points)
        if len(points) > fnp.ndim(values):
            raise FxadValueError(f"RegularGridInterpolator: {len(points)} dimensions of points "
                                 f"but values of only {fnp.ndim(values)}")
        grid = []
        for d, p in enumerate(points):
            if isinstance(p, Tracer):
                raise FxadValueError("RegularGridInterpolator: the grid's points must be "
                                     "concrete (the values and query points may be traced)")
            p = np.asarray(p, dtype=float)
            if p.ndim != 1:
                raise FxadValueError(f"RegularGridInterpolator: the points in dimension {d} "
                                     "must be 1-dimensional")
            if p.size != fnp.shape(values)[d]:
                raise FxadValueError(f"RegularGridInterpolator: there are {p.size} points "
                                     f"and {fnp.shape(values)[d]} values in dimension {d}")
            steps = np.diff(p)
            if p.size > 1 and np.all(steps < 0):  # descending: flip the axis
                p, values = p[::-1], fnp.flip(values, axis=d)
            elif not np.all(steps > 0):
                raise FxadValueError(f"RegularGridInterpolator: the points in dimension {d} "
                                     "must be strictly ascending or descending")
            grid.append(p)
        self.grid = tuple(grid)
        self.values = values
        self.method = method
        self.bounds_error = bounds_error
        self.fill_value = fill_value

    def __call__(self, xi, method=None, *, nu=None):
        """The interpolated values at the points xi (shape (..., ndim), or a tuple of ndim
        arrays that broadcast together)."""
        method = self.method if method is None else method
        if method not in _METHODS:
            raise FxadValueError(f"RegularGridInterpolator: method must be one of "
                                 f"{list(_METHODS)}, got {method!r}")
        if nu is not None:
            raise FxadValueError("RegularGridInterpolator: nu (derivatives) applies to "
                                 "SciPy's spline methods only; differentiate with fxad.grad")
        ndim = len(self.grid)
        if isinstance(xi, tuple):
            xi = fnp.stack(fnp.broadcast_arrays(*xi), axis=-1)
        xi = fnp.asarray(xi)
        if fnp.shape(xi)[-1] != ndim:
            raise FxadValueError(f"RegularGridInterpolator: the query points have dimension "
                                 f"{fnp.shape(xi)[-1]}, the grid {ndim}")
        xs = [fnp.astype(xi[..., d], np.float64) for d in range(ndim)]  # as SciPy: float64
        if self.bounds_error:
            self._check_bounds(xs)
        outside, per_axis = None, []
        for x, g in zip(xs, self.grid):
            out = (x < g[0]) | (x > g[-1])
            outside = out if outside is None else outside | out
            if g.size == 1:
                per_axis.append([(fnp.zeros_like(x, dtype=np.int64), None)])
                continue
            i = fnp.clip(fnp.searchsorted(g, x) - 1, 0, g.size - 2)
            gj = fnp.asarray(g)
            lo, hi = gj[i], gj[i + 1]
            t = (x - lo) / (hi - lo)
            if method == "nearest":
                per_axis.append([(fnp.where(t <= 0.5, i, i + 1), None)])
            else:
                per_axis.append([(i, 1 - t), (i + 1, t)])
        trailing = fnp.ndim(self.values) - ndim
        result = None
        for corner in itertools.product(*per_axis):
            term = self.values[tuple(c[0] for c in corner)]
            weight = corner_weight(w for _, w in corner)
            if weight is not None:
                term = term * fnp.reshape(weight, fnp.shape(weight) + (1,) * trailing)
            result = term if result is None else result + term
        if self.fill_value is not None:
            mask = fnp.reshape(outside, fnp.shape(outside) + (1,) * trailing)
            result = fnp.where(mask, fnp.asarray(self.fill_value, fnp.result_type(result)),
                               result)
        return result

    def _check_bounds(self, xs):
        for d, (x, g) in enumerate(zip(xs, self.grid)):
            if isinstance(x, Tracer):
                raise FxadValueError("RegularGridInterpolator: bounds_error=True needs concrete "
                                     "query points; pass bounds_error=False under jit, vmap or "
                                     "grad of the points")
            x = np.asarray(x)
            if np.any((x < g[0]) | (x > g[-1])):
                raise FxadValueError(f"RegularGridInterpolator: a query point is out of bounds "
                                     f"in dimension {d} (bounds_error=False gives fill_value)")


__all__ = ["RegularGridInterpolator"]

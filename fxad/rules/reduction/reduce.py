"""Reductions over static axes (normalized, non-negative tuples). `keepdims` is a parameter so
NumPy's keepdims costs no extra reshape."""
from __future__ import annotations

import functools
import math

import numpy as np

from ...core import Primitive, ShapedArray
from ..helpers import defbatch_unary_axes
from ...interpreters.jvp import Zero, jvp_flat
from ..helpers import defjvp_zero, deflinear, norm_axes, probe_dtype, shape_of
from .. import ops


def reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def ufunc_reduce(ufunc):
    """The impl: the ufunc's reduce, called directly. np.sum & co. are Python wrappers around
    it (~1.5 µs a call) that give the same results (the same dtypes for bool and small ints
    too)."""
    return lambda x, axes, keepdims: ufunc.reduce(x, axes, keepdims=keepdims)


def reduction(name, ufunc):
    """A reduction by a ufunc over static axes: impl and lowering are the ufunc's reduce."""
    p = Primitive(name, memory="fresh")
    p.def_impl(ufunc_reduce(ufunc))
    p.def_lowering(lambda ctx, args, axes, keepdims:
                   f"_np.{ufunc.__name__}.reduce({args[0]}, {axes!r}, keepdims={keepdims})")
    p.def_lowering(lambda ctx, args, axes, keepdims:  # loops in NumPy's order (numba_backend)
                   ctx.reduce(args[0], ufunc.__name__, axes, keepdims), backend="numba")
    p.def_abstract_eval(lambda x, axes, keepdims: ShapedArray(
        reduced_shape(x.shape, axes, keepdims),
        probe_dtype(p, [x], dict(axes=axes, keepdims=keepdims))))
    defbatch_unary_axes(p)
    return p


def expand_reduced(y, in_shape, axes, keepdims):
    """Put back the reduced axes of `y` as size-1 axes (to broadcast against the input).
    Leading axes (a full reduction, say) need none: broadcasting adds them back on the left."""
    if keepdims or axes == tuple(range(len(axes))):
        return y
    return ops.reshape(y, reduced_shape(in_shape, axes, True))


@functools.lru_cache(maxsize=512)
def _sum_plan(shape, axes, keepdims):
    """How reduce_sum adds the terms of an input of this shape. NumPy sums a trailing run of
    reduced axes pairwise (error ~ log2(n)·eps) but adds along the other reduced axes one
    term after the next (~ n·eps). None: NumPy's order, where each output adds at most 8
    terms over those other axes; else (the trailing axes, the transpose bringing the other
    reduced axes to the front or None, the (terms, ...) shape to sum over axis 0, the
    result's shape)."""
    r = len(shape)
    k = 0
    while k < r and (r - 1 - k) in axes:
        k += 1
    outer = tuple(a for a in axes if a < r - k)
    m = math.prod(shape[a] for a in outer)
    if m <= 8:
        return None
    inner = tuple(range(r - k, r))
    rest = tuple(i for i in range(r - k) if i not in outer)
    perm = None if outer == tuple(range(len(outer))) else outer + rest
    out = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keepdims else \
        tuple(shape[i] for i in rest)
    return inner, perm, (m,) + tuple(shape[i] for i in rest), out


def halving_sum(z):
    """Sum over axis 0 as a pairwise tree: rows i and i + m//2 are added, an odd last row
    goes into row m//2 - 1, until one row is left. The numba backend's tree_sum_rows adds
    in the same order."""
    m, own = z.shape[0], False
    width = z.size // m if m else 0  # elements per row
    while m > 1:
        h = m // 2
        if own and h * width >= 4096:  # large: add into our own array (fewer pages)
            s = z[:h]
            np.add(s, z[h:2 * h], out=s)
        else:  # small: a fresh array is cheaper than the overlap check of in-place views
            s = z[:h] + z[h:2 * h]
        if m & 1:
            row = s[h - 1]
            row += z[m - 1]
        z, m, own = s, h, True
    return z[0] if own and z.base is None else z[0].copy()


def _sum_impl(x, axes, keepdims):
    """np.add.reduce of the C-ordered array (NumPy follows the memory order: a transposed
    array's rows would be added one after the next), except where NumPy would add more
    than 8 terms one after the next (see _sum_plan: the batch axis of a bias gradient, the
    step axis of a scan's stacked cotangents). There the trailing run is summed by NumPy
    (pairwise) and the rest by halving_sum: float32 sums of 10^5 rows keep ~1e-7, not
    ~1e-5."""
    if not axes or x.dtype.kind not in "fc":
        return np.add.reduce(x, axes, keepdims=keepdims)
    plan = _sum_plan(x.shape, axes, keepdims)
    if plan is None:
        if len(axes) < x.ndim:
            x = np.ascontiguousarray(x)
        return np.add.reduce(x, axes, keepdims=keepdims)
    inner, perm, zshape, out = plan
    y = np.ascontiguousarray(x)
    if inner:
        y = np.add.reduce(y, inner)
    if perm is not None:
        y = np.transpose(y, perm)
    return halving_sum(y.reshape(zshape)).reshape(out)


def _sum_lowering(ctx, args, axes, keepdims):
    """The calls _sum_impl makes for this input type: NumPy's own (of a C-ordered copy
    where that matters), or those of its plan, found now."""
    a = ctx.in_avals[0]
    x = args[0]
    plan = _sum_plan(a.shape, axes, keepdims) if a.dtype.kind in "fc" and axes else None
    if plan is not None:
        inner, perm, zshape, out = plan
        y = f"_np.ascontiguousarray({x})"
        if inner:
            y = f"_np.add.reduce({y}, {inner!r})"
        if perm is not None:
            y = f"_np.transpose({y}, {perm!r})"
        return f"{ctx.name(halving_sum, 'halving_sum')}({y}.reshape({zshape!r})).reshape({out!r})"
    if a.dtype.kind in "fc" and 0 < len(axes) < len(a.shape):
        x = f"_np.ascontiguousarray({x})"
    return f"_np.add.reduce({x}, {axes!r}, keepdims={keepdims})"


reduce_sum_p = reduction("reduce_sum", np.add)
reduce_sum_p.def_impl(_sum_impl)
deflinear(reduce_sum_p, lambda ct, x, axes, keepdims: [
    ops.broadcast_to(expand_reduced(ct, x.aval.shape, axes, keepdims), x.aval.shape)])
reduce_sum_p.def_lowering(_sum_lowering)
def reduce_sum(x, axes, keepdims=False):
    """The sum along `axes` (kept as size-1 axes if keepdims); differentiable to any order in
    forward and reverse mode."""
    return reduce_sum_p.bind(x, axes=norm_axes(x, axes, 'reduce_sum'), keepdims=keepdims)


def _extremum_jvp(prim):
    """Derivative of max/min: the tangent at the extremal positions, averaged over ties."""
    def jvp(primals, tangents, axes, keepdims):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes, keepdims=keepdims)
        if type(t) is Zero:
            return ans, Zero.like(ans)
        at = ops.convert_element_type(ops.eq(x, expand_reduced(ans, shape_of(x), axes, keepdims)),
                                      ans.dtype)
        count = reduce_sum(at, axes, keepdims)
        return ans, ops.div(reduce_sum(ops.mul(t, at), axes, keepdims), count)
    prim.def_jvp(jvp)


reduce_max_p = reduction("reduce_max", np.maximum)
_extremum_jvp(reduce_max_p)
def reduce_max(x, axes, keepdims=False):
    """The largest element along `axes` (kept as size-1 axes if keepdims); differentiable to any
    order in forward and reverse mode, the derivative shared evenly among the elements equal to
    the maximum."""
    return reduce_max_p.bind(x, axes=norm_axes(x, axes, 'reduce_max'), keepdims=keepdims)


reduce_min_p = reduction("reduce_min", np.minimum)
_extremum_jvp(reduce_min_p)
def reduce_min(x, axes, keepdims=False):
    """The smallest element along `axes` (kept as size-1 axes if keepdims); differentiable to any
    order in forward and reverse mode, the derivative shared evenly among the elements equal to
    the minimum."""
    return reduce_min_p.bind(x, axes=norm_axes(x, axes, 'reduce_min'), keepdims=keepdims)


def _prod_by_halving(x):
    """prod over axis 0 as a tree of elementwise `mul`s. Differentiating this gives the
    product-of-the-others at every order, zeros in x included (no division by x)."""
    while x.shape[0] > 1:
        n = x.shape[0]
        if n % 2:
            x = ops.concatenate([x, ops.broadcast_to(np.ones((1,) * x.ndim, x.dtype),
                                                     (1,) + tuple(x.shape[1:]))], 0)
            n += 1
        x = ops.mul(ops.getitem(x, slice(0, n // 2)), ops.getitem(x, slice(n // 2, n)))
    return ops.reshape(x, tuple(x.shape[1:]))


def _reduce_prod_jvp(primals, tangents, axes, keepdims):
    (x,), (t,) = primals, tangents
    ans = reduce_prod(x, axes, keepdims)
    if type(t) is Zero:
        return ans, Zero.like(ans)
    shape = shape_of(x)
    rest = [i for i in range(len(shape)) if i not in axes]
    perm = tuple(axes) + tuple(rest)
    flat_shape = (math.prod(int(shape[a]) for a in axes),) + \
        tuple(shape[i] for i in rest)

    def flat_prod(v):
        return _prod_by_halving(ops.reshape(ops.transpose(v, perm), flat_shape))
    _, (dt,) = jvp_flat(lambda v: [flat_prod(v)], [x], [t], name="reduce_prod jvp")
    return ans, (Zero.like(ans) if type(dt) is Zero
                 else ops.reshape(dt, shape_of(ans)) if keepdims else dt)


reduce_prod_p = reduction("reduce_prod", np.multiply)
reduce_prod_p.def_jvp(_reduce_prod_jvp)
def reduce_prod(x, axes, keepdims=False):
    """The product along `axes` (kept as size-1 axes if keepdims); differentiable to any order in
    forward and reverse mode, zeros included."""
    return reduce_prod_p.bind(x, axes=norm_axes(x, axes, 'reduce_prod'), keepdims=keepdims)


def _logsumexp_impl(x, axes, keepdims):
    import scipy.special
    shape = reduced_shape(np.shape(x), axes, keepdims)
    if axes and np.ndim(x) and _sum_plan(np.shape(x), axes, False) is not None:
        # SciPy's sum of the exponentials follows memory order, one term after the next
        # along a leading axis: with the reduced axes last and contiguous it is pairwise.
        rest = tuple(i for i in range(np.ndim(x)) if i not in axes)
        x = np.ascontiguousarray(np.transpose(x, rest + axes))
        axes = tuple(range(len(rest), x.ndim))
        keepdims = False
    out = scipy.special.logsumexp(x, axis=axes, keepdims=keepdims)
    return out if np.shape(out) == shape else np.reshape(out, shape)  # SciPy: 0-d in, (1,) out


def _logsumexp_jvp(primals, tangents, axes, keepdims):
    (x,), (t,) = primals, tangents
    ans = logsumexp(x, axes, keepdims)
    if type(t) is Zero:
        return ans, Zero.like(ans)
    # softmax weights, shifted by the max: exp(x - ans) would be exp(0) = 1 at x = 1e300,
    # where ans = x + log(n) rounds to x. A slice of -inf (an empty sum) gets weights 0.
    m = ops.stop_gradient(reduce_max(x, axes, True))
    e = ops.exp(ops.sub(x, ops.select(ops.isfinite(m), m, 0.0)))
    s = reduce_sum(e, axes, True)
    w = ops.div(e, ops.select(ops.eq(s, 0), 1.0, s))
    return ans, reduce_sum(ops.mul(t, w), axes, keepdims)


# log Σ e^x over static axes: SciPy's own impl (fxad.scipy.special.logsumexp binds it when
# there is no b= and no return_sign; -inf for a slice of -inf, as SciPy).
logsumexp_p = Primitive("logsumexp", memory="fresh")
logsumexp_p.def_impl(_logsumexp_impl)
logsumexp_p.def_abstract_eval(lambda x, axes, keepdims: ShapedArray(
    reduced_shape(x.shape, axes, keepdims),
    probe_dtype(logsumexp_p, [x], dict(axes=axes, keepdims=keepdims))))
logsumexp_p.def_jvp(_logsumexp_jvp)
defbatch_unary_axes(logsumexp_p)
def logsumexp(x, axes, keepdims=False):
    return logsumexp_p.bind(x, axes=norm_axes(x, axes, 'logsumexp'), keepdims=keepdims)


def _arg_reduction(name, impl):
    p = Primitive(name, memory="fresh")
    p.def_impl(lambda x, axis, keepdims: impl(x, axis=axis, keepdims=keepdims))
    p.def_abstract_eval(lambda x, axis, keepdims: ShapedArray(
        reduced_shape(x.shape, (axis,), keepdims), np.intp))
    defjvp_zero(p)
    defbatch_unary_axes(p, "axis")
    return p


argmax_p = _arg_reduction("argmax", np.argmax)
def argmax(x, axis, keepdims=False):
    return argmax_p.bind(x, axis=norm_axes(x, (axis,), 'argmax')[0], keepdims=keepdims)


argmin_p = _arg_reduction("argmin", np.argmin)
def argmin(x, axis, keepdims=False):
    return argmin_p.bind(x, axis=norm_axes(x, (axis,), 'argmin')[0], keepdims=keepdims)


# the bind wrappers fxad.lax exports (through rules/ops.py)
__all__ = ["argmax", "argmin", "reduce_max", "reduce_min", "reduce_prod", "reduce_sum"]

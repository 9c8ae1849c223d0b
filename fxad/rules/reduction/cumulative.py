"""Cumulative reductions along one axis: cumsum (linear: its transpose is a running sum from
the other end), cumprod, and the running max, min and logsumexp, whose JVPs come from a
doubling composite."""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ..helpers import defbatch_unary_axes
from ...interpreters.jvp import Zero, jvp_flat
from ..helpers import deflinear, dtype_of, norm_axes, probe_dtype, shape_of
from .. import ops


def _cumulative(name, impl):
    p = Primitive(name, memory="fresh")
    p.def_impl(lambda x, axis: impl(x, axis=axis))
    p.def_abstract_eval(lambda x, axis: ShapedArray(x.shape, probe_dtype(p, [x], {"axis": 0})
                                                    if x.ndim else x.dtype))
    defbatch_unary_axes(p, "axis")
    return p


_BLOCK = 16


def _blocked_cumsum(x, axis):
    """np.cumsum's values with error ~ 16·log16(n)·eps instead of n·eps for float and
    complex runs past 64: running sums within blocks of 16, the blocks' offsets from the
    running sum of the blocks' totals (the same algorithm, recursively), added after. About
    two passes over the data where np.cumsum makes one."""
    n = x.shape[axis] if x.ndim else 0
    if n <= 4 * _BLOCK or x.dtype.kind not in "fc":
        return np.cumsum(x, axis=axis)
    out = np.empty(x.shape, x.dtype)
    xs, outs = np.moveaxis(x, axis, 0), np.moveaxis(out, axis, 0)
    q = n // _BLOCK
    head = outs[:q * _BLOCK].reshape((q, _BLOCK) + xs.shape[1:])
    np.cumsum(xs[:q * _BLOCK].reshape(head.shape), axis=1, out=head)
    offsets = _blocked_cumsum(np.ascontiguousarray(head[:, -1]), 0)  # running block totals
    head[1:] += offsets[:-1, None]
    if q * _BLOCK < n:  # the last, partial block
        tail = outs[q * _BLOCK:]
        np.cumsum(xs[q * _BLOCK:], axis=0, out=tail)
        tail += offsets[-1]
    return out


cumsum_p = _cumulative("cumsum", _blocked_cumsum)
# Transpose of a running sum: a running sum from the other end.
deflinear(cumsum_p, lambda ct, x, axis: [ops.flip(cumsum(ops.flip(ct, (axis,)), axis), (axis,))])
def cumsum(x, axis): return cumsum_p.bind(x, axis=norm_axes(x, (axis,), 'cumsum')[0])


def _cumprod_by_doubling(x, axis):
    """cumprod as log2(n) rounds of elementwise `mul` with shifted copies (Hillis-Steele).
    Its derivative is the product of the others at every order, zeros included."""
    n, d = shape_of(x)[axis], 1
    while d < n:
        pre = (slice(None),) * axis
        ones_shape = tuple(d if i == axis else s for i, s in enumerate(shape_of(x)))
        shifted = ops.concatenate([np.ones(ones_shape, dtype_of(x)),
                                   ops.getitem(x, pre + (slice(0, n - d),))], axis)
        x = ops.mul(x, shifted)
        d *= 2
    return x


def _cumprod_jvp(primals, tangents, axis):
    (x,), (t,) = primals, tangents
    ans = cumprod(x, axis)
    if type(t) is Zero:
        return ans, Zero.like(ans)
    _, (dt,) = jvp_flat(lambda v: [_cumprod_by_doubling(v, axis)], [x], [t],
                        name="cumprod jvp")
    return ans, dt


cumprod_p = _cumulative("cumprod", np.cumprod)
cumprod_p.def_jvp(_cumprod_jvp)
def cumprod(x, axis): return cumprod_p.bind(x, axis=norm_axes(x, (axis,), 'cumprod')[0])


# --- running max / min / logsumexp: JVPs from a doubling composite ----------------------------

def _shift_combine(x, axis, combine):
    """log2(n) rounds of x_i = combine(x_i, x_{i-d}) for i >= d (Hillis-Steele). Elements
    without a predecessor are selected unchanged, not combined with a padding value: an
    identity (-inf for max) would tie with an equal element and take half its tangent."""
    n, d = shape_of(x)[axis], 1
    nd = len(shape_of(x))
    pre = (slice(None),) * axis
    while d < n:
        shifted = ops.concatenate([ops.getitem(x, pre + (slice(0, d),)),
                                   ops.getitem(x, pre + (slice(0, n - d),))], axis)
        has_pred = (np.arange(n) >= d).reshape(tuple(n if i == axis else 1 for i in range(nd)))
        x = ops.select(has_pred, combine(x, shifted), x)
        d *= 2
    return x


def _logaddexp2(a, b):
    """log(exp(a) + exp(b)) = hi + log1p(exp(lo - hi)) from primitives, with derivatives
    exp(a - out) and exp(b - out) at every order. When hi is infinite the correction is a
    constant 0 (no inf - inf is ever computed: hi is replaced by 0 in the difference)."""
    hi, lo = ops.max(a, b), ops.min(a, b)
    finite = ops.isfinite(hi)
    diff = ops.select(finite, ops.sub(lo, ops.select(finite, hi, 0.0)), -np.inf)
    return ops.add(hi, ops.log1p(ops.exp(diff)))


def _running_jvp(prim, combine):
    """The JVP of a running reduction: the JVP of the doubling composite (the primal comes
    from NumPy's accumulate). Ties of max/min split the tangent evenly at each pairwise
    step, as `max` does."""
    def jvp(primals, tangents, axis):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axis=axis)
        if type(t) is Zero:
            return ans, Zero.like(ans)
        _, (dt,) = jvp_flat(lambda v: [_shift_combine(v, axis, combine())], [x], [t],
                            name=f"{prim.name} jvp")
        return ans, dt
    prim.def_jvp(jvp)


cummax_p = _cumulative("cummax", np.maximum.accumulate)
_running_jvp(cummax_p, lambda: ops.max)
def cummax(x, axis): return cummax_p.bind(x, axis=norm_axes(x, (axis,), 'cummax')[0])


cummin_p = _cumulative("cummin", np.minimum.accumulate)
_running_jvp(cummin_p, lambda: ops.min)
def cummin(x, axis): return cummin_p.bind(x, axis=norm_axes(x, (axis,), 'cummin')[0])


cumlogsumexp_p = _cumulative("cumlogsumexp", np.logaddexp.accumulate)
_running_jvp(cumlogsumexp_p, lambda: _logaddexp2)
def cumlogsumexp(x, axis):
    return cumlogsumexp_p.bind(x, axis=norm_axes(x, (axis,), 'cumlogsumexp')[0])


# the bind wrappers fxad.lax exports (through rules/ops.py)
__all__ = ["cumprod", "cumsum"]

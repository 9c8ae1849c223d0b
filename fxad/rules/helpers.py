"""Helpers that make most rule blocks one line. Rules call ops through `lax` at call time."""
from __future__ import annotations

import numpy as np

from ..core import ShapedArray, avals_key, get_aval, is_float
from ..interpreters.jvp import Zero
from ..interpreters.transpose import is_undefined
from .. import lax  # resolved at call time (lax imports the rule files)

# --- shape rules ---------------------------------------------------------------------------

_dtype_cache = {}


def probe_dtype(prim, avals, params):
    """The output dtype NumPy gives, found by running the impl on one-element samples, so
    staged dtypes always agree with eager ones (NumPy's promotion rules are subtle)."""
    key = (prim, tuple([a.weak or a.dtype for a in avals]),
           tuple(sorted(params.items())) if params else ())
    dt = _dtype_cache.get(key)
    if dt is None:
        with np.errstate(all="ignore"):
            out = prim.impl(*[a.sample() for a in avals], **params)
        dt = _dtype_cache[key] = np.asarray(out).dtype
    return dt


def elementwise_shape(prim):
    """Shape rule of an elementwise primitive: NumPy broadcasting, probed dtype. Results are
    memoized by operand types (avals are never mutated, so they can be shared)."""
    memo = {}

    def compute(avals, params):
        shape = avals[0].shape
        if all(a.shape == shape or not a.shape for a in avals):  # common: no broadcasting
            shape = max((a.shape for a in avals), key=len)
            return ShapedArray(shape, probe_dtype(prim, avals, params))
        try:
            shape = np.broadcast_shapes(*[a.shape for a in avals])
        except ValueError:
            from ..errors import FxadValueError
            raise FxadValueError(f"{prim.name}: shapes {[a.shape for a in avals]} do not "
                                 "broadcast together") from None
        return ShapedArray(shape, probe_dtype(prim, avals, params))

    def rule(*avals, **params):
        if len(avals) == 2 and not params:  # the common cases, keyed without a loop
            a, b = avals
            key = (a.shape, a.dtype, a.weak, b.shape, b.dtype, b.weak)
        elif len(avals) == 1 and not params:
            a = avals[0]
            key = (a.shape, a.dtype, a.weak)
        else:
            key = (avals_key(avals), tuple(sorted(params.items())))
        try:
            out = memo.get(key)
        except TypeError:  # an unhashable parameter: not memoized
            return compute(avals, params)
        if out is None:
            out = compute(avals, params)
            if len(memo) < 4096:  # bounded: shapes seen by one program are few
                memo[key] = out
        return out
    prim.def_abstract_eval(rule)


def dtype_of(x):
    return get_aval(x).dtype


def shape_of(x):
    return get_aval(x).shape


def norm_axes(x, axes, name):
    """Axes as non-negative ints (negative ones count from the end), checked against x's
    rank: rules and batching shift axes, so parameters never hold negative values."""
    nd = len(shape_of(x))
    if type(axes) is tuple and all(type(a) is int and 0 <= a < nd for a in axes):
        return axes  # already normal (as rules pass them)
    axes = tuple(int(a) for a in axes)
    if all(0 <= a < nd for a in axes):
        return axes
    bad = [a for a in axes if not -nd <= a < nd]
    if bad:
        from ..errors import FxadValueError
        raise FxadValueError(f"{name}: axis {bad[0]} is out of range for an array of rank {nd}")
    return tuple(a % nd for a in axes)


# --- JVP helpers ---------------------------------------------------------------------------

def fit(t, like):
    """Broadcast/convert a tangent contribution to the shape and dtype of `like`."""
    ta, la = get_aval(t), get_aval(like)
    if ta.shape != la.shape:
        t = lax.broadcast_to(t, la.shape)
    if ta.dtype != la.dtype:
        t = lax.convert_element_type(t, la.dtype)
    return t


def defjvp(prim, *rules, with_output=False):
    """One rule per operand, `rule(t, *primals, **params)` (or `rule(t, ans, *primals)` with
    `with_output`); the contributions of the non-zero tangents are summed."""

    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        acc = None
        for rule, t in zip(rules, tangents):
            if rule is None or type(t) is Zero:
                continue
            c = rule(t, ans, *primals, **params) if with_output else rule(t, *primals, **params)
            acc = c if acc is None else lax.add(acc, c)
        if acc is None:
            return ans, Zero.like(ans)
        # the output's shape and dtype (SciPy computes float16 input in float64, say)
        return ans, fit(acc, ans)
    prim.jvp = jvp


def defjvp_with_output(prim, *rules):
    defjvp(prim, *rules, with_output=True)


def defjvp_zero(prim):
    """Piecewise-constant or non-float outputs: the tangent is a symbolic zero."""
    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if prim.multiple_results:
            return ans, [Zero.like(a) for a in ans]
        return ans, Zero.like(ans)
    prim.jvp = jvp


def deflinear(prim, transpose_rule, linear_args=None):
    """A primitive linear in the operands `linear_args` (default: all). Its JVP applies it to
    the tangents (symbolic zeros of linear operands are materialized only if some other
    linear operand has a tangent); `transpose_rule(ct, *args, **params)` gives the cotangents."""
    prim.linear = True

    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        idx = range(len(primals)) if linear_args is None else linear_args
        for i in idx:
            if type(tangents[i]) is not Zero:
                break
        else:  # no linear operand has a tangent
            return ans, (Zero.like(ans) if not prim.multiple_results
                         else [Zero.like(a) for a in ans])
        args = list(primals)
        for i in idx:
            t = tangents[i]
            args[i] = np.zeros(t.aval.shape, t.aval.dtype) if type(t) is Zero else t
        return ans, prim.bind(*args, **params)
    prim.jvp = jvp
    prim.transpose = transpose_rule


# --- transpose helpers ---------------------------------------------------------------------

def unbroadcast(ct, aval):
    """THE helper that reduces a cotangent back to an operand's shape and dtype after NumPy
    broadcasting: sum the leading axes and the axes where the operand had size 1."""
    if type(ct) is Zero:
        return Zero(aval)
    ca = get_aval(ct)
    shape = ca.shape
    if shape != aval.shape:
        lead = len(shape) - len(aval.shape)
        axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(aval.shape)
                                          if d == 1 and shape[lead + i] != 1)
        if axes:
            ct = lax.reduce_sum(ct, axes)
        if shape_of(ct) != aval.shape:
            ct = lax.reshape(ct, aval.shape)
    if ca.dtype != aval.dtype:
        if not is_float(aval.dtype):
            return None  # integer operand: no cotangent
        if ca.dtype.kind == "c" and aval.dtype.kind != "c":
            ct = lax.real(ct)  # a real operand of a complex result: its part of the cotangent
        ct = lax.convert_element_type(ct, aval.dtype)
    return ct


def ct_for(arg, ct):
    """The cotangent for `arg` in a transpose rule: `ct` reduced to its shape if it is a
    linear input, else None."""
    return unbroadcast(ct, arg.aval) if is_undefined(arg) else None

"""Helpers that make most rule blocks one line: shape rules, JVP and transpose helpers, and the
batching helpers. Rules call other families' primitives through `ops` (the bind wrappers)."""
from __future__ import annotations

import numpy as np

from ..core import BoundedCache, Primitive, ShapedArray, avals_key, get_aval, is_float
from ..errors import FxadTypeError, FxadValueError
from ..interpreters.batching import vmap_flat
from ..interpreters.jvp import Zero
from ..interpreters.transpose import is_undefined
from ..ir.numba_backend.lowering import ufunc_rule
from ..ir.simplify import is_all
from . import ops  # bind wrappers, resolved at call time (ops imports every rule family)
from .taylor import bilinear_jet, jet_from_jvp, linear_jet, zero_jet

# --- the elementwise family's constructor ----------------------------------------------------

def elementwise(name, impl, memory="fresh"):
    """A NumPy-broadcasting primitive: impl, the shared shape and batching rules, and, for a
    ufunc impl, its lowering (`_np.sin(a)`; the ufunc may write into a dead input)."""
    p = Primitive(name, memory=memory)
    p.elementwise = True
    p.def_impl(impl)
    elementwise_shape(p)
    defbatch_elementwise(p)
    if isinstance(impl, np.ufunc):
        p.def_lowering(lambda ctx, args: f"{ctx.name(impl, name)}({', '.join(args)})",
                       inplace=impl if impl.nout == 1 else None)
        if impl.nout == 1 and impl.nin <= 3:  # (what compiled code can call NumPy's loop with)
            p.def_lowering(ufunc_rule(impl), backend="numba")
    return p


# --- shape rules ---------------------------------------------------------------------------

_dtype_cache = BoundedCache(4096)


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


def preferred_dtype(input_dtype, preferred, where):
    """The result type a product with `preferred_element_type` has (JAX's rule): integer
    inputs may give integers or floats, floats floats, complex complex; signed integers stay
    signed; never narrower than the inputs' (promoted) type. Anything else is a TypeError."""
    try:
        want = np.dtype(preferred)
    except TypeError:
        raise FxadTypeError(f"{where}: preferred_element_type {preferred!r} is not a dtype") \
            from None
    have = np.dtype(input_dtype)
    if want.kind not in "biufc":
        raise FxadTypeError(f"{where}: preferred_element_type {want} is not a number type")
    kinds = {"i": "iuf", "u": "iuf", "f": "f", "c": "c", "b": "biufc"}[have.kind]
    if want.kind not in kinds or (have.kind == "i" and want.kind == "u"):
        raise FxadTypeError(
            f"{where}: preferred_element_type {want} does not fit inputs of type {have}; the "
            "combinations are (integer, integer of the same signedness or float), (float, "
            "float), (complex, complex)")
    if want.itemsize < have.itemsize:
        raise FxadTypeError(f"{where}: preferred_element_type {want} is narrower than the "
                            f"inputs' type {have}; pass {have} or a wider type, or None")
    return want


def norm_axes(x, axes, name):
    """Axes as non-negative ints (negative ones count from the end), checked against x's
    rank: rules and batching shift axes, so parameters never hold negative values."""
    nd = len(shape_of(x))
    if type(axes) is tuple:
        for a in axes:
            if type(a) is not int or not 0 <= a < nd:
                break
        else:
            return axes  # already normal (as rules pass them)
    axes = tuple(int(a) for a in axes)
    if all(0 <= a < nd for a in axes):
        return axes
    bad = [a for a in axes if not -nd <= a < nd]
    if bad:
        raise FxadValueError(f"{name}: axis {bad[0]} is out of range for an array of rank {nd}")
    return tuple(a % nd for a in axes)


# --- JVP helpers ---------------------------------------------------------------------------

def fit(t, like):
    """Broadcast/convert a tangent contribution to the shape and dtype of `like`."""
    ta, la = get_aval(t), get_aval(like)
    if ta.shape != la.shape:
        t = ops.broadcast_to(t, la.shape)
    if ta.dtype != la.dtype:
        t = ops.convert_element_type(t, la.dtype)
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
            acc = c if acc is None else ops.add(acc, c)
        if acc is None:
            return ans, Zero.like(ans)
        # the output's shape and dtype (SciPy computes float16 input in float64, say)
        return ans, fit(acc, ans)
    prim.def_jvp(jvp)
    prim.def_jet(jet_from_jvp(prim))  # Taylor mode from this JVP (a block may set a faster one)


def defjvp_with_output(prim, *rules):
    defjvp(prim, *rules, with_output=True)


def defderiv(prim, deriv, with_output=False):
    """The JVP from derivatives: tangent_out = sum_i t_i * d_i, the tangent always on the left
    (so the staged tangent program is linear in the tangents).

    Unary: `deriv(x, **params)` (or `deriv(ans, x)` with `with_output`, to reuse the output)
    is the derivative. n-ary: `deriv(needed, *primals, **params)` returns one partial per
    operand, None where not `needed` (that operand's tangent is zero) or where it does not
    depend on it; it is called once, so partials share their setup (arctan2's x² + y²)."""
    unary = None

    def jvp(primals, tangents, **params):
        nonlocal unary
        ans = prim.bind(*primals, **params)
        needed = tuple(type(t) is not Zero for t in tangents)
        if not any(needed):
            return ans, Zero.like(ans)
        if unary is None:
            unary = len(primals) == 1
        head = (ans,) if with_output else ()
        if unary:  # fitted to the output's dtype (SciPy computes float16 input in float64)
            return ans, fit(ops.mul(tangents[0], deriv(*head, *primals, **params)), ans)
        acc = None
        for t, d in zip(tangents, deriv(needed, *head, *primals, **params)):
            if d is None or type(t) is Zero:
                continue
            c = ops.mul(t, d)
            acc = c if acc is None else ops.add(acc, c)
        return ans, Zero.like(ans) if acc is None else fit(acc, ans)
    prim.def_jvp(jvp)
    prim.def_jet(jet_from_jvp(prim))


def defbilinear(prim, lhs_transpose, rhs_transpose):
    """A primitive linear in each operand separately (mul, dot_general, convolve): its JVP
    is prim(t_x, y) + prim(x, t_y), and its transposes are `lhs_transpose(ct, x_aval, y,
    **params)` (the cotangent of x, y known) and `rhs_transpose(ct, x, y_aval, **params)`."""
    def jvp(primals, tangents, **params):
        (x, y), (tx, ty) = primals, tangents
        ans = prim.bind(x, y, **params)
        out = None if type(tx) is Zero else prim.bind(tx, y, **params)
        if type(ty) is not Zero:
            c = prim.bind(x, ty, **params)
            out = c if out is None else ops.add(out, c)
        return ans, Zero.like(ans) if out is None else fit(out, ans)

    def transpose(ct, x, y, **params):
        if is_undefined(x) and is_undefined(y):
            raise FxadTypeError(f"cannot transpose '{prim.name}' with both operands linear: "
                                "the function is not linear in its inputs")
        if is_undefined(x):
            return [lhs_transpose(ct, x.aval, y, **params), None]
        return [None, rhs_transpose(ct, x, y.aval, **params)]
    prim.def_jvp(jvp)
    prim.def_transpose(transpose)
    prim.def_jet(bilinear_jet(prim))


def defjvp_zero(prim):
    """Piecewise-constant or non-float outputs: the tangent is a symbolic zero."""
    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if prim.multiple_results:
            return ans, [Zero.like(a) for a in ans]
        return ans, Zero.like(ans)
    prim.def_jvp(jvp)
    prim.def_jet(zero_jet(prim))


def deflinear(prim, transpose_rule, linear_args=None):
    """A primitive linear in the operands `linear_args` (default: all). Its JVP applies it to
    the tangents (symbolic zeros of linear operands are materialized only if some other
    linear operand has a tangent); `transpose_rule(ct, *args, **params)` gives the cotangents."""

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
    prim.def_jvp(jvp)
    prim.def_transpose(transpose_rule)
    prim.def_jet(linear_jet(prim, linear_args))


# --- simplification helpers (rules for fxad/ir/simplify.py's "forward" pass) ----------------

def forward_if_same_type(eqn, known):
    """A shape-moving or converting equation whose output has its input's type (a same-shape
    reshape or broadcast, a same-dtype conversion) returns the input unchanged."""
    x = eqn.invars[0]
    return x if x.aval == eqn.outvars[0].aval else None


def forward_unit(unit, commutes):
    """x op unit -> x (and unit op x -> x if `commutes`), when the output has exactly x's
    shape and dtype: x*1, x/1, x+0, x-0. They hold for NaN and inf too; `x*0` is NEVER
    folded (inf*0 and NaN*0 are NaN, and a derivative program must propagate them)."""

    def rule(eqn, known):
        x, y = eqn.invars
        out = eqn.outvars[0].aval
        if is_all(known(y), unit) and x.aval == out:
            return x
        if commutes and is_all(known(x), unit) and y.aval == out:
            return y
        return None
    return rule


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
            ct = ops.reduce_sum(ct, axes)
        if shape_of(ct) != aval.shape:
            ct = ops.reshape(ct, aval.shape)
    if ca.dtype != aval.dtype:
        if not is_float(aval.dtype):
            return None  # integer operand: no cotangent
        if ca.dtype.kind == "c" and aval.dtype.kind != "c":
            ct = ops.real(ct)  # a real operand of a complex result: its part of the cotangent
        ct = ops.convert_element_type(ct, aval.dtype)
    return ct


def ct_for(arg, ct):
    """The cotangent for `arg` in a transpose rule: `ct` reduced to its shape if it is a
    linear input, else None."""
    return unbroadcast(ct, arg.aval) if is_undefined(arg) else None


# --- batching helpers (they bind structural primitives, so they live with the rules) -------

def ndim_of(x):
    return len(get_aval(x).shape)


def moveaxis(x, src, dst):
    """Move axis `src` of a value to position `dst` with the transpose primitive."""
    nd = ndim_of(x)
    src, dst = src % nd, dst % nd
    if src == dst:
        return x
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return ops.transpose(x, tuple(perm))


def bdim_to_front(x, d):
    return x if d == 0 else moveaxis(x, d, 0)


def broadcast_batched(x, d, size):
    """A value with its batch axis at 0, broadcasting an unbatched one to `size`."""
    if d is None:
        shape = tuple(x.shape) if hasattr(x, "shape") else get_aval(x).shape
        return ops.broadcast_to(ops.reshape(x, (1,) + shape), (size,) + shape)
    return bdim_to_front(x, d)


def batch_size(vals, dims):
    for v, d in zip(vals, dims):
        if d is not None:
            return v.shape[d] if hasattr(v, "shape") else get_aval(v).shape[d]
    raise ValueError("no batched operand")


def defbatch_elementwise(prim):
    """Batching for NumPy-broadcasting primitives: batch axes go to the front and operands
    are aligned by rank; unbatched operands broadcast as they are. It sets the primitive's
    `elementwise` attribute (absent: False), which analyses such as fxad.sparse read: each
    output element comes from the operands' elements at the same broadcast position (the
    only primitives this rule is right for)."""
    prim.elementwise = True

    def rule(vals, dims, **params):
        ranks = [ndim_of(v) - (d is not None) for v, d in zip(vals, dims)]
        rank = max(ranks)
        bd = {d for d in dims if d is not None}
        if len(bd) == 1:
            d0 = bd.pop()
            # Fast path: batched operands agree on rank and axis, unbatched ones are scalars.
            if all((r == rank) if d is not None else r == 0 for r, d in zip(ranks, dims)):
                return prim.bind(*vals, **params), d0
        new = []
        for v, d, r in zip(vals, dims, ranks):
            if d is not None:
                v = bdim_to_front(v, d)
                if r < rank:
                    shape = v.shape
                    v = ops.reshape(v, (shape[0],) + (1,) * (rank - r) + tuple(shape[1:]))
            new.append(v)
        return prim.bind(*new, **params), 0
    prim.def_batch(rule)


def defbatch_unary_axes(prim, axes_param="axes"):
    """Batching for one-operand primitives whose params name axes of the operand (reductions,
    flip, ...): put the batch axis in front and shift the axes by one."""
    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        x = bdim_to_front(x, d)
        axes = params[axes_param]
        if isinstance(axes, int):
            params = dict(params, **{axes_param: axes + 1})
        else:
            params = dict(params, **{axes_param: tuple(a + 1 for a in axes)})
        out = prim.bind(x, **params)
        return out, 0
    prim.def_batch(rule)


def batched_at_0(fun, args, dims, axis_size=None):
    """fun (flat arguments -> list of outputs) vmapped over `dims`, every output with its
    batch axis in front (shared outputs broadcast): what rules that run bodies or user
    functions batched (control flow, custom rules) agree on."""
    n = axis_size if axis_size is not None else \
        next(get_aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
    outs, out_dims = vmap_flat(fun, list(args), list(dims), n)
    return [broadcast_batched(o, d, n) for o, d in zip(outs, out_dims)]

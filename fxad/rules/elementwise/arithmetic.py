"""Elementwise arithmetic: the linear operations (neg, add, sub, mul, div, and add_any, the
backward pass's cotangent sum), dtype conversion, select, and complex parts. They broadcast
like NumPy (one bind per user op); transposes reduce cotangents back to operand shapes with
the one shared `unbroadcast` helper. JVP rules keep tangents on the left of a `mul`/`div` by a
primal-only factor, so the staged tangent program is linear.
"""
from __future__ import annotations

import operator

import numpy as np

from ...core import _NP_SCALAR_TYPES, Primitive, ShapedArray, is_float
from ...errors import FxadTypeError
from ...interpreters.jvp import Zero
from ...interpreters.transpose import add_any_p as transpose_add_any_p, is_undefined
from ...ir.numba_backend.lowering import fusible, ufunc_rule
from .. import taylor
from ..helpers import (batch_size, broadcast_batched, ct_for, defbatch_elementwise, defbilinear,
                       defjvp, defjvp_with_output, deflinear, dtype_of,
                       elementwise, fit, forward_if_same_type, forward_unit, unbroadcast)


def infix(symbol):
    """The lowering of add/sub/mul/div: the operator, as a NumPy user writes it."""
    return lambda ctx, args: f"{args[0]} {symbol} {args[1]}"


_NP_VALUES = _NP_SCALAR_TYPES | {np.ndarray}
_PY_NUMBERS = {bool, int, float, complex}
_OPERANDS = _NP_VALUES | _PY_NUMBERS


def arithmetic(ufunc, name):
    """The impl of add/sub/mul/div: the operator (`x.__mul__(y)`, or `y.__rmul__(x)` for a
    Python number x) when a NumPy value is involved, which NumPy runs as the same ufunc for
    arrays, but for NumPy scalars through its scalar math, ~10x faster than a ufunc call
    (eager grad of scalar code is mostly such calls). The reflected method is called
    directly because Python's `2j * np.float64(1)` would take complex's own product (float64
    subclasses float). Two Python numbers, or anything else, go to the ufunc (True + True
    must stay a bool)."""
    op, rop = getattr(operator, name), f"__r{name}__"

    def impl(x, y):
        tx, ty = type(x), type(y)
        if tx in _NP_VALUES:
            if ty in _OPERANDS:
                return op(x, y)
        elif tx in _PY_NUMBERS and ty in _NP_VALUES:
            return getattr(y, rop)(x)
        return ufunc(x, y)
    impl.__name__ = ufunc.__name__
    return impl


# --- linear arithmetic -------------------------------------------------------------------------

neg_p = elementwise("neg", np.negative)
deflinear(neg_p, lambda ct, x: [neg(ct)])
def neg(x):
    """-x, elementwise, with NumPy broadcasting; differentiable to any order in forward and
    reverse mode."""
    return neg_p.bind(x)


add_p = elementwise("add", arithmetic(np.add, "add"))
defjvp(add_p, lambda t, x, y: t, lambda t, x, y: t)
add_p.def_transpose(lambda ct, x, y: [ct_for(x, ct), ct_for(y, ct)])
add_p.def_jet(taylor.additive_jet(add_p))
add_p.def_lowering(infix("+"), inplace=np.add)
add_p.def_lowering(ufunc_rule(np.add), backend="numba")
add_p.def_simplify("forward", forward_unit(0, commutes=True))
def add(x, y):
    """x + y, elementwise, with NumPy broadcasting; differentiable to any order in forward and
    reverse mode."""
    return add_p.bind(x, y)


# add_any: the sum of two cotangents of one variable (the backward pass binds it; declared in
# fxad/interpreters/transpose.py). Same shapes and dtypes on both sides, never broadcast: a
# mismatch is a rule's bug, caught here rather than summed into a wrong-shaped gradient.
add_any_p = transpose_add_any_p
def _add_any_impl(x, y):
    if np.shape(x) != np.shape(y):
        raise AssertionError(f"fxad internal error: cotangents of shapes {np.shape(x)} and "
                             f"{np.shape(y)} for one variable")
    return np.add(x, y)
add_any_p.def_impl(_add_any_impl)
def _add_any_shape(x, y):
    if x.shape != y.shape or x.dtype != y.dtype:
        raise AssertionError(f"fxad internal error: cotangents {x.str_short()} and "
                             f"{y.str_short()} for one variable")
    return ShapedArray(x.shape, x.dtype)
add_any_p.def_abstract_eval(_add_any_shape)
def _add_any_jvp(primals, tangents):
    ans = add_any(*primals)
    tx, ty = tangents
    if type(tx) is Zero or type(ty) is Zero:
        return ans, (ty if type(tx) is Zero else tx)
    return ans, add_any(tx, ty)
add_any_p.def_jvp(_add_any_jvp)
add_any_p.def_transpose(lambda ct, x, y: [ct if is_undefined(x) else None,
                                          ct if is_undefined(y) else None])
def _add_any_batch(vals, dims):
    if dims[0] == dims[1]:
        return add_any(*vals), dims[0]
    n = batch_size(vals, dims)
    return add_any(*[broadcast_batched(v, d, n) for v, d in zip(vals, dims)]), 0
add_any_p.def_batch(_add_any_batch)
add_any_p.def_jet(taylor.additive_jet(add_any_p))
add_any_p.def_lowering(infix("+"), inplace=np.add)
add_any_p.def_lowering(ufunc_rule(np.add), backend="numba")
def add_any(x, y): return add_any_p.bind(x, y)


sub_p = elementwise("sub", arithmetic(np.subtract, "sub"))
defjvp(sub_p, lambda t, x, y: t, lambda t, x, y: neg(t))
sub_p.def_transpose(lambda ct, x, y: [ct_for(x, ct),
                                      unbroadcast(neg(ct), y.aval) if is_undefined(y) else None])
sub_p.def_jet(taylor.additive_jet(sub_p, negate_second=True))
sub_p.def_lowering(infix("-"), inplace=np.subtract)
sub_p.def_lowering(ufunc_rule(np.subtract), backend="numba")
sub_p.def_simplify("forward", forward_unit(0, commutes=False))
def sub(x, y):
    """x - y, elementwise, with NumPy broadcasting; differentiable to any order in forward and
    reverse mode."""
    return sub_p.bind(x, y)


def _nonlinear(name):
    raise FxadTypeError(f"cannot transpose '{name}' with both operands linear: the function "
                        "is not linear in its inputs")


mul_p = elementwise("mul", arithmetic(np.multiply, "mul"))
defbilinear(mul_p, lambda ct, x, y: unbroadcast(mul(ct, y), x),
            lambda ct, x, y: unbroadcast(mul(x, ct), y))
mul_p.def_lowering(infix("*"), inplace=np.multiply)
mul_p.def_lowering(ufunc_rule(np.multiply), backend="numba")
mul_p.def_simplify("forward", forward_unit(1, commutes=True))
def _mul_diagonal(e, ctx):
    """eye(n) * v, or a tracked diagonal times a vector or scalar, is a diagonal matrix."""
    out = e.outvars[0].aval
    if len(out.shape) != 2 or out.shape[0] != out.shape[1]:
        return
    n = out.shape[0]
    for a, b in (e.invars, e.invars[::-1]):
        if b.aval.shape not in ((), (n,)) or b.aval.dtype != out.dtype:
            continue
        v = ctx.diagonal(a)
        if v is not None:
            shape = (n,) if (n,) in (v.aval.shape, b.aval.shape) else ()
            ctx.diag[e.outvars[0]] = ctx.emit(mul_p, [v, b], shape, out.dtype)
            return
        if ctx.is_identity(a, n):
            ctx.diag[e.outvars[0]] = b
            return
mul_p.def_simplify("diagonal", _mul_diagonal)
def mul(x, y):
    """x * y, elementwise, with NumPy broadcasting; differentiable to any order in forward and
    reverse mode."""
    return mul_p.bind(x, y)


div_p = elementwise("div", arithmetic(np.true_divide, "truediv"))
defjvp_with_output(div_p, lambda t, ans, x, y: div(t, y),
                   lambda t, ans, x, y: mul(t, neg(div(ans, y))))
def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise FxadTypeError("cannot transpose 'div' in its denominator: x / y is not linear in y")
    return [unbroadcast(div(ct, y), x.aval), None]
div_p.def_transpose(_div_transpose)
div_p.def_jet(taylor.div_jet)
div_p.def_lowering(infix("/"), inplace=np.true_divide)
div_p.def_lowering(ufunc_rule(np.true_divide), backend="numba")
div_p.def_simplify("forward", forward_unit(1, commutes=False))
def div(x, y):
    """x / y, elementwise, with NumPy broadcasting (integer operands divide as integers, rounding
    toward zero, as JAX's); differentiable to any order in forward and reverse mode for
    floating operands."""
    return div_p.bind(x, y)


convert_element_type_p = Primitive("convert_element_type", memory="fresh")  # astype copies
convert_element_type_p.def_impl(lambda x, new_dtype: np.asarray(x).astype(new_dtype))
convert_element_type_p.def_abstract_eval(
    lambda x, new_dtype: x.__class__(x.shape, new_dtype))
def _convert_jvp(primals, tangents, new_dtype):
    (x,), (t,) = primals, tangents
    ans = convert_element_type(x, new_dtype)
    if type(t) is Zero or not is_float(new_dtype):
        return ans, Zero.like(ans)
    return ans, convert_element_type(t, new_dtype)
convert_element_type_p.def_jvp(_convert_jvp)
def _is_complex_dtype(dt): return np.issubdtype(dt, np.complexfloating)
convert_element_type_p.def_transpose(lambda ct, x, new_dtype: [convert_element_type(
    real(ct) if not _is_complex_dtype(x.aval.dtype) else ct, x.aval.dtype)])
defbatch_elementwise(convert_element_type_p)
convert_element_type_p.def_jet(taylor.linear_jet(convert_element_type_p))
convert_element_type_p.def_lowering(fusible(lambda fz, args, new_dtype: fz.cast(args[0],
                                                                                new_dtype)),
                                    backend="numba")
convert_element_type_p.def_simplify("forward", forward_if_same_type)
def convert_element_type(x, new_dtype):
    """x as `new_dtype` (NumPy's casting; a complex to real cast keeps the real part).
    Differentiable between floating and complex dtypes; an integer or boolean result has no
    derivative."""
    new_dtype = np.dtype(new_dtype)
    if dtype_of(x) == new_dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype)


def _zero_bits(v, dt, it):
    """Is v a scalar whose value as dt has every bit zero (0, +0.0; not -0.0)?"""
    return np.ndim(v) == 0 and int(np.asarray(v, dt).view(it)) == 0


def where(pred, a, b):
    """np.where(pred, a, b), branch-free for large boolean masks over real numbers: NumPy's
    where branches on every element, which costs ~10 ns each when the mask is irregular
    (relu's, max pooling's); blending the bit patterns, b ^ ((a ^ b) & -pred), is exact
    (inf, NaN and -0.0 pass through) and about 10x faster there."""
    if type(pred) is np.ndarray and pred.dtype == np.bool_ and pred.size >= 4096:
        dt = np.result_type(a, b)
        if dt.kind in "iuf" and dt.itemsize in (1, 2, 4, 8):
            shape = np.broadcast_shapes(pred.shape, np.shape(a), np.shape(b))
            it = np.dtype(f"i{dt.itemsize}")
            # against an all-zero-bits scalar (relu's 0.0, its cotangent's) one AND suffices
            if _zero_bits(b, dt, it) or _zero_bits(a, dt, it):
                keep = a if _zero_bits(b, dt, it) else b
                mask = (np.negative(pred, dtype=it) if keep is a else
                        np.subtract(pred, 1, dtype=it))  # all ones where `keep` is chosen
                ki = np.asarray(keep, dt).view(it)
                out = mask if mask.shape == shape else None
                return np.bitwise_and(mask, ki, out=out).view(dt)
            ai = np.broadcast_to(np.asarray(a, dt), shape).view(it)
            bi = np.broadcast_to(np.asarray(b, dt), shape).view(it)
            out = np.bitwise_xor(ai, bi)
            np.bitwise_and(out, np.negative(pred, dtype=it), out=out)
            return np.bitwise_xor(out, bi, out=out).view(dt)
    return np.where(pred, a, b)


select_p = elementwise("select", where)  # select(pred, on_true, on_false) = np.where
def _select_jvp(primals, tangents):
    pred, a, b = primals
    _, ta, tb = tangents
    ans = select(pred, a, b)
    if type(ta) is Zero and type(tb) is Zero:
        return ans, Zero.like(ans)
    t = select(pred, 0.0 if type(ta) is Zero else ta, 0.0 if type(tb) is Zero else tb)
    return ans, fit(t, ans)
select_p.def_jvp(_select_jvp)
select_p.def_transpose(lambda ct, pred, a, b: [
    None,
    unbroadcast(select(pred, ct, 0.0), a.aval) if is_undefined(a) else None,
    unbroadcast(select(pred, 0.0, ct), b.aval) if is_undefined(b) else None])
select_p.def_jet(taylor.linear_jet(select_p, linear_args=(1, 2)))  # the primal's choice
def _select_lowering(ctx, args):
    """np.where itself unless the mask is large enough for the branch-free form to pay."""
    pred = ctx.in_avals[0]
    big = pred.dtype == np.bool_ and pred.size >= 4096
    return f"{ctx.name(where, 'where') if big else '_np.where'}({', '.join(args)})"
select_p.def_lowering(_select_lowering)
select_p.def_lowering(fusible(lambda fz, args: fz.where(*args, fz.out_aval.dtype)),
                      backend="numba")
def select(pred, on_true, on_false):
    """on_true where pred holds, on_false elsewhere, elementwise (all three broadcast);
    differentiable in on_true and on_false (each where it is chosen), not in pred."""
    return select_p.bind(pred, on_true, on_false)


# --- complex parts (R-linear: transposes follow JAX's convention, grad = d/dx - i d/dy) --------

real_p = elementwise("real", np.real, memory="views")
deflinear(real_p, lambda ct, z: [complex_(ct, mul(ct, 0.0))])
real_p.def_lowering(fusible(lambda fz, args: fz.inline("{0}.real", args, fz.out_aval.dtype)
                            if args[0].dtype.kind == "c" else args[0]), backend="numba")
def real(z):
    """The real part of z, elementwise, with NumPy broadcasting; differentiable to any order in
    forward and reverse mode."""
    return real_p.bind(z) if _is_complex(z) else z


imag_p = elementwise("imag", np.imag, memory="views")
deflinear(imag_p, lambda ct, z: [complex_(mul(ct, 0.0), neg(ct))  # a real z has imag(z) = 0
                                 if z.aval.dtype.kind == "c" else None])
imag_p.def_lowering(fusible(lambda fz, args: fz.inline("{0}.imag", args, fz.out_aval.dtype)
                            if args[0].dtype.kind == "c" else fz.cast(0, fz.out_aval.dtype)),
                    backend="numba")
def imag(z):
    """The imaginary part of z (0 for real z), elementwise, with NumPy broadcasting;
    differentiable to any order in forward and reverse mode."""
    return imag_p.bind(z)


conj_p = elementwise("conj", np.conj)
deflinear(conj_p, lambda ct, z: [conj(ct)])
def conj(z):
    """The complex conjugate (x itself for real x), elementwise, with NumPy broadcasting;
    differentiable to any order in forward and reverse mode."""
    return conj_p.bind(z) if _is_complex(z) else z


complex_p = elementwise("complex", lambda x, y: np.add(x, np.multiply(y, 1j)))  # x + iy
defjvp(complex_p, lambda t, x, y: complex_(t, mul(t, 0.0)),
       lambda t, x, y: complex_(mul(t, 0.0), t))
complex_p.def_transpose(lambda ct, x, y: [
    unbroadcast(real(ct), x.aval) if is_undefined(x) else None,
    unbroadcast(neg(imag(ct)), y.aval) if is_undefined(y) else None])  # Re(ct·i·y) = -Im(ct)y
complex_p.def_lowering(fusible(lambda fz, args: fz.ufunc(
    np.add, args[0], fz.ufunc(np.multiply, args[1], 1j))), backend="numba")
def complex_(x, y):
    """x + 1j * y from real parts x and imaginary parts y (`lax.complex`), elementwise, with NumPy
    broadcasting; differentiable to any order in forward and reverse mode."""
    return complex_p.bind(x, y)


def _is_complex(x): return _is_complex_dtype(dtype_of(x))


complex = complex_  # lax's name (after every use of the builtin in this module)


# the bind wrappers fxad.lax exports (through rules/ops.py)
__all__ = ["add", "complex", "conj", "convert_element_type", "div", "imag", "mul", "neg", "real",
           "select", "sub"]

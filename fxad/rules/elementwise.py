"""Elementwise primitives. They broadcast like NumPy (one bind per user op); transposes reduce
cotangents back to operand shapes with the one shared `unbroadcast` helper.

Block order: definition, impl, shape, JVP, transpose (linear only); `elementwise()` registers
the impl, the shared broadcasting shape rule and the shared elementwise batching rule.
JVP rules keep tangents on the left of a `mul`/`div` by a primal-only factor, so the staged
tangent program is linear, and they reuse the output (`ans`) where that saves work.
"""
from __future__ import annotations

import operator

import numpy as np
import scipy.special

from ..core import _NP_SCALAR_TYPES, Primitive, ShapedArray, is_float
from ..errors import FxadTypeError
from ..interpreters.jvp import Zero
from ..interpreters.transpose import add_any_p as transpose_add_any_p, is_undefined
from . import ops, taylor
from ..ir.numba_backend.lowering import fusible, ufunc_rule
from .helpers import (batch_size, broadcast_batched, ct_for, defbatch_elementwise, defbilinear,
                      defderiv, defjvp,
                      defjvp_with_output, defjvp_zero, deflinear, dtype_of, elementwise_shape,
                      fit, forward_if_same_type, forward_unit, unbroadcast)
from .taylor import linear_jet, unary


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
def neg(x): return neg_p.bind(x)


add_p = elementwise("add", arithmetic(np.add, "add"))
add_p.def_lowering(infix("+"), inplace=np.add)
add_p.def_lowering(ufunc_rule(np.add), backend="numba")
add_p.def_simplify("forward", forward_unit(0, commutes=True))
defjvp(add_p, lambda t, x, y: t, lambda t, x, y: t)
add_p.def_jet(taylor.additive_jet(add_p))
add_p.def_transpose(lambda ct, x, y: [ct_for(x, ct), ct_for(y, ct)])
def add(x, y): return add_p.bind(x, y)


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
add_any_p.def_jet(taylor.additive_jet(add_any_p))
add_any_p.def_transpose(lambda ct, x, y: [ct if is_undefined(x) else None,
                                          ct if is_undefined(y) else None])
def _add_any_batch(vals, dims):
    if dims[0] == dims[1]:
        return add_any(*vals), dims[0]
    n = batch_size(vals, dims)
    return add_any(*[broadcast_batched(v, d, n) for v, d in zip(vals, dims)]), 0
add_any_p.def_batch(_add_any_batch)
add_any_p.def_lowering(infix("+"), inplace=np.add)
add_any_p.def_lowering(ufunc_rule(np.add), backend="numba")
def add_any(x, y): return add_any_p.bind(x, y)


sub_p = elementwise("sub", arithmetic(np.subtract, "sub"))
sub_p.def_lowering(infix("-"), inplace=np.subtract)
sub_p.def_lowering(ufunc_rule(np.subtract), backend="numba")
sub_p.def_simplify("forward", forward_unit(0, commutes=False))
defjvp(sub_p, lambda t, x, y: t, lambda t, x, y: neg(t))
sub_p.def_jet(taylor.additive_jet(sub_p, negate_second=True))
sub_p.def_transpose(lambda ct, x, y: [ct_for(x, ct),
                                      unbroadcast(neg(ct), y.aval) if is_undefined(y) else None])
def sub(x, y): return sub_p.bind(x, y)


def _nonlinear(name):
    raise FxadTypeError(f"cannot transpose '{name}' with both operands linear: the function "
                        "is not linear in its inputs")


mul_p = elementwise("mul", arithmetic(np.multiply, "mul"))
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
defbilinear(mul_p, lambda ct, x, y: unbroadcast(mul(ct, y), x),
            lambda ct, x, y: unbroadcast(mul(x, ct), y))
def mul(x, y): return mul_p.bind(x, y)


div_p = elementwise("div", arithmetic(np.true_divide, "truediv"))
div_p.def_lowering(infix("/"), inplace=np.true_divide)
div_p.def_lowering(ufunc_rule(np.true_divide), backend="numba")
div_p.def_simplify("forward", forward_unit(1, commutes=False))
defjvp_with_output(div_p, lambda t, ans, x, y: div(t, y),
                   lambda t, ans, x, y: mul(t, neg(div(ans, y))))
div_p.def_jet(taylor.div_jet)
def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise FxadTypeError("cannot transpose 'div' in its denominator: x / y is not linear in y")
    return [unbroadcast(div(ct, y), x.aval), None]
div_p.def_transpose(_div_transpose)
def div(x, y): return div_p.bind(x, y)


convert_element_type_p = Primitive("convert_element_type", memory="fresh")  # astype copies
convert_element_type_p.def_impl(lambda x, new_dtype: np.asarray(x).astype(new_dtype))
convert_element_type_p.def_simplify("forward", forward_if_same_type)
convert_element_type_p.def_lowering(fusible(lambda fz, args, new_dtype: fz.cast(args[0],
                                                                                new_dtype)),
                                    backend="numba")
convert_element_type_p.def_abstract_eval(
    lambda x, new_dtype: x.__class__(x.shape, new_dtype))
def _convert_jvp(primals, tangents, new_dtype):
    (x,), (t,) = primals, tangents
    ans = convert_element_type(x, new_dtype)
    if type(t) is Zero or not is_float(new_dtype):
        return ans, Zero.like(ans)
    return ans, convert_element_type(t, new_dtype)
convert_element_type_p.def_jvp(_convert_jvp)
convert_element_type_p.def_jet(linear_jet(convert_element_type_p))
convert_element_type_p.def_transpose(lambda ct, x, new_dtype: [convert_element_type(
    real(ct) if not _is_complex_dtype(x.aval.dtype) else ct, x.aval.dtype)])
def _is_complex_dtype(dt): return np.issubdtype(dt, np.complexfloating)
defbatch_elementwise(convert_element_type_p)
def convert_element_type(x, new_dtype):
    new_dtype = np.dtype(new_dtype)
    if dtype_of(x) == new_dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype)


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
            ai = np.broadcast_to(np.asarray(a, dt), shape).view(it)
            bi = np.broadcast_to(np.asarray(b, dt), shape).view(it)
            out = np.bitwise_xor(ai, bi)
            np.bitwise_and(out, np.negative(pred, dtype=it), out=out)
            return np.bitwise_xor(out, bi, out=out).view(dt)
    return np.where(pred, a, b)


select_p = elementwise("select", where)  # select(pred, on_true, on_false) = np.where
def _select_lowering(ctx, args):
    """np.where itself unless the mask is large enough for the branch-free form to pay."""
    pred = ctx.in_avals[0]
    big = pred.dtype == np.bool_ and pred.size >= 4096
    return f"{ctx.name(where, 'where') if big else '_np.where'}({', '.join(args)})"
select_p.def_lowering(_select_lowering)
select_p.def_lowering(fusible(lambda fz, args: fz.where(*args, fz.out_aval.dtype)),
                      backend="numba")
def _select_jvp(primals, tangents):
    pred, a, b = primals
    _, ta, tb = tangents
    ans = select(pred, a, b)
    if type(ta) is Zero and type(tb) is Zero:
        return ans, Zero.like(ans)
    t = select(pred, 0.0 if type(ta) is Zero else ta, 0.0 if type(tb) is Zero else tb)
    return ans, fit(t, ans)
select_p.def_jvp(_select_jvp)
select_p.def_jet(linear_jet(select_p, linear_args=(1, 2)))  # the primal's choice
select_p.def_transpose(lambda ct, pred, a, b: [
    None,
    unbroadcast(select(pred, ct, 0.0), a.aval) if is_undefined(a) else None,
    unbroadcast(select(pred, 0.0, ct), b.aval) if is_undefined(b) else None])
def select(pred, on_true, on_false): return select_p.bind(pred, on_true, on_false)


# --- powers, exponentials, logarithms ------------------------------------------------------

def _integer_pow_impl(x, y):
    if y == 2:
        return np.square(x)
    if y == -1 and np.asarray(x).dtype.kind in "fc":  # 1/x correctly rounded (NumPy 2.1's
        return np.reciprocal(x)                        # power(x, -1) is not at 1e300)
    if y < 0 and np.issubdtype(np.asarray(x).dtype, np.integer):
        return np.power(np.asarray(x, float), y)
    return np.power(x, y)
integer_pow_p = elementwise("integer_pow", _integer_pow_impl)
integer_pow_p.def_lowering(lambda ctx, args, y: f"_np.square({args[0]})" if y == 2 else None)
def _integer_pow_numba(fz, args, y):  # as the impl: ints to negative powers in float64
    (x,) = args
    if y == 2:
        return fz.ufunc(np.square, x)
    if y == -1 and x.dtype.kind in "fc":
        return fz.ufunc(np.reciprocal, x)
    return fz.ufunc(np.power, fz.cast(x, np.float64) if y < 0 and x.dtype.kind in "iub" else x, y)
integer_pow_p.def_lowering(fusible(_integer_pow_numba), backend="numba")
defderiv(integer_pow_p, lambda x, y: (
    1.0 if y == 1 else 0.0 if y == 0 else mul(y, x if y == 2 else integer_pow(x, y - 1))))
integer_pow_p.def_jet(unary(taylor.integer_pow_series))
def integer_pow(x, y): return integer_pow_p.bind(x, y=int(y))


def _pow_partials(needed, ans, x, y):
    """x**y's partials (shared with float_power, fxad/rules/ufunc_math.py). On the line
    y == 0, x**y is 1 for every x (0**0 included), so d/dx = y x**(y-1) is 0: at x == 0 it is
    computed with 1 for x, so that 0 * inf does not make it (or higher derivatives) nan;
    elsewhere the formula stays the smooth one (its derivative in y is right)."""
    if needed[0]:
        base = select(logical_and(eq(y, 0), eq(x, 0)), 1, x)
        dx = mul(y, pow(base, sub(y, 1)))
    return [dx if needed[0] else None,
            # d/dy x**y = log(x) x**y; at x == 0 it is 0 (for y > 0), not nan.
            mul(ans, log(select(eq(x, 0), 1.0, x))) if needed[1] else None]


pow_p = elementwise("pow", np.power)
defderiv(pow_p, _pow_partials, with_output=True)
def pow(x, y): return pow_p.bind(x, y)


exp_p = elementwise("exp", np.exp)
defderiv(exp_p, lambda ans, x: ans, with_output=True)
exp_p.def_jet(unary(taylor.exp_series))
def exp(x): return exp_p.bind(x)


log_p = elementwise("log", np.log)
defjvp(log_p, lambda t, x: div(t, x))
log_p.def_jet(unary(taylor.log_series))
def log(x): return log_p.bind(x)


log1p_p = elementwise("log1p", np.log1p)
defjvp(log1p_p, lambda t, x: div(t, add(x, 1.0)))
log1p_p.def_jet(unary(taylor.log1p_series))
def log1p(x): return log1p_p.bind(x)


expm1_p = elementwise("expm1", np.expm1)
defderiv(expm1_p, lambda ans, x: add(ans, 1.0), with_output=True)
expm1_p.def_jet(unary(taylor.expm1_series))
def expm1(x): return expm1_p.bind(x)


sqrt_p = elementwise("sqrt", np.sqrt)
defjvp_with_output(sqrt_p, lambda t, ans, x: div(t, mul(2.0, ans)))
sqrt_p.def_jet(unary(taylor.sqrt_jet_series))
def sqrt(x): return sqrt_p.bind(x)


cbrt_p = elementwise("cbrt", np.cbrt)  # real cube root (negative for negative x)
defjvp_with_output(cbrt_p, lambda t, ans, x: div(t, mul(mul(ans, ans), 3.0)))
cbrt_p.def_jet(unary(taylor.cbrt_series))
def cbrt(x): return cbrt_p.bind(x)


rsqrt_p = elementwise("rsqrt", lambda x: 1.0 / np.sqrt(x))
rsqrt_p.def_lowering(fusible(lambda fz, args: fz.ufunc(np.true_divide, 1.0,
                                                      fz.ufunc(np.sqrt, args[0]))), backend="numba")
defderiv(rsqrt_p, lambda ans, x: mul(-0.5, div(ans, x)), with_output=True)
rsqrt_p.def_jet(unary(taylor.rsqrt_series))
def rsqrt(x): return rsqrt_p.bind(x)


logistic_p = elementwise("logistic", scipy.special.expit)
defderiv(logistic_p, lambda ans, x: mul(ans, sub(1.0, ans)), with_output=True)
logistic_p.def_jet(unary(taylor.logistic_series))
def logistic(x): return logistic_p.bind(x)


# --- trigonometric and hyperbolic ----------------------------------------------------------

sin_p = elementwise("sin", np.sin)
defderiv(sin_p, lambda x: cos(x))
sin_p.def_jet(unary(taylor.sin_series))
def sin(x): return sin_p.bind(x)


cos_p = elementwise("cos", np.cos)
defderiv(cos_p, lambda x: neg(sin(x)))
cos_p.def_jet(unary(taylor.cos_series))
def cos(x): return cos_p.bind(x)


tan_p = elementwise("tan", np.tan)
defderiv(tan_p, lambda ans, x: add(1.0, mul(ans, ans)), with_output=True)
tan_p.def_jet(unary(taylor.tan_series))
def tan(x): return tan_p.bind(x)


arcsin_p = elementwise("arcsin", np.arcsin)
defderiv(arcsin_p, lambda x: rsqrt(sub(1.0, mul(x, x))))
def arcsin(x): return arcsin_p.bind(x)


arccos_p = elementwise("arccos", np.arccos)
defderiv(arccos_p, lambda x: neg(rsqrt(sub(1.0, mul(x, x)))))
def arccos(x): return arccos_p.bind(x)


# Derivatives with 1 + x² or x² + y² in them go through hypot (fxad/rules/ufunc_math.py),
# which neither overflows nor underflows: 1 / (1 + x²) = (1 / hypot(1, x))², finite and right
# at |x| = 1e160 and 1e-300.
# A complex x has no hypot (NumPy's is real-only) and needs none: 1 + z² is the derivative's
# own formula on the principal branch (the cuts of sqrt(1 + z²) are arcsinh's).
def _inv_hypot1(x):
    if _is_complex(x):
        return rsqrt(add(1.0, mul(x, x)))
    return div(1.0, ops.hypot(x, 1.0))


arctan_p = elementwise("arctan", np.arctan)
defderiv(arctan_p, lambda x: div(1.0, add(1.0, mul(x, x))) if _is_complex(x)
         else integer_pow(_inv_hypot1(x), 2))
def arctan(x): return arctan_p.bind(x)


arctan2_p = elementwise("arctan2", np.arctan2)  # arctan2(y, x) = angle of (x, y)
def _arctan2_partials(needed, y, x):
    r = ops.hypot(x, y)  # x / (x² + y²) = (x / r) / r: x² + y² would overflow or underflow
    return [div(div(x, r), r) if needed[0] else None,
            neg(div(div(y, r), r)) if needed[1] else None]
defderiv(arctan2_p, _arctan2_partials)
def arctan2(y, x): return arctan2_p.bind(y, x)


tanh_p = elementwise("tanh", np.tanh)
defderiv(tanh_p, lambda ans, x: sub(1.0, mul(ans, ans)), with_output=True)
tanh_p.def_jet(unary(taylor.tanh_series))
def tanh(x): return tanh_p.bind(x)


sinh_p = elementwise("sinh", np.sinh)
defderiv(sinh_p, lambda x: cosh(x))
sinh_p.def_jet(unary(taylor.sinh_series))
def sinh(x): return sinh_p.bind(x)


cosh_p = elementwise("cosh", np.cosh)
defderiv(cosh_p, lambda x: sinh(x))
cosh_p.def_jet(unary(taylor.cosh_series))
def cosh(x): return cosh_p.bind(x)


arcsinh_p = elementwise("arcsinh", np.arcsinh)
defderiv(arcsinh_p, lambda x: _inv_hypot1(x))
def arcsinh(x): return arcsinh_p.bind(x)


arccosh_p = elementwise("arccosh", np.arccosh)  # 1 / sqrt(x - 1) sqrt(x + 1): no x² overflow
defderiv(arccosh_p, lambda x: mul(rsqrt(sub(x, 1.0)), rsqrt(add(x, 1.0))))
def arccosh(x): return arccosh_p.bind(x)


arctanh_p = elementwise("arctanh", np.arctanh)
defjvp(arctanh_p, lambda t, x: div(t, sub(1.0, mul(x, x))))
def arctanh(x): return arctanh_p.bind(x)


# --- piecewise -----------------------------------------------------------------------------

abs_p = elementwise("abs", np.abs)
# |z|' = Re(conj(z) dz) / |z| for complex z (0 at z = 0, as sign(0) = 0 is for real x and
# as JAX has it: the unselected branch divides by 1); sign(x) for real x.
defjvp_with_output(abs_p, lambda t, ans, x: (
    div(real(mul(t, conj(x))), select(eq(ans, 0), 1.0, ans)) if _is_complex(x)
    else mul(t, sign(x))))  # (not defderiv: complex t enters through real())
def _is_complex(x): return _is_complex_dtype(dtype_of(x))
def abs(x): return abs_p.bind(x)


def _extremum_partials(first_wins):
    """max/min: 1 where an operand wins, 1/2 on ties (the derivative is split evenly, as JAX
    does); the tie mask is computed once for both operands."""
    def partials(needed, ans, x, y):
        dt = dtype_of(ans)
        half_tie = mul(0.5, convert_element_type(eq(x, y), dt))
        return [add(convert_element_type(first_wins(x, y), dt), half_tie) if needed[0] else None,
                add(convert_element_type(first_wins(y, x), dt), half_tie) if needed[1] else None]
    return partials


max_p = elementwise("max", np.maximum)
defderiv(max_p, _extremum_partials(lambda x, y: gt(x, y)), with_output=True)
def max(x, y): return max_p.bind(x, y)


min_p = elementwise("min", np.minimum)
defderiv(min_p, _extremum_partials(lambda x, y: lt(x, y)), with_output=True)
def min(x, y): return min_p.bind(x, y)


floor_divide_p = elementwise("floor_divide", np.floor_divide)  # integer-preserving x // y
defjvp_zero(floor_divide_p)
def floor_divide(x, y): return floor_divide_p.bind(x, y)


rem_p = elementwise("rem", np.remainder)  # NumPy's x % y (sign of y)
defjvp(rem_p, lambda t, x, y: t, lambda t, x, y: mul(t, neg(floor_divide(x, y))))  # d/dx = 1
def rem(x, y): return rem_p.bind(x, y)


fmod_p = elementwise("fmod", np.fmod)  # C's fmod (sign of x): x - trunc(x / y) * y
defjvp(fmod_p, lambda t, x, y: t, lambda t, x, y: mul(t, neg(trunc(div(x, y)))))  # d/dx = 1
def fmod(x, y): return fmod_p.bind(x, y)


# --- complex parts (R-linear: transposes follow JAX's convention, grad = d/dx - i d/dy) --------

real_p = elementwise("real", np.real, memory="views")
real_p.def_lowering(fusible(lambda fz, args: fz.inline("{0}.real", args, fz.out_aval.dtype)
                            if args[0].dtype.kind == "c" else args[0]), backend="numba")
deflinear(real_p, lambda ct, z: [complex_(ct, mul(ct, 0.0))])
def real(z): return real_p.bind(z) if _is_complex(z) else z


imag_p = elementwise("imag", np.imag, memory="views")
imag_p.def_lowering(fusible(lambda fz, args: fz.inline("{0}.imag", args, fz.out_aval.dtype)
                            if args[0].dtype.kind == "c" else fz.cast(0, fz.out_aval.dtype)),
                    backend="numba")
deflinear(imag_p, lambda ct, z: [complex_(mul(ct, 0.0), neg(ct))  # a real z has imag(z) = 0
                                 if z.aval.dtype.kind == "c" else None])
def imag(z): return imag_p.bind(z)


conj_p = elementwise("conj", np.conj)
deflinear(conj_p, lambda ct, z: [conj(ct)])
def conj(z): return conj_p.bind(z) if _is_complex(z) else z


complex_p = elementwise("complex", lambda x, y: np.add(x, np.multiply(y, 1j)))  # x + iy
complex_p.def_lowering(fusible(lambda fz, args: fz.ufunc(
    np.add, args[0], fz.ufunc(np.multiply, args[1], 1j))), backend="numba")
defjvp(complex_p, lambda t, x, y: complex_(t, mul(t, 0.0)),
       lambda t, x, y: complex_(mul(t, 0.0), t))
complex_p.def_transpose(lambda ct, x, y: [
    unbroadcast(real(ct), x.aval) if is_undefined(x) else None,
    unbroadcast(neg(imag(ct)), y.aval) if is_undefined(y) else None])  # Re(ct·i·y) = -Im(ct)y
def complex_(x, y): return complex_p.bind(x, y)


# Piecewise-constant functions and predicates: zero derivative everywhere it exists.
sign_p = elementwise("sign", np.sign)
defjvp_zero(sign_p)
def sign(x):  # complex: z/|z|, which is not piecewise constant, so built from div and abs
    return div(x, abs(x)) if _is_complex(x) else sign_p.bind(x)


floor_p = elementwise("floor", np.floor)
defjvp_zero(floor_p)
def floor(x): return floor_p.bind(x)


ceil_p = elementwise("ceil", np.ceil)
defjvp_zero(ceil_p)
def ceil(x): return ceil_p.bind(x)


trunc_p = elementwise("trunc", np.trunc)
defjvp_zero(trunc_p)
def trunc(x): return trunc_p.bind(x)


round_p = elementwise("round", lambda x, decimals: np.round(x, decimals))
round_p.def_lowering(fusible(lambda fz, args, decimals: None if decimals else (  # NumPy: rint
    fz.ufunc(np.rint, args[0]) if args[0].dtype.kind == "f" else args[0])), backend="numba")
defjvp_zero(round_p)
def round(x, decimals=0): return round_p.bind(x, decimals=int(decimals))


stop_gradient_p = elementwise("stop_gradient", lambda x: x, memory="views")
stop_gradient_p.def_lowering(lambda ctx, args: args[0])  # compiled code has no derivatives
stop_gradient_p.def_lowering(fusible(lambda fz, args: args[0]), backend="numba")
defjvp_zero(stop_gradient_p)
def stop_gradient(x): return stop_gradient_p.bind(x)


eq_p = elementwise("eq", np.equal)
defjvp_zero(eq_p)
def eq(x, y): return eq_p.bind(x, y)


ne_p = elementwise("ne", np.not_equal)
defjvp_zero(ne_p)
def ne(x, y): return ne_p.bind(x, y)


lt_p = elementwise("lt", np.less)
defjvp_zero(lt_p)
def lt(x, y): return lt_p.bind(x, y)


le_p = elementwise("le", np.less_equal)
defjvp_zero(le_p)
def le(x, y): return le_p.bind(x, y)


gt_p = elementwise("gt", np.greater)
defjvp_zero(gt_p)
def gt(x, y): return gt_p.bind(x, y)


ge_p = elementwise("ge", np.greater_equal)
defjvp_zero(ge_p)
def ge(x, y): return ge_p.bind(x, y)


logical_and_p = elementwise("logical_and", np.logical_and)
defjvp_zero(logical_and_p)
def logical_and(x, y): return logical_and_p.bind(x, y)


logical_or_p = elementwise("logical_or", np.logical_or)
defjvp_zero(logical_or_p)
def logical_or(x, y): return logical_or_p.bind(x, y)


logical_not_p = elementwise("logical_not", np.logical_not)
defjvp_zero(logical_not_p)
def logical_not(x): return logical_not_p.bind(x)


isfinite_p = elementwise("isfinite", np.isfinite)
defjvp_zero(isfinite_p)
def isfinite(x): return isfinite_p.bind(x)


signbit_p = elementwise("signbit", np.signbit)  # also -0.0 and NaNs with the sign bit set
defjvp_zero(signbit_p)
def signbit(x): return signbit_p.bind(x)


isnan_p = elementwise("isnan", np.isnan)
defjvp_zero(isnan_p)
def isnan(x): return isnan_p.bind(x)

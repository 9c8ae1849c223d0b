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

from ..core import _NP_SCALAR_TYPES, Primitive, is_float
from ..errors import FxadTypeError
from ..interpreters.jvp import Zero
from ..interpreters.transpose import is_undefined
from .helpers import (ct_for, defjvp, defjvp_with_output, defjvp_zero, deflinear,
                      dtype_of, elementwise_shape, fit, unbroadcast)
from ..interpreters.batching import defbatch_elementwise


def elementwise(name, impl):
    p = Primitive(name)
    p.def_impl(impl)
    elementwise_shape(p)
    defbatch_elementwise(p)
    return p


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


def deftranspose(prim, rule):
    prim.linear = True
    prim.transpose = rule


# --- linear arithmetic -------------------------------------------------------------------------

neg_p = elementwise("neg", np.negative)
deflinear(neg_p, lambda ct, x: [neg(ct)])
def neg(x): return neg_p.bind(x)


add_p = elementwise("add", arithmetic(np.add, "add"))
defjvp(add_p, lambda t, x, y: t, lambda t, x, y: t)
deftranspose(add_p, lambda ct, x, y: [ct_for(x, ct), ct_for(y, ct)])
def add(x, y): return add_p.bind(x, y)


sub_p = elementwise("sub", arithmetic(np.subtract, "sub"))
defjvp(sub_p, lambda t, x, y: t, lambda t, x, y: neg(t))
deftranspose(sub_p, lambda ct, x, y: [ct_for(x, ct),
                                      unbroadcast(neg(ct), y.aval) if is_undefined(y) else None])
def sub(x, y): return sub_p.bind(x, y)


def _nonlinear(name):
    raise FxadTypeError(f"cannot transpose '{name}' with both operands linear: the function "
                        "is not linear in its inputs")


mul_p = elementwise("mul", arithmetic(np.multiply, "mul"))
defjvp(mul_p, lambda t, x, y: mul(t, y), lambda t, x, y: mul(x, t))
def _mul_transpose(ct, x, y):
    if is_undefined(x) and is_undefined(y):
        _nonlinear("mul")
    if is_undefined(x):
        return [unbroadcast(mul(ct, y), x.aval), None]
    return [None, unbroadcast(mul(x, ct), y.aval)]
deftranspose(mul_p, _mul_transpose)
def mul(x, y): return mul_p.bind(x, y)


div_p = elementwise("div", arithmetic(np.true_divide, "truediv"))
defjvp_with_output(div_p, lambda t, ans, x, y: div(t, y),
                   lambda t, ans, x, y: mul(t, neg(div(ans, y))))
def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise FxadTypeError("cannot transpose 'div' in its denominator: x / y is not linear in y")
    return [unbroadcast(div(ct, y), x.aval), None]
deftranspose(div_p, _div_transpose)
def div(x, y): return div_p.bind(x, y)


convert_element_type_p = Primitive("convert_element_type")
convert_element_type_p.def_impl(lambda x, new_dtype: np.asarray(x).astype(new_dtype))
convert_element_type_p.def_abstract_eval(
    lambda x, new_dtype: x.__class__(x.shape, new_dtype))
def _convert_jvp(primals, tangents, new_dtype):
    (x,), (t,) = primals, tangents
    ans = convert_element_type(x, new_dtype)
    if type(t) is Zero or not is_float(new_dtype):
        return ans, Zero.like(ans)
    return ans, convert_element_type(t, new_dtype)
convert_element_type_p.jvp = _convert_jvp
deftranspose(convert_element_type_p,
             lambda ct, x, new_dtype: [convert_element_type(
                 real(ct) if not _is_complex_dtype(x.aval.dtype) else ct, x.aval.dtype)])
def _is_complex_dtype(dt): return np.issubdtype(dt, np.complexfloating)
defbatch_elementwise(convert_element_type_p)
def convert_element_type(x, new_dtype):
    new_dtype = np.dtype(new_dtype)
    if dtype_of(x) == new_dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype)


select_p = elementwise("select", np.where)  # select(pred, on_true, on_false) = np.where
def _select_jvp(primals, tangents):
    pred, a, b = primals
    _, ta, tb = tangents
    ans = select(pred, a, b)
    if type(ta) is Zero and type(tb) is Zero:
        return ans, Zero.like(ans)
    t = select(pred, 0.0 if type(ta) is Zero else ta, 0.0 if type(tb) is Zero else tb)
    return ans, fit(t, ans)
select_p.jvp = _select_jvp
deftranspose(select_p, lambda ct, pred, a, b: [
    None,
    unbroadcast(select(pred, ct, 0.0), a.aval) if is_undefined(a) else None,
    unbroadcast(select(pred, 0.0, ct), b.aval) if is_undefined(b) else None])
def select(pred, on_true, on_false): return select_p.bind(pred, on_true, on_false)


# --- powers, exponentials, logarithms ------------------------------------------------------

def _integer_pow_impl(x, y):
    if y == 2:
        return np.square(x)
    if y < 0 and np.issubdtype(np.asarray(x).dtype, np.integer):
        return np.power(np.asarray(x, float), y)
    return np.power(x, y)
integer_pow_p = elementwise("integer_pow", _integer_pow_impl)
defjvp(integer_pow_p, lambda t, x, y: (
    t if y == 1 else mul(t, 0.0) if y == 0 else
    mul(t, mul(y, x if y == 2 else integer_pow(x, y - 1)))))
def integer_pow(x, y): return integer_pow_p.bind(x, y=int(y))


_POW_RULES = (
    lambda t, ans, x, y: mul(t, mul(y, pow(x, sub(y, 1)))),
    # d/dy x**y = log(x) x**y; at x == 0 it is 0 (for y > 0), not nan.
    lambda t, ans, x, y: mul(t, mul(ans, log(select(eq(x, 0), 1.0, x)))))
pow_p = elementwise("pow", np.power)
defjvp_with_output(pow_p, *_POW_RULES)
def pow(x, y): return pow_p.bind(x, y)


# float_power: power computed in float64 (complex128), by NumPy's own loop (it rounds
# differently from np.power's); the operands are widened by fxad.numpy.float_power.
float_power_p = elementwise("float_power", np.float_power)
defjvp_with_output(float_power_p, *_POW_RULES)
def float_power(x, y): return float_power_p.bind(x, y)


exp_p = elementwise("exp", np.exp)
defjvp_with_output(exp_p, lambda t, ans, x: mul(t, ans))
def exp(x): return exp_p.bind(x)


_LN2, _LN10 = float(np.log(2.0)), float(np.log(10.0))

exp2_p = elementwise("exp2", np.exp2)
defjvp_with_output(exp2_p, lambda t, ans, x: mul(t, mul(ans, _LN2)))
def exp2(x): return exp2_p.bind(x)


log_p = elementwise("log", np.log)
defjvp(log_p, lambda t, x: div(t, x))
def log(x): return log_p.bind(x)


# (t / ln b) / x: x ln b would lose digits for subnormal x, t / x overflow before the scaling.
log2_p = elementwise("log2", np.log2)
defjvp(log2_p, lambda t, x: div(mul(t, 1 / _LN2), x))
def log2(x): return log2_p.bind(x)


log10_p = elementwise("log10", np.log10)
defjvp(log10_p, lambda t, x: div(mul(t, 1 / _LN10), x))
def log10(x): return log10_p.bind(x)


log1p_p = elementwise("log1p", np.log1p)
defjvp(log1p_p, lambda t, x: div(t, add(x, 1.0)))
def log1p(x): return log1p_p.bind(x)


expm1_p = elementwise("expm1", np.expm1)
defjvp_with_output(expm1_p, lambda t, ans, x: mul(t, add(ans, 1.0)))
def expm1(x): return expm1_p.bind(x)


sqrt_p = elementwise("sqrt", np.sqrt)
defjvp_with_output(sqrt_p, lambda t, ans, x: div(t, mul(2.0, ans)))
def sqrt(x): return sqrt_p.bind(x)


cbrt_p = elementwise("cbrt", np.cbrt)  # real cube root (negative for negative x)
defjvp_with_output(cbrt_p, lambda t, ans, x: div(t, mul(mul(ans, ans), 3.0)))
def cbrt(x): return cbrt_p.bind(x)


rsqrt_p = elementwise("rsqrt", lambda x: 1.0 / np.sqrt(x))
defjvp_with_output(rsqrt_p, lambda t, ans, x: mul(t, mul(-0.5, div(ans, x))))
def rsqrt(x): return rsqrt_p.bind(x)


logistic_p = elementwise("logistic", scipy.special.expit)
defjvp_with_output(logistic_p, lambda t, ans, x: mul(t, mul(ans, sub(1.0, ans))))
def logistic(x): return logistic_p.bind(x)


# --- trigonometric and hyperbolic ----------------------------------------------------------

sin_p = elementwise("sin", np.sin)
defjvp(sin_p, lambda t, x: mul(t, cos(x)))
def sin(x): return sin_p.bind(x)


cos_p = elementwise("cos", np.cos)
defjvp(cos_p, lambda t, x: mul(t, neg(sin(x))))
def cos(x): return cos_p.bind(x)


tan_p = elementwise("tan", np.tan)
defjvp_with_output(tan_p, lambda t, ans, x: mul(t, add(1.0, mul(ans, ans))))
def tan(x): return tan_p.bind(x)


arcsin_p = elementwise("arcsin", np.arcsin)
defjvp(arcsin_p, lambda t, x: mul(t, rsqrt(sub(1.0, mul(x, x)))))
def arcsin(x): return arcsin_p.bind(x)


arccos_p = elementwise("arccos", np.arccos)
defjvp(arccos_p, lambda t, x: mul(t, neg(rsqrt(sub(1.0, mul(x, x))))))
def arccos(x): return arccos_p.bind(x)


# Derivatives with 1 + x² or x² + y² in them go through hypot, which neither overflows nor
# underflows: 1 / (1 + x²) = (1 / hypot(1, x))², finite and right at |x| = 1e160 and 1e-300.
hypot_p = elementwise("hypot", np.hypot)
def _hypot_d(t, x, y):
    """x / hypot(x, y) on x and y divided by m = max(|x|, |y|): a subnormal hypot has lost
    digits, a scaled one has not. The ratio is homogeneous of degree 0, so a constant m
    changes no derivative. 0 (a subgradient) at the origin, not 0 / 0."""
    m = stop_gradient(max(abs(x), abs(y)))
    m = select(logical_and(isfinite(m), ne(m, 0)), m, 1.0)  # inf: x / inf = 0 as it is
    xs, ys = div(x, m), div(y, m)
    r = hypot(xs, ys)
    return mul(t, div(xs, select(eq(r, 0), 1.0, r)))
defjvp(hypot_p, _hypot_d, lambda t, x, y: _hypot_d(t, y, x))
def hypot(x, y): return hypot_p.bind(x, y)


def _inv_hypot1(x):
    return div(1.0, hypot(x, 1.0))


arctan_p = elementwise("arctan", np.arctan)
defjvp(arctan_p, lambda t, x: mul(t, integer_pow(_inv_hypot1(x), 2)))
def arctan(x): return arctan_p.bind(x)


arctan2_p = elementwise("arctan2", np.arctan2)  # arctan2(y, x) = angle of (x, y)
defjvp(arctan2_p,  # x / (x² + y²) = (x / r) / r with r = hypot(x, y)
       lambda t, y, x: mul(t, div(div(x, hypot(x, y)), hypot(x, y))),
       lambda t, y, x: mul(t, neg(div(div(y, hypot(x, y)), hypot(x, y)))))
def arctan2(y, x): return arctan2_p.bind(y, x)


tanh_p = elementwise("tanh", np.tanh)
defjvp_with_output(tanh_p, lambda t, ans, x: mul(t, sub(1.0, mul(ans, ans))))
def tanh(x): return tanh_p.bind(x)


sinh_p = elementwise("sinh", np.sinh)
defjvp(sinh_p, lambda t, x: mul(t, cosh(x)))
def sinh(x): return sinh_p.bind(x)


cosh_p = elementwise("cosh", np.cosh)
defjvp(cosh_p, lambda t, x: mul(t, sinh(x)))
def cosh(x): return cosh_p.bind(x)


arcsinh_p = elementwise("arcsinh", np.arcsinh)
defjvp(arcsinh_p, lambda t, x: mul(t, _inv_hypot1(x)))
def arcsinh(x): return arcsinh_p.bind(x)


arccosh_p = elementwise("arccosh", np.arccosh)  # 1 / sqrt(x - 1) sqrt(x + 1): no x² overflow
defjvp(arccosh_p, lambda t, x: mul(t, mul(rsqrt(sub(x, 1.0)), rsqrt(add(x, 1.0)))))
def arccosh(x): return arccosh_p.bind(x)


arctanh_p = elementwise("arctanh", np.arctanh)
defjvp(arctanh_p, lambda t, x: div(t, sub(1.0, mul(x, x))))
def arctanh(x): return arctanh_p.bind(x)


# --- piecewise -----------------------------------------------------------------------------

abs_p = elementwise("abs", np.abs)
# |z|' = Re(conj(z) dz) / |z| for complex z; sign(x) for real x.
defjvp_with_output(abs_p, lambda t, ans, x: div(real(mul(t, conj(x))), ans) if _is_complex(x)
                   else mul(t, sign(x)))
def _is_complex(x): return _is_complex_dtype(dtype_of(x))
def abs(x): return abs_p.bind(x)


def _tie_weight(win, tie, like):
    """1 where this operand wins, 1/2 on ties (the derivative is split evenly, as JAX does)."""
    dt = dtype_of(like)
    return add(convert_element_type(win, dt), mul(0.5, convert_element_type(tie, dt)))


max_p = elementwise("max", np.maximum)
defjvp_with_output(max_p,
                   lambda t, ans, x, y: mul(t, _tie_weight(gt(x, y), eq(x, y), ans)),
                   lambda t, ans, x, y: mul(t, _tie_weight(lt(x, y), eq(x, y), ans)))
def max(x, y): return max_p.bind(x, y)


min_p = elementwise("min", np.minimum)
defjvp_with_output(min_p,
                   lambda t, ans, x, y: mul(t, _tie_weight(lt(x, y), eq(x, y), ans)),
                   lambda t, ans, x, y: mul(t, _tie_weight(gt(x, y), eq(x, y), ans)))
def min(x, y): return min_p.bind(x, y)


floor_divide_p = elementwise("floor_divide", np.floor_divide)  # integer-preserving x // y
defjvp_zero(floor_divide_p)
def floor_divide(x, y): return floor_divide_p.bind(x, y)


rem_p = elementwise("rem", np.remainder)  # NumPy's x % y (sign of y)
defjvp(rem_p, lambda t, x, y: t, lambda t, x, y: mul(t, neg(floor_divide(x, y))))
def rem(x, y): return rem_p.bind(x, y)


fmod_p = elementwise("fmod", np.fmod)  # C's fmod (sign of x): x - trunc(x / y) * y
defjvp(fmod_p, lambda t, x, y: t, lambda t, x, y: mul(t, neg(trunc(div(x, y)))))
def fmod(x, y): return fmod_p.bind(x, y)


# --- complex parts (R-linear: transposes follow JAX's convention, grad = d/dx - i d/dy) --------

real_p = elementwise("real", np.real)
deflinear(real_p, lambda ct, z: [complex_(ct, mul(ct, 0.0))])
def real(z): return real_p.bind(z) if _is_complex(z) else z


imag_p = elementwise("imag", np.imag)
deflinear(imag_p, lambda ct, z: [complex_(mul(ct, 0.0), neg(ct))  # a real z has imag(z) = 0
                                 if z.aval.dtype.kind == "c" else None])
def imag(z): return imag_p.bind(z)


conj_p = elementwise("conj", np.conj)
deflinear(conj_p, lambda ct, z: [conj(ct)])
def conj(z): return conj_p.bind(z) if _is_complex(z) else z


complex_p = elementwise("complex", lambda x, y: np.add(x, np.multiply(y, 1j)))  # x + iy
defjvp(complex_p, lambda t, x, y: complex_(t, mul(t, 0.0)),
       lambda t, x, y: complex_(mul(t, 0.0), t))
deftranspose(complex_p, lambda ct, x, y: [
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
defjvp_zero(round_p)
def round(x, decimals=0): return round_p.bind(x, decimals=int(decimals))


stop_gradient_p = elementwise("stop_gradient", lambda x: x)
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

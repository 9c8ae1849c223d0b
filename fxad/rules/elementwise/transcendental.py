"""Powers, exponentials, logarithms, and the trigonometric and hyperbolic functions (NumPy's
ufuncs as impls). Each JVP is the derivative times the tangent (`defderiv`), reusing the output
(`ans`) where that saves work (exp, tanh, logistic), and written so it neither overflows nor
underflows where the derivative itself is finite.
"""
from __future__ import annotations


import numpy as np
import scipy.special

from ...ir.numba_backend.lowering import fusible
from .. import ops, taylor
from ..helpers import (defderiv, defjvp, defjvp_with_output, elementwise)
from ..taylor import unary
from .arithmetic import _is_complex, add, div, mul, neg, select, sub
from .piecewise import eq, logical_and


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
defderiv(integer_pow_p, lambda x, y: (
    1.0 if y == 1 else 0.0 if y == 0 else mul(y, x if y == 2 else integer_pow(x, y - 1))))
integer_pow_p.def_jet(unary(taylor.integer_pow_series))
integer_pow_p.def_lowering(lambda ctx, args, y: f"_np.square({args[0]})" if y == 2 else None)
def _integer_pow_numba(fz, args, y):  # as the impl: ints to negative powers in float64
    (x,) = args
    if y == 2:
        return fz.ufunc(np.square, x)
    if y == -1 and x.dtype.kind in "fc":
        return fz.ufunc(np.reciprocal, x)
    return fz.ufunc(np.power, fz.cast(x, np.float64) if y < 0 and x.dtype.kind in "iub" else x, y)
integer_pow_p.def_lowering(fusible(_integer_pow_numba), backend="numba")
def integer_pow(x, y):
    """x ** y for a fixed Python integer y (negative allowed), elementwise, with NumPy
    broadcasting; differentiable to any order in forward and reverse mode in x."""
    return integer_pow_p.bind(x, y=int(y))


def _pow_partials(needed, ans, x, y):
    """x**y's partials (shared with float_power, fxad/rules/elementwise/ufunc_math.py). On the
    line y == 0, x**y is 1 for every x (0**0 included), so d/dx = y x**(y-1) is 0: at x == 0
    it is computed with 1 for x, so that 0 * inf does not make it (or higher derivatives)
    nan; elsewhere the formula stays the smooth one (its derivative in y is right)."""
    if needed[0]:
        base = select(logical_and(eq(y, 0), eq(x, 0)), 1, x)
        dx = mul(y, pow(base, sub(y, 1)))
    return [dx if needed[0] else None,
            # d/dy x**y = log(x) x**y; at x == 0 it is 0 (for y > 0), not nan.
            mul(ans, log(select(eq(x, 0), 1.0, x))) if needed[1] else None]


pow_p = elementwise("pow", np.power)
defderiv(pow_p, _pow_partials, with_output=True)
def pow(x, y):
    """x ** y, elementwise, with NumPy broadcasting; differentiable to any order in forward and
    reverse mode in x and in y."""
    return pow_p.bind(x, y)


exp_p = elementwise("exp", np.exp)
defderiv(exp_p, lambda ans, x: ans, with_output=True)
exp_p.def_jet(unary(taylor.exp_series))
def exp(x):
    """e ** x, elementwise, with NumPy broadcasting; differentiable to any order in forward and
    reverse mode."""
    return exp_p.bind(x)


log_p = elementwise("log", np.log)
defjvp(log_p, lambda t, x: div(t, x))
log_p.def_jet(unary(taylor.log_series))
def log(x):
    """The natural logarithm, elementwise, with NumPy broadcasting; differentiable to any order in
    forward and reverse mode."""
    return log_p.bind(x)


log1p_p = elementwise("log1p", np.log1p)
defjvp(log1p_p, lambda t, x: div(t, add(x, 1.0)))
log1p_p.def_jet(unary(taylor.log1p_series))
def log1p(x):
    """log(1 + x), accurate for small x, elementwise, with NumPy broadcasting; differentiable to
    any order in forward and reverse mode."""
    return log1p_p.bind(x)


expm1_p = elementwise("expm1", np.expm1)
defderiv(expm1_p, lambda ans, x: add(ans, 1.0), with_output=True)
expm1_p.def_jet(unary(taylor.expm1_series))
def expm1(x):
    """e ** x - 1, accurate for small x, elementwise, with NumPy broadcasting; differentiable to
    any order in forward and reverse mode."""
    return expm1_p.bind(x)


sqrt_p = elementwise("sqrt", np.sqrt)
defjvp_with_output(sqrt_p, lambda t, ans, x: div(t, mul(2.0, ans)))
sqrt_p.def_jet(unary(taylor.sqrt_jet_series))
def sqrt(x):
    """The square root, elementwise, with NumPy broadcasting; differentiable to any order in
    forward and reverse mode."""
    return sqrt_p.bind(x)


cbrt_p = elementwise("cbrt", np.cbrt)  # real cube root (negative for negative x)
defjvp_with_output(cbrt_p, lambda t, ans, x: div(t, mul(mul(ans, ans), 3.0)))
cbrt_p.def_jet(unary(taylor.cbrt_series))
def cbrt(x):
    """The real cube root (negative for negative x), elementwise, with NumPy broadcasting;
    differentiable to any order in forward and reverse mode (infinite derivative at 0)."""
    return cbrt_p.bind(x)


rsqrt_p = elementwise("rsqrt", lambda x: 1.0 / np.sqrt(x))
defderiv(rsqrt_p, lambda ans, x: mul(-0.5, div(ans, x)), with_output=True)
rsqrt_p.def_jet(unary(taylor.rsqrt_series))
rsqrt_p.def_lowering(fusible(lambda fz, args: fz.ufunc(np.true_divide, 1.0,
                                                      fz.ufunc(np.sqrt, args[0]))), backend="numba")
def rsqrt(x):
    """1 / sqrt(x), elementwise, with NumPy broadcasting; differentiable to any order in forward
    and reverse mode."""
    return rsqrt_p.bind(x)


logistic_p = elementwise("logistic", scipy.special.expit)
defderiv(logistic_p, lambda ans, x: mul(ans, sub(1.0, ans)), with_output=True)
logistic_p.def_jet(unary(taylor.logistic_series))
def logistic(x):
    """The logistic sigmoid 1 / (1 + e ** -x) (`fxad.nn.sigmoid`), elementwise, with NumPy
    broadcasting; differentiable to any order in forward and reverse mode, finite everywhere."""
    return logistic_p.bind(x)


# --- trigonometric and hyperbolic ----------------------------------------------------------

sin_p = elementwise("sin", np.sin)
defderiv(sin_p, lambda x: cos(x))
sin_p.def_jet(unary(taylor.sin_series))
def sin(x):
    """The sine, elementwise, with NumPy broadcasting; differentiable to any order in forward and
    reverse mode."""
    return sin_p.bind(x)


cos_p = elementwise("cos", np.cos)
defderiv(cos_p, lambda x: neg(sin(x)))
cos_p.def_jet(unary(taylor.cos_series))
def cos(x):
    """The cosine, elementwise, with NumPy broadcasting; differentiable to any order in forward
    and reverse mode."""
    return cos_p.bind(x)


tan_p = elementwise("tan", np.tan)
defderiv(tan_p, lambda ans, x: add(1.0, mul(ans, ans)), with_output=True)
tan_p.def_jet(unary(taylor.tan_series))
def tan(x):
    """The tangent, elementwise, with NumPy broadcasting; differentiable to any order in forward
    and reverse mode."""
    return tan_p.bind(x)


arcsin_p = elementwise("arcsin", np.arcsin)
defderiv(arcsin_p, lambda x: rsqrt(sub(1.0, mul(x, x))))
def arcsin(x):
    """The inverse sine, elementwise, with NumPy broadcasting (alias `asin`); differentiable to
    any order in forward and reverse mode."""
    return arcsin_p.bind(x)


arccos_p = elementwise("arccos", np.arccos)
defderiv(arccos_p, lambda x: neg(rsqrt(sub(1.0, mul(x, x)))))
def arccos(x):
    """The inverse cosine, elementwise, with NumPy broadcasting (alias `acos`); differentiable to
    any order in forward and reverse mode."""
    return arccos_p.bind(x)


# Derivatives with 1 + x² or x² + y² in them go through hypot (fxad/rules/elementwise/ufunc_math.py),
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
def arctan(x):
    """The inverse tangent, elementwise, with NumPy broadcasting (alias `atan`); differentiable to
    any order in forward and reverse mode."""
    return arctan_p.bind(x)


arctan2_p = elementwise("arctan2", np.arctan2)  # arctan2(y, x) = angle of (x, y)
def _arctan2_partials(needed, y, x):
    r = ops.hypot(x, y)  # x / (x² + y²) = (x / r) / r: x² + y² would overflow or underflow
    return [div(div(x, r), r) if needed[0] else None,
            neg(div(div(y, r), r)) if needed[1] else None]
defderiv(arctan2_p, _arctan2_partials)
def arctan2(y, x):
    """The angle of the point (x, y), in (-pi, pi], elementwise, with NumPy broadcasting (alias
    `atan2`); differentiable to any order in forward and reverse mode in y and x."""
    return arctan2_p.bind(y, x)


tanh_p = elementwise("tanh", np.tanh)
defderiv(tanh_p, lambda ans, x: sub(1.0, mul(ans, ans)), with_output=True)
tanh_p.def_jet(unary(taylor.tanh_series))
def tanh(x):
    """The hyperbolic tangent, elementwise, with NumPy broadcasting; differentiable to any order
    in forward and reverse mode."""
    return tanh_p.bind(x)


sinh_p = elementwise("sinh", np.sinh)
defderiv(sinh_p, lambda x: cosh(x))
sinh_p.def_jet(unary(taylor.sinh_series))
def sinh(x):
    """The hyperbolic sine, elementwise, with NumPy broadcasting; differentiable to any order in
    forward and reverse mode."""
    return sinh_p.bind(x)


cosh_p = elementwise("cosh", np.cosh)
defderiv(cosh_p, lambda x: sinh(x))
cosh_p.def_jet(unary(taylor.cosh_series))
def cosh(x):
    """The hyperbolic cosine, elementwise, with NumPy broadcasting; differentiable to any order in
    forward and reverse mode."""
    return cosh_p.bind(x)


arcsinh_p = elementwise("arcsinh", np.arcsinh)
defderiv(arcsinh_p, lambda x: _inv_hypot1(x))
def arcsinh(x):
    """The inverse hyperbolic sine, elementwise, with NumPy broadcasting (alias `asinh`);
    differentiable to any order in forward and reverse mode."""
    return arcsinh_p.bind(x)


arccosh_p = elementwise("arccosh", np.arccosh)  # 1 / sqrt(x - 1) sqrt(x + 1): no x² overflow
defderiv(arccosh_p, lambda x: mul(rsqrt(sub(x, 1.0)), rsqrt(add(x, 1.0))))
def arccosh(x):
    """The inverse hyperbolic cosine, elementwise, with NumPy broadcasting (alias `acosh`);
    differentiable to any order in forward and reverse mode."""
    return arccosh_p.bind(x)


arctanh_p = elementwise("arctanh", np.arctanh)
defjvp(arctanh_p, lambda t, x: div(t, sub(1.0, mul(x, x))))
def arctanh(x):
    """The inverse hyperbolic tangent, elementwise, with NumPy broadcasting (alias `atanh`);
    differentiable to any order in forward and reverse mode."""
    return arctanh_p.bind(x)


# the bind wrappers fxad.lax exports (through rules/ops.py)
__all__ = ["arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "cbrt", "cos",
           "cosh", "exp", "expm1", "integer_pow", "log", "log1p", "logistic", "pow", "rsqrt", "sin",
           "sinh", "sqrt", "tan", "tanh"]

"""Piecewise elementwise functions: abs, max, min, floor division and remainders (derivatives
where they exist, ties split evenly), and the piecewise-constant functions and predicates
(sign, floor, round, comparisons, logical operations, isnan, ...), whose derivative is zero.
stop_gradient is the identity with a zero derivative.
"""
from __future__ import annotations


import numpy as np

from ...ir.numba_backend.lowering import fusible
from ..helpers import (defderiv, defjvp, defjvp_with_output, defjvp_zero, dtype_of,
                       elementwise)
from .arithmetic import (_is_complex, add, conj, convert_element_type, div, mul, neg, real,
                         select)



# --- piecewise -----------------------------------------------------------------------------

abs_p = elementwise("abs", np.abs)
# |z|' = Re(conj(z) dz) / |z| for complex z (0 at z = 0, as sign(0) = 0 is for real x and
# as JAX has it: the unselected branch divides by 1); sign(x) for real x.
defjvp_with_output(abs_p, lambda t, ans, x: (
    div(real(mul(t, conj(x))), select(eq(ans, 0), 1.0, ans)) if _is_complex(x)
    else mul(t, sign(x))))  # (not defderiv: complex t enters through real())
def abs(x):
    """|x|, elementwise, with NumPy broadcasting (the modulus of a complex x); differentiable to
    any order in forward and reverse mode, with derivative sign(x) (0 at 0)."""
    return abs_p.bind(x)


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
def max(x, y):
    """The larger of x and y, elementwise, with NumPy broadcasting (NaN if either is NaN);
    differentiable to any order in forward and reverse mode, the derivative split evenly at
    ties."""
    return max_p.bind(x, y)


min_p = elementwise("min", np.minimum)
defderiv(min_p, _extremum_partials(lambda x, y: lt(x, y)), with_output=True)
def min(x, y):
    """The smaller of x and y, elementwise, with NumPy broadcasting (NaN if either is NaN);
    differentiable to any order in forward and reverse mode, the derivative split evenly at
    ties."""
    return min_p.bind(x, y)


floor_divide_p = elementwise("floor_divide", np.floor_divide)  # integer-preserving x // y
defjvp_zero(floor_divide_p)
def floor_divide(x, y):
    """floor(x / y), elementwise, with NumPy broadcasting; its derivative is 0 almost everywhere."""
    return floor_divide_p.bind(x, y)


rem_p = elementwise("rem", np.remainder)  # NumPy's x % y (sign of y)
defjvp(rem_p, lambda t, x, y: t, lambda t, x, y: mul(t, neg(floor_divide(x, y))))  # d/dx = 1
def rem(x, y):
    """x - y * floor(x / y): the remainder with the sign of y, as NumPy's `remainder` (the
    primitive behind `fxad.numpy.remainder`; `fxad.lax.rem` is JAX's, the sign of x: `fmod`),
    elementwise, with NumPy broadcasting;
    differentiable to any order in forward and reverse mode in x and y (piecewise)."""
    return rem_p.bind(x, y)


fmod_p = elementwise("fmod", np.fmod)  # C's fmod (sign of x): x - trunc(x / y) * y
defjvp(fmod_p, lambda t, x, y: t, lambda t, x, y: mul(t, neg(trunc(div(x, y)))))  # d/dx = 1
def fmod(x, y):
    """The remainder of x / y with the sign of x (C's fmod, NumPy's `fmod`), elementwise, with
    NumPy broadcasting; differentiable to any order in forward and reverse mode in x and y
    (piecewise: x - trunc(x / y) y)."""
    return fmod_p.bind(x, y)



# Piecewise-constant functions and predicates: zero derivative everywhere it exists.
sign_p = elementwise("sign", np.sign)
defjvp_zero(sign_p)
def sign(x):  # complex: z/|z|, which is not piecewise constant, so built from div and abs
    """-1, 0 or 1 by the sign of x (x / |x| for complex x), elementwise, with NumPy broadcasting;
    its derivative is 0 almost everywhere."""
    return div(x, abs(x)) if _is_complex(x) else sign_p.bind(x)


floor_p = elementwise("floor", np.floor)
defjvp_zero(floor_p)
def floor(x):
    """The largest integer value not above x, elementwise, with NumPy broadcasting; its derivative
    is 0 almost everywhere."""
    return floor_p.bind(x)


ceil_p = elementwise("ceil", np.ceil)
defjvp_zero(ceil_p)
def ceil(x):
    """The smallest integer value not below x, elementwise, with NumPy broadcasting; its
    derivative is 0 almost everywhere."""
    return ceil_p.bind(x)


trunc_p = elementwise("trunc", np.trunc)
defjvp_zero(trunc_p)
def trunc(x):
    """x rounded toward zero, elementwise, with NumPy broadcasting; its derivative is 0 almost
    everywhere."""
    return trunc_p.bind(x)


round_p = elementwise("round", lambda x, decimals: np.round(x, decimals))
defjvp_zero(round_p)
round_p.def_lowering(fusible(lambda fz, args, decimals: None if decimals else (  # NumPy: rint
    fz.ufunc(np.rint, args[0]) if args[0].dtype.kind == "f" else args[0])), backend="numba")
def round(x, decimals=0):
    """x rounded to `decimals` decimal places, ties to even as NumPy's `round` (the primitive
    behind `fxad.numpy.round`; `fxad.lax.round` is JAX's, ties away from zero by default),
    elementwise, with NumPy broadcasting; its derivative is 0 almost everywhere."""
    return round_p.bind(x, decimals=int(decimals))


stop_gradient_p = elementwise("stop_gradient", lambda x: x, memory="views")
defjvp_zero(stop_gradient_p)
stop_gradient_p.def_lowering(lambda ctx, args: args[0])  # compiled code has no derivatives
stop_gradient_p.def_lowering(fusible(lambda fz, args: args[0]), backend="numba")
def stop_gradient(x):
    """x, as a constant to every transformation: its derivative is 0 in forward and reverse mode
    at every order, and its value is unchanged."""
    return stop_gradient_p.bind(x)


eq_p = elementwise("eq", np.equal)
defjvp_zero(eq_p)
def eq(x, y):
    """x == y, elementwise, with NumPy broadcasting; boolean, so not differentiable (the
    derivative through it is zero)."""
    return eq_p.bind(x, y)


ne_p = elementwise("ne", np.not_equal)
defjvp_zero(ne_p)
def ne(x, y):
    """x != y, elementwise, with NumPy broadcasting; boolean, so not differentiable (the
    derivative through it is zero)."""
    return ne_p.bind(x, y)


lt_p = elementwise("lt", np.less)
defjvp_zero(lt_p)
def lt(x, y):
    """x < y, elementwise, with NumPy broadcasting; boolean, so not differentiable (the derivative
    through it is zero)."""
    return lt_p.bind(x, y)


le_p = elementwise("le", np.less_equal)
defjvp_zero(le_p)
def le(x, y):
    """x <= y, elementwise, with NumPy broadcasting; boolean, so not differentiable (the
    derivative through it is zero)."""
    return le_p.bind(x, y)


gt_p = elementwise("gt", np.greater)
defjvp_zero(gt_p)
def gt(x, y):
    """x > y, elementwise, with NumPy broadcasting; boolean, so not differentiable (the derivative
    through it is zero)."""
    return gt_p.bind(x, y)


ge_p = elementwise("ge", np.greater_equal)
defjvp_zero(ge_p)
def ge(x, y):
    """x >= y, elementwise, with NumPy broadcasting; boolean, so not differentiable (the
    derivative through it is zero)."""
    return ge_p.bind(x, y)


logical_and_p = elementwise("logical_and", np.logical_and)
defjvp_zero(logical_and_p)
def logical_and(x, y):
    """x and y for booleans (bitwise and for integers), elementwise, with NumPy broadcasting."""
    return logical_and_p.bind(x, y)


logical_or_p = elementwise("logical_or", np.logical_or)
defjvp_zero(logical_or_p)
def logical_or(x, y):
    """x or y for booleans (bitwise or for integers), elementwise, with NumPy broadcasting."""
    return logical_or_p.bind(x, y)


logical_not_p = elementwise("logical_not", np.logical_not)
defjvp_zero(logical_not_p)
def logical_not(x):
    """not x for booleans (bitwise not for integers), elementwise, with NumPy broadcasting."""
    return logical_not_p.bind(x)


isfinite_p = elementwise("isfinite", np.isfinite)
defjvp_zero(isfinite_p)
def isfinite(x):
    """Whether x is finite (not inf or NaN), elementwise, with NumPy broadcasting (alias
    `is_finite`); boolean, so not differentiable (the derivative through it is zero)."""
    return isfinite_p.bind(x)


signbit_p = elementwise("signbit", np.signbit)  # also -0.0 and NaNs with the sign bit set
defjvp_zero(signbit_p)
def signbit(x):
    """Whether the sign bit of x is set (true for -0.0), elementwise, with NumPy broadcasting;
    boolean, so not differentiable (the derivative through it is zero)."""
    return signbit_p.bind(x)


isnan_p = elementwise("isnan", np.isnan)
defjvp_zero(isnan_p)
def isnan(x):
    """Whether x is NaN, elementwise, with NumPy broadcasting; boolean, so not differentiable (the
    derivative through it is zero)."""
    return isnan_p.bind(x)


# the bind wrappers fxad.lax exports (through rules/ops.py)
__all__ = ["abs", "ceil", "eq", "floor", "floor_divide", "fmod", "ge", "gt", "isfinite", "isnan",
           "le", "logical_and", "logical_not", "logical_or", "lt", "max", "min", "ne", "rem",
           "round", "sign", "signbit", "stop_gradient", "trunc"]

"""NumPy's math ufuncs as primitives: exp2, log2, log10, float_power, hypot. Each impl is
NumPy's own ufunc, so values, rounding, infinities and dtypes are NumPy's by construction (a
composite of other primitives would be 1 ulp off, or overflow: sqrt(x² + y²) is inf at 1e200);
the JVPs are written not to overflow or underflow either."""
from __future__ import annotations

import numpy as np

from .arithmetic import div, mul, select
from .piecewise import abs, eq, isfinite, logical_and, max, ne, stop_gradient
from .transcendental import _pow_partials
from ..helpers import elementwise
from ..helpers import defderiv, defjvp, defjvp_zero

_LN2, _LN10 = float(np.log(2.0)), float(np.log(10.0))


# float_power: power computed in float64 (complex128), by NumPy's own loop (it rounds
# differently from np.power's); the operands are widened by fxad.numpy.float_power.
float_power_p = elementwise("float_power", np.float_power)
defderiv(float_power_p, _pow_partials, with_output=True)
def float_power(x, y):
    """x ** y computed in float64 (complex128 for complex input), as NumPy's `float_power`;
    differentiable to any order in forward and reverse mode in x and y."""
    return float_power_p.bind(x, y)


exp2_p = elementwise("exp2", np.exp2)
defderiv(exp2_p, lambda ans, x: mul(ans, _LN2), with_output=True)
def exp2(x):
    """2 ** x, elementwise, with NumPy broadcasting; differentiable to any order in forward and
    reverse mode."""
    return exp2_p.bind(x)


# (t / ln b) / x: x ln b would lose digits for subnormal x, t / x overflow before the scaling.
log2_p = elementwise("log2", np.log2)
defjvp(log2_p, lambda t, x: div(mul(t, 1 / _LN2), x))
def log2(x):
    """The base-2 logarithm, elementwise, with NumPy broadcasting; differentiable to any order in
    forward and reverse mode."""
    return log2_p.bind(x)


log10_p = elementwise("log10", np.log10)
defjvp(log10_p, lambda t, x: div(mul(t, 1 / _LN10), x))
def log10(x):
    """The base-10 logarithm, elementwise, with NumPy broadcasting; differentiable to any order in
    forward and reverse mode."""
    return log10_p.bind(x)


hypot_p = elementwise("hypot", np.hypot)
def _hypot_partials(needed, x, y):
    """x / hypot(x, y) on x and y divided by m = max(|x|, |y|): a subnormal hypot has lost
    digits, a scaled one has not. The ratio is homogeneous of degree 0, so a constant m
    changes no derivative. 0 (a subgradient) at the origin, not 0 / 0."""
    m = stop_gradient(max(abs(x), abs(y)))
    m = select(logical_and(isfinite(m), ne(m, 0)), m, 1.0)  # inf: x / inf = 0 as it is
    xs, ys = div(x, m), div(y, m)
    r = hypot(xs, ys)
    r = select(eq(r, 0), 1.0, r)
    return [div(xs, r) if needed[0] else None, div(ys, r) if needed[1] else None]
defderiv(hypot_p, _hypot_partials)
def hypot(x, y):
    """sqrt(x ** 2 + y ** 2) without overflow or underflow in the squares, elementwise, with NumPy
    broadcasting; differentiable to any order in forward and reverse mode."""
    return hypot_p.bind(x, y)


# Integer number theory: integer results, no derivative.
gcd_p = elementwise("gcd", np.gcd)
defjvp_zero(gcd_p)
def gcd(x, y): return gcd_p.bind(x, y)


lcm_p = elementwise("lcm", np.lcm)
defjvp_zero(lcm_p)
def lcm(x, y): return lcm_p.bind(x, y)


__all__ = ["float_power", "exp2", "log2", "log10", "hypot"]


# the bind wrappers fxad.lax exports (through rules/ops.py)
__all__ = ["exp2", "float_power", "hypot", "log10", "log2"]

"""Floating-point and piecewise functions, each NumPy's own ufunc as its impl (so values,
signed zeros, infinities, NaNs and dtypes are NumPy's by construction): copysign, heaviside,
ldexp, modf."""
from __future__ import annotations

import numpy as np

from ...core import Primitive, ShapedArray
from ...interpreters.jvp import Zero
from .arithmetic import mul, select
from .piecewise import eq
from ..helpers import elementwise
from ..helpers import defderiv, defjvp, deflinear, fit, unbroadcast

copysign_p = elementwise("copysign", np.copysign)  # |x| with y's sign bit (also -0.0, NaNs)
defderiv(copysign_p, lambda needed, x, y: [
    mul(copysign(1.0, x), copysign(1.0, y)) if needed[0] else None, None])
def copysign(x, y):
    """The magnitude of x with the sign of y, elementwise, as NumPy's; differentiable to any order
    in x (the derivative in y is 0)."""
    return copysign_p.bind(x, y)


heaviside_p = elementwise("heaviside", np.heaviside)  # 0 below 0, 1 above, y at 0, NaN at NaN
defjvp(heaviside_p, None, lambda t, x, y: select(eq(x, 0), t, 0.0))
def heaviside(x, y):
    """The Heaviside step function (x2 at x1 == 0), as NumPy's; its derivative is 0."""
    return heaviside_p.bind(x, y)


# x · 2**e for an integer e, exactly (no 2**e that overflows or underflows on its own):
# linear in x, and its own transpose.
ldexp_p = elementwise("ldexp", np.ldexp)
deflinear(ldexp_p, lambda ct, x, e: [unbroadcast(ldexp(ct, e), x.aval), None], linear_args=(0,))
def ldexp(x, e):
    """x * 2 ** e, elementwise, as NumPy's; differentiable to any order in x."""
    return ldexp_p.bind(x, e)


modf_p = Primitive("modf", multiple_results=True, memory="fresh")  # (fraction, integral part), x's sign
modf_p.def_impl(lambda x: np.modf(x))
modf_p.def_abstract_eval(lambda x: [ShapedArray(x.shape, np.modf(x.sample())[0].dtype)] * 2)
def _modf_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    frac, whole = modf(x)
    return [frac, whole], [Zero.like(frac) if type(t) is Zero else fit(t, frac),
                           Zero.like(whole)]  # the integral part is piecewise constant
modf_p.def_jvp(_modf_jvp)
modf_p.def_batch(lambda vals, dims: (modf(vals[0]), [dims[0]] * 2))
def modf(x):
    """(fractional part, integral part) of x elementwise, as NumPy's; the fractional part's
    derivative is 1, the integral part's 0."""
    return tuple(modf_p.bind(x))  # a tuple, as NumPy's


__all__ = ["copysign", "heaviside", "ldexp", "modf"]

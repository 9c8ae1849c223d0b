"""Modified Bessel functions of the first kind of integer order, I_v(x) (SciPy's i0, i1,
iv). One primitive with the order as a parameter, so every derivative is again one of them:
d/dx I_v = (I_{v-1} + I_{v+1}) / 2, with I_{-v} = I_v for integer v."""
from __future__ import annotations

import scipy.special as sc

from .elementwise import add, elementwise, mul
from .helpers import defderiv


def _iv_impl(x, v):
    return sc.i0(x) if v == 0 else sc.i1(x) if v == 1 else sc.iv(v, x)


bessel_iv_p = elementwise("bessel_iv", _iv_impl)  # I_v(x), v a static integer >= 0
defderiv(bessel_iv_p, lambda x, v: mul(0.5, add(bessel_iv(x, abs(v - 1)), bessel_iv(x, v + 1))))
def bessel_iv(x, v): return bessel_iv_p.bind(x, v=int(v))

"""Bessel functions of real order v (a static parameter): I_v, its exponentially scaled
I_v e^(-|x|), and J_v. The derivatives are the order recurrences, which have no removable
singularity anywhere (unlike I_1' = I_0 - I_1/x at 0), so every order is finite at x = 0:
I_v' = (I_(v-1) + I_(v+1)) / 2, J_v' = (J_(v-1) - J_(v+1)) / 2, and for the scaled function
(I_(v-1) + I_(v+1)) e^(-|x|) / 2 - sign(x) I_v e^(-|x|)."""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from .. import ops
from ..helpers import elementwise
from ..helpers import defderiv

_I = {0.0: sc.i0, 1.0: sc.i1}  # SciPy's dedicated (faster) integer orders
_IE = {0.0: sc.i0e, 1.0: sc.i1e}


def _order_impl(table, general):
    def impl(x, v):
        f = table.get(v)
        return f(x) if f is not None else general(v, x)
    return impl


def _iv(v, x):
    """SciPy's iv; below |x| = 5e-308 it is NaN (SciPy's bug), where e^|x| is exactly 1 and
    SciPy's ive is the same function, and right."""
    out = sc.iv(v, x)
    bad = np.isnan(out) & (np.abs(x) < 1e-300)
    return np.where(bad, sc.ive(v, x), out)[()] if np.any(bad) else out


def _order(v):
    """I_-n = I_n for an integer n (SciPy's iv(-1, x) underflows to 0 at |x| ~ 1e-300)."""
    v = float(v)
    return abs(v) if v.is_integer() else v


bessel_i_p = elementwise("bessel_i", _order_impl(_I, _iv))
defderiv(bessel_i_p, lambda x, v: ops.mul(ops.add(bessel_i(x, v - 1), bessel_i(x, v + 1)), 0.5))
def bessel_i(x, v): return bessel_i_p.bind(x, v=_order(v))


bessel_ie_p = elementwise("bessel_ie", _order_impl(_IE, sc.ive))
defderiv(bessel_ie_p, lambda ans, x, v: ops.sub(
    ops.mul(ops.add(bessel_ie(x, v - 1), bessel_ie(x, v + 1)), 0.5), ops.mul(ops.sign(x), ans)),
    with_output=True)
def bessel_ie(x, v): return bessel_ie_p.bind(x, v=_order(v))


bessel_j_p = elementwise("bessel_j", _order_impl({0.0: sc.j0, 1.0: sc.j1}, sc.jv))
defderiv(bessel_j_p, lambda x, v: ops.mul(ops.sub(bessel_j(x, v - 1), bessel_j(x, v + 1)), 0.5))
def bessel_j(x, v): return bessel_j_p.bind(x, v=float(v))


__all__ = ["bessel_i", "bessel_ie", "bessel_j"]

"""Bessel functions of real order v (a static parameter): I_v, its exponentially scaled
I_v e^(-|x|), J_v, and of the second kind Y_v, K_v and K_v e^x. The derivatives are the order
recurrences, which have no removable singularity anywhere (unlike I_1' = I_0 - I_1/x at 0),
so every order is finite at x = 0: I_v' = (I_(v-1) + I_(v+1)) / 2, J_v' = (J_(v-1) -
J_(v+1)) / 2, Y_v' = (Y_(v-1) - Y_(v+1)) / 2, K_v' = -(K_(v-1) + K_(v+1)) / 2, and for the
scaled functions (I_(v-1) + I_(v+1)) e^(-|x|) / 2 - sign(x) I_v e^(-|x|) and
-(K_(v-1) + K_(v+1)) e^x / 2 + K_v e^x.

Y and K carry `integer`: SciPy's integer-order functions (yn, kn: their own algorithms, and
SciPy's truncation of a non-integer order) rather than yv, kv."""
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


def _second_kind(table, integer_order, real_order):
    def impl(x, v, integer):
        f = table.get(v)
        if f is not None:
            return f(x)
        return integer_order(v, x) if integer else real_order(v, x)
    return impl


bessel_y_p = elementwise("bessel_y", _second_kind({0.0: sc.y0, 1.0: sc.y1}, sc.yn, sc.yv))
defderiv(bessel_y_p, lambda x, v, integer: ops.mul(
    ops.sub(bessel_y(x, v - 1, integer), bessel_y(x, v + 1, integer)), 0.5))
def bessel_y(x, v, integer=False): return bessel_y_p.bind(x, v=float(v), integer=bool(integer))


def _k_order(v):
    """K_-v = K_v for every real v."""
    return abs(float(v))


bessel_k_p = elementwise("bessel_k", _second_kind({0.0: sc.k0, 1.0: sc.k1}, sc.kn, sc.kv))
defderiv(bessel_k_p, lambda x, v, integer: ops.mul(
    ops.add(bessel_k(x, v - 1, integer), bessel_k(x, v + 1, integer)), -0.5))
def bessel_k(x, v, integer=False): return bessel_k_p.bind(x, v=_k_order(v), integer=bool(integer))


bessel_ke_p = elementwise("bessel_ke", _second_kind({0.0: sc.k0e, 1.0: sc.k1e}, sc.kve, sc.kve))
defderiv(bessel_ke_p, lambda ans, x, v, integer: ops.add(
    ops.mul(ops.add(bessel_ke(x, v - 1), bessel_ke(x, v + 1)), -0.5), ans), with_output=True)
def bessel_ke(x, v, integer=False): return bessel_ke_p.bind(x, v=_k_order(v), integer=False)


__all__ = ["bessel_i", "bessel_ie", "bessel_j", "bessel_y", "bessel_k", "bessel_ke"]

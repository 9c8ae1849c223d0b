"""Taylor arithmetic for the jet rules (Taylor mode, fxad/interpreters/jet.py).

A rule sees each operand as its primal and K raw coefficients; here a *full* series is the
list [x_0, x_1, ..., x_K] (primal first), with `Zero` for known-zero coefficients. The helpers
bind primitives, so rules written with them work on traced coefficients (under jit, vmap,
an outer jvp or grad) as on arrays. Each result coefficient is a sum of products that skips
symbolic zeros, so a path with few non-zero coefficients (x_1 = v, the rest zero) costs less.

  linear_jet, bilinear_jet, zero_jet   the natural rules of the family helpers' primitives
  chain(x, u, k)                       y_k of y' = u x' (exp, sin, tanh, erf, ...)
  product(a, b, k), quotient, sqrt_series, power_series, reciprocal   series arithmetic
"""
from __future__ import annotations

import numpy as np

from ..core import get_aval
from ..interpreters.jet import jet_from_jvp, set_scalar_ops  # noqa: F401  (jet_from_jvp: re-exported)
from ..interpreters.jvp import Zero
from . import ops


def is_zero(c):
    return type(c) is Zero


def scale(x, c):
    """x * c for a Python number c (a weak scalar: x's dtype is kept)."""
    return x if c == 1 else ops.mul(x, float(c))


def shrink(x, c):
    """x / c for a Python number c."""
    return x if c == 1 else ops.div(x, float(c))


set_scalar_ops(scale, shrink)


def full(primal, series):
    return [primal] + list(series)


def total(terms, aval):
    """The sum of the non-zero terms, or Zero(aval)."""
    acc = None
    for t in terms:
        if t is None or type(t) is Zero:
            continue
        acc = t if acc is None else ops.add(acc, t)
    return Zero(aval) if acc is None else acc


def out_aval(*xs):
    """The broadcast shape and promoted dtype of elementwise operands (for Zero results)."""
    avals = [get_aval(x) if type(x) is not Zero else x.aval for x in xs]
    shape = np.broadcast_shapes(*[a.shape for a in avals])
    return type(avals[0])(shape, np.result_type(*[a.dtype for a in avals]))


def product(a, b, k, mul=None, lo=0, hi=None, aval=None):
    """Coefficient k of the product of full series a and b: sum over i of a_i b_{k-i}, i from
    `lo` to `hi` (default all), with `mul` the product (elementwise by default)."""
    mul = mul or ops.mul
    hi = k if hi is None else hi
    terms = [mul(a[i], b[k - i]) for i in range(lo, hi + 1)
             if type(a[i]) is not Zero and type(b[k - i]) is not Zero]
    if aval is None and not terms:
        aval = out_aval(a[0], b[0])
    return total(terms, aval)


def weighted(x):
    """[0, 1 x_1, 2 x_2, ...]: the coefficients of t x'(t), which recurrences use."""
    return [None] + [c if type(c) is Zero else scale(c, j) for j, c in enumerate(x[1:], 1)]


def chain(jx, u, k, aval=None):
    """Coefficient k >= 1 of y where y' = u x' (so k y_k = sum_{j=1..k} j x_j u_{k-j}), from
    `jx` = weighted(x) and u_0..u_{k-1}."""
    terms = [ops.mul(jx[j], u[k - j]) for j in range(1, k + 1)
             if type(jx[j]) is not Zero and type(u[k - j]) is not Zero]
    if not terms:
        return Zero(aval or out_aval(jx[1] if jx[1] is not None else u[0], u[0]))
    return shrink(total(terms, None), k)


def quotient(a, b, k, q):
    """Coefficient k of q = a / b given q_0..q_{k-1}: (a_k - sum_{j=1..k} b_j q_{k-j}) / b_0."""
    s = product(b, q, k, lo=1, aval=out_aval(a[0], b[0]))
    num = a[k] if type(s) is Zero else (ops.neg(s) if type(a[k]) is Zero else ops.sub(a[k], s))
    return num if type(num) is Zero else ops.div(num, b[0])


def divide_series(a, b, order):
    """The full series of a / b."""
    q = [ops.div(a[0], b[0])]
    for k in range(1, order + 1):
        q.append(quotient(a, b, k, q))
    return q


def reciprocal(b, order):
    """The full series of 1 / b: r_k = -r_0 sum_{j=1..k} b_j r_{k-j}."""
    r = [ops.div(1.0, b[0])]
    for k in range(1, order + 1):
        s = product(b, r, k, lo=1, aval=get_aval(r[0]))
        r.append(s if type(s) is Zero else ops.neg(ops.mul(s, r[0])))
    return r


def sqrt_series(x, order, y0=None):
    """The full series of sqrt(x): y_k = (x_k - sum_{j=1..k-1} y_j y_{k-j}) / (2 y_0)."""
    y = [ops.sqrt(x[0]) if y0 is None else y0]
    two_y0 = scale(y[0], 2)
    for k in range(1, order + 1):
        s = product(y, y, k, lo=1, hi=k - 1, aval=get_aval(y[0]))
        num = x[k] if type(s) is Zero else (ops.neg(s) if type(x[k]) is Zero else
                                            ops.sub(x[k], s))
        y.append(num if type(num) is Zero else ops.div(num, two_y0))
    return y


def power_series(x, a, order, y0):
    """The full series of y = x^a for a constant exponent a (x_0 != 0): from x y' = a x' y,
    k x_0 y_k = sum_{j=1..k} (a j - (k - j)) x_j y_{k-j}."""
    y = [y0]
    for k in range(1, order + 1):
        terms = [ops.mul(scale(x[j], a * j - (k - j)), y[k - j]) for j in range(1, k + 1)
                 if type(x[j]) is not Zero and type(y[k - j]) is not Zero]
        y.append(Zero(get_aval(y0)) if not terms else
                 ops.div(total(terms, None), scale(x[0], k)))
    return y


# --- the natural rules of the family helpers ------------------------------------------------

def zero_jet(prim):
    """Piecewise-constant or integer-valued outputs: every coefficient is zero."""
    def rule(primals, series, **params):
        out = prim.bind(*primals, **params)
        return out, ([None] * len(out) if prim.multiple_results else None)
    return rule


def linear_jet(prim, linear_args=None):
    """A primitive linear in the operands `linear_args` (default: all): each coefficient is
    the primitive applied to the operands' coefficients (the other operands as they are;
    their coefficients are ignored, as the JVP ignores their tangents)."""
    def rule(primals, series, **params):
        out = prim.bind(*primals, **params)
        idx = range(len(primals)) if linear_args is None else linear_args
        order = len(series[0])
        coeffs = []
        for k in range(order):
            if all(type(series[i][k]) is Zero for i in idx):
                coeffs.append(None)
                continue
            args = list(primals)
            for i in idx:
                c = series[i][k]
                args[i] = np.zeros(c.aval.shape, c.aval.dtype) if type(c) is Zero else c
            coeffs.append(prim.bind(*args, **params))
        return out, _by_output(prim, out, coeffs)
    return rule


def _by_output(prim, out, coeffs):
    """Per-coefficient results -> the rule's series (per output for several results)."""
    if not prim.multiple_results:
        return [Zero(get_aval(out)) if c is None else c for c in coeffs]
    return [[Zero(get_aval(o)) if c is None else c[i] for c in coeffs]
            for i, o in enumerate(out)]


def bilinear_jet(prim):
    """A primitive linear in each of its two operands (mul, dot_general, convolutions):
    coefficient k is the Cauchy product sum_{i+j=k} prim(a_i, b_j)."""
    def rule(primals, series, **params):
        a, b = full(primals[0], series[0]), full(primals[1], series[1])
        out = prim.bind(a[0], b[0], **params)
        aval = get_aval(out)

        def mul(x, y):
            return prim.bind(x, y, **params)
        return out, [product(a, b, k, mul, aval=aval) for k in range(1, len(a))]
    return rule


# --- degree rules (fxad/ir/collapse.py moves sums through linear operations) ----------------

def linear_degree(linear_args=None):
    """Linear in `linear_args` jointly: their common degree, the other operands constant."""
    def rule(degrees, **params):
        idx = range(len(degrees)) if linear_args is None else linear_args
        lin = {degrees[i] for i in idx if degrees[i]}
        if any(d for i, d in enumerate(degrees) if i not in idx) or len(lin) > 1:
            return None
        if not lin:
            return 0
        # every linear operand must share it (x + c is affine, not linear)
        return lin.pop() if all(degrees[i] for i in idx) else None
    return rule


def bilinear_degree(degrees, **params):
    return degrees[0] + degrees[1]

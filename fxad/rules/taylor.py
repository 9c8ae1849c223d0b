"""Taylor arithmetic for the jet rules (Taylor mode, fxad/interpreters/jet.py).

A rule sees each operand as its primal and K raw coefficients; here a *full* series is the
list [x_0, x_1, ..., x_K] (primal first), with `Zero` for known-zero coefficients. The helpers
bind primitives, so rules written with them work on traced coefficients (under jit, vmap,
an outer jvp or grad) as on arrays. Each result coefficient is a sum of products that skips
symbolic zeros, so a path with few non-zero coefficients (x_1 = v, the rest zero) costs less.

  linear_jet, bilinear_jet, zero_jet   the natural rules of the family helpers' primitives
  additive_jet                         add, sub, add_any
  chain(x, u, k)                       y_k of y' = u x' (exp, tanh, logistic, ...)
  product(a, b, k), quotient, sqrt_series, power_series, reciprocal   series arithmetic
  unary(series_fn), *_series           the elementwise functions' rules by recurrences

It also hands the collapsed interpreter (fxad/interpreters/collapsed.py) its arithmetic.
"""
from __future__ import annotations

import numpy as np

from ..core import get_aval
from ..interpreters.collapsed import set_ops as set_collapsed_ops
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


# --- elementwise functions by their recurrences ----------------------------------------------
# Each takes the operand's full series [x_0, ..., x_K] and returns the result's. A function
# whose derivative is a simple expression u of its value (y' = u x') gets y_k from u_0..u_{k-1}
# (`chain`), u_k from y_0..y_k: O(K^2) products, against O(K^3) for the derivation.

def unary(series_fn):
    """A jet rule from `series_fn(full series of x, order) -> full series of y`."""
    def rule(primals, series, **params):
        y = series_fn(full(primals[0], series[0]), len(series[0]), **params)
        return y[0], y[1:]
    rule.__name__ = series_fn.__name__
    return rule


def _by_value(y0, u_of):
    """y' = u(y) x': `u_of(y, k)` gives u_k from y_0..y_k."""
    def series_fn(x, order):
        jx, y, u = weighted(x), [y0(x[0])], []
        for k in range(1, order + 1):
            u.append(u_of(y, k - 1))
            y.append(chain(jx, u, k, aval=get_aval(y[0])))
        return y
    return series_fn


def _square_k(y, k, aval):
    return product(y, y, k, aval=aval)


def exp_series(x, order):
    return _by_value(ops.exp, lambda y, k: y[k])(x, order)


def expm1_series(x, order):  # y' = (1 + y) x'
    return _by_value(ops.expm1, lambda y, k: ops.add(y[0], 1.0) if k == 0 else y[k])(x, order)


def tanh_series(x, order):  # y' = (1 - y^2) x'
    def u(y, k):
        s = _square_k(y, k, get_aval(y[0]))
        return ops.sub(1.0, s) if k == 0 else (s if is_zero(s) else ops.neg(s))
    return _by_value(ops.tanh, u)(x, order)


def tan_series(x, order):  # y' = (1 + y^2) x'
    def u(y, k):
        s = _square_k(y, k, get_aval(y[0]))
        return ops.add(1.0, s) if k == 0 else s
    return _by_value(ops.tan, u)(x, order)


def logistic_series(x, order):  # y' = (y - y^2) x'
    def u(y, k):
        s = _square_k(y, k, get_aval(y[0]))
        if k == 0:
            return ops.sub(y[0], s)
        return y[k] if is_zero(s) else (ops.neg(s) if is_zero(y[k]) else ops.sub(y[k], s))
    return _by_value(ops.logistic, u)(x, order)


def _sin_cos(x, order, hyperbolic):
    """The series of sin and cos (sinh and cosh): s' = c x', c' = -+ s x'."""
    jx = weighted(x)
    s = [(ops.sinh if hyperbolic else ops.sin)(x[0])]
    c = [(ops.cosh if hyperbolic else ops.cos)(x[0])]
    aval = get_aval(s[0])
    for k in range(1, order + 1):
        s.append(chain(jx, c, k, aval))
        ck = chain(jx, s, k, aval)
        c.append(ck if hyperbolic or is_zero(ck) else ops.neg(ck))
    return s, c


def sin_series(x, order):
    return _sin_cos(x, order, False)[0]


def cos_series(x, order):
    return _sin_cos(x, order, False)[1]


def sinh_series(x, order):
    return _sin_cos(x, order, True)[0]


def cosh_series(x, order):
    return _sin_cos(x, order, True)[1]


def log_series(x, order, shift=0.0):
    """y = log(x + shift): (x + shift) y' = x', so y_k = (x_k - (1/k) sum_{j=1..k-1} j y_j
    x_{k-j}) / (x_0 + shift)."""
    x0 = x[0] if not shift else ops.add(x[0], shift)
    y = [ops.log1p(x[0]) if shift else ops.log(x[0])]
    aval = get_aval(y[0])
    for k in range(1, order + 1):
        terms = [ops.mul(scale(y[j], j), x[k - j]) for j in range(1, k)
                 if not is_zero(y[j]) and not is_zero(x[k - j])]
        s = total(terms, aval)
        num = x[k] if is_zero(s) else (ops.neg(shrink(s, k)) if is_zero(x[k])
                                       else ops.sub(x[k], shrink(s, k)))
        y.append(num if is_zero(num) else ops.div(num, x0))
    return y


def log1p_series(x, order):
    return log_series(x, order, shift=1.0)


def sqrt_jet_series(x, order):
    return sqrt_series(x, order)


def rsqrt_series(x, order):
    return power_series(x, -0.5, order, ops.rsqrt(x[0]))


def cbrt_series(x, order):
    return power_series(x, 1.0 / 3.0, order, ops.cbrt(x[0]))


def integer_pow_series(x, order, y):
    """x^n by repeated squaring of series (exact at x_0 = 0, unlike x y' = n x' y)."""
    def mul_series(a, b):
        aval = get_aval(ops.mul(a[0], b[0]))
        return [ops.mul(a[0], b[0])] + [product(a, b, k, aval=aval)
                                        for k in range(1, order + 1)]
    n, result, base = abs(y), None, x
    while n:
        if n & 1:
            result = base if result is None else mul_series(result, base)
        n >>= 1
        if n:
            base = mul_series(base, base)
    if result is None:  # x^0 = 1
        one = ops.integer_pow(x[0], 0)
        return [one] + [Zero(get_aval(one))] * order
    if y < 0:
        result = reciprocal(result, order)
    return result


def div_jet(primals, series):
    a, b = full(primals[0], series[0]), full(primals[1], series[1])
    q = divide_series(a, b, len(series[0]))
    return q[0], q[1:]



# the collapsed interpreter's arithmetic (fxad/interpreters/collapsed.py)
set_collapsed_ops(sum_axis=lambda x, a: ops.reduce_sum(x, axes=(a,)),
                  add=lambda x, y: ops.add(x, y), mul=lambda x, y: ops.mul(x, y),
                  transpose=lambda x, perm: ops.transpose(x, tuple(perm)))


def additive_jet(prim, negate_second=False):
    """add, sub, add_any: coefficient-wise; an operand with no series is passed over (its
    coefficients are zero) when the other's coefficient already has the output's type."""
    full_rule = linear_jet(prim)

    def rule(primals, series, **params):
        out = prim.bind(*primals, **params)
        a = get_aval(out)
        live = [not all(is_zero(c) for c in s) for s in series]
        if all(live):
            return full_rule(primals, series, **params)
        i = live.index(True)
        s = series[i]
        if any(not is_zero(c) and (c.aval if type(c) is Zero else get_aval(c)) != a
               for c in s):
            return full_rule(primals, series, **params)
        if i == 1 and negate_second:
            s = [c if is_zero(c) else ops.neg(c) for c in s]
        return out, list(s)
    return rule


def erf_series(x, order, erf0):
    """erf: y' = (2/sqrt(pi)) exp(-x^2) x', the factor's series from exp of the series of
    -x^2 (to order K - 1, as `chain` needs)."""
    aval = get_aval(erf0)
    sq = [ops.mul(x[0], x[0])] + [product(x, x, k, aval=aval) for k in range(1, order)]
    e = exp_series([c if is_zero(c) else ops.neg(c) for c in sq], order - 1)
    u = [c if is_zero(c) else scale(c, 2.0 / np.sqrt(np.pi)) for c in e]
    jx, y = weighted(x), [erf0]
    for k in range(1, order + 1):
        y.append(chain(jx, u, k, aval))
    return y


def erf_jet(erf_p):
    def rule(primals, series):
        y = erf_series(full(primals[0], series[0]), len(series[0]), erf_p.bind(primals[0]))
        return y[0], y[1:]
    return rule

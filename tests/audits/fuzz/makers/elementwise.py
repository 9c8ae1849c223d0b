"""Makers: elementwise math, unary and binary (NumPy broadcasting and constants), with
arguments shifted into their domains and kinked operations kept away from their kinks;
complex intermediates; where on masks, comparisons and logical operations; and the second
round of ufuncs (fmax / fmin, copysign, float_power, fmod, cbrt, trunc, ldexp, modf,
heaviside)."""
from __future__ import annotations

import numpy as np

from ..generator import Reject, away, guard, split_point
from ..program import MARGIN, _arr, _f
from ..registry import maker
from .reductions import _reduce_where


UNARY_FREE = [
    ("neg", "-@0"), ("negative", "fnp.negative(@0)"), ("sin", "fnp.sin(@0)"),
    ("cos", "fnp.cos(@0)"), ("tanh", "fnp.tanh(@0)"), ("logistic", "lax.logistic(@0)"),
    ("arctan", "fnp.arctan(@0)"), ("arcsinh", "fnp.arcsinh(@0)"), ("square", "fnp.square(@0)"),
    ("pow2", "@0 ** 2"), ("pow3", "@0 ** 3"), ("softplus", "nn.softplus(@0)"),
    ("erf", "special.erf(@0)"), ("erfc", "special.erfc(@0)"), ("sinc", "fnp.sinc(@0)"),
    ("gelu", "nn.gelu(@0)"), ("ndtr", "special.ndtr(@0)"), ("log_ndtr", "special.log_ndtr(@0)"),
    ("silu", "nn.silu(@0)"), ("deg2rad", "fnp.deg2rad(@0)"), ("positive", "+@0"),
]


@maker(weight=10)
def mk_unary_free(g):
    kind, expr = g.choice(UNARY_FREE)
    return kind, expr, [g.pick()]


@maker(weight=4)
def mk_affine(g):
    i = g.pick()
    c, c2 = g.const(nonzero=True), g.const()
    form = g.choice(["@0 * {c}", "{c} * @0 + {c2}", "{c2} - @0", "@0 / {c}", "@0 + {c2}"])
    return "affine", form.format(c=_f(c), c2=_f(c2)), [i]


@maker(weight=4)
def mk_exp_family(g):
    """exp-like growth: the argument is kept <= 2 by a shift."""
    kind, fn = g.choice([("exp", "fnp.exp"), ("expm1", "fnp.expm1"), ("exp2", "fnp.exp2")])
    i = g.pick()
    return kind, f"{fn}({g.at_most(0, i, 2.0)})", [i]


@maker(weight=1)
def mk_hyperbolic(g):
    kind = g.choice(["sinh", "cosh"])
    i = g.pick()
    return kind, f"fnp.{kind}({g.bounded(0, i, 2.5)})", [i]


POSITIVE_DOMAIN = [  # (kind, format with {x} the shifted argument, lower bound)
    ("log", "fnp.log({x})", 0.5), ("log1p", "fnp.log1p({x})", -0.5), ("log2", "fnp.log2({x})", 0.5),
    ("log10", "fnp.log10({x})", 0.5), ("sqrt", "fnp.sqrt({x})", 0.5),
    ("rsqrt", "lax.rsqrt({x})", 0.5), ("pow0.5", "{x} ** 0.5", 0.5),
    ("pow-1.5", "{x} ** -1.5", 0.5), ("power2.5", "fnp.power({x}, 2.5)", 0.5),
    ("gammaln", "special.gammaln({x})", 0.5), ("digamma", "special.digamma({x})", 0.5),
    ("gamma", "special.gamma({x})", 0.5), ("entr", "special.entr({x})", 0.5),
    ("arccosh", "fnp.arccosh({x})", 1.2), ("erfcx", "special.erfcx({x})", -0.5),
]


@maker(weight=6)
def mk_positive_domain(g):
    kind, form, lo = g.choice(POSITIVE_DOMAIN)
    i = g.pick()
    return kind, form.format(x=g.at_least(0, i, lo)), [i]


@maker(weight=2)
def mk_reciprocal(g):
    i = g.pick()
    kind, form = g.choice([("reciprocal", "fnp.reciprocal({x})"), ("rdiv", "1.0 / {x}"),
                           ("pow-1", "{x} ** -1"), ("pow-2", "{x} ** -2")])
    return kind, form.format(x=g.away_from_zero(0, i)), [i]


@maker(weight=2)
def mk_bounded_domain(g):
    kind, fn, r = g.choice([("arcsin", "fnp.arcsin", 0.8), ("arccos", "fnp.arccos", 0.8),
                            ("arctanh", "fnp.arctanh", 0.8), ("tan", "fnp.tan", 1.2)])
    i = g.pick()
    return kind, f"{fn}({g.bounded(0, i, r)})", [i]


@maker(weight=1)
def mk_logit(g):
    """logit, ndtri, erfinv and erfcinv: inverse CDFs, on (0.1, 0.9) (erfinv's argument
    mapped to (-0.8, 0.8), erfcinv's to (0.2, 1.8))."""
    i = g.pick()
    v = g.vals(i)
    kind, form = g.choice([("logit", "special.logit({p})"), ("ndtri", "special.ndtri({p})"),
                           ("erfinv", "special.erfinv({p} * 2.0 - 1.0)"),
                           ("erfcinv", "special.erfcinv({p} * 2.0)")])
    if np.all((v >= 0.1) & (v <= 0.9)):
        return kind, form.format(p="@0"), [i]
    return kind, form.format(p="(lax.logistic(@0) * 0.8 + 0.1)"), [i]


@maker(weight=3)
def mk_kinked_unary(g):
    i = g.pick()
    v = g.vals(i)
    kind = g.choice(["abs", "abs_op", "relu", "sign", "floor", "ceil", "round", "clip",
                     "maximum_c", "fabs"])
    if kind in ("abs", "abs_op", "relu", "sign", "fabs"):
        guard(away(v, [0.0]))
        expr = {"abs": "fnp.abs(@0)", "abs_op": "abs(@0)", "relu": "nn.relu(@0)",
                "sign": "fnp.sign(@0) * @0", "fabs": "fnp.fabs(@0)"}[kind]
        return kind, expr, [i]
    if kind in ("floor", "ceil"):
        guard(np.all(np.abs(v - np.round(v)) >= MARGIN))
        return kind, f"fnp.{kind}(@0) + @0", [i]
    if kind == "round":
        guard(np.all(np.abs(v - np.floor(v) - 0.5) >= MARGIN))
        return kind, "fnp.round(@0) + @0", [i]
    lo, hi = sorted([g.const(), g.const()])
    guard(hi - lo >= 0.5 and away(v, [lo, hi]))
    if kind == "clip":
        return kind, f"fnp.clip(@0, {_f(lo)}, {_f(hi)})", [i]
    return kind, f"fnp.maximum(@0, {_f(lo)})", [i]


@maker(weight=1)
def mk_floor_rem(g):
    """floor_divide / remainder by a constant, away from their jumps."""
    i = g.pick()
    c = g.const(positive=True)
    v = g.vals(i)
    guard(np.all(np.abs(v / c - np.round(v / c)) * c >= MARGIN))
    if g.coin(0.5):
        return "remainder", f"fnp.remainder(@0, {_f(c)})", [i]
    return "floor_divide", f"fnp.floor_divide(@0, {_f(c)}) * @0", [i]


@maker(weight=1)
def mk_where_logic(g):
    i = g.pick()
    j = g.partner(i)
    k = g.partner(i)
    try:
        np.broadcast_shapes(g.shape(i), g.shape(j), g.shape(k))
    except ValueError:
        raise Reject
    a, b = split_point(g, g.vals(i)), split_point(g, g.vals(j))
    cond = g.choice([f"fnp.logical_and(@0 > {_f(a)}, fnp.logical_not(@1 < {_f(b)}))",
                     f"fnp.logical_or(@0 < {_f(a)}, @1 > {_f(b)})",
                     "fnp.logical_not(fnp.isnan(@0))"])
    return "where_logic", f"fnp.where({cond}, @2, @1)", [i, j, k]


@maker(weight=1)
def mk_complex(g):
    """Complex intermediates between real values."""
    i = g.pick()
    j = g.partner(i)
    form = g.choice(["lax.real(lax.complex(@0, @1) ** 2)",
                     "lax.imag(lax.conj(lax.complex(@0, @1)) * lax.complex(@1, @0))",
                     "lax.real(lax.complex(@0, @1) * lax.complex(@1, 0.5 * @0))"])
    return "complex", form, [i, j]


def _other(g, i, allow_const=True):
    """(expr for slot 1, args): a node broadcasting with i, or a constant."""
    if allow_const and g.coin(0.2):
        if g.coin(0.5) or g.shape(i) == ():
            return _f(g.const(nonzero=True)), []
        s = g.shape(i)
        sub = s[g.int(0, len(s)):]
        return g.const_array(sub), []
    return "@1", [g.partner(i)]


@maker(weight=12)
def mk_binary_arith(g):
    i = g.pick()
    rhs, extra = _other(g, i)
    kind, form = g.choice([("add", "@0 + {y}"), ("sub", "@0 - {y}"), ("mul", "@0 * {y}"),
                           ("fnp.add", "fnp.add(@0, {y})"), ("fnp.subtract", "fnp.subtract({y}, @0)"),
                           ("fnp.multiply", "fnp.multiply(@0, {y})"), ("lax.mul", "lax.mul(@0, {y})"),
                           ("logaddexp", "fnp.logaddexp(@0, {y})"),
                           ("logaddexp2", "fnp.logaddexp2(@0, {y})")])
    return kind, form.format(y=rhs), [i] + extra


@maker(weight=4)
def mk_div(g):
    i = g.pick()
    if g.coin(0.2):
        return "div", f"@0 / {_f(g.const(nonzero=True))}", [i]
    j = g.partner(i)
    den = g.away_from_zero(1, j)
    form = g.choice(["@0 / {d}", "fnp.divide(@0, {d})", "lax.div(@0, {d})", "fnp.true_divide(@0, {d})"])
    return "div", form.format(d=den), [i, j]


@maker(weight=2)
def mk_pow(g):
    i = g.pick()
    j = g.partner(i)
    base = g.at_least(0, i, 0.5)
    ex = g.bounded(1, j, 2.0)
    return "pow", f"fnp.power({base}, {ex})", [i, j]


@maker(weight=1)
def mk_xlogy(g):
    i = g.pick()
    j = g.partner(i)
    return "xlogy", f"special.xlogy(@0, {g.at_least(1, j, 0.5)})", [i, j]


@maker(weight=2)
def mk_maxmin(g):
    i = g.pick()
    j = g.partner(i)
    kind = g.choice(["maximum", "minimum"])
    try:
        diff = g.evaluate("@0 - @1", [i, j])
    except ValueError:
        raise Reject
    guard(away(diff, [0.0]))
    return kind, f"fnp.{kind}(@0, @1)", [i, j]


@maker(weight=2)
def mk_arctan2_hypot(g):
    i = g.pick()
    j = g.partner(i)
    kind = g.choice(["arctan2", "hypot"])
    y, x = g.evaluate("@0 + 0 * @1", [i, j]), g.evaluate("@1 + 0 * @0", [i, j])
    # away from the origin and (arctan2) from the branch cut on the negative x axis
    guard(np.all(np.hypot(x, y) >= 0.3))
    if kind == "arctan2":
        guard(np.all((x > 0) | (np.abs(y) >= MARGIN)))
    return kind, f"fnp.{kind}(@0, @1)", [i, j]


@maker(weight=3)
def mk_where_mask(g):
    i = g.pick()
    j = g.partner(i)
    s = np.broadcast_shapes(g.shape(i), g.shape(j))
    ms = s[g.int(0, len(s)):]
    mask = g.rng.integers(0, 2, ms).astype(bool)
    return "where_mask", f"fnp.where({_arr(mask)}, @0, @1)", [i, j]


@maker(weight=2)
def mk_where_cmp(g):
    i = g.pick()
    j = g.partner(i)
    k = g.partner(j)
    v = g.vals(i)
    c = split_point(g, v) if g.coin(0.7) else g.const()
    guard(away(v, [c]))
    op = g.choice([">", "<", ">=", "<="])
    try:
        np.broadcast_shapes(g.shape(i), g.shape(j), g.shape(k))
    except ValueError:
        raise Reject
    return "where_cmp", f"fnp.where(@0 {op} {_f(c)}, @1, @2)", [i, j, k]


@maker(weight=2)
def mk_ufuncs_more(g):
    """fmax / fmin (also with NaN operands), copysign, float_power, fmod (constant and value
    divisors), cbrt (away from 0), trunc (times the value, away from integers), ldexp, modf
    and heaviside (away from their steps), and sum / prod / max / min / mean with where= and
    initial=."""
    kind = g.choice(["fmax", "fmin", "copysign", "float_power", "fmod", "fmod", "reduce_where",
                     "reduce_where", "cbrt", "trunc", "ldexp", "modf", "heaviside"])
    if kind == "reduce_where":
        return _reduce_where(g)
    i = g.pick()
    v = g.vals(i)
    if kind == "ldexp":  # x · 2**k: linear in x
        return kind, f"fnp.ldexp(@0, {g.choice([-3, -1, 0, 2])})", [i]
    if kind == "modf":  # the fraction jumps at the integers, the integral part is constant
        guard(np.all(np.abs(v - np.round(v)) >= MARGIN))
        return kind, g.choice(["fnp.modf(@0)[0]", "fnp.modf(@0)[1] * @0"]), [i]
    if kind == "heaviside":  # a step in x (kept away from 0); the value at 0 is never taken
        guard(away(v, [0.0]))
        j = g.partner(i)
        return kind, "fnp.heaviside(@0, @1) * @1", [i, j]
    if kind == "cbrt":  # infinite slope at 0
        guard(away(v, [0.0], 0.2))
        return kind, "fnp.cbrt(@0)", [i]
    if kind == "trunc":  # steps at the integers
        guard(np.all(np.abs(v - np.round(v)) >= MARGIN))
        return kind, "@0 * fnp.trunc(@0)", [i]
    if kind in ("fmax", "fmin"):
        j = g.partner(i)
        x, xi = "@0", "@0"
        if len(g.shape(i)) >= 1 and g.coin(0.4):  # NaNs in one operand: the other is taken
            mask = np.asarray(g.rng.random(g.shape(i)) < 0.3)
            guard(mask.any())
            x, xi = f"fnp.where({_arr(mask)}, np.nan, @0)", f"fnp.where({_arr(mask)}, np.inf, @0)"
        try:
            diff = g.evaluate(f"{xi} - @1", [i, j])
        except ValueError:
            raise Reject
        guard(away(diff, [0.0]))
        return kind, (f"fnp.{kind}({x}, @1)" if g.coin(0.5) else f"fnp.{kind}(@1, {x})"), [i, j]
    if kind == "copysign":
        guard(away(v, [0.0]))
        if g.coin(0.3):
            return kind, f"fnp.copysign(@0, {_f(g.const(nonzero=True))})", [i]
        j = g.partner(i)
        guard(away(g.vals(j), [0.0]))
        return kind, "fnp.copysign(@0, @1)", [i, j]
    if kind == "float_power":
        base = g.at_least(0, i, 0.5)
        if g.coin(0.4):
            return kind, f"fnp.float_power({base}, {g.choice(['2.5', '-1.5', '0.5', '3', '2'])})", [i]
        j = g.partner(i)
        return kind, f"fnp.float_power({base}, {g.bounded(1, j, 2.0)})", [i, j]
    # fmod(x, d) = x - trunc(x / d) d: jumps where x / d crosses a nonzero integer
    if g.coin(0.5):
        c = g.choice([0.7071, -1.3, 2.2, 0.9])
        ratio, den, args = v / c, np.full_like(v, abs(c)), [i]
        d = _f(c)
    else:
        j = g.partner(i)
        d, args = g.away_from_zero(1, j), [i, j]
        try:
            ratio, den = g.evaluate(f"@0 / {d}", args), np.abs(g.evaluate(f"{d} + 0 * @0", args))
        except ValueError:
            raise Reject
    k = np.round(ratio)
    guard(np.all((k == 0) | (np.abs(ratio - k) * den >= MARGIN)))
    return kind, f"fnp.fmod(@0, {d})", args

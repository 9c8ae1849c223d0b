"""Makers: the rest of fxad.scipy.special (and the quantiles of fxad.scipy.stats built on it),
each in a domain where it is smooth: exponentially scaled and real-order Bessel functions,
hypergeometric 1F1 and 2F1 (differentiated in x only: fxad raises on a, b, c, so those are
constants), the exponential integrals E_n, polygamma, Riemann zeta, spherical harmonics,
binomial coefficients and Box-Cox of 1 + x, the inverses of the incomplete gamma and beta
functions and of Student's t, ndtri_exp, loggamma and Faddeeva's w; gammasgn (piecewise
constant) as a factor away from Gamma's poles."""
from __future__ import annotations


from ..generator import away, guard, _size
from ..program import _f
from ..registry import maker
from .scipy_stats_special import _positive, _unit


def _near(g, k, i, r):
    """Slot k with every value in [-r, r] (r * tanh if some is outside)."""
    return g.bounded(k, i, r)


BESSEL = [  # kind, expression over x (x >= lo; None: any real x, kept in [-4, 4])
    ("i0e", "special.i0e({x})", None), ("i1e_neg", "special.i1e({x})", None),
    ("ive", "special.ive({v}, {x})", 0.3), ("jv", "special.jv({v}, {x})", 0.3),
    ("jv_int", "special.jv(2, {x})", None), ("kve", "special.kve({v}, {x})", 0.3),
    ("k0e", "special.k0e({x})", 0.3), ("k1e", "special.k1e({x})", 0.3),
]


@maker(weight=1)
def mk_bessel_orders(g):
    i = g.pick()
    kind, form, lo = g.choice(BESSEL)
    x = _near(g, 0, i, 4.0) if lo is None else g.at_least(0, i, lo)
    return kind, form.format(x=x, v=_f(g.choice([0.5, 1.5, 2.0, 2.5]))), [i]


HYPER = [  # kind, expression over x; (a, b, c) constants (no derivative in them)
    ("hyp1f1", "special.hyp1f1({a}, {b}, {x3})"),
    ("hyp2f1", "special.hyp2f1({a}, {b}, {c}, {x08})"),
    ("expn", "special.expn({n}, {xpos})"),
    ("polygamma", "special.polygamma({n}, {xpos})"),
    ("riemann_zeta", "special.riemann_zeta({s})"),
    ("loggamma", "special.loggamma({xpos})"),
    ("wofz", "fnp.{part}(special.wofz({x3}))"),
    ("ndtri_exp", "special.ndtri_exp(-{xsmall})"),
    ("sici", "special.sici({xpos})[{k}]"),
]


@maker(weight=1)
def mk_hypergeometric(g):
    i = g.pick()
    kind, form = g.choice(HYPER)
    a, b = g.choice([(0.5, 1.5), (1.0, 2.5), (-0.5, 1.5), (2.0, 3.0)])
    return kind, form.format(
        a=_f(a), b=_f(b), c=_f(g.choice([2.5, 3.5])), n=g.int(1, 3),
        x3=_near(g, 0, i, 3.0), x08=_near(g, 0, i, 0.8), xpos=g.at_least(0, i, 0.3),
        s=g.at_least(0, i, 1.3), xsmall=g.at_least(0, i, 0.05),
        part=g.choice(["real", "imag"]), k=g.int(0, 1)), [i]


@maker(weight=1)
def mk_special_inverses(g):
    """The inverse incomplete gamma / beta / Student t functions (in their shape parameters
    too), binom and boxcox1p in both arguments, and gennorm's quantile. On at most 6
    elements (their higher derivatives are slow)."""
    i = g.pick(lambda n: _size(n.shape) <= 6)
    j = g.partner(i)
    kind = g.choice(["gammaincinv", "gammainccinv", "betaincinv", "stdtrit", "binom",
                     "boxcox1p", "gennorm_ppf"])
    if kind in ("gammaincinv", "gammainccinv"):
        return kind, f"special.{kind}({_positive(g, 0, i, 0.5)}, {_unit(g, 1, j)})", [i, j]
    if kind == "betaincinv":
        return kind, (f"special.betaincinv({_positive(g, 0, i, 0.6)}, "
                      f"{_f(g.choice([1.5, 2.0, 3.0]))}, {_unit(g, 1, j)})"), [i, j]
    if kind == "stdtrit":
        return kind, f"special.stdtrit({_positive(g, 0, i, 1.0)}, {_unit(g, 1, j)})", [i, j]
    if kind == "binom":  # n - k >= 0.5: away from the poles of Gamma(n - k + 1)
        return kind, (f"special.binom({_positive(g, 0, i, 2.0)} + 0.5, "
                      f"lax.logistic(@1) * 2.0)"), [i, j]
    if kind == "boxcox1p":
        return kind, f"special.boxcox1p({g.at_least(0, i, -0.6)}, fnp.tanh(@1))", [i, j]
    q = _unit(g, 1, j)  # gennorm's quantile: q kept MARGIN from 1/2 (the median's branch)
    guard(away(g.evaluate(q.replace("@1", "@0"), [j]), [0.5]))
    return kind, f"fxad.scipy.stats.gennorm.ppf({q}, {_positive(g, 0, i, 0.8)})", [i, j]


@maker(weight=1)
def mk_sph_harm_gammasgn(g):
    i = g.pick()
    j = g.partner(i)
    if g.coin(0.5):
        n = g.int(1, 3)
        m = g.int(-n, n)
        theta = "(lax.logistic(@0) * 2.6 + 0.25)"  # polar angle in (0.25, 2.85)
        part = g.choice(["real", "imag"])
        return "sph_harm_y", f"fnp.{part}(special.sph_harm_y({n}, {m}, {theta}, @1))", [i, j]
    x = _near(g, 1, j, 3.0)  # a factor of +-1: Gamma's sign, constant away from its poles
    guard(away(g.evaluate(x.replace("@1", "@0"), [j]), [0.0, -1.0, -2.0, -3.0], 0.1))
    return "gammasgn", f"@0 * special.gammasgn({x})", [i, j]

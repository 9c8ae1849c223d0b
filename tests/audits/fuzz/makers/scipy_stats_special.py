"""Fuzz makers for issue 18's SciPy families (special functions with shape parameters,
scipy.stats log densities and CDFs, scipy.signal convolutions, the scipy.linalg additions).
Values are mapped into smooth domains (shifts, squashes, guards at least MARGIN from kinks)."""
from __future__ import annotations

import numpy as np

from ..generator import away, guard
from ..program import MAX_SIZE
from ..registry import maker


def _unit(g, k, i):
    """Slot k mapped into (0.1, 0.9) (a probability or a beta variate)."""
    v = g.vals(i)
    if np.all((v >= 0.1) & (v <= 0.9)):
        return f"@{k}"
    return f"(lax.logistic(@{k}) * 0.8 + 0.1)"


def _positive(g, k, i, lo=0.3):
    """Slot k as a positive shape parameter >= lo (softplus keeps it smooth and bounded
    below; a plain shift when the values already are)."""
    if np.min(g.vals(i)) >= lo:
        return f"@{k}"
    return f"(nn.softplus(@{k}) + {lo})"


SHAPE_FUNCS = [  # the incomplete gamma/beta family, differentiated in its shape parameters
    ("gammainc", "special.gammainc({a}, {x})"), ("gammaincc", "special.gammaincc({a}, {x})"),
    ("betaln", "special.betaln({a}, {x})"), ("beta", "special.beta({a}, {x})"),
    ("poch", "special.poch({a}, {x})"), ("zeta", "special.zeta({a} + 1.0, {x})"),
]


@maker(weight=2)
def mk_special_shape(g):
    i = g.pick()
    j = g.partner(i)
    kind, form = g.choice(SHAPE_FUNCS)
    if kind == "beta":  # B(a, b) grows fast for small arguments: keep them >= 0.6
        return kind, form.format(a=_positive(g, 0, i, 0.6), x=_positive(g, 1, j, 0.6)), [i, j]
    return kind, form.format(a=_positive(g, 0, i), x=_positive(g, 1, j, 0.1)), [i, j]


@maker(weight=1)
def mk_betainc(g):
    i = g.pick()
    j = g.partner(i)
    k = g.partner(i)
    if g.coin():
        return "betainc", f"special.betainc({_positive(g, 0, i)}, {_positive(g, 1, j)}, " \
                          f"{_unit(g, 2, k)})", [i, j, k]
    return "stdtr", f"special.stdtr({_positive(g, 0, i, 0.5)}, @1)", [i, j]


UNARY_SMOOTH = [  # name, expression, lower bound of the argument (None: any value)
    ("erfcx", "special.erfcx({x})", None), ("dawsn", "special.dawsn({x})", None),
    ("i0", "special.i0({x})", None), ("i1", "special.i1({x})", None),
    ("expi", "special.expi({x})", 0.3), ("exp1", "special.exp1({x})", 0.3),
    ("spence", "special.spence({x})", 0.1), ("loggamma", "special.loggamma({x})", 0.3),
    ("fresnel", "special.fresnel({x})[0]", None), ("sici", "special.sici({x})[0]", None),
    ("wofz", "fnp.real(special.wofz({x}))", None), ("exprel", "special.exprel({x})", None),
    ("i1e", "special.i1e({x})", 0.1), ("y0", "special.y0({x})", 0.3),
    ("yn", "special.yn(2, {x})", 0.5), ("k1", "special.k1({x})", 0.3),
    ("kve", "special.kve(1.5, {x})", 0.3), ("rgamma", "special.rgamma({x})", None),
]


@maker(weight=2)
def mk_special_unary(g):
    i = g.pick()
    kind, form, lo = g.choice(UNARY_SMOOTH)
    if lo is None:
        x = "@0" if np.max(np.abs(g.vals(i))) <= 4 else "(fnp.tanh(@0) * 4.0)"
    else:
        x = g.at_least(0, i, lo)
    return kind, form.format(x=x), [i]


@maker(weight=1)
def mk_special_binary(g):
    i = g.pick()
    j = g.partner(i)
    kind = g.choice(["owens_t", "kl_div", "rel_entr", "boxcox", "logsumexp_b"])
    if kind == "owens_t":
        return kind, "special.owens_t(@0, @1)", [i, j]
    if kind in ("kl_div", "rel_entr"):
        return kind, f"special.{kind}({g.at_least(0, i, 0.3)}, {g.at_least(1, j, 0.3)})", [i, j]
    if kind == "boxcox":
        return kind, f"special.boxcox({g.at_least(0, i, 0.3)}, fnp.tanh(@1))", [i, j]
    ax = g.int(0, len(g.shape(i)) - 1) if g.shape(i) else None
    return kind, (f"special.logsumexp(@0, axis={ax}, b={_positive(g, 1, j)})"
                  if ax is not None else f"special.logsumexp(@0, b={_positive(g, 1, j)})"), [i, j]


STATS = [  # family, expression over x (slot 0) and a parameter (slot 1)
    ("norm", "fxad.scipy.stats.norm.{m}(@0, loc=fnp.tanh(@1), scale={p})"),
    ("t", "fxad.scipy.stats.t.{m}(@0, {p} + 0.5)"),
    ("logistic", "fxad.scipy.stats.logistic.{m}(@0, scale={p})"),
    ("laplace", "fxad.scipy.stats.laplace.{m}(@0, scale={p})"),
    ("cauchy", "fxad.scipy.stats.cauchy.{m}(@0, scale={p})"),
    ("gumbel_r", "fxad.scipy.stats.gumbel_r.{m}(@0, scale={p})"),
    ("gamma", "fxad.scipy.stats.gamma.{m}({xpos}, {p} + 0.5)"),
    ("chi2", "fxad.scipy.stats.chi2.{m}({xpos}, {p} + 0.5)"),
    ("lognorm", "fxad.scipy.stats.lognorm.{m}({xpos}, {p})"),
    ("beta", "fxad.scipy.stats.beta.{m}({xunit}, {p} + 0.5, 2.0)"),
    ("gennorm", "fxad.scipy.stats.gennorm.{m}(@0, {p} + 1.0)"),
]


@maker(weight=3)
def mk_stats(g):
    i = g.pick()
    j = g.partner(i)
    family, form = g.choice(STATS)
    m = g.choice(["logpdf", "logpdf", "cdf", "logcdf", "logsf"])
    if family in ("laplace", "gennorm"):  # the density's cusp at 0 (in x - loc)
        guard(away(g.vals(i), [0.0]))
    return f"{family}.{m}", form.format(m=m, p=_positive(g, 1, j), xpos=g.at_least(0, i, 0.3),
                                        xunit=_unit(g, 0, i)), [i, j]


@maker(weight=1)
def mk_stats_discrete(g):
    """Log mass and CDFs of discrete distributions at fixed integer points, differentiated in
    their continuous parameters (a program value)."""
    i = g.pick()
    k = g.const_array(g.shape(i), 0, 4)
    kind, form = g.choice([
        ("poisson", "fxad.scipy.stats.poisson.{m}(fnp.round({k}), {p})"),
        ("binom", "fxad.scipy.stats.binom.{m}(fnp.round({k}), 5, {u})"),
        ("nbinom", "fxad.scipy.stats.nbinom.{m}(fnp.round({k}), {p}, 0.4)"),
        ("geom", "fxad.scipy.stats.geom.{m}(fnp.round({k}) + 1.0, {u})")])
    m = g.choice(["logpmf", "cdf", "logcdf"])
    return f"{kind}.{m}", form.format(m=m, k=k, p=_positive(g, 0, i), u=_unit(g, 0, i)), [i]


@maker(weight=2)
def mk_signal(g):
    i = g.pick(lambda n: len(n.shape) in (1, 2))
    nd = len(g.shape(i))
    j = g.pick(lambda n: len(n.shape) == nd)
    mode = g.choice(["full", "same", "valid"])
    sa, sv = g.shape(i), g.shape(j)
    if nd == 2 and g.coin(0.3):  # fftconvolve along one axis, elementwise along the other
        ax = int(g.int(0, 1))
        guard(sa[1 - ax] == sv[1 - ax] or 1 in (sa[1 - ax], sv[1 - ax]))
        size = int(np.prod([a + b - 1 if k == ax or 1 in (a, b) else a
                            for k, (a, b) in enumerate(zip(sa, sv))]))
        guard(size <= MAX_SIZE)
        return ("fftconvolve_axes", f"fxad.scipy.signal.fftconvolve(@0, @1, {mode!r}, "
                f"axes={ax})", [i, j])
    if mode == "valid":
        guard(all(a >= b for a, b in zip(sa, sv)) or all(a <= b for a, b in zip(sa, sv)))
    size = int(np.prod([a + b - 1 for a, b in zip(sa, sv)]))
    guard(size <= MAX_SIZE)
    kind = g.choice(["convolve", "correlate", "fftconvolve"] + (["convolve2d"] if nd == 2
                                                                 else []))
    if kind == "convolve2d":
        bd = g.choice(["fill", "wrap", "symm"])
        return kind, f"fxad.scipy.signal.convolve2d(@0, @1, {mode!r}, {bd!r})", [i, j]
    return kind, f"fxad.scipy.signal.{kind}(@0, @1, {mode!r})", [i, j]


@maker(weight=1)
def mk_scipy_linalg_more(g):
    i = g.pick(lambda n: len(n.shape) >= 2 and n.shape[-1] == n.shape[-2]
               and 2 <= n.shape[-1] <= 3 and int(np.prod(n.shape[:-2])) <= 2)
    n = g.shape(i)[-1]
    base = "@0" if np.max(np.abs(g.vals(i))) <= 2 else "fnp.tanh(@0)"
    spd = f"({base} @ fnp.swapaxes({base}, -1, -2) * 0.3 + fnp.eye({n}) * 2.0)"
    dom = f"({base} * 0.3 + fnp.eye({n}) * 3.0)"
    kind = g.choice(["sqrtm", "polar", "sylvester", "lu", "toeplitz"])
    if kind == "sqrtm":
        return kind, f"sla.sqrtm({spd})", [i]
    if kind == "polar":
        return kind, f"sla.polar({dom})[{g.int(0, 1)}]", [i]
    if kind == "sylvester":
        return kind, f"sla.solve_sylvester({dom}, {dom} * 0.5, @0)", [i]
    if kind == "lu":
        return kind, f"sla.lu({dom})[{g.int(1, 2)}]", [i]
    j = g.pick(lambda nd: len(nd.shape) == 1 and nd.shape[0] <= 4)
    return kind, "sla.toeplitz(@0, @1)", [j, g.pick(lambda nd: len(nd.shape) == 1
                                                    and nd.shape[0] <= 4)]

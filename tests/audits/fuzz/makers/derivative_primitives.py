"""Makers: primitives that only derivative programs contain, staged by a transformation inside
the program (grad / jvp / linearize closing over program values): the derivatives of the
incomplete gamma and beta functions, Student's t CDF, gennorm's CDF and Hurwitz zeta in their
shape parameters, the cofactor matrix (det's derivative), the Frechet derivative of expm, the
Schur-based Sylvester solve (sqrtm's tangent), the windowed max's tangent and cotangent
(select-and-gather / select-and-scatter), softmax's tangent map (attention's), custom_vjp's
linear part. The outer checks then differentiate those derivatives again. (The gamma
sampler's implicit derivative: random_rejection.mk_random_rejection.)"""
from __future__ import annotations

import numpy as np

from ..generator import away, gap_ok, guard, _size
from ..registry import maker
from .linalg import _square_expr
from .scipy_stats_special import _positive, _unit


SHAPE_DERIVS = [  # kind, f(a) with the shape parameter a (positive) and another value {x}
    ("d_gammainc_da", "special.gammainc(a, {xpos})"),
    ("d_betainc_da", "special.betainc(a, 2.0, {xunit})"),
    ("d_stdtr_ddf", "special.stdtr(a + 0.5, {x})"),
    ("d_gennorm_cdf_dbeta", "fxad.scipy.stats.gennorm.cdf({xaway}, a + 0.8)"),
    ("d_zeta_ds", "special.zeta(a + 1.3, {xpos})"),
]


@maker(weight=1)
def mk_shape_derivative(g):
    """d/da of a special function in its shape parameter a, by grad (of the sum: the
    functions are elementwise) or jvp, the other argument a program value it closes over.
    On at most 2 elements: the checks' third derivatives of these are the fuzzer's slowest."""
    i = g.pick(lambda n: _size(n.shape) <= 2)
    j = g.partner(i)
    guard(np.broadcast_shapes(g.shape(i), g.shape(j)) == g.shape(i))
    kind, form = g.choice(SHAPE_DERIVS)
    if kind == "d_gennorm_cdf_dbeta":  # |x|^beta: keep x MARGIN from 0
        guard(away(g.vals(j), [0.0]))
    body = form.format(xpos=g.at_least(1, j, 0.3), xunit=_unit(g, 1, j), x="@1",
                       xaway="@1")
    a = _positive(g, 0, i, 0.5)
    if g.coin(0.5):
        return kind, f"fxad.grad(lambda a: fnp.sum({body}))({a})", [i, j]
    return kind, f"fxad.jvp(lambda a: {body}, ({a},), (fnp.cos(@0),))[1]", [i, j]


@maker(weight=1)
def mk_matrix_derivative(g):
    """The cofactor matrix (grad of det), expm's Frechet derivative (by jvp, and directly),
    and sqrtm's tangent (a Sylvester solve on sqrtm's Schur factors)."""
    i = g.pick(lambda n: len(n.shape) >= 2 and _size(n.shape[:-2]) <= 2)
    sq, n = _square_expr(g, i)
    guard(n <= 4)
    kind = g.choice(["cofactor", "expm_jvp", "expm_frechet", "sqrtm_jvp"])
    if kind == "cofactor":
        m = f"({sq} + 3.0 * np.eye({n}))"
        guard(np.max(np.linalg.cond(g.evaluate(m, [i]))) <= 30)
        return kind, f"fxad.grad(lambda m: fnp.sum(fnp.linalg.det(m)))({m})", [i]
    if kind == "expm_jvp":
        return kind, f"fxad.jvp(sla.expm, ({sq} * 0.3,), (fnp.sin({sq}),))[1]", [i]
    if kind == "expm_frechet":
        return kind, (f"sla.expm_frechet({sq} * 0.3, fnp.cos({sq}))"
                      f"[{g.int(0, 1)}]"), [i]
    spd = f"(fnp.tanh({sq}) @ fnp.swapaxes(fnp.tanh({sq}), -1, -2) * 0.3 + np.eye({n}))"
    return kind, f"fxad.jvp(sla.sqrtm, ({spd},), (fnp.sin({sq}),))[1]", [i]


@maker(weight=1)
def mk_window_derivative(g):
    """The tangent (select_and_gather_add) and cotangent (select_and_scatter_add) of a
    windowed max over the last axis, windows without ties."""
    i = g.pick(lambda n: len(n.shape) >= 1 and n.shape[-1] >= 2)
    s = g.shape(i)
    w = g.int(2, s[-1])
    win, strides = (1,) * (len(s) - 1) + (w,), (1,) * len(s)
    v = g.vals(i)
    for k in range(s[-1] - w + 1):  # each window's top two MARGIN apart
        guard(gap_ok(v[..., k:k + w], (len(s) - 1,), "max"))
    rw = f"lax.reduce_window_max(v, {win}, {strides}, 'VALID')"
    if g.coin(0.5):
        return "window_max_jvp", f"fxad.jvp(lambda v: {rw}, (@0,), (fnp.cos(@0),))[1]", [i]
    return "window_max_grad", (f"fxad.grad(lambda v: fnp.sum(fnp.sin({rw}) * {rw}))(@0)"), [i]


@maker(weight=1)
def mk_attention_tangent(g):
    """softmax's tangent map, staged by the jvp of dot_product_attention (whose softmax is a
    primitive with the tangent map as a second one): queries, keys and values from (T, H)
    program values."""
    i = g.pick(lambda n: len(n.shape) == 2 and 2 <= n.shape[0] <= 3 and n.shape[1] <= 3)
    j = g.pick(lambda n: len(n.shape) == 2 and n.shape[0] <= 3 and n.shape[1] == g.shape(i)[1])
    q = "fnp.tanh(@0)[:, None, :]"
    kv = "fnp.tanh(@1)[:, None, :]"
    return "attention_jvp", (f"fxad.jvp(lambda q: nn.dot_product_attention(q, {kv}, {kv}), "
                             f"({q},), (fnp.cos(@0)[:, None, :],))[1][:, 0, :]"), [i, j]


@maker(weight=1)
def mk_custom_vjp_linear(g):
    """custom_vjp's linear part (custom_lin), staged by jvp and linearize of a custom_vjp
    function (forward mode through a function with only a reverse rule)."""
    i = g.pick()
    j = g.partner(i, same=True)
    if g.coin(0.5):
        return "custom_vjp_jvp", "fxad.jvp(cv_mulsin, (@0, @1), (fnp.cos(@1), @0))[1]", [i, j]
    return "custom_vjp_linearize", ("fxad.linearize(cv_mulsin, @0, fnp.sin(@1))[1]"
                                    "(@1, fnp.cos(@0))"), [i, j]

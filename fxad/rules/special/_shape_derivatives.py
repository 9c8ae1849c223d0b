"""NumPy numerics behind the special-function derivatives SciPy does not provide: the
regularized incomplete gamma and beta functions in their shape parameters and the Hurwitz
zeta function in s, computed by running the classical algorithms on jets
(fxad/rules/special/_power_series.py), and exprel's derivatives.

- P(a, x) = γ(a, x)/Γ(a): its power series in x where x < a + 1, else the complement
  Q = 1 - P from Legendre's continued fraction (modified Lentz). Each converges fast in its
  region and computes the smaller of P and Q directly, so ∂P/∂a = -∂Q/∂a is accurate in both
  tails (no 1 - P cancellation).
- I_x(a, b): the continued fraction of Numerical Recipes' betacf where x < (a+1)/(a+b+2),
  else 1 - I_{1-x}(b, a) (both x and 1 - x are passed in, so 1 - x is never formed from x).

The a (and b) derivatives are the jets' higher coefficients: the series or fraction is
differentiated term by term with the value, and iteration stops when every coefficient has
converged. The prefactors' logarithms use SciPy's gammaln/betaln for the value and polygamma
for its derivatives. Tested against mpmath (tests/scipy/test_special.py) to ~1e-12 relative
for a, b in [1e-2, 1e3] in both tails; for shape parameters beyond ~1e5 the log-prefactor
cancels (a log x - x - lgamma a) and accuracy falls to ~1e-16 * a.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from ._power_series import Jet, affine_reciprocal, converge, rel_change_small

_TOL = 2e-16
_MAX_ITER = 200000
_TINY = 1e-300


def _guard(j):
    """Lentz's guard: a coefficient jet whose value is ~0 gets a tiny value instead."""
    v = j.c[0, 0]
    j.c[0, 0] = np.where(np.abs(v) < _TINY, _TINY, v)
    return j


# --- incomplete gamma -----------------------------------------------------------------------

def _gamma_series(A, X):
    """P(A, X) by its series: exp(a log x - x - lgamma(a+1)) Σ x^n/((a+1)...(a+n))."""
    deg = A.deg
    pref = A * X.log() - X - (A + 1.0).gammaln()
    one = Jet.const(np.ones(A.c.shape[-1]), deg)
    # A = a + εa (the common case): 1/(A + n) has closed-form coefficients
    unit = deg[0] >= 1 and deg[1] == 0 and np.all(A.c[1, 0] == 1.0) and not A.c[2:].any()
    state = {"t": one, "s": one, "A": A, "X": X, "pref": pref}

    def step(st, n):
        A = st["A"]
        inv = affine_reciprocal(A.value + n, deg, 0) if unit else (A + float(n)).reciprocal()
        t = st["t"] * (inv * st["X"])
        return dict(st, t=t, s=st["s"] + t)

    return converge(state, step, lambda o, n: rel_change_small(o["s"], n["s"], _TOL),
                    lambda st: st["pref"].exp() * st["s"], A.c.shape[-1], deg, _MAX_ITER)


def _gamma_fraction(A, X):
    """Q(A, X) by Legendre's continued fraction (modified Lentz):
    Q = exp(a log x - x - lgamma a) / (x+1-a - 1(1-a)/(x+3-a - 2(2-a)/(x+5-a - ...)))."""
    deg = A.deg
    b0 = X + 1.0 - A
    state = {"f": b0, "C": b0, "D": Jet.const(np.zeros(A.c.shape[-1]), deg), "A": A, "X": X,
             "pref": A * X.log() - X - A.gammaln()}

    def step(st, i):
        A = st["A"]
        b = st["X"] + (2.0 * i + 1.0) - A
        an = A * float(i) - float(i * i)
        D = _guard(b + an * st["D"]).reciprocal()
        C = _guard(b + an / st["C"])
        return dict(st, f=st["f"] * (C * D), C=C, D=D)

    return converge(state, step, lambda o, n: rel_change_small(o["f"], n["f"], _TOL),
                    lambda st: st["pref"].exp() / st["f"], A.c.shape[-1], deg, _MAX_ITER)


def gammainc_jet(A, X):
    """(P, Q) = (P(A, X), 1 - P) as Jets over a 1-d element axis, the smaller one computed
    directly (series where x < a + 1, else the continued fraction), so that derivatives of
    either are accurate in both tails. NaN outside a > 0, x >= 0."""
    a, x = A.value, X.value
    P = Jet(np.full(A.c.shape, np.nan))
    ok = (a > 0) & (x >= 0) & np.isfinite(a) & ~np.isnan(x)
    P.c[:, :, ok & ((x == 0) | np.isposinf(x))] = 0.0  # P is 0 or 1 there for every a
    P.c[0, 0, ok & np.isposinf(x)] = 1.0
    inner = ok & (x > 0) & np.isfinite(x)
    series = inner & (x < a + 1.0)
    Q = 1.0 - P
    if series.any():
        r = _gamma_series(A.take(series), X.take(series))
        P.c[:, :, series], Q.c[:, :, series] = r.c, (1.0 - r).c
    frac = inner & ~series
    if frac.any():
        r = _gamma_fraction(A.take(frac), X.take(frac))
        P.c[:, :, frac], Q.c[:, :, frac] = (1.0 - r).c, r.c
    return P, Q


def gammainc_a_derivative(a, x, order):
    """∂^order P(a, x) / ∂a^order (order >= 1), elementwise."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    deg = (order, 0)
    P, _ = gammainc_jet(Jet.var(a.ravel(), 0, deg), Jet.const(x.ravel(), deg))
    return P.derivative(order).reshape(a.shape)


def gennorm_cdf_beta_derivative(z, p, order):
    """∂^order/∂β^order of the generalized normal CDF: F = 1/2 ± Q(1/β, |z|^β)/2 (- below 0,
    + above), Q and the jets of 1/β and |z|^β = e^(β log|z|) in β."""
    z, p = np.broadcast_arrays(np.asarray(z, np.float64), np.asarray(p, np.float64))
    shape = z.shape
    z, p = z.ravel(), p.ravel()
    deg = (order, 0)
    B = Jet.var(p, 0, deg)
    az = np.abs(z)
    pos = az > 0
    U = Jet.const(np.zeros_like(z), deg)
    if pos.any():
        U.c[:, :, pos] = (B.take(pos) * np.log(az[pos])).exp().c
    U.c[0, 0, np.isinf(az)] = np.inf
    _, Q = gammainc_jet(B.reciprocal(), U)
    out = -0.5 * np.sign(z) * Q.derivative(order)
    out[np.isinf(z) & (p > 0)] = 0.0
    return out.reshape(shape)


# --- incomplete beta ------------------------------------------------------------------------

def _beta_fraction(A, B, X, X1):
    """I_X(A, B) on jets by the continued fraction (valid where x < (a+1)/(a+b+2))."""
    deg = A.deg
    n = A.c.shape[-1]
    qab, qap = A + B, A + 1.0
    one = Jet.const(np.ones(n), deg)
    d = _guard(1.0 - qab * X / qap).reciprocal()
    lbeta = A.gammaln() + B.gammaln() - (A + B).gammaln()
    lbeta.c[0, 0] = sc.betaln(A.value, B.value)
    pref = A * X.log() + B * X1.log() - lbeta - A.log()
    state = {"h": d, "c": one, "d": d, "A": A, "B": B, "X": X, "pref": pref}

    def step(st, m):
        A, B, X = st["A"], st["B"], st["X"]
        m2 = 2.0 * m
        c, d, h = st["c"], st["d"], st["h"]
        aa = (B - float(m)) * X * float(m) / ((A + (m2 - 1.0)) * (A + m2))
        d = _guard(aa * d + 1.0).reciprocal()
        c = _guard(aa / c + 1.0)
        h = h * (d * c)
        aa = -((A + float(m)) * (A + B + float(m)) * X) / ((A + m2) * (A + (m2 + 1.0)))
        d = _guard(aa * d + 1.0).reciprocal()
        c = _guard(aa / c + 1.0)
        return dict(st, h=h * (d * c), c=c, d=d)

    return converge(state, step, lambda o, nw: rel_change_small(o["h"], nw["h"], _TOL),
                    lambda st: st["pref"].exp() * st["h"], n, deg, _MAX_ITER)


def betainc_jet(A, B, X, X1):
    """I_X(A, B) as a Jet, for jets A, B, X and X1 = 1 - X (given separately, so that a value
    of X near 1 keeps its complement's digits) over a 1-d element axis. Elements outside
    a, b > 0, 0 <= x <= 1 are NaN."""
    a, b, x, x1 = A.value, B.value, X.value, X1.value
    out = Jet(np.full(A.c.shape, np.nan))
    ok = (a > 0) & (b > 0) & (x >= 0) & (x1 >= 0) & np.isfinite(a) & np.isfinite(b)
    zero, one = ok & (x == 0), ok & (x1 == 0)
    out.c[:, :, zero | one] = 0.0
    out.c[0, 0, one] = 1.0
    inner = ok & ~zero & ~one
    direct = inner & (x < (a + 1.0) / (a + b + 2.0))
    if direct.any():
        out.c[:, :, direct] = _beta_fraction(A.take(direct), B.take(direct), X.take(direct),
                                             X1.take(direct)).c
    swap = inner & ~direct
    if swap.any():
        r = _beta_fraction(B.take(swap), A.take(swap), X1.take(swap), X.take(swap))
        r = 1.0 - r
        out.c[:, :, swap] = r.c
    return out


def betainc_derivative(a, b, x, na, nb):
    """∂a^na ∂b^nb I_x(a, b) (na + nb >= 1), elementwise."""
    a, b, x = np.broadcast_arrays(*[np.asarray(v, np.float64) for v in (a, b, x)])
    shape = a.shape
    a, b, x = a.ravel(), b.ravel(), x.ravel()
    deg = (na, nb)
    jet = betainc_jet(Jet.var(a, 0, deg), Jet.var(b, 1, deg), Jet.const(x, deg),
                      Jet.const(1.0 - x, deg))
    return jet.derivative(na, nb).reshape(shape)


def stdtr_df_derivative(df, t, order):
    """∂^order/∂df^order of Student's t CDF at t (order >= 1): with w = t²/(df + t²),
    F(t) = 1/2 + sign(t)/2 I_w(1/2, df/2), w and 1 - w = df/(df + t²) formed separately."""
    df, t = np.broadcast_arrays(np.asarray(df, np.float64), np.asarray(t, np.float64))
    shape = df.shape
    df, t = df.ravel(), t.ravel()
    deg = (order, 0)
    D = Jet.var(df, 0, deg)
    t2 = t * t
    denom = (D + t2).reciprocal()
    W, W1 = denom * t2, denom * D
    jet = betainc_jet(Jet.const(np.full_like(df, 0.5), deg), D * 0.5, W, W1)
    out = 0.5 * np.sign(t) * jet.derivative(order)
    out[np.isinf(t) & (df > 0)] = 0.0
    out[np.isnan(t) | ~(df > 0)] = np.nan
    return out.reshape(shape)


# --- Hurwitz zeta in s -----------------------------------------------------------------------

_B2K = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
        43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730]  # B_2 ... B_24


def zeta_s_derivative(s, q, order):
    """∂^order ζ(s, q) / ∂s^order for s > 1, q > 0 (order >= 0), by Euler-Maclaurin on jets:
    ζ = Σ_{n<N} (q+n)^-s + (q+N)^(1-s)/(s-1) + (q+N)^-s/2
        + Σ_k B_2k/(2k)! s(s+1)...(s+2k-2) (q+N)^(-s-2k+1),
    with N >= s + 15 so the 12 correction terms are below rounding for every s."""
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    shape = s.shape
    s, q = s.ravel(), q.ravel()
    out = np.full(s.shape, np.nan)
    ok = (s > 1) & (q > 0) & np.isfinite(s) & np.isfinite(q)
    if ok.any():
        s_, q_ = s[ok], q[ok]
        deg = (order, 0)
        S = Jet.var(s_, 0, deg)
        big_n = int(min(max(np.max(s_), 0.0) + 15, 4000))
        total = Jet.const(np.zeros_like(s_), deg)
        for n in range(big_n):
            total = total + (S * -np.log(q_ + n)).exp()
        qn = q_ + big_n
        lq = np.log(qn)
        power = (S * -lq).exp()  # (q+N)^-s
        total = total + power * qn / (S - 1.0) + power * 0.5
        rising = S  # s(s+1)...(s+2k-2)
        fact = 2.0
        for k, b in enumerate(_B2K, start=1):
            term = rising * power * (b / fact / qn ** (2 * k - 1))
            total = total + term
            rising = rising * (S + (2 * k - 1)) * (S + 2 * k)
            fact *= (2 * k + 1) * (2 * k + 2)
        out[ok] = total.derivative(order)
    return out.reshape(shape)


# --- exprel and its derivatives -----------------------------------------------------------------

def exprel_derivative(u, n):
    """d^n/du^n (e^u - 1)/u = ∫_0^1 t^n e^(ut) dt: its power series for |u| < 2, the incomplete
    gamma function n! P(n+1, -u) / (-u)^(n+1) below, and the recurrence
    J_k = (1 - k J_(k-1)) / u for J_k = e^-u ∫ t^k e^(ut) dt above (stable for u > n/2)."""
    u = np.asarray(u, np.float64)
    if n == 0:
        return np.asarray(sc.exprel(u))
    shape = u.shape
    u = u.ravel()
    out = np.full(u.shape, np.nan)
    small = np.abs(u) < 2
    if small.any():
        v = u[small]
        term = np.ones_like(v)
        total = term / (n + 1)
        for k in range(1, 60):
            term = term * v / k
            total = total + term / (n + k + 1)
        out[small] = total
    low = u <= -2
    if low.any():
        v = -u[low]
        with np.errstate(divide="ignore", under="ignore"):
            out[low] = np.exp(sc.gammaln(n + 1.0) + np.log(sc.gammainc(n + 1.0, v))
                              - (n + 1) * np.log(v))
    high = u >= 2
    if high.any():
        v = u[high]
        j = -np.expm1(-v) / v
        for k in range(1, n + 1):
            j = (1.0 - k * j) / v
        with np.errstate(over="ignore"):
            out[high] = j * np.exp(v)
    out[np.isnan(u)] = np.nan
    return out.reshape(shape)


__all__ = ["gammainc_a_derivative", "gammainc_jet", "gennorm_cdf_beta_derivative",
           "betainc_derivative", "betainc_jet", "stdtr_df_derivative", "zeta_s_derivative",
           "exprel_derivative"]

"""Truncated Taylor arithmetic in NumPy ("jets"), for the derivatives of special functions in
their shape parameters (the incomplete gamma and beta functions, Hurwitz zeta in s).

No primitives here. A `Jet` is a polynomial in up to two small variables (εa, εb), truncated
per variable (tensor-product: εa^i εb^j with i <= da, j <= db), whose coefficients are arrays:
`c[i, j]` is ∂a^i ∂b^j f / (i! j!). Running a series or continued fraction on jets instead of
floats differentiates the algorithm itself (forward-mode AD of the loop), so a derivative in a
shape parameter is as accurate as the algorithm's value, with no finite differences and no
cancellation between separately computed quantities.
"""
from __future__ import annotations

from math import factorial

import numpy as np
import scipy.special as sc


class Jet:
    __slots__ = ("c",)
    __array_ufunc__ = None  # ndarray op Jet defers to Jet's reflected methods

    def __init__(self, c):
        self.c = c  # shape (da + 1, db + 1) + value shape

    # --- construction -------------------------------------------------------------------
    @staticmethod
    def const(value, deg):
        value = np.asarray(value, np.float64)
        c = np.zeros((deg[0] + 1, deg[1] + 1) + value.shape)
        c[0, 0] = value
        return Jet(c)

    @staticmethod
    def var(value, which, deg):
        """The variable εa (which=0) or εb (which=1) around `value`."""
        j = Jet.const(value, deg)
        idx = (1, 0) if which == 0 else (0, 1)
        if deg[which] >= 1:
            j.c[idx] = 1.0
        return j

    @property
    def deg(self):
        return (self.c.shape[0] - 1, self.c.shape[1] - 1)

    @property
    def value(self):
        return self.c[0, 0]

    def derivative(self, na, nb=0):
        """∂a^na ∂b^nb of the function the jet expands."""
        return self.c[na, nb] * (factorial(na) * factorial(nb))

    def take(self, idx):
        """The jet restricted to the elements `idx` of a 1-d value axis."""
        return Jet(self.c[:, :, idx])

    # --- arithmetic ---------------------------------------------------------------------
    def __add__(self, o):
        if isinstance(o, Jet):
            return Jet(self.c + o.c)
        c = self.c.copy()
        c[0, 0] += o
        return Jet(c)

    __radd__ = __add__

    def __neg__(self):
        return Jet(-self.c)

    def __sub__(self, o):
        return self + (-o)

    def __rsub__(self, o):
        return (-self) + o

    def __mul__(self, o):
        if not isinstance(o, Jet):
            return Jet(self.c * o)
        a, b = self.c, o.c
        if a.shape[:2] == (2, 1):  # first order in one variable: the common case, unrolled
            return Jet(np.stack([a[0] * b[0], a[0] * b[1] + a[1] * b[0]]))
        tail = np.broadcast_shapes(a.shape[2:], b.shape[2:])
        n = a.shape[0] * a.shape[1]
        m = _product_matrix(self.deg)  # (N, N²): which coefficient pairs meet where
        outer = a.reshape((n, 1) + a.shape[2:]) * b.reshape((1, n) + b.shape[2:])
        flat = m @ outer.reshape(n * n, -1)
        return Jet(flat.reshape(a.shape[:2] + tail))

    __rmul__ = __mul__

    def _nilpotent(self):
        """(f00, f - f00): the value and the part with no constant term."""
        n = self.c.copy()
        f0 = n[0, 0].copy()
        n[0, 0] = 0.0
        return f0, Jet(n)

    def _series(self, coeffs, n):
        """sum_k coeffs[k] n^k for a nilpotent jet n (the powers vanish past the degree)."""
        out = Jet.const(coeffs[0], self.deg)
        power = None
        for k in range(1, sum(self.deg) + 1):
            power = n if power is None else power * n
            out = out + power * coeffs[k]
        return out

    def compose(self, derivs):
        """f(self) from f's derivatives at the value: derivs[k] = f^(k)(self.value)."""
        f0, n = self._nilpotent()
        return self._series([d / factorial(k) for k, d in enumerate(derivs)], n)

    def reciprocal(self):
        """1/f by forward substitution: (f r)_k = 0 for k > 0 in the lexicographic order of
        the coefficients, in which a product's coefficient k only involves factors' k' <= k."""
        c = self.c
        da, db = self.deg
        n = (da + 1) * (db + 1)
        flat = c.reshape((n,) + c.shape[2:])
        f0 = flat[0]
        r = np.empty_like(flat)
        r[0] = 1.0 / f0
        if db == 0:  # one variable: r_k = -Σ_(j=1..k) f_j r_(k-j) / f_0
            for k in range(1, n):
                acc = flat[1] * r[k - 1]
                for j in range(2, k + 1):
                    acc = acc + flat[j] * r[k - j]
                r[k] = -acc * r[0]
        elif n > 1:
            m3 = _product_matrix(self.deg).reshape(n, n, n)
            # F[k, j] = Σ_i m3[k, i, j] f_i: the matrix of multiplication by f
            F = np.tensordot(m3, flat, axes=([1], [0]))
            for k in range(1, n):
                r[k] = -np.sum(F[k, :k] * r[:k], axis=0) / f0
        return Jet(r.reshape(c.shape))

    def __truediv__(self, o):
        if isinstance(o, Jet):
            return self * o.reciprocal()
        return Jet(self.c / o)

    def __rtruediv__(self, o):
        return self.reciprocal() * o

    def exp(self):
        e = np.exp(self.value)
        return self.compose([e] * (sum(self.deg) + 1))

    def log(self):
        v = self.value
        k = sum(self.deg)
        return self.compose([np.log(v)] + [(-1.0) ** (i + 1) * factorial(i - 1) / v ** i
                                           for i in range(1, k + 1)])

    def log1m(self):
        """log(1 - self), accurate for a small value (log1p)."""
        v = self.value
        k = sum(self.deg)
        return self.compose([np.log1p(-v)] + [-factorial(i - 1) / (1.0 - v) ** i
                                              for i in range(1, k + 1)])

    def gammaln(self):
        v = self.value
        return self.compose([sc.gammaln(v)] + [sc.polygamma(i - 1, v)
                                               for i in range(1, sum(self.deg) + 1)])

    def max_abs(self):
        return np.max(np.abs(self.c), axis=(0, 1))


_PRODUCTS = {}


def _product_matrix(deg):
    """M (N, N²) with M[k, i N + j] = 1 where coefficient slots i and j multiply into slot k
    (slots: (p, q) with p <= deg[0], q <= deg[1], row-major; products past the degree
    vanish)."""
    m = _PRODUCTS.get(deg)
    if m is None:
        da, db = deg
        slots = [(p, q) for p in range(da + 1) for q in range(db + 1)]
        index = {sl: k for k, sl in enumerate(slots)}
        n = len(slots)
        m = np.zeros((n, n * n))
        for i, (p1, q1) in enumerate(slots):
            for j, (p2, q2) in enumerate(slots):
                k = index.get((p1 + p2, q1 + q2))
                if k is not None:
                    m[k, i * n + j] = 1.0
        m = _PRODUCTS[deg] = m
    return m


def affine_reciprocal(jet_linear_value, deg, which):
    """1 / (v + εa) (or εb) without the generic series: (-1)^k / v^(k+1) in one variable."""
    v = np.asarray(jet_linear_value, np.float64)
    c = np.zeros((deg[0] + 1, deg[1] + 1) + v.shape)
    r = 1.0 / v
    for k in range(deg[which] + 1):
        c[(k, 0) if which == 0 else (0, k)] = (-r) ** k * r
    return Jet(c)


def _take(v, mask):
    if isinstance(v, Jet):
        return Jet(v.c[..., mask])
    if isinstance(v, np.ndarray) and v.ndim:
        return v[..., mask]
    return v


def converge(state, step, converged, finish, n, deg, max_iter):
    """Iterate `state = step(state, it)` (a dict of Jets/arrays over a 1-d element axis) until
    `converged(old, new)` holds for each element; `finish(state)` turns an element's final
    state into its result Jet. The working set shrinks as elements finish. Elements that do
    not converge within `max_iter` get NaN, never a wrong number."""
    out = np.full((deg[0] + 1, deg[1] + 1, n), np.nan)
    active = np.arange(n)
    for it in range(1, max_iter + 1):
        if not active.size:
            break
        new = step(state, it)
        ok = converged(state, new)
        if ok.any():
            done = {k: _take(v, ok) for k, v in new.items()}
            out[:, :, active[ok]] = finish(done).c
            keep = ~ok
            new = {k: _take(v, keep) for k, v in new.items()}
            active = active[keep]
        state = new
    return Jet(out)


def rel_change_small(old, new, tol):
    """Every coefficient changed by at most tol relative to its size (or to the value's, for
    a coefficient that is still ~0), per element."""
    d = np.abs(new.c - old.c)
    scale = np.maximum(np.abs(new.c), 1e-12 * np.abs(new.c[0, 0]) + 1e-300)
    return np.all(d <= tol * scale, axis=(0, 1))


__all__ = ["Jet", "affine_reciprocal", "converge", "rel_change_small"]

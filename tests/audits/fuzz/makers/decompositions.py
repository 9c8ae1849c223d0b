"""Makers: complex eigh, svd and qr (through phase-free functions), the nuclear and spectral
norms of complex matrices, banded solves and the matrix square root."""
from __future__ import annotations

import numpy as np

from ..generator import Reject, guard, _size
from ..program import _f
from ..registry import maker
from .linalg import _square_expr


@maker(weight=1)
def mk_complex_decomp(g):
    """Complex eigh, svd and qr, and the nuclear and spectral norms, through what their
    vectors' phases do not change (v diag(f(w)) vᴴ, u diag(f(s)) vᴴ, |v|) or QR's own
    factors (R's diagonal is real); results made real."""
    i = g.pick(lambda n: len(n.shape) >= 2 and _size(n.shape[:-2]) <= 2)
    sq, n = _square_expr(g, i)
    guard(n <= 4)
    c = f"lax.complex({sq}, fnp.cos(fnp.swapaxes({sq}, -1, -2)) * 0.5)"
    ch = "lax.conj(fnp.swapaxes(_c, -1, -2))"
    kind = g.choice(["eigh_fun", "eigh_abs", "eigvalsh", "svd_fun", "svdvals", "norm_nuc",
                     "norm2", "qr"])
    if kind in ("eigh_fun", "eigh_abs", "eigvalsh"):
        m = f"(lambda _c: _c + {ch})({c})"  # Hermitian
        w = np.linalg.eigvalsh(g.evaluate(m, [i]))
        guard(np.all(np.diff(w, axis=-1) >= 0.1))
        if kind == "eigvalsh":
            return "complex_eigvalsh", f"fnp.linalg.eigvalsh({m})", [i]
        if kind == "eigh_abs":
            return "complex_eigh_abs", f"fnp.abs(fnp.linalg.eigh({m})[1])", [i]
        return "complex_eigh_fun", (
            f"lax.real((lambda w, v: (v * fnp.sin(w)[..., None, :]) @ lax.conj("
            f"fnp.swapaxes(v, -1, -2)) * (1 - 0.5j))(*fnp.linalg.eigh({m})))"), [i]
    for shift in [0.0] + g.perm([2.0, 3.0, -3.0]):
        m = f"({c} + {_f(shift)} * np.eye({n}))" if shift else c
        sv = np.linalg.svd(g.evaluate(m, [i]), compute_uv=False)
        if np.min(sv) >= 0.1 and np.all(-np.diff(sv, axis=-1) >= 0.1):
            break
    else:
        raise Reject
    if kind == "qr":
        r = np.linalg.qr(g.evaluate(m, [i]))[1]
        guard(np.min(np.abs(np.diagonal(r, axis1=-2, axis2=-1))) >= 0.1)
        return "complex_qr", (f"(lambda q, r: lax.real(q * (1 + 0.5j)) + lax.imag(r))"
                              f"(*fnp.linalg.qr({m}))"), [i]
    if kind == "svd_fun":
        return "complex_svd_fun", (
            f"lax.imag((lambda u, s, vt: (u * fnp.sin(s)[..., None, :]) @ vt * (1 + 0.5j))"
            f"(*fnp.linalg.svd({m}, full_matrices=False)))"), [i]
    if kind == "svdvals":
        return "complex_svdvals", f"fnp.linalg.svd({m}, compute_uv=False)", [i]
    order = "'nuc'" if kind == "norm_nuc" else "2"
    return f"complex_{kind}", f"fnp.linalg.norm({m}, {order}, axis=(-2, -1))", [i]


@maker(weight=1)
def mk_banded_and_sqrtm(g):
    """scipy.linalg.solve_banded (a band built from a value, its corners left as they are:
    never read) and sqrtm of a matrix near the identity (real root)."""
    if g.coin(0.5):
        i = g.pick(lambda n: len(n.shape) == 2 and 2 <= n.shape[0] <= 4 and n.shape[1] >= 2)
        rows, n = g.shape(i)
        l = g.int(0, rows - 1)
        u = rows - 1 - l
        # |diagonal| > 3 > the sum of at most 3 off-diagonal entries in (-1, 1): dominant
        ab = f"(fnp.tanh(@0) + {_f(4.0)} * np.eye({rows})[{u}][:, None])"
        return "solve_banded", (f"sla.solve_banded(({l}, {u}), {ab}, "
                                f"fnp.sin(@0[0]) + {_f(0.5)})"), [i]
    i = g.pick(lambda n: len(n.shape) >= 2 and _size(n.shape[:-2]) <= 2)
    sq, n = _square_expr(g, i)
    guard(n <= 4)
    return "sqrtm", f"sla.sqrtm(fnp.tanh({sq}) * 0.2 + np.eye({n}))", [i]

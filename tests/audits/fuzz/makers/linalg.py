"""Makers: linear algebra, well-conditioned by construction and by guard (solves,
factorizations, determinants, eigen and singular values, expm, complex matrices, pinv,
lstsq, cond, matrix_power, multi_dot, eig)."""
from __future__ import annotations

import numpy as np

from ..generator import Reject, guard, _size
from ..program import _f
from ..registry import maker


def _square_expr(g, i):
    """An expression (slot 0) for a batch of square matrices built from node i, and its n."""
    s = g.shape(i)
    base = "@0" if np.max(np.abs(g.vals(i))) <= 2 else "fnp.tanh(@0)"  # entries in [-2, 2]
    if len(s) >= 2 and s[-1] == s[-2] and s[-1] >= 2 and g.coin(0.6):
        return base, s[-1]
    guard(len(s) >= 2 and s[-2] >= 2)
    return f"({base} @ fnp.swapaxes({base}, -1, -2) * 0.5)", s[-2]


@maker(weight=4)
def mk_linalg(g):
    # at most 2 matrices: batched factorizations run one LAPACK call per matrix, and the
    # Hessian checks batch them again per basis vector (slow, not wrong)
    i = g.pick(lambda n: len(n.shape) >= 2 and _size(n.shape[:-2]) <= 2)
    sq, n = _square_expr(g, i)
    guard(n <= 4)
    kind = g.choice(["inv", "solve", "det", "slogdet", "cholesky", "eigvalsh", "eigh_vec2",
                     "svdvals", "qr_r", "norm_fro", "svd_recon", "qr_q", "eigh_fun", "expm",
                     "solve_triangular", "cho_solve"])
    for shift in [0.0] + g.perm([2.0, 4.0, -4.0]):  # the first well-conditioned one
        m = f"({sq} + {_f(shift)} * np.eye({n}))" if shift else sq
        mv = g.evaluate(m, [i])
        if np.max(np.linalg.cond(mv)) <= 30:
            break
    else:
        raise Reject
    if kind == "det":
        return kind, f"fnp.linalg.det({m})", [i]
    if kind == "slogdet":
        return kind, f"fnp.linalg.slogdet({m})[1]", [i]
    if kind == "inv":
        return kind, f"fnp.linalg.inv({m})", [i]
    if kind == "solve":
        vec = [j for j, nd in enumerate(g.nodes) if nd.shape == (n,)]
        if vec and g.coin(0.5):
            return kind, f"fnp.linalg.solve({m}, @1)", [i, g.choice(vec)]
        return kind, f"fnp.linalg.solve({m}, fnp.sin(@0[..., :1]))", [i]
    if kind == "expm":
        return kind, f"sla.expm({m} * 0.3)", [i]
    if kind in ("cholesky", "solve_triangular", "cho_solve"):
        spd = f"({m} @ fnp.swapaxes({m}, -1, -2) + 0.5 * np.eye({n}))"
        sv = g.evaluate(spd, [i])
        guard(np.max(np.linalg.cond(sv)) <= 100)
        if kind == "cholesky":
            return kind, f"fnp.linalg.cholesky({spd})", [i]
        rhs = "fnp.sin(@0[..., :1])"
        if kind == "solve_triangular":
            return kind, (f"sla.solve_triangular(fnp.linalg.cholesky({spd}), {rhs}, "
                          f"lower=True)"), [i]
        return kind, f"sla.cho_solve((fnp.linalg.cholesky({spd}), True), {rhs})", [i]
    if kind == "svd_recon":  # u diag(sin s) vt: the whole SVD rule, free of sign choices
        sv = np.linalg.svd(mv, compute_uv=False)
        guard(np.all(-np.diff(sv, axis=-1) >= 0.1) and np.min(sv) >= 0.1)
        return kind, (f"(lambda u, s, vt: (u * fnp.sin(s)[..., None, :]) @ vt)"
                      f"(*fnp.linalg.svd({m}, full_matrices=False))"), [i]
    if kind == "qr_q":
        r = np.linalg.qr(mv)[1]
        guard(np.min(np.abs(np.diagonal(r, axis1=-2, axis2=-1))) >= 0.1)
        return kind, f"fnp.linalg.qr({m})[0]", [i]
    if kind == "eigh_fun":  # v diag(sin w) vᵀ: a matrix function through eigh
        sym = f"({m} + fnp.swapaxes({m}, -1, -2))"
        w = np.linalg.eigvalsh(g.evaluate(sym, [i]))
        guard(np.all(np.diff(w, axis=-1) >= 0.1))
        return kind, (f"(lambda w, v: (v * fnp.sin(w)[..., None, :]) @ fnp.swapaxes(v, -1, -2))"
                      f"(*fnp.linalg.eigh({sym}))"), [i]
    if kind in ("eigvalsh", "eigh_vec2"):
        sym = f"({m} + fnp.swapaxes({m}, -1, -2))"
        w = np.linalg.eigvalsh(g.evaluate(sym, [i]))
        guard(np.all(np.diff(w, axis=-1) >= 0.1))
        if kind == "eigvalsh":
            return kind, f"fnp.linalg.eigvalsh({sym})", [i]
        return kind, f"fnp.linalg.eigh({sym})[1] ** 2", [i]  # squares: sign-free
    if kind == "svdvals":
        sv = np.linalg.svd(mv, compute_uv=False)
        guard(np.all(-np.diff(sv, axis=-1) >= 0.1) and np.min(sv) >= 0.1)
        return kind, f"fnp.linalg.svd({m}, compute_uv=False)", [i]
    if kind == "qr_r":
        r = np.linalg.qr(mv)[1]
        guard(np.min(np.abs(np.diagonal(r, axis1=-2, axis2=-1))) >= 0.1)
        return kind, f"fnp.linalg.qr({m})[1]", [i]
    guard(np.min(np.linalg.norm(mv, axis=(-2, -1))) >= 0.1)
    return kind, f"fnp.linalg.norm({m}, axis=(-2, -1))", [i]


@maker(weight=1)
def mk_complex_linalg(g):
    """Complex matrices through the linear algebra that takes them (solves with the
    conjugate transpose, determinants, Hermitian Cholesky); results made real."""
    i = g.pick(lambda n: len(n.shape) >= 2 and _size(n.shape[:-2]) <= 2)
    sq, n = _square_expr(g, i)
    guard(n <= 4)
    c = f"lax.complex({sq}, fnp.sin(fnp.swapaxes({sq}, -1, -2)))"
    for shift in g.perm([2.0, 4.0, -4.0]):
        m = f"({c} + {_f(shift)} * np.eye({n}))"
        if np.max(np.linalg.cond(g.evaluate(m, [i]))) <= 30:
            break
    else:
        raise Reject
    hpd = f"({m} @ lax.conj(fnp.swapaxes({m}, -1, -2)) + 0.5 * np.eye({n}))"
    rhs = "(fnp.sin(@0[..., :1]) * (1 + 0.5j))"
    kind = g.choice(["det", "slogdet", "inv", "lu_solve_C", "tri_C", "cholesky", "cho_solve"])
    form = {
        "det": f"lax.real(fnp.linalg.det({m}) * (1 - 0.5j))",
        "slogdet": f"fnp.linalg.slogdet({m})[1] + lax.imag(fnp.linalg.slogdet({m})[0])",
        "inv": f"lax.real(fnp.linalg.inv({m}) * (1 + 1j))",
        "lu_solve_C": f"lax.real(sla.lu_solve(sla.lu_factor({m}), {rhs}, trans=2))",
        "tri_C": (f"lax.imag(sla.solve_triangular(fnp.linalg.cholesky({hpd}), {rhs}, "
                  f"lower=True, trans='C'))"),
        "cholesky": f"lax.real(fnp.linalg.cholesky({hpd}) * (1 + 0.5j))",
        "cho_solve": f"lax.imag(sla.cho_solve(sla.cho_factor({hpd}), {rhs}))",
    }[kind]
    return "complex_" + kind, form, [i]


def _conditioned(g, i, core, m, n, shifts=(2.0, 3.0, -3.0), max_cond=30.0):
    """A well-conditioned (..., m, n) expression from `core` (over slot 0, node i): its
    entries squashed into [-2, 2] if need be, then maybe shifted by a multiple of eye(m, n);
    and its singular values (per point, descending)."""
    core = core if np.max(np.abs(g.vals(i))) <= 2 else core.replace("@0", "fnp.tanh(@0)")
    for shift in [0.0] + g.perm(shifts):
        e = f"({core} + {_f(shift)} * np.eye({m}, {n}))" if shift else core
        sv = np.linalg.svd(g.evaluate(e, [i]), compute_uv=False)
        if np.min(sv) >= 0.1 and np.max(sv[..., 0] / sv[..., -1]) <= max_cond:
            return e, sv
    raise Reject


@maker(weight=1)
def mk_linalg_more(g):
    """pinv (rectangular), lstsq (tall), cond (p None / 'fro'), matrix_power, multi_dot, eig
    (general matrices)."""
    kind = g.choice(["pinv", "lstsq", "cond", "matrix_power", "multi_dot", "eig"])
    if kind == "multi_dot":
        return _multi_dot(g)
    if kind == "lstsq":
        i = g.pick(lambda n: len(n.shape) == 2 and n.shape[0] != n.shape[1] and max(n.shape) <= 6)
        m, n = g.shape(i)
        core = "@0" if m > n else "@0.T"
        m, n = max(m, n), min(m, n)
        a, _ = _conditioned(g, i, core, m, n)
        vec = [j for j, nd in enumerate(g.nodes) if nd.shape[:1] == (m,) and len(nd.shape) <= 2
               and _size(nd.shape) <= 3 * m]
        if vec and g.coin(0.5):
            return kind, f"fnp.linalg.lstsq({a}, @1)[0]", [i, g.choice(vec)]
        b = g.choice([f"fnp.cos({a}[:, 0])", f"fnp.sin({a}[:, :1] * 2.0)"])
        return kind, f"fnp.linalg.lstsq({a}, {b})[0]", [i]
    if kind == "pinv":
        i = g.pick(lambda n: len(n.shape) >= 2 and _size(n.shape[:-2]) <= 2
                   and 2 <= max(n.shape[-2:]) and max(n.shape[-2:]) <= 5)
        m, n = g.shape(i)[-2:]
        a, _ = _conditioned(g, i, "@0", m, n)
        return kind, f"fnp.linalg.pinv({a})", [i]
    i = g.pick(lambda n: len(n.shape) >= 2 and _size(n.shape[:-2]) <= 2)
    sq, n = _square_expr(g, i)
    guard(n <= 4)
    a, sv = _conditioned(g, i, sq, n, n, shifts=(2.0, 4.0, -4.0))
    if kind == "cond":
        p = g.choice(["", ", None", ", 'fro'", ", 'fro'"])
        if "fro" not in p:  # a ratio of the largest and smallest singular values: simple ones
            guard(np.all(-np.diff(sv, axis=-1) >= 0.1))
        return "cond_number", f"fnp.linalg.cond({a}{p})", [i]
    if kind == "eig":
        return _eig(g, i, a, n)
    k = g.choice([-2, -1, 1, 2, 3])
    scale = "" if k < 0 else f" * {_f(g.choice([0.4, 0.7]))}"
    return kind, f"fnp.linalg.matrix_power({a}{scale}, {k})", [i]


def _eig(g, i, a, n):
    """Eigenvalues, or eigenvectors made sign-free (each column times its first entry: LAPACK
    fixes the norm and the largest component's phase, not the sign), where the eigenvalues
    are 0.1 apart and each vector's largest component leads by 0.05."""
    w, v = np.linalg.eig(g.evaluate(a, [i]))
    gaps = np.abs(w[..., :, None] - w[..., None, :]) + np.eye(n) * 1e9
    guard(np.min(gaps) >= 0.1)
    top = np.sort(np.abs(v), axis=-2)
    guard(np.min(top[..., -1, :] - top[..., -2, :]) >= 0.05)
    if g.coin(0.5):
        return "eigvals", f"lax.real(fnp.linalg.eigvals({a}) * (1 - 0.5j))", [i]
    vec = f"fnp.linalg.eig({a})[1]"
    return "eig_vectors", f"lax.imag({vec} * {vec}[..., :1, :] * (1 + 0.5j))", [i]


def _multi_dot(g):
    """A chain of 2-d values (and their transposes) whose inner sizes match, maybe with 1-d
    ends."""
    i = g.pick(lambda n: len(n.shape) == 2)
    args, factors = [i], ["@0"]
    first, last = g.shape(i)
    for _ in range(g.int(1, 3)):
        cands = [(j, False) for j, n in enumerate(g.nodes) if len(n.shape) == 2 and n.shape[0] == last] \
            + [(j, True) for j, n in enumerate(g.nodes) if len(n.shape) == 2 and n.shape[1] == last]
        j, tr = g.choice(cands)
        factors.append(f"@{len(args)}" + (".T" if tr else ""))
        args.append(j)
        last = g.shape(j)[0 if tr else 1]
    for end, size in (("last", last), ("first", first)):
        vec = [j for j, n in enumerate(g.nodes) if n.shape == (size,)]
        if vec and g.coin(0.3):
            slot = f"@{len(args)}"
            args.append(g.choice(vec))
            factors = factors + [slot] if end == "last" else [slot] + factors
    return "multi_dot", f"fnp.linalg.multi_dot([{', '.join(factors)}])", args

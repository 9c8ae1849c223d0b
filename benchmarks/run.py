"""fxad benchmark suite (issue 8): every workload against a hand-written NumPy floor, in one run.

    python benchmarks/run.py [--only NAME[,NAME...]] [--repeat K] [--quick] [--markdown]
                             [--peers autograd,jax,torch | --peers none] [--min-run S]
                             [--extra] [--numba] [--list]

Not a test; CI does not run it (tests/project/test_benchmarks_smoke.py runs every workload once at a
tiny size and checks only the results). The workloads:

  scalar_chain_grad  d/dx of 25 x (x = sin(x)*1.01 + 0.1*cos(x)), float64 scalar (100 primitives)
  mlp_grad           grad wrt all params, 784-256-256-10 tanh MLP, softmax cross-entropy,
                     batch 128, float32
  hessian            fxad.hessian of sum(softplus(A @ x)) + 0.5*sum(x**2), n = 100
  per_example_grads  vmap(grad(logistic loss)), batch 512, dim 100, float64
  solve_grad         grad of sum(solve(A, b)) wrt A and b, n = 400
  rnn_grad           Elman RNN (hidden 64, input 32, 200 steps) through fxad.lax.scan, and the
                     same loop written in Python; grads wrt W, U, b
  jacobian           tanh(A @ x) * x, R^200 -> R^200, jacfwd and jacrev
  laplacian          jit(vmap(lambda x: trace(hessian(u)(x)))), u an MLP 64-256-256-1 tanh,
                     batch 256, float64 (the nested Laplacian)
  memory             tracemalloc peak of grad of a 50-layer tanh MLP (width 256, batch 64), with
                     and without fxad.checkpoint (bytes, not time)

Each workload has a floor: the primal and a hand-derived derivative in plain NumPy/SciPy. Every
variant -- fxad eager, fxad jit, and autograd / JAX (eager and jit, float64 enabled) / PyTorch
eager when importable -- is checked against the floor: the output of the first call (which
traces and compiles) and of the second call (which takes jit's repeat-call fast path) must both
match in structure, shape, dtype and values (np.allclose with the workload's rtol and
atol = atol_rel * max|floor|). A mismatch prints FAIL in the table (and the exit status is 1);
an exception prints CRASH. Nothing is skipped silently: a peer that is not importable is
listed in the notes under the table.

Timing: one BLAS thread (environment variables set before NumPy is imported, and threadpoolctl
when installed; JAX and PyTorch are told to use one thread too). Each variant is called twice
before timing (so jit tracing/compilation is excluded), then calibrated timeit-style so that one
run of `number` calls lasts >= --min-run seconds. Then --repeat rounds; in each round every
variant does one run, the order rotating from round to round, so that drifting machine load
affects all variants alike. Reported: the median per-call time; the ratio to the floor is the
median over rounds of (variant run / floor run in the same round); IQR is the interquartile
range of the variant's per-call times as a percentage of its median (a noise indicator). The
garbage collector stays enabled (it is part of the real cost of a Python autodiff).
"""
from __future__ import annotations

import os
import sys

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS")
if __name__ == "__main__":  # only as a script: importing this module (tests) changes nothing
    for _var in _THREAD_VARS:
        os.environ[_var] = "1"
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.linalg as sla  # noqa: E402

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
import fxad  # noqa: E402
import fxad.numpy as fnp  # noqa: E402
from fxad import lax  # noqa: E402

# Issue 8's targets: ratio to the floor, by workload and fxad mode.
TARGETS = {
    "scalar_chain_grad": {"eager": 25.0, "jit": 3.0},
    "mlp_grad": {"eager": 1.5, "jit": 1.1},
    "hessian": {"eager": 20.0, "jit": 3.0},
    "per_example_grads": {"eager": 8.0, "jit": 3.0},
    "solve_grad": {"eager": 1.1},
    "rnn_grad": {"eager": 3.0, "jit": 1.5},
    "jacobian": {"eager": 15.0, "jit": 5.0},
}

PEER_NAMES = ("autograd", "jax", "torch")


# ================================================================================================
# Data structures
# ================================================================================================

@dataclasses.dataclass
class Variant:
    name: str
    fn: Callable[[], Any]           # the timed call; returns the result (any tree)
    lib: str = "fxad"               # numpy | fxad | autograd | jax | torch
    mode: str | None = None         # "eager" / "jit" for fxad rows that carry an issue-8 target
    note: str = ""


@dataclasses.dataclass
class Workload:
    name: str
    title: str
    ref: Any                        # the floor's result
    rtol: float
    atol_rel: float                 # atol = atol_rel * max |floor leaf|
    variants: list                  # list[Variant]; variants[0] is the floor
    notes: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Row:
    workload: str
    variant: str
    lib: str
    status: str = "ok"              # ok | FAIL | CRASH
    detail: str = ""                # why it failed, or a note
    seconds: float | None = None    # median per call (time rows)
    ratio: float | None = None      # median of per-round ratios to the floor
    iqr: float | None = None        # interquartile range / median
    peak_bytes: int | None = None   # memory rows
    ratio_label: str = "x floor"
    target: float | None = None
    mode: str | None = None

    @property
    def met(self):
        if self.target is None or self.ratio is None or self.status != "ok":
            return None
        return self.ratio <= self.target


@dataclasses.dataclass
class Config:
    quick: bool = False
    extra: bool = False         # informational variants (other Hessian orders, more checkpoints)
    numba: bool = False         # --numba: each fxad jit variant also on the numba backend
    peers: dict = dataclasses.field(default_factory=dict)   # name -> namespace (importable)
    skipped: dict = dataclasses.field(default_factory=dict)  # name -> reason


# ================================================================================================
# Peers (autograd, JAX, PyTorch): used only when importable
# ================================================================================================

class _NS:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def load_peers(wanted=PEER_NAMES):
    """Import the peers in `wanted`; returns (available: name -> namespace, skipped: name ->
    reason)."""
    peers, skipped = {}, {}
    for name in PEER_NAMES:
        if name not in wanted:
            skipped[name] = "not requested (--peers)"
            continue
        try:
            if name == "autograd":
                import autograd
                import autograd.numpy as anp
                import autograd.scipy.special as asp
                peers[name] = _NS(ag=autograd, np=anp, special=asp,
                                  version=_dist_version("autograd"))
            elif name == "jax":
                import jax
                jax.config.update("jax_enable_x64", True)
                import jax.numpy as jnp
                peers[name] = _NS(jax=jax, np=jnp, lax=jax.lax, nn=jax.nn,
                                  version=jax.__version__)
            elif name == "torch":
                import torch
                torch.set_num_threads(1)
                try:
                    torch.set_num_interop_threads(1)
                except RuntimeError:  # already set (or parallel work already started)
                    pass
                import torch.func  # noqa: F401
                peers[name] = _NS(torch=torch, F=torch.nn.functional, func=torch.func,
                                  version=torch.__version__)
        except Exception as e:  # noqa: BLE001 - any import failure means "skip, with a note"
            skipped[name] = f"not importable ({type(e).__name__}: {str(e)[:80]})"
    return peers, skipped


def _dist_version(dist):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:  # noqa: BLE001
        return "?"


def _jax_ready(tree):
    import jax
    return jax.block_until_ready(tree)


# ================================================================================================
# Result comparison
# ================================================================================================

def leaves(x):
    """Flatten a result (tuples, lists, dicts, NumPy/JAX/PyTorch arrays, scalars) into a list
    of NumPy arrays."""
    if isinstance(x, (tuple, list)):
        return [leaf for v in x for leaf in leaves(v)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in leaves(x[k])]
    if type(x).__module__.startswith("torch"):
        return [x.detach().cpu().numpy()]
    return [np.asarray(x)]


def compare(got, ref, rtol, atol_rel):
    """(ok, message): structure, shape, dtype and values (np.allclose) against the floor."""
    g, r = leaves(got), leaves(ref)
    if len(g) != len(r):
        return False, f"{len(g)} result arrays, the floor has {len(r)}"
    for i, (a, b) in enumerate(zip(g, r)):
        if a.shape != b.shape:
            return False, f"array {i}: shape {a.shape}, floor {b.shape}"
        if a.dtype != b.dtype:
            return False, f"array {i}: dtype {a.dtype}, floor {b.dtype}"
        scale = float(np.max(np.abs(b))) if b.size else 0.0
        atol = atol_rel * scale
        if not np.allclose(a, b, rtol=rtol, atol=atol):
            with np.errstate(all="ignore"):
                err = np.abs(a.astype(np.float64) - b.astype(np.float64))
                worst = float(np.nanmax(err)) if np.isfinite(err).any() else float("nan")
                nonfinite = int(np.size(a) - np.isfinite(a).sum())
            extra = f", {nonfinite} non-finite" if nonfinite else ""
            return False, (f"array {i} {a.shape}: max abs err {worst:.3g} "
                           f"(max|floor| {scale:.3g}, rtol {rtol:g}){extra}")
    return True, ""


# ================================================================================================
# Workloads. Each builder returns a Workload; variants[0] is the floor.
# ================================================================================================

def _program_sizes(f, jitted, *args):
    """'grad program: N eqns staged, M compiled' for the notes (diagnostic only)."""
    try:
        staged = len(fxad.make_jaxpr(f)(*args).eqns)
        compiled = len(jitted.lower(*args).as_text().splitlines()) - 2
        return f"program: {staged} eqns staged, {compiled} lines compiled (jit)"
    except Exception as e:  # noqa: BLE001 - a note, not a result
        return f"program size unavailable ({type(e).__name__})"


# --- scalar_chain_grad --------------------------------------------------------------------------

def build_scalar_chain_grad(cfg: Config) -> Workload:
    steps = 5 if cfg.quick else 25
    x0 = np.float64(0.3)

    def chain_in(ns):
        """The same chain written with a library's sin/cos (fxad, autograd, jax, torch)."""
        def chain(x):
            for _ in range(steps):
                x = ns.sin(x) * 1.01 + 0.1 * ns.cos(x)
            return x
        return chain
    chain = chain_in(fnp)

    def floor():
        x, d = x0, np.float64(1.0)
        for _ in range(steps):
            s, c = np.sin(x), np.cos(x)
            d = d * (1.01 * c - 0.1 * s)
            x = s * 1.01 + 0.1 * c
        return d

    g, gj = fxad.grad(chain), fxad.jit(fxad.grad(chain))
    vs = [Variant("numpy floor (value + derivative loop)", floor, "numpy"),
          Variant("fxad grad", lambda: g(x0), mode="eager"),
          Variant("fxad jit(grad)", lambda: gj(x0), mode="jit")]
    P = cfg.peers
    if "autograd" in P:
        g_ag = P["autograd"].ag.grad(chain_in(P["autograd"].np))
        vs.append(Variant("autograd grad", lambda: g_ag(x0), "autograd"))
    if "jax" in P:
        jax, jnp = P["jax"].jax, P["jax"].np
        chain_jax = chain_in(jnp)
        g_jax, g_jaxj = jax.grad(chain_jax), jax.jit(jax.grad(chain_jax))
        xj = jnp.asarray(x0)
        vs.append(Variant("jax grad (eager)", lambda: _jax_ready(g_jax(xj)), "jax"))
        vs.append(Variant("jax jit(grad)", lambda: _jax_ready(g_jaxj(xj)), "jax"))
    if "torch" in P:
        torch = P["torch"].torch

        def g_torch():
            x = torch.tensor(float(x0), dtype=torch.float64, requires_grad=True)
            return torch.autograd.grad(chain_in(torch)(x), x)[0]
        vs.append(Variant("torch autograd (eager)", g_torch, "torch"))
    return Workload("scalar_chain_grad",
                    f"d/dx of {steps} x (x = sin(x)*1.01 + 0.1*cos(x)), float64 scalar "
                    f"({4 * steps} primitives)", floor(), 1e-12, 1e-14, vs,
                    [_program_sizes(g, gj, x0)])


# --- mlp_grad -----------------------------------------------------------------------------------

def build_mlp_grad(cfg: Config) -> Workload:
    sizes, batch = ((20, 16, 16, 5), 8) if cfg.quick else ((784, 256, 256, 10), 128)
    rng = np.random.default_rng(0)
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        W = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)
        b = (0.1 * rng.standard_normal(n_out)).astype(np.float32)
        params.append((W, b))
    X = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], batch)
    Y = np.eye(sizes[-1], dtype=np.float32)[labels]

    def loss(params, X, Y):
        h = X
        for W, b in params[:-1]:
            h = fnp.tanh(h @ W + b)
        W, b = params[-1]
        z = h @ W + b
        m = fxad.stop_gradient(fnp.max(z, axis=1, keepdims=True))
        lse = fnp.log(fnp.sum(fnp.exp(z - m), axis=1)) + m[:, 0]
        return fnp.mean(lse - fnp.sum(Y * z, axis=1))

    def floor():
        (W1, b1), (W2, b2), (W3, b3) = params
        h1 = np.tanh(X @ W1 + b1)
        h2 = np.tanh(h1 @ W2 + b2)
        z = h2 @ W3 + b3
        e = np.exp(z - z.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        dz = (p - Y) * np.float32(1.0 / X.shape[0])
        da2 = (dz @ W3.T) * (1 - h2 * h2)
        da1 = (da2 @ W2.T) * (1 - h1 * h1)
        return [(X.T @ da1, da1.sum(0)), (h1.T @ da2, da2.sum(0)), (h2.T @ dz, dz.sum(0))]

    g, gj = fxad.grad(loss), fxad.jit(fxad.grad(loss))
    vs = [Variant("numpy floor (hand-written backward)", floor, "numpy"),
          Variant("fxad grad", lambda: g(params, X, Y), mode="eager"),
          Variant("fxad jit(grad)", lambda: gj(params, X, Y), mode="jit")]
    P = cfg.peers
    if "autograd" in P:
        anp, ag, lse_ag = P["autograd"].np, P["autograd"].ag, P["autograd"].special.logsumexp

        def loss_ag(params):
            h = X
            for W, b in params[:-1]:
                h = anp.tanh(anp.dot(h, W) + b)
            W, b = params[-1]
            z = anp.dot(h, W) + b
            return anp.mean(lse_ag(z, axis=1) - anp.sum(Y * z, axis=1))
        g_ag = ag.grad(loss_ag)
        vs.append(Variant("autograd grad", lambda: g_ag(params), "autograd"))
    if "jax" in P:
        jax, jnp = P["jax"].jax, P["jax"].np
        pj = [(jnp.asarray(W), jnp.asarray(b)) for W, b in params]
        Xj, Yj = jnp.asarray(X), jnp.asarray(Y)

        def loss_jax(params, X, Y):
            h = X
            for W, b in params[:-1]:
                h = jnp.tanh(h @ W + b)
            W, b = params[-1]
            z = h @ W + b
            return jnp.mean(jax.nn.logsumexp(z, axis=1) - jnp.sum(Y * z, axis=1))
        g_jax, g_jaxj = jax.grad(loss_jax), jax.jit(jax.grad(loss_jax))
        vs.append(Variant("jax grad (eager)", lambda: _jax_ready(g_jax(pj, Xj, Yj)), "jax"))
        vs.append(Variant("jax jit(grad)", lambda: _jax_ready(g_jaxj(pj, Xj, Yj)), "jax"))
    if "torch" in P:
        torch = P["torch"].torch
        pt = [(torch.from_numpy(W).requires_grad_(), torch.from_numpy(b).requires_grad_())
              for W, b in params]
        flat = [t for pair in pt for t in pair]
        Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y)

        def g_torch():
            h = Xt
            for W, b in pt[:-1]:
                h = torch.tanh(h @ W + b)
            W, b = pt[-1]
            z = h @ W + b
            loss = torch.mean(torch.logsumexp(z, dim=1) - torch.sum(Yt * z, dim=1))
            return torch.autograd.grad(loss, flat)
        vs.append(Variant("torch autograd (eager)", g_torch, "torch"))
    return Workload("mlp_grad",
                    f"grad of MLP {'-'.join(map(str, sizes))} tanh, softmax CE, batch {batch}, "
                    "float32, wrt all params", floor(), 1e-4, 1e-5, vs,
                    [_program_sizes(g, gj, params, X, Y)])


# --- mlp_train_step (a Python-loop training step) ------------------------------------------------

def build_mlp_train_step(cfg: Config) -> Workload:
    """A small MLP's SGD step written the PyTorch way: layers in a Python list, the forward a
    Python loop, then grad and an update of every parameter. Small widths, so per-operation
    overhead (not BLAS) is what is measured."""
    sizes, batch, lr = ((8, 8, 4), 4, 0.1) if cfg.quick else ((64, 64, 64, 10), 32, 0.1)
    rng = np.random.default_rng(1)
    params = [(rng.standard_normal((a, b)) / np.sqrt(a), 0.1 * rng.standard_normal(b))
              for a, b in zip(sizes[:-1], sizes[1:])]
    X = rng.standard_normal((batch, sizes[0]))
    Y = rng.standard_normal((batch, sizes[-1]))

    def loss(params, X, Y):
        h = X
        for i, (W, b) in enumerate(params):
            h = h @ W + b
            if i < len(params) - 1:
                h = fnp.tanh(h)
        return fnp.mean((h - Y) ** 2)

    def step(params):
        grads = fxad.grad(loss)(params, X, Y)
        return [(W - lr * gW, b - lr * gb) for (W, b), (gW, gb) in zip(params, grads)]
    step_jit = fxad.jit(step)

    def floor():
        hs, h = [X], X
        for i, (W, b) in enumerate(params):
            h = h @ W + b
            if i < len(params) - 1:
                h = np.tanh(h)
            hs.append(h)
        d = 2.0 * (h - Y) / h.size
        out = [None] * len(params)
        for i in range(len(params) - 1, -1, -1):
            W, b = params[i]
            out[i] = (W - lr * (hs[i].T @ d), b - lr * d.sum(0))
            if i:
                d = (d @ W.T) * (1.0 - hs[i] ** 2)
        return out

    vs = [Variant("numpy floor (hand-written backward + update)", floor, "numpy"),
          Variant("fxad grad + update", lambda: step(params),
                  note="Python-loop training step: torch eager is the target"),
          Variant("fxad jit(step)", lambda: step_jit(params))]
    P = cfg.peers
    if "torch" in P:
        torch = P["torch"].torch
        pt = [(torch.tensor(W, requires_grad=True), torch.tensor(b, requires_grad=True))
              for W, b in params]
        Xt, Yt = torch.tensor(X), torch.tensor(Y)

        def step_torch():
            h = Xt
            for i, (W, b) in enumerate(pt):
                h = h @ W + b
                if i < len(pt) - 1:
                    h = torch.tanh(h)
            loss_t = torch.mean((h - Yt) ** 2)
            grads = torch.autograd.grad(loss_t, [t for pair in pt for t in pair])
            with torch.no_grad():
                return [(W - lr * grads[2 * k], b - lr * grads[2 * k + 1])
                        for k, (W, b) in enumerate(pt)]
        vs.append(Variant("torch autograd (eager)", step_torch, "torch"))
    return Workload("mlp_train_step",
                    f"one SGD step of MLP {'-'.join(map(str, sizes))} tanh, MSE, batch {batch}, "
                    "float64, layers in a Python loop", floor(), 1e-12, 1e-14, vs)


# --- hessian ------------------------------------------------------------------------------------

def build_hessian(cfg: Config) -> Workload:
    n = 8 if cfg.quick else 100
    rng = np.random.default_rng(0)
    A = rng.normal(size=(n, n)) / np.sqrt(n)
    x = rng.normal(size=n)

    def f(x):
        return fnp.sum(fxad.nn.softplus(A @ x)) + 0.5 * fnp.sum(x ** 2)

    def floor():
        s = 1.0 / (1.0 + np.exp(-(A @ x)))   # softplus' = s, softplus'' = s (1 - s)
        H = (A.T * (s * (1.0 - s))) @ A
        H[np.diag_indices_from(H)] += 1.0
        return H

    h, hj = fxad.hessian(f), fxad.jit(fxad.hessian(f))
    vs = [Variant("numpy floor A.T diag(s') A + I", floor, "numpy"),
          Variant("fxad hessian", lambda: h(x), mode="eager"),
          Variant("fxad jit(hessian)", lambda: hj(x), mode="jit")]
    if cfg.extra:  # the other orders of composition (fxad.hessian is jacfwd(jacrev))
        for nm, outer, inner in (("jacrev(jacrev)", fxad.jacrev, fxad.jacrev),
                                 ("jacrev(jacfwd)", fxad.jacrev, fxad.jacfwd),
                                 ("jacfwd(jacfwd)", fxad.jacfwd, fxad.jacfwd)):
            hh = outer(inner(f))
            vs.append(Variant(f"fxad {nm}", lambda hh=hh: hh(x), note="--extra: no target"))
    P = cfg.peers
    if "autograd" in P:
        anp, ag = P["autograd"].np, P["autograd"].ag
        h_ag = ag.hessian(lambda x: anp.sum(anp.logaddexp(anp.dot(A, x), 0.0))
                          + 0.5 * anp.sum(x ** 2))
        vs.append(Variant("autograd hessian", lambda: h_ag(x), "autograd"))
    if "jax" in P:
        jax, jnp = P["jax"].jax, P["jax"].np
        Aj, xj = jnp.asarray(A), jnp.asarray(x)

        def f_jax(x):
            return jnp.sum(jax.nn.softplus(Aj @ x)) + 0.5 * jnp.sum(x ** 2)
        h_jax, h_jaxj = jax.hessian(f_jax), jax.jit(jax.hessian(f_jax))
        vs.append(Variant("jax hessian (eager)", lambda: _jax_ready(h_jax(xj)), "jax"))
        vs.append(Variant("jax jit(hessian)", lambda: _jax_ready(h_jaxj(xj)), "jax"))
    if "torch" in P:
        torch, F, func = P["torch"].torch, P["torch"].F, P["torch"].func
        At, xt = torch.from_numpy(A), torch.from_numpy(x)
        h_t = func.hessian(lambda x: torch.sum(F.softplus(At @ x)) + 0.5 * torch.sum(x ** 2))
        vs.append(Variant("torch.func.hessian (eager)", lambda: h_t(xt), "torch"))
    return Workload("hessian", f"hessian of sum(softplus(A @ x)) + 0.5*sum(x**2), n = {n}",
                    floor(), 1e-9, 1e-12, vs)


# --- per_example_grads --------------------------------------------------------------------------

def build_per_example_grads(cfg: Config) -> Workload:
    batch, dim = (16, 5) if cfg.quick else (512, 100)
    rng = np.random.default_rng(0)
    w = rng.normal(size=dim) / np.sqrt(dim)
    X = rng.normal(size=(batch, dim))
    y = rng.choice([-1.0, 1.0], size=batch)

    def loss(w, x, y):  # logistic loss of one example, labels +-1
        return fxad.nn.softplus(-y * fnp.dot(x, w))

    def floor():
        m = y * (X @ w)
        return (-y / (1.0 + np.exp(m)))[:, None] * X  # d softplus(-m)/dw = -y sigmoid(-m) x

    pg = fxad.vmap(fxad.grad(loss), in_axes=(None, 0, 0))
    pgj = fxad.jit(fxad.vmap(fxad.grad(loss), in_axes=(None, 0, 0)))
    vs = [Variant("numpy floor (-y sigmoid(-y x.w) x)", floor, "numpy"),
          Variant("fxad vmap(grad)", lambda: pg(w, X, y), mode="eager"),
          Variant("fxad jit(vmap(grad))", lambda: pgj(w, X, y), mode="jit")]
    P = cfg.peers
    if "autograd" in P:  # autograd has no vmap: grad wrt one copy of w per example
        anp, ag = P["autograd"].np, P["autograd"].ag
        g_ag = ag.grad(lambda Wt: anp.sum(anp.logaddexp(0.0, -y * anp.sum(X * Wt, axis=1))))
        vs.append(Variant("autograd grad wrt tiled w", lambda: g_ag(np.tile(w, (batch, 1))),
                          "autograd", note="no vmap: grad wrt a copy of w per example"))
    if "jax" in P:
        jax, jnp = P["jax"].jax, P["jax"].np
        wj, Xj, yj = jnp.asarray(w), jnp.asarray(X), jnp.asarray(y)

        def loss_jax(w, x, y):
            return jax.nn.softplus(-y * jnp.dot(x, w))
        pg_jax = jax.vmap(jax.grad(loss_jax), in_axes=(None, 0, 0))
        pg_jaxj = jax.jit(pg_jax)
        vs.append(Variant("jax vmap(grad) (eager)", lambda: _jax_ready(pg_jax(wj, Xj, yj)),
                          "jax"))
        vs.append(Variant("jax jit(vmap(grad))", lambda: _jax_ready(pg_jaxj(wj, Xj, yj)),
                          "jax"))
    if "torch" in P:
        torch, F, func = P["torch"].torch, P["torch"].F, P["torch"].func
        wt, Xt, yt = torch.from_numpy(w), torch.from_numpy(X), torch.from_numpy(y)
        pg_t = func.vmap(func.grad(lambda w, x, y: F.softplus(-y * torch.dot(x, w))),
                         in_dims=(None, 0, 0))
        vs.append(Variant("torch.func vmap(grad) (eager)", lambda: pg_t(wt, Xt, yt), "torch"))
    return Workload("per_example_grads",
                    f"vmap(grad(logistic loss)), batch {batch}, dim {dim}, float64",
                    floor(), 1e-9, 1e-12, vs)


# --- solve_grad ---------------------------------------------------------------------------------

def build_solve_grad(cfg: Config) -> Workload:
    n = 12 if cfg.quick else 400
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n)) + n ** 0.5 * np.eye(n)
    b = rng.standard_normal(n)

    def floor():  # one LU; x = A^-1 b, y = A^-T 1; d/db = y, d/dA = -y x^T
        lu_piv = sla.lu_factor(A, check_finite=False)
        x = sla.lu_solve(lu_piv, b, check_finite=False)
        y = sla.lu_solve(lu_piv, np.ones_like(b), trans=1, check_finite=False)
        return np.outer(-y, x), y

    def f(A, b):
        return fnp.sum(fnp.linalg.solve(A, b))

    g = fxad.grad(f, argnums=(0, 1))
    gj = fxad.jit(fxad.grad(f, argnums=(0, 1)))
    vs = [Variant("scipy floor (lu_factor + 2 lu_solve)", floor, "numpy"),
          Variant("fxad grad", lambda: g(A, b), mode="eager"),
          Variant("fxad jit(grad)", lambda: gj(A, b), note="no issue-8 jit target")]
    P = cfg.peers
    if "autograd" in P:
        anp, ag = P["autograd"].np, P["autograd"].ag
        g_ag = ag.grad(lambda Ab: anp.sum(anp.linalg.solve(Ab[0], Ab[1])))
        vs.append(Variant("autograd grad", lambda: g_ag((A, b)), "autograd"))
    if "jax" in P:
        jax, jnp = P["jax"].jax, P["jax"].np
        Aj, bj = jnp.asarray(A), jnp.asarray(b)

        def f_jax(A, b):
            return jnp.sum(jnp.linalg.solve(A, b))
        g_jax = jax.grad(f_jax, argnums=(0, 1))
        g_jaxj = jax.jit(jax.grad(f_jax, argnums=(0, 1)))
        vs.append(Variant("jax grad (eager)", lambda: _jax_ready(g_jax(Aj, bj)), "jax"))
        vs.append(Variant("jax jit(grad)", lambda: _jax_ready(g_jaxj(Aj, bj)), "jax"))
    if "torch" in P:
        torch = P["torch"].torch
        At = torch.from_numpy(A).requires_grad_()
        bt = torch.from_numpy(b).requires_grad_()

        def g_t():
            return torch.autograd.grad(torch.sum(torch.linalg.solve(At, bt)), (At, bt))
        vs.append(Variant("torch autograd (eager)", g_t, "torch"))
    return Workload("solve_grad", f"grad of sum(solve(A, b)) wrt A and b, n = {n}",
                    floor(), 1e-9, 1e-12, vs)


# --- rnn_grad -----------------------------------------------------------------------------------

def rnn_floor(W, U, b, h0, xs):
    """Hand-written BPTT. loss = sum(h_T**2) + sum_t mean(h_t); returns (loss, (dW, dU, db))."""
    T, H = xs.shape[0], W.shape[0]
    hs = np.empty((T + 1, H))
    hs[0] = h0
    pre_x = xs @ U.T + b  # all input projections at once
    for t in range(T):
        hs[t + 1] = np.tanh(W @ hs[t] + pre_x[t])
    loss = np.sum(hs[T] ** 2) + np.sum(hs[1:].mean(axis=1))
    dz_all = np.empty((T, H))
    dh = 2.0 * hs[T]
    for t in range(T - 1, -1, -1):
        dh = dh + 1.0 / H  # d mean(h_t) / d h_t
        dz = dh * (1.0 - hs[t + 1] ** 2)
        dz_all[t] = dz
        dh = W.T @ dz
    return loss, (dz_all.T @ hs[:T], dz_all.T @ xs, dz_all.sum(axis=0))


def rnn_loss_scan(W, U, b, h0, xs):
    def step(h, x):
        h = fnp.tanh(W @ h + U @ x + b)
        return h, fnp.mean(h)
    h, means = lax.scan(step, h0, xs)
    return fnp.sum(h ** 2) + fnp.sum(means)


def rnn_loss_loop(W, U, b, h0, xs):
    h, total = h0, 0.0
    for t in range(xs.shape[0]):
        h = fnp.tanh(W @ h + U @ xs[t] + b)
        total = total + fnp.mean(h)
    return fnp.sum(h ** 2) + total


def build_rnn_grad(cfg: Config) -> Workload:
    hidden, n_in, steps = (6, 4, 7) if cfg.quick else (64, 32, 200)
    r = np.random.default_rng(0)
    W = r.normal(size=(hidden, hidden)) / np.sqrt(hidden)
    U = r.normal(size=(hidden, n_in)) / np.sqrt(n_in)
    b = r.normal(size=hidden) * 0.1
    h0 = np.zeros(hidden)
    xs = r.normal(size=(steps, n_in))
    args = (W, U, b, h0, xs)

    gs = fxad.grad(rnn_loss_scan, argnums=(0, 1, 2))
    gsj = fxad.jit(fxad.grad(rnn_loss_scan, argnums=(0, 1, 2)))
    gl = fxad.grad(rnn_loss_loop, argnums=(0, 1, 2))
    glj = fxad.jit(fxad.grad(rnn_loss_loop, argnums=(0, 1, 2)))
    vs = [Variant("numpy floor (hand BPTT)", lambda: rnn_floor(*args)[1], "numpy"),
          Variant("fxad grad, lax.scan", lambda: gs(*args), mode="eager"),
          Variant("fxad jit(grad), lax.scan", lambda: gsj(*args), mode="jit"),
          Variant("fxad grad, Python loop", lambda: gl(*args),
                  note="loop variant: no target (targets are for scan)"),
          Variant("fxad jit(grad), Python loop", lambda: glj(*args),
                  note="loop variant: no target (targets are for scan)")]
    P = cfg.peers
    if "autograd" in P:
        anp, ag = P["autograd"].np, P["autograd"].ag

        def loss_ag(p):
            W, U, b = p
            h, total = h0, 0.0
            for t in range(steps):
                h = anp.tanh(anp.dot(W, h) + anp.dot(U, xs[t]) + b)
                total = total + anp.mean(h)
            return anp.sum(h ** 2) + total
        g_ag = ag.grad(loss_ag)
        vs.append(Variant("autograd grad, Python loop", lambda: g_ag((W, U, b)), "autograd"))
    if "jax" in P:
        jax, jnp = P["jax"].jax, P["jax"].np
        aj = tuple(jnp.asarray(a) for a in args)

        def loss_jax(W, U, b, h0, xs):
            def step(h, x):
                h = jnp.tanh(W @ h + U @ x + b)
                return h, jnp.mean(h)
            h, means = jax.lax.scan(step, h0, xs)
            return jnp.sum(h ** 2) + jnp.sum(means)
        g_jax = jax.grad(loss_jax, argnums=(0, 1, 2))
        g_jaxj = jax.jit(jax.grad(loss_jax, argnums=(0, 1, 2)))
        vs.append(Variant("jax grad, lax.scan (eager)", lambda: _jax_ready(g_jax(*aj)), "jax"))
        vs.append(Variant("jax jit(grad), lax.scan", lambda: _jax_ready(g_jaxj(*aj)), "jax"))
    if "torch" in P:
        torch = P["torch"].torch
        Wt, Ut, bt = (torch.from_numpy(a).requires_grad_() for a in (W, U, b))
        h0t, xst = torch.from_numpy(h0), torch.from_numpy(xs)

        def g_t():
            h, total = h0t, 0.0
            for t in range(steps):
                h = torch.tanh(Wt @ h + Ut @ xst[t] + bt)
                total = total + torch.mean(h)
            return torch.autograd.grad(torch.sum(h ** 2) + total, (Wt, Ut, bt))
        vs.append(Variant("torch autograd, Python loop (eager)", g_t, "torch"))
    return Workload("rnn_grad",
                    f"Elman RNN, hidden {hidden}, input {n_in}, {steps} steps; grads wrt W, U, b",
                    rnn_floor(*args)[1], 1e-8, 1e-12, vs)


# --- jacobian -----------------------------------------------------------------------------------

def build_jacobian(cfg: Config) -> Workload:
    n = 10 if cfg.quick else 200
    rng = np.random.default_rng(0)
    A = rng.normal(size=(n, n)) / np.sqrt(n)
    x = rng.normal(size=n)

    def g(x):
        return fnp.tanh(A @ x) * x

    def floor():  # diag(x) diag(1 - t^2) A + diag(t)
        t = np.tanh(A @ x)
        J = (x * (1.0 - t * t))[:, None] * A
        J[np.diag_indices_from(J)] += t
        return J

    jf, jr = fxad.jacfwd(g), fxad.jacrev(g)
    jfj, jrj = fxad.jit(fxad.jacfwd(g)), fxad.jit(fxad.jacrev(g))
    vs = [Variant("numpy floor diag(x(1-t^2)) A + diag(t)", floor, "numpy"),
          Variant("fxad jacfwd", lambda: jf(x), mode="eager"),
          Variant("fxad jacrev", lambda: jr(x), mode="eager"),
          Variant("fxad jit(jacfwd)", lambda: jfj(x), mode="jit"),
          Variant("fxad jit(jacrev)", lambda: jrj(x), mode="jit")]
    P = cfg.peers
    if "autograd" in P:
        anp, ag = P["autograd"].np, P["autograd"].ag
        j_ag = ag.jacobian(lambda x: anp.tanh(anp.dot(A, x)) * x)
        vs.append(Variant("autograd jacobian (reverse)", lambda: j_ag(x), "autograd"))
    if "jax" in P:
        jax, jnp = P["jax"].jax, P["jax"].np
        Aj, xj = jnp.asarray(A), jnp.asarray(x)

        def g_jax(x):
            return jnp.tanh(Aj @ x) * x
        for nm, tr in (("jacfwd", jax.jacfwd), ("jacrev", jax.jacrev)):
            fe, fj_ = tr(g_jax), jax.jit(tr(g_jax))
            vs.append(Variant(f"jax {nm} (eager)", lambda fe=fe: _jax_ready(fe(xj)), "jax"))
            vs.append(Variant(f"jax jit({nm})", lambda fj_=fj_: _jax_ready(fj_(xj)), "jax"))
    if "torch" in P:
        torch, func = P["torch"].torch, P["torch"].func
        At, xt = torch.from_numpy(A), torch.from_numpy(x)

        def g_t(x):
            return torch.tanh(At @ x) * x
        jft, jrt = func.jacfwd(g_t), func.jacrev(g_t)
        vs.append(Variant("torch.func.jacfwd (eager)", lambda: jft(xt), "torch"))
        vs.append(Variant("torch.func.jacrev (eager)", lambda: jrt(xt), "torch"))
    return Workload("jacobian", f"Jacobian of tanh(A @ x) * x, R^{n} -> R^{n}", floor(),
                    1e-9, 1e-12, vs)


# --- memory -------------------------------------------------------------------------------------

def _mlp_layer(W, b, h):
    return fnp.tanh(h @ W + b)


def _mlp_block(params, h):
    for W, b in params:
        h = _mlp_layer(W, b, h)
    return h


_ck_layer = fxad.checkpoint(_mlp_layer)
_ck_block = fxad.checkpoint(_mlp_block)


def _mem_plain(params, x):
    return _mlp_block(params, x)


def _mem_per_layer(params, x):
    for W, b in params:
        x = _ck_layer(W, b, x)
    return x


def _mem_blocks(k):
    def run(params, x):
        for i in range(0, len(params), k):
            x = _ck_block(params[i:i + k], x)
        return x
    return run


def _mem_closed_over(params, k):
    """Blocks of k layers as checkpointed functions that close over the weights: they take
    only the activation, so no weight-sized tangent or cotangent appears (d/dx only)."""
    fns = [fxad.checkpoint(lambda h, ps=params[i:i + k]: _mlp_block(ps, h))
           for i in range(0, len(params), k)]

    def run(_params, x):
        for f in fns:
            x = f(x)
        return x
    return run


def _mem_floor(params, x, batch, wrt_params):
    """Hand-written backprop that keeps every activation (what any non-checkpointing reverse
    mode must keep), for loss = sum(y*y)/batch. Returns (param grads, dx) or dx."""
    hs = [x]
    for W, b in params:
        hs.append(np.tanh(hs[-1] @ W + b))
    dy = hs[-1] * (2.0 / batch)
    grads = []
    for i in range(len(params) - 1, -1, -1):
        W = params[i][0]
        dz = dy * (1.0 - hs[i + 1] * hs[i + 1])
        hs[i + 1] = None  # no longer needed
        if wrt_params:
            grads.append((hs[i].T @ dz, dz.sum(0)))
        dy = dz @ W.T
    return (grads[::-1], dy) if wrt_params else dy


def peak_memory(fn):
    """(result, peak bytes above the baseline) of one call, by tracemalloc (NumPy reports its
    buffers to tracemalloc). Called once before, outside the measurement, to fill caches."""
    fn()
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return out, peak

# --- laplacian (nested: trace of the Hessian, per example) ----------------------------------------

def build_laplacian(cfg: Config) -> Workload:
    """The Laplacian of a scalar MLP at a batch of points, written the nested way:
    vmap(lambda x: trace(hessian(u)(x))) -- the core of physics-informed training."""
    sizes, batch = ((6, 8, 8, 1), 5) if cfg.quick else ((64, 256, 256, 1), 256)
    rng = np.random.default_rng(3)
    params = [(rng.standard_normal((a, b)) / np.sqrt(a), 0.1 * rng.standard_normal(b))
              for a, b in zip(sizes[:-1], sizes[1:])]
    X = rng.standard_normal((batch, sizes[0]))
    (W1, b1), (W2, b2), (w3, _) = params
    w3 = w3[:, 0]

    def u_in(ns):
        def u(x):
            h = x
            for W, b in params[:-1]:
                h = ns.tanh(h @ W + b)
            W, b = params[-1]
            return (h @ W + b)[0]
        return u

    def floor():  # forward over reverse by hand, one tangent per input coordinate
        h1 = np.tanh(X @ W1 + b1)
        h2 = np.tanh(h1 @ W2 + b2)
        s1, s2 = 1.0 - h1 * h1, 1.0 - h2 * h2
        d2 = w3 * s2                              # d u / d a2
        g1 = (d2 @ W2.T)                          # d u / d h1
        dh1 = s1[:, None, :] * W1                 # tangents of h1: (batch, n_in, width)
        da2 = (dh1.reshape(-1, W1.shape[1]) @ W2).reshape(dh1.shape)
        dd2 = (-2.0 * w3) * (h2 * s2)[:, None, :] * da2
        dg1 = (dd2.reshape(-1, W2.shape[1]) @ W2.T).reshape(dh1.shape)
        dd1 = dg1 * s1[:, None, :] - 2.0 * (g1 * h1)[:, None, :] * dh1
        return np.einsum("nij,ij->n", dd1, W1)

    u = u_in(fnp)
    lap = lambda x: fnp.trace(fxad.hessian(u)(x))
    f, fj = fxad.vmap(lap), fxad.jit(fxad.vmap(lap))
    vs = [Variant("numpy floor (forward over reverse by hand)", floor, "numpy"),
          Variant("fxad vmap(trace(hessian))", lambda: f(X)),
          Variant("fxad jit(vmap(trace(hessian)))", lambda: fj(X))]
    P = cfg.peers
    if "jax" in P:
        jax, jnp = P["jax"].jax, P["jax"].np
        uj = u_in(jnp)
        lap_j = jax.jit(jax.vmap(lambda x: jnp.trace(jax.hessian(uj)(x))))
        Xj = jnp.asarray(X)
        vs.append(Variant("jax jit(vmap(trace(hessian)))", lambda: _jax_ready(lap_j(Xj)), "jax"))
    if "torch" in P:
        torch, func = P["torch"].torch, P["torch"].func
        pt = [(torch.from_numpy(W), torch.from_numpy(b)) for W, b in params]

        def ut(x):
            h = x
            for W, b in pt[:-1]:
                h = torch.tanh(h @ W + b)
            W, b = pt[-1]
            return (h @ W + b)[0]
        lap_t = func.vmap(lambda x: torch.trace(func.hessian(ut)(x)))
        Xt = torch.from_numpy(X)
        vs.append(Variant("torch.func vmap(trace(hessian)) (eager)", lambda: lap_t(Xt), "torch"))
    return Workload("laplacian", f"Laplacian of an MLP {'-'.join(map(str, sizes))} tanh at "
                    f"{batch} points, float64, nested: vmap(trace(hessian(u)))", floor(),
                    1e-9, 1e-12, vs)


def run_memory(cfg: Config, repeat: int) -> tuple[list, list]:
    depth, width, batch = (6, 8, 4) if cfg.quick else (50, 256, 64)
    block = 3 if cfg.quick else 7
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((width, width)) / np.sqrt(width),
               rng.standard_normal(width) * 0.1) for _ in range(depth)]
    x = rng.standard_normal((batch, width))

    def loss_of(mlp):
        return lambda params, x: fnp.sum(mlp(params, x) ** 2) / batch

    rows, notes = [], [
        f"memory: {depth}-layer tanh MLP, width {width}, batch {batch}, float64; one "
        f"activation = {batch * width * 8 / 2**20:.3f} MB, parameters = "
        f"{sum(W.nbytes + b.nbytes for W, b in params) / 2**20:.2f} MB. Peak = tracemalloc "
        "peak above the baseline during one call (min over runs). Ratio = peak / peak of fxad "
        "grad without checkpoint for the same derivative; the note gives peak / floor. "
        "'closing over W': the checkpointed functions close over the weights and take only the "
        "activation (no weight-sized cotangents in the backward pass). fxad only: tracemalloc "
        "does not see JAX's or PyTorch's allocations, so peers are not measured here."]
    for wrt, argnums, label in (("params", (0, 1), "d/d(params, x)"), ("x", 1, "d/dx")):
        floor_fn = (lambda wp=(wrt == "params"): _mem_floor(params, x, batch, wp))
        ref = floor_fn()
        entries = [(f"numpy floor (saves activations), {label}", floor_fn, "numpy")]
        variants = [("no checkpoint", _mem_plain),
                    ("checkpoint each layer", _mem_per_layer),
                    (f"checkpoint blocks of {block}", _mem_blocks(block))]
        if cfg.extra:
            variants += [(f"checkpoint blocks of {k}", _mem_blocks(k))
                         for k in ((2, 4) if cfg.quick else (5, 10))]
        if wrt == "x":
            variants.append((f"checkpoint blocks of {block} closing over W",
                             _mem_closed_over(params, block)))
            if cfg.extra:
                variants.append(("checkpoint each layer closing over W",
                                 _mem_closed_over(params, 1)))
        for name, mlp in variants:
            g = fxad.grad(loss_of(mlp), argnums=argnums)
            entries.append((f"fxad grad, {name}, {label}",
                            lambda g=g: g(params, x), "fxad"))
        measured = []
        for name, fn, lib in entries:
            row = Row("memory", name, lib, ratio_label="x no-ckpt")
            try:
                out, peak = None, None
                for _ in range(max(1, min(repeat, 3))):
                    o, p = peak_memory(fn)
                    out = o if out is None else out
                    peak = p if peak is None else min(peak, p)
                ok, msg = compare(out, ref, 1e-9, 1e-12)
                row.peak_bytes = peak
                if not ok:
                    row.status, row.detail = "FAIL", msg
            except Exception as e:  # noqa: BLE001 - reported in the table
                row.status, row.detail = "CRASH", _exc_text(e)
            measured.append(row)
        plain = measured[1].peak_bytes
        floor_peak = measured[0].peak_bytes
        for row in measured:
            if row.peak_bytes is not None and plain:
                row.ratio = row.peak_bytes / plain
            if row.lib != "numpy" and row.peak_bytes is not None and floor_peak:
                extra = f"{row.peak_bytes / floor_peak:.2f} x floor"
                row.detail = f"{row.detail}; {extra}" if row.detail else extra
        rows += measured
    return rows, notes


WORKLOADS = {
    "scalar_chain_grad": build_scalar_chain_grad,
    "mlp_grad": build_mlp_grad,
    "hessian": build_hessian,
    "per_example_grads": build_per_example_grads,
    "solve_grad": build_solve_grad,
    "rnn_grad": build_rnn_grad,
    "jacobian": build_jacobian,
    "mlp_train_step": build_mlp_train_step,
    "laplacian": build_laplacian,
    "memory": None,  # run_memory: peak bytes, not time
}


# ================================================================================================
# Timing
# ================================================================================================

def _exc_text(e):
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[-1][:100] if msg else ''}".rstrip(": ")


def _calls_per_run(fn, min_run):
    """timeit-style: how many calls make one run last >= min_run seconds."""
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_run or number >= 1 << 16:
            return number
        number *= 2 if dt <= 0 else max(2, int(min_run / dt * 1.2))


def _quartiles(xs):
    xs = sorted(xs)
    if len(xs) < 4:
        return xs[0], xs[-1]
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def run_workload(w: Workload, repeat: int, min_run: float, log=None) -> list:
    """Warm up and check every variant, then time the survivors in interleaved rounds.
    Returns one Row per variant (variants[0], the floor, first)."""
    targets = TARGETS.get(w.name, {})
    rows, live = [], []
    for v in w.variants:
        row = Row(w.name, v.name, v.lib, detail=v.note, mode=v.mode,
                  target=targets.get(v.mode) if v.lib == "fxad" and v.mode else None)
        rows.append(row)
        try:
            first = v.fn()    # traces / compiles
            second = v.fn()   # the repeat-call path (jit's fast path): what gets timed
            for which, out in (("first call", first), ("second call", second)):
                ok, msg = compare(out, w.ref, w.rtol, w.atol_rel)
                if not ok:
                    row.status = "FAIL"
                    row.detail = f"{which}: {msg}"
                    break
        except Exception as e:  # noqa: BLE001 - a crash is reported in the table, not fatal
            row.status, row.detail = "CRASH", _exc_text(e)
            if log:
                log(f"  {v.name}: {row.detail}")
            continue
        live.append((row, v.fn))
    if not live or rows[0].status == "CRASH":
        return rows
    numbers = [_calls_per_run(fn, min_run) if min_run > 0 else 1 for _, fn in live]
    times = [[] for _ in live]
    n = len(live)
    for r in range(repeat):
        for k in range(n):
            i = (k + r) % n  # rotate the order from round to round
            fn, number = live[i][1], numbers[i]
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            times[i].append((time.perf_counter() - t0) / number)
    floor_times = times[0] if live[0][0] is rows[0] else None
    for (row, _), ts in zip(live, times):
        row.seconds = statistics.median(ts)
        if len(ts) >= 3:  # too few rounds for a spread otherwise
            q1, q3 = _quartiles(ts)
            row.iqr = (q3 - q1) / row.seconds if row.seconds > 0 else 0.0
        if floor_times is not None:
            row.ratio = statistics.median(t / f for t, f in zip(ts, floor_times))
    return rows


# ================================================================================================
# Reporting
# ================================================================================================

def _fmt_time(t):
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.1f} us"
    if t < 1.0:
        return f"{t * 1e3:.3f} ms"
    return f"{t:.3f} s"


def _fmt_bytes(b):
    return f"{b / 2**20:.2f} MB ({b:,} B)"


def _row_cells(row):
    value = _fmt_bytes(row.peak_bytes) if row.peak_bytes is not None else _fmt_time(row.seconds)
    ratio = "-" if row.ratio is None else f"{row.ratio:.2f}"
    iqr = "-" if row.iqr is None else f"{100 * row.iqr:.0f}%"
    target = "-" if row.target is None else f"<= {row.target:g}x ({row.mode})"
    met = {None: "-", True: "yes", False: "NO"}[row.met]
    check = row.status
    if row.lib == "numpy" and row.status == "ok":
        check = "floor"
    return [row.workload, row.variant, value, ratio, iqr, target, met, check, row.detail]


HEADER = ["workload", "variant", "median/call", "x floor", "IQR", "target", "met", "check",
          "notes"]


def format_table(rows, markdown=False):
    cells = [_row_cells(r) for r in rows]
    if markdown:
        out = ["| " + " | ".join(HEADER) + " |",
               "|" + "|".join(["---", "---", "---:", "---:", "---:", "---", "---", "---", "---"])
               + "|"]
        for c in cells:
            out.append("| " + " | ".join(x.replace("|", "/") for x in c) + " |")
        return "\n".join(out)
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h)
              for i, h in enumerate(HEADER[:-1])]
    right = {2, 3, 4}

    def line(c):
        parts = [(x.rjust(wd) if i in right else x.ljust(wd))
                 for i, (x, wd) in enumerate(zip(c[:-1], widths))]
        return ("  ".join(parts) + ("  " + c[-1] if c[-1] else "")).rstrip()
    out = [line(HEADER), line(["-" * wd for wd in widths] + [""])]
    prev = None
    for c in cells:
        if prev is not None and c[0] != prev:
            out.append("")
        prev = c[0]
        out.append(line(c))
    return "\n".join(out)


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info(cfg: Config, threadpool_note: str):
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    peers = ", ".join(f"{k} {v.version}" for k, v in cfg.peers.items()) or "none"
    return [
        f"date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"machine: {platform.platform()}; CPU: {_cpu_model()} ({os.cpu_count()} logical CPUs); "
        f"load average (1/5/15 min) at start: {load}",
        f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"fxad {fxad.__version__}; peers: {peers}",
        f"threads: {threadpool_note}",
    ]


def _limit_threads():
    """threadpoolctl limit to one BLAS thread when installed; returns (keepalive, note)."""
    env = ", ".join(f"{v}={os.environ.get(v, 'unset')}" for v in _THREAD_VARS[:3])
    try:
        import threadpoolctl
    except ImportError:
        return None, f"{env}; threadpoolctl not installed"
    limiter = threadpoolctl.threadpool_limits(1)
    libs = ", ".join(f"{d.get('internal_api')} {d.get('version')} "
                     f"({d.get('num_threads')} thread{'s' if d.get('num_threads') != 1 else ''})"
                     for d in threadpoolctl.threadpool_info())
    return limiter, f"{env}; threadpoolctl: {libs or 'no pools found'}"


class _OnNumba:
    """An fxad jit variant run with fxad.config.jit_backend = "numba" (--numba); remembers
    how long its first call (staging + compiling) took."""

    def __init__(self, fn):
        self.fn, self.first = fn, None

    def __call__(self):
        old = fxad.config.jit_backend
        fxad.config.jit_backend = "numba"
        try:
            if self.first is not None:
                return self.fn()
            t0 = time.perf_counter()
            out = self.fn()
            self.first = time.perf_counter() - t0
            return out
        finally:
            fxad.config.jit_backend = old


def with_numba_variants(w: Workload) -> Workload:
    """--numba: after each fxad jit variant, the same on the numba backend."""
    out = []
    for v in w.variants:
        out.append(v)
        if v.lib == "fxad" and "jit" in v.name:
            out.append(Variant(v.name.replace("jit", "jit[numba]", 1), _OnNumba(v.fn),
                               mode=v.mode, note="numba backend"))
    w.variants = out
    return w


def run_all(names, cfg: Config, repeat: int, min_run: float, log=None):
    rows, notes = [], []
    for name in names:
        gc.collect()
        t0 = time.perf_counter()
        if log:
            log(f"[{name}] ...")
        if name == "memory":
            r, n = run_memory(cfg, repeat)
            rows += r
            notes += n
        else:
            try:
                w = WORKLOADS[name](cfg)
            except Exception as e:  # noqa: BLE001 - reported, the other workloads still run
                rows.append(Row(name, "(building the workload)", "numpy", status="CRASH",
                                detail=_exc_text(e)))
                continue
            notes.append(f"{name}: {w.title}; check rtol {w.rtol:g}, atol {w.atol_rel:g} x "
                         "max|floor|")
            notes += [f"{name}: {n}" for n in w.notes]
            if cfg.numba:
                w = with_numba_variants(w)
            rows += run_workload(w, repeat, min_run, log)
            for v in w.variants:
                if isinstance(v.fn, _OnNumba) and v.fn.first is not None:
                    notes.append(f"{name}: {v.name}: first call (staging + numba compile or "
                                 f"disk-cache load) {v.fn.first:.2f} s")
        if log:
            log(f"[{name}] done in {time.perf_counter() - t0:.1f} s")
    return rows, notes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--only", default=None,
                    help="comma-separated workload names (default: all)")
    ap.add_argument("--repeat", type=int, default=None,
                    help="timed rounds per workload (default 15; 1 with --quick)")
    ap.add_argument("--min-run", type=float, default=None,
                    help="seconds one timed run of a variant lasts at least (default 0.05; "
                         "0 with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="tiny sizes, 1 round: checks the harness and the results, not speed")
    ap.add_argument("--peers", default=",".join(PEER_NAMES),
                    help="comma-separated peers to try (autograd,jax,torch) or 'none'")
    ap.add_argument("--numba", action="store_true",
                    help="also run each fxad jit variant on jit's numba backend "
                         "(fxad.config.jit_backend = 'numba'), in the same rounds")
    ap.add_argument("--extra", action="store_true",
                    help="also informational fxad variants without targets: the other Hessian "
                         "compositions, more checkpoint block sizes")
    ap.add_argument("--markdown", action="store_true",
                    help="print the table (and the machine description) as Markdown")
    ap.add_argument("--list", action="store_true", help="list the workloads and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(WORKLOADS))
        return 0
    names = list(WORKLOADS) if not args.only else [s.strip() for s in args.only.split(",")
                                                   if s.strip()]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 15)
    if repeat < 1:
        ap.error("--repeat must be >= 1")
    min_run = args.min_run if args.min_run is not None else (0.0 if args.quick else 0.05)

    limiter, thread_note = _limit_threads()  # noqa: F841 - keep the limit alive
    wanted = () if args.peers.strip().lower() == "none" else \
        tuple(p.strip() for p in args.peers.split(",") if p.strip())
    bad = [p for p in wanted if p not in PEER_NAMES]
    if bad:
        ap.error(f"unknown peer(s) {', '.join(bad)}; choose from {', '.join(PEER_NAMES)}")
    peers, skipped = load_peers(wanted)
    cfg = Config(quick=args.quick, extra=args.extra, peers=peers, skipped=skipped,
                 numba=args.numba)
    info = machine_info(cfg, thread_note)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)
    for line in info:
        log(line)
    t0 = time.perf_counter()
    rows, notes = run_all(names, cfg, repeat, min_run, log)
    total = time.perf_counter() - t0
    load_end = " / ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") \
        else "?"
    settings = (f"settings: {'--quick (tiny sizes), ' if args.quick else ''}{repeat} interleaved "
                f"round(s) per workload, each run >= {min_run:g} s; median per call after 2 "
                f"warm-up calls (jit compilation excluded); 'x floor' = median over rounds of "
                f"variant/floor; total {total:.0f} s; load average at end: {load_end}")
    skipped_notes = [f"{k}: skipped, {v}" for k, v in skipped.items()]
    failures = [r for r in rows if r.status != "ok"]

    if args.markdown:
        print(f"### fxad benchmarks ({datetime.date.today().isoformat()})")
        print()
        for line in info + [settings]:
            print(f"- {line}")
        print()
        print(format_table(rows, markdown=True))
        print()
        for n in notes + skipped_notes:
            print(f"- {n}")
    else:
        print()
        for line in info + [settings]:
            print(line)
        print()
        print(format_table(rows))
        print()
        for n in notes + skipped_notes:
            print(f"  {n}")
    met = [r for r in rows if r.met is not None]
    print()
    print(f"targets met: {sum(r.met for r in met)} of {len(met)}")
    if failures:
        print()
        print(f"*** {len(failures)} FAILED/CRASHED result(s) -- these do not match the floor: ***")
        for r in failures:
            print(f"*** {r.workload} / {r.variant}: {r.status}: {r.detail}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

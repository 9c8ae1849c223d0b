"""Neural-network benchmarks (issue 19): a CNN training step and an attention block, fxad eager
and jit against a hand-written NumPy floor, JAX jit and PyTorch eager, in one run.

    python benchmarks/nn.py [--only cnn_step,attention] [--repeat K] [--min-run S] [--quick]
                            [--peers jax,torch | none] [--markdown] [--numba]

  cnn_step   grad wrt all parameters of a CNN: batch 64, 28x28x1 (NHWC) -> conv 3x3x32 'SAME'
             -> relu -> 2x2 max-pool -> conv 3x3x64 'SAME' -> relu -> 2x2 max-pool -> dense 10,
             softmax cross-entropy; float32
  attention  forward + grad wrt the input and the four projections of a causal self-attention
             block: batch 8, sequence 128, model dim 64, 4 heads of 16; float32

Timing, checking and threads are benchmarks/run.py's (one BLAS thread; JAX and PyTorch told to
use one; 2 warm-up calls; interleaved rounds; medians). Besides 'x floor', the table gives each
fxad variant's ratio to JAX jit and to PyTorch eager (ratios of medians), and the issue's
targets (issue 30): jit (NumPy or numba backend, --numba adds the latter) <= JAX jit and <=
PyTorch eager, eager <= PyTorch eager.
"""
from __future__ import annotations

import os
import sys

if __name__ == "__main__":  # one thread everywhere, before NumPy is imported
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ[_var] = "1"
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                          "intra_op_parallelism_threads=1")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402

import numpy as np  # noqa: E402

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import run as R  # noqa: E402  (benchmarks/run.py: timing, checking, reporting)

import fxad  # noqa: E402
import fxad.numpy as fnp  # noqa: E402
from fxad import lax, nn  # noqa: E402

F32 = np.float32


# --- CNN training step ----------------------------------------------------------------------

def _cnn_params(rng, c1=32, c2=64, classes=10, hw=28):
    he = lambda fan_in, shape: (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(F32)
    flat = (hw // 4) * (hw // 4) * c2
    return {"w1": he(9, (3, 3, 1, c1)), "b1": np.zeros(c1, F32),
            "w2": he(9 * c1, (3, 3, c1, c2)), "b2": np.zeros(c2, F32),
            "w3": he(flat, (flat, classes)), "b3": np.zeros(classes, F32)}


def _np_conv_same(x, w):
    """3x3 'SAME' convolution, NHWC / HWIO, by im2col (returns the columns for backward)."""
    n, h, wd, c = x.shape
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    cols = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))
    cols = cols.transpose(0, 1, 2, 4, 5, 3).reshape(n * h * wd, 9 * c)
    return (cols @ w.reshape(9 * c, -1)).reshape(n, h, wd, -1), cols


def _np_conv_same_input_grad(g, w, x_shape):
    """Gradient wrt the input: the cotangent convolved with the flipped, transposed kernel."""
    wt = w[::-1, ::-1].transpose(0, 1, 3, 2)
    return _np_conv_same(g, np.ascontiguousarray(wt))[0].reshape(x_shape)


def _np_pool(x):
    n, h, w, c = x.shape
    r = x.reshape(n, h // 2, 2, w // 2, 2, c)
    out = r.max(axis=(2, 4))
    # route to the first maximum of each window (row-major), as fxad and JAX do
    flat = r.transpose(0, 1, 3, 5, 2, 4).reshape(n, h // 2, w // 2, c, 4)
    first = flat.argmax(-1)
    return out, first


def _np_pool_grad(g, first, shape):
    n, h, w, c = shape
    z = np.zeros((n, h // 2, w // 2, c, 4), g.dtype)
    np.put_along_axis(z, first[..., None], g[..., None], -1)
    return z.reshape(n, h // 2, w // 2, c, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(shape)


def build_cnn_step(cfg):
    batch, hw = (8, 8) if cfg.quick else (64, 28)
    rng = np.random.default_rng(0)
    params = _cnn_params(rng, hw=hw)
    X = rng.standard_normal((batch, hw, hw, 1)).astype(F32)
    labels = rng.integers(0, 10, batch)
    Y = np.eye(10, dtype=F32)[labels]
    dn = ("NHWC", "HWIO", "NHWC")

    def loss(p, X, Y):
        h = nn.relu(lax.conv_general_dilated(X, p["w1"], (1, 1), "SAME",
                                             dimension_numbers=dn) + p["b1"])
        h = nn.max_pool(h, (2, 2), (2, 2))
        h = nn.relu(lax.conv_general_dilated(h, p["w2"], (1, 1), "SAME",
                                             dimension_numbers=dn) + p["b2"])
        h = nn.max_pool(h, (2, 2), (2, 2))
        z = fnp.reshape(h, (h.shape[0], -1)) @ p["w3"] + p["b3"]
        return -fnp.mean(fnp.sum(Y * nn.log_softmax(z), axis=1))

    def floor():
        p = params
        a1, cols1 = _np_conv_same(X, p["w1"])
        a1 += p["b1"]
        r1 = np.maximum(a1, 0)
        h1, f1 = _np_pool(r1)
        a2, cols2 = _np_conv_same(h1, p["w2"])
        a2 += p["b2"]
        r2 = np.maximum(a2, 0)
        h2, f2 = _np_pool(r2)
        flat = h2.reshape(batch, -1)
        z = flat @ p["w3"] + p["b3"]
        e = np.exp(z - z.max(1, keepdims=True))
        dz = (e / e.sum(1, keepdims=True) - Y) / F32(batch)
        g = {"w3": flat.T @ dz, "b3": dz.sum(0)}
        dh2 = (dz @ p["w3"].T).reshape(h2.shape)
        da2 = _np_pool_grad(dh2, f2, r2.shape) * (a2 > 0)
        g["b2"] = da2.sum((0, 1, 2))
        g["w2"] = (cols2.T @ da2.reshape(-1, da2.shape[-1])).reshape(p["w2"].shape)
        dh1 = _np_conv_same_input_grad(da2, p["w2"], h1.shape)
        da1 = _np_pool_grad(dh1, f1, r1.shape) * (a1 > 0)
        g["b1"] = da1.sum((0, 1, 2))
        g["w1"] = (cols1.T @ da1.reshape(-1, da1.shape[-1])).reshape(p["w1"].shape)
        return g

    g, gj = fxad.grad(loss), fxad.jit(fxad.grad(loss))
    vs = [R.Variant("numpy floor (im2col, hand-written backward)", floor, "numpy"),
          R.Variant("fxad grad", lambda: g(params, X, Y), mode="eager"),
          R.Variant("fxad jit(grad)", lambda: gj(params, X, Y), mode="jit")]
    P = cfg.peers
    if "jax" in P:
        jax, jnp = P["jax"].jax, P["jax"].np
        pj = {k: jnp.asarray(v) for k, v in params.items()}
        Xj, Yj = jnp.asarray(X), jnp.asarray(Y)

        def loss_jax(p, X, Y):
            conv = lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                             dimension_numbers=dn)
            pool = lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1),
                                                   (1, 2, 2, 1), "VALID")
            h = pool(jax.nn.relu(conv(X, p["w1"]) + p["b1"]))
            h = pool(jax.nn.relu(conv(h, p["w2"]) + p["b2"]))
            z = h.reshape(h.shape[0], -1) @ p["w3"] + p["b3"]
            return -jnp.mean(jnp.sum(Y * jax.nn.log_softmax(z), axis=1))
        g_jaxj = jax.jit(jax.grad(loss_jax))
        vs.append(R.Variant("jax jit(grad)", lambda: R._jax_ready(g_jaxj(pj, Xj, Yj)), "jax"))
    if "torch" in P:
        torch = P["torch"].torch
        F = torch.nn.functional
        # PyTorch's own layout (NCHW, OIHW); the dense weights see the same flattening order
        pt = {k: torch.from_numpy(np.ascontiguousarray(v)).requires_grad_()
              for k, v in {"w1": params["w1"].transpose(3, 2, 0, 1), "b1": params["b1"],
                           "w2": params["w2"].transpose(3, 2, 0, 1), "b2": params["b2"],
                           "w3": params["w3"], "b3": params["b3"]}.items()}
        Xt, Yt = torch.from_numpy(np.ascontiguousarray(X.transpose(0, 3, 1, 2))), \
            torch.from_numpy(Y)

        def g_torch():
            h = F.max_pool2d(F.relu(F.conv2d(Xt, pt["w1"], pt["b1"], padding=1)), 2)
            h = F.max_pool2d(F.relu(F.conv2d(h, pt["w2"], pt["b2"], padding=1)), 2)
            z = h.permute(0, 2, 3, 1).reshape(h.shape[0], -1) @ pt["w3"] + pt["b3"]
            loss = -(Yt * F.log_softmax(z, dim=1)).sum(1).mean()
            gs = torch.autograd.grad(loss, list(pt.values()))
            out = dict(zip(pt, gs))
            out["w1"] = out["w1"].permute(2, 3, 1, 0)
            out["w2"] = out["w2"].permute(2, 3, 1, 0)
            return out
        vs.append(R.Variant("torch autograd (eager)", g_torch, "torch"))
    return R.Workload("cnn_step", f"grad of a CNN step (batch {batch}, {hw}x{hw}x1 -> conv3x3x32 "
                      "-> pool -> conv3x3x64 -> pool -> dense 10), float32", floor(), 2e-3, 2e-4,
                      vs, [R._program_sizes(g, gj, params, X, Y)])


# --- attention block ------------------------------------------------------------------------

def build_attention(cfg):
    b, t, d, heads = (2, 8, 16, 4) if cfg.quick else (8, 128, 64, 4)
    hd = d // heads
    rng = np.random.default_rng(1)
    x = rng.standard_normal((b, t, d)).astype(F32)
    ws = {k: (rng.standard_normal((d, d)) / np.sqrt(d)).astype(F32) for k in "qkvo"}

    def block(ws, x):
        q, k, v = [fnp.reshape(x @ ws[n], (b, t, heads, hd)) for n in "qkv"]
        a = nn.dot_product_attention(q, k, v, is_causal=True)
        return fnp.reshape(a, (b, t, d)) @ ws["o"]

    def loss(ws, x):
        return fnp.mean(block(ws, x) ** 2)

    causal = np.tril(np.ones((t, t), bool))

    def floor():
        q, k, v = [(x @ ws[n]).reshape(b, t, heads, hd).transpose(0, 2, 1, 3) for n in "qkv"]
        s = (q @ k.transpose(0, 1, 3, 2)) * F32(1 / np.sqrt(hd))
        s = np.where(causal, s, F32(-1e30))
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        a = (p @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
        y = a @ ws["o"]
        dy = y * F32(2.0 / y.size)
        g = {"o": a.reshape(-1, d).T @ dy.reshape(-1, d)}
        da = (dy @ ws["o"].T).reshape(b, t, heads, hd).transpose(0, 2, 1, 3)
        dp = da @ v.transpose(0, 1, 3, 2)
        dv = p.transpose(0, 1, 3, 2) @ da
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * F32(1 / np.sqrt(hd))
        dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
        dx = np.zeros_like(x)
        for n, dm in zip("qkv", (dq, dk, dv)):
            dm = dm.transpose(0, 2, 1, 3).reshape(b * t, d)
            g[n] = x.reshape(-1, d).T @ dm
            dx += (dm @ ws[n].T).reshape(b, t, d)
        return np.mean(y ** 2, dtype=F32), g, dx

    vg, vgj = fxad.value_and_grad(loss, (0, 1)), fxad.jit(fxad.value_and_grad(loss, (0, 1)))
    flat = lambda out: (out[0], out[1][0], out[1][1])  # (loss, grads of ws, grad of x)
    vs = [R.Variant("numpy floor (hand-written backward)", floor, "numpy"),
          R.Variant("fxad value_and_grad", lambda: flat(vg(ws, x)), mode="eager"),
          R.Variant("fxad jit(value_and_grad)", lambda: flat(vgj(ws, x)), mode="jit")]
    P = cfg.peers
    if "jax" in P:
        jax, jnp = P["jax"].jax, P["jax"].np
        wj, xj = {k: jnp.asarray(v) for k, v in ws.items()}, jnp.asarray(x)

        def loss_jax(ws, x):
            q, k, v = [(x @ ws[n]).reshape(b, t, heads, hd) for n in "qkv"]
            a = jax.nn.dot_product_attention(q, k, v, is_causal=True)
            return jnp.mean((a.reshape(b, t, d) @ ws["o"]) ** 2)
        vgjax = jax.jit(jax.value_and_grad(loss_jax, (0, 1)))
        vs.append(R.Variant("jax jit(value_and_grad)",
                            lambda: flat(R._jax_ready(vgjax(wj, xj))), "jax"))
    if "torch" in P:
        torch = P["torch"].torch
        F = torch.nn.functional
        wt = {k: torch.from_numpy(v).requires_grad_() for k, v in ws.items()}
        xt = torch.from_numpy(x).requires_grad_()

        def vg_torch():
            q, k, v = [(xt @ wt[n]).reshape(b, t, heads, hd).transpose(1, 2) for n in "qkv"]
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            loss = ((a.transpose(1, 2).reshape(b, t, d) @ wt["o"]) ** 2).mean()
            gs = torch.autograd.grad(loss, [*wt.values(), xt])
            return loss.detach(), dict(zip(wt, gs[:4])), gs[4]
        vs.append(R.Variant("torch autograd (eager)", vg_torch, "torch"))
    return R.Workload("attention", f"value and grad of a causal attention block (batch {b}, "
                      f"seq {t}, dim {d}, {heads} heads), float32", floor(), 2e-3, 2e-4, vs,
                      [R._program_sizes(lambda ws, x: loss(ws, x), fxad.jit(loss), ws, x)])


WORKLOADS = {"cnn_step": build_cnn_step, "attention": build_attention}
# issue 30's targets: jit (either backend) <= JAX jit, eager <= PyTorch eager
TARGETS = {"cnn_step": {"jit": [("jax jit", 1.0), ("torch", 1.0)], "eager": [("torch", 1.0)]},
           "attention": {"jit": [("jax jit", 1.0), ("torch", 1.0)], "eager": [("torch", 1.0)]}}


def _peer_ratios(rows):
    """Each fxad row's median against the JAX jit and PyTorch rows of its workload."""
    lines = []
    for w in WORKLOADS:
        rs = [r for r in rows if r.workload == w and r.seconds is not None]
        peers = {"jax jit": next((r for r in rs if r.lib == "jax" and "jit" in r.variant), None),
                 "torch": next((r for r in rs if r.lib == "torch"), None)}
        for r in rs:
            if r.lib != "fxad":
                continue
            parts = []
            for name, target in TARGETS[w].get(r.mode, []):
                p = peers[name]
                if p is None:
                    parts.append(f"vs {name}: (not run)")
                    continue
                ratio = r.seconds / p.seconds
                parts.append(f"{ratio:.2f}x {name} (target <= {target:g}x: "
                             f"{'met' if ratio <= target else 'NOT met'})")
            lines.append(f"{w} / {r.variant}: " + "; ".join(parts))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None)
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--min-run", type=float, default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--peers", default="jax,torch")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--numba", action="store_true",
                    help="also run each fxad jit variant on jit's numba backend, in the same "
                         "rounds")
    args = ap.parse_args(argv)
    names = list(WORKLOADS) if not args.only else [s.strip() for s in args.only.split(",")]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 9)
    min_run = args.min_run if args.min_run is not None else (0.0 if args.quick else 0.1)
    limiter, thread_note = R._limit_threads()  # noqa: F841 - keep the limit alive
    wanted = () if args.peers.strip().lower() == "none" else \
        tuple(p.strip() for p in args.peers.split(",") if p.strip())
    peers, skipped = R.load_peers(wanted)
    if "jax" in peers:  # the peers use float32 here; x64 stays enabled as in run.py
        pass
    cfg = R.Config(quick=args.quick, peers=peers, skipped=skipped)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)
    info = R.machine_info(cfg, thread_note)
    for line in info:
        log(line)
    rows, notes = [], []
    for name in names:
        w = WORKLOADS[name](cfg)
        notes.append(f"{name}: {w.title}")
        notes += [f"{name}: {n}" for n in w.notes]
        if args.numba:
            w = R.with_numba_variants(w)
        rows += R.run_workload(w, repeat, min_run, log)
        for v in w.variants:
            if isinstance(v.fn, R._OnNumba) and v.fn.first is not None:
                notes.append(f"{name}: {v.name}: first call (staging + numba compile or "
                             f"disk-cache load) {v.fn.first:.2f} s")
    print("\n".join(info))
    print(f"settings: {repeat} interleaved rounds, each run >= {min_run:g} s")
    print()
    print(R.format_table(rows, markdown=args.markdown))
    print()
    for line in _peer_ratios(rows) + notes + [f"{k}: skipped, {v}" for k, v in skipped.items()]:
        print(("- " if args.markdown else "  ") + line)
    failures = [r for r in rows if r.status != "ok"]
    for r in failures:
        print(f"*** {r.workload} / {r.variant}: {r.status}: {r.detail}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

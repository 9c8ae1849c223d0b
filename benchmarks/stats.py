"""Benchmark: the gradient of a sum of scipy.stats log densities with respect to their
parameters, over n data points (default 10^5; --n to change):

    L = Σ norm.logpdf(x, μ, σ) + Σ gamma.logpdf(y, a, scale=θ) + Σ beta.logpdf(z, p, q)
        + Σ t.logpdf(x, ν, m, s)

and its gradient in the nine parameters. Variants: the floor (the log densities and their
hand-derived gradients in NumPy/SciPy), fxad eager and jit, and, when importable, JAX jit
(jax.scipy.stats, float64, one thread), autograd (autograd.scipy.stats) and PyTorch eager
(torch.distributions). The harness is benchmarks/run.py's (checked results, one BLAS
thread, interleaved rounds, medians and ratios to the floor); its options pass through.

    python benchmarks/stats.py [--n N] [--repeat K] [--quick] [--markdown] [--peers ...]
"""
import os
import sys

if __name__ == "__main__":  # one BLAS thread, before NumPy is imported (as run.py does)
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ[_var] = "1"
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import scipy.special as sc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as harness  # noqa: E402  (benchmarks/run.py)

import fxad  # noqa: E402
import fxad.numpy as fnp  # noqa: E402
from fxad.scipy import stats  # noqa: E402

N = 100_000
PARAMS = np.array([0.1, 1.3, 2.5, 0.8, 1.7, 2.2, 4.0, 0.2, 1.1])  # μ σ a θ p q ν m s


def data(n):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n) * 1.2 + 0.1
    y = rng.gamma(2.5, 0.8, n)
    z = rng.beta(1.7, 2.2, n)
    return x, y, z


def loss_fxad(params, x, y, z):
    mu, sig, a, th, p, q, nu, m, s = [params[i] for i in range(9)]
    return (fnp.sum(stats.norm.logpdf(x, mu, sig)) + fnp.sum(stats.gamma.logpdf(y, a, scale=th))
            + fnp.sum(stats.beta.logpdf(z, p, q)) + fnp.sum(stats.t.logpdf(x, nu, m, s)))


def floor(params, x, y, z):
    """The value and the nine partial derivatives, derived by hand."""
    mu, sig, a, th, p, q, nu, m, s = params
    n = len(x)
    d = x - mu
    g_norm = [np.sum(d) / sig ** 2, np.sum(d * d) / sig ** 3 - n / sig]
    ly = np.log(y / th)
    g_gamma = [np.sum(ly) - n * sc.digamma(a), np.sum(y) / th ** 2 - n * a / th]
    lz, l1z = np.log(z), np.log1p(-z)
    dab = sc.digamma(p + q)
    g_beta = [np.sum(lz) - n * (sc.digamma(p) - dab), np.sum(l1z) - n * (sc.digamma(q) - dab)]
    u = (x - m) / s
    u2 = u * u
    r = np.log1p(u2 / nu)
    w = (nu + 1) / (nu + u2)
    g_t = [np.sum(0.5 * sc.digamma((nu + 1) / 2) - 0.5 * sc.digamma(nu / 2) - 0.5 / nu - 0.5 * r
                  + 0.5 * w * u2 / nu),
           np.sum(w * u) / s, np.sum(w * u2) / s - n / s]
    value = (np.sum(-0.5 * (d / sig) ** 2) - n * (np.log(sig) + 0.5 * np.log(2 * np.pi))
             + np.sum((a - 1) * ly - y / th) - n * (sc.gammaln(a) + np.log(th))
             + np.sum((p - 1) * lz + (q - 1) * l1z) - n * sc.betaln(p, q)
             + n * (sc.gammaln((nu + 1) / 2) - sc.gammaln(nu / 2) - 0.5 * np.log(nu * np.pi)
                    - np.log(s)) - 0.5 * (nu + 1) * np.sum(r))
    return value, np.array(g_norm + g_gamma + g_beta + g_t)


def build_stats_logpdf_grad(cfg):
    n = 1000 if cfg.quick else N
    x, y, z = data(n)
    params = PARAMS.copy()
    ref = floor(params, x, y, z)
    vg = fxad.value_and_grad(loss_fxad)
    vg_jit = fxad.jit(vg)
    V = harness.Variant
    variants = [V("numpy floor (hand-derived gradient)", lambda: floor(params, x, y, z), "numpy"),
                V("fxad eager value_and_grad", lambda: vg(params, x, y, z), mode="eager"),
                V("fxad jit(value_and_grad)", lambda: vg_jit(params, x, y, z), mode="jit")]
    notes = [f"n = {n} data points; 4 log densities, gradient in 9 parameters"]
    if "jax" in cfg.peers:
        jax = cfg.peers["jax"].jax
        import jax.numpy as jnp
        import jax.scipy.stats as js

        def loss_jax(pr, x, y, z):
            mu, sig, a, th, p, q, nu, m, s = [pr[i] for i in range(9)]
            return (jnp.sum(js.norm.logpdf(x, mu, sig)) + jnp.sum(js.gamma.logpdf(y, a, scale=th))
                    + jnp.sum(js.beta.logpdf(z, p, q)) + jnp.sum(js.t.logpdf(x, nu, m, s)))
        jf = jax.jit(jax.value_and_grad(loss_jax))
        args = [jnp.asarray(v) for v in (params, x, y, z)]
        variants.append(V("JAX jit(value_and_grad)", lambda: harness._jax_ready(jf(*args)),
                          "jax"))
    if "autograd" in cfg.peers:
        ag = cfg.peers["autograd"]
        import autograd.scipy.stats as ast

        def loss_ag(pr):
            mu, sig, a, th, p, q, nu, m, s = [pr[i] for i in range(9)]
            return (ag.np.sum(ast.norm.logpdf(x, mu, sig))
                    + ag.np.sum(ast.gamma.logpdf(y / th, a) - ag.np.log(th))
                    + ag.np.sum(ast.beta.logpdf(z, p, q)) + ag.np.sum(ast.t.logpdf(x, nu, m, s)))
        agf = ag.ag.value_and_grad(loss_ag)
        variants.append(V("autograd value_and_grad", lambda: agf(params), "autograd"))
    if "torch" in cfg.peers:
        torch = cfg.peers["torch"].torch
        D = torch.distributions
        tx, ty, tz = (torch.from_numpy(v) for v in (x, y, z))

        def torch_vg():
            pr = torch.tensor(params, requires_grad=True)
            mu, sig, a, th, p, q, nu, m, s = pr
            val = (D.Normal(mu, sig).log_prob(tx).sum() + D.Gamma(a, 1 / th).log_prob(ty).sum()
                   + D.Beta(p, q).log_prob(tz).sum() + D.StudentT(nu, m, s).log_prob(tx).sum())
            (g,) = torch.autograd.grad(val, pr)
            return val.detach().numpy(), g.numpy()
        variants.append(V("PyTorch eager (torch.distributions)", torch_vg, "torch"))
    return harness.Workload("stats_logpdf_grad", "grad of Σ norm/gamma/beta/t logpdfs in 9 "
                            "parameters", ref, 1e-9, 1e-9, variants, notes)


if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--n" in argv:
        k = argv.index("--n")
        N = int(argv[k + 1])
        del argv[k:k + 2]
    harness.WORKLOADS["stats_logpdf_grad"] = build_stats_logpdf_grad
    sys.exit(harness.main(["--only", "stats_logpdf_grad", *argv]))

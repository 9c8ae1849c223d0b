"""The table of calls compared with jax.random (JAX 0.10.2, default threefry2x32
implementation, 64-bit types enabled): the same calls run through fxad (module `fxad`) or JAX
(module `jax`). `exact` rows must agree bit for bit; the others to `rtol` (floats) or on at
least `agree` of the elements (integers), because their transcendental functions (erfinv, log,
exp, tan, pow, lgamma, QR...) are computed by different libraries (SciPy/libm vs XLA) whose
last bits differ, and a rejection sampler's accept/reject test can flip on such a bit.

Used by test_jax_parity.py (live, when JAX is installed) and by make_jax_reference.py, which
stores JAX's outputs in jax_reference.json (an external spec: CI has no JAX)."""
import numpy as np

SEEDS = [0, 1, 42, 2 ** 31 - 1, 2 ** 32 + 7, -3]
# Not here: poisson with lam >= 10. JAX's PTRS loop redraws the whole array until every
# element (placeholders included) is accepted, later acceptances overwriting earlier ones, so
# one accept/reject flip on a last bit of float32 lgamma (XLA's and SciPy's differ) changes
# many draws; the distribution is tested in test_samplers.py.
SHAPES = [(), (1,), (7,), (3, 5)]
F64, F32, F16 = "float64", "float32", "float16"


def _rows():
    rows = []

    def add(fn, args=(), kwargs=None, exact=True, seeds=SEEDS, rtol=None, agree=None, tag=""):
        for s in seeds:
            rows.append(dict(id=f"{fn}{tag}-seed{s}", fn=fn, seed=s, args=list(args),
                             kwargs=dict(kwargs or {}), exact=exact, rtol=rtol, agree=agree))

    add("key_data")  # the key itself: the seed rule
    for shape in SHAPES + [(1000,)]:
        add("split", (shape,), tag=str(shape))
        for dt in ["uint8", "uint16", "uint32", "uint64"]:
            add("bits", (shape, dt), tag=f"{shape}{dt}", seeds=SEEDS[:3])
    add("fold_in", (0,))
    add("fold_in", (2 ** 32 - 1,), tag="max")
    add("split_fold_chain", ())
    for dt in [F64, F32, F16]:
        for shape in SHAPES + [(257,)]:
            add("uniform", (shape, dt), tag=f"{shape}{dt}", seeds=SEEDS[:3])
        add("uniform", ((4, 6), dt, -2.5, 3.25), tag=f"range{dt}")
        add("uniform", ((40,), dt, 1e-3, 1e3), tag=f"wide{dt}", seeds=SEEDS[:2])
    for dt in ["int64", "int32", "int16", "int8", "uint32", "uint8"]:
        add("randint", ((30,), -7, 100, dt), tag=dt, seeds=SEEDS[:3])
    add("randint", ((50,), 0, 2 ** 40), tag="big")
    add("randint", ((5, 4), -2 ** 62, 2 ** 62), tag="huge", seeds=SEEDS[:2])
    add("randint", ((), 3, 4), tag="one")
    add("bernoulli", (0.3, (40,)))
    add("bernoulli", (0.3, (40,), "high"), tag="high", seeds=SEEDS[:2])
    add("bernoulli", (np.float32(0.7), (3, 4)), tag="f32", seeds=SEEDS[:2])
    add("rademacher", ((25,),))
    for n in (1, 7, 300, 2000):
        add("permutation", (n,), tag=str(n), seeds=SEEDS[:3])
    add("permutation", (np.arange(24.0).reshape(4, 6), 1), tag="axis1", seeds=SEEDS[:2])
    add("permutation", (np.arange(24.0).reshape(4, 6), 1, True), tag="indep", seeds=SEEDS[:2])
    add("choice", (10, (4, 3)))
    add("choice", (np.arange(35.0).reshape(7, 5), (3,), False, None, 1), tag="norepl",
        seeds=SEEDS[:3])
    add("choice", (5, (20,), True, [0.1, 0.2, 0.3, 0.15, 0.25]), tag="p", seeds=SEEDS[:3])
    add("triangular", (-1.0, 0.5, 3.0, (30,)))

    # equal to JAX up to the rounding of transcendental functions
    for dt, rtol in [(F64, 1e-13), (F32, 1e-5)]:
        near = dict(exact=False, rtol=rtol, seeds=SEEDS[:3])
        add("normal", ((40,), dt), tag=dt, **near)
        add("truncated_normal", (-1.5, 2.0, (40,), dt), tag=dt, **near)
        add("exponential", ((40,), dt), tag=dt, **near)
        add("laplace", ((40,), dt), tag=dt, **near)
        add("logistic", ((40,), dt), tag=dt, **near)
        add("gumbel", ((40,), dt), tag=dt, **near)
        add("cauchy", ((40,), dt), tag=dt, **near)
    near = dict(exact=False, rtol=1e-12, seeds=SEEDS[:3])
    add("normal", ((6,), "complex128"), tag="c128", **near)
    add("gumbel", ((40,), F64, "high"), tag="high", **near)
    add("lognormal", (0.5, (20,)), **near)
    add("pareto", (3.0, (20,)), **near)
    add("rayleigh", (2.0, (20,)), **near)
    add("weibull_min", (2.0, 1.5, (20,)), **near)
    add("maxwell", ((20,),), **near)
    add("double_sided_maxwell", (1.0, 2.0, (20,)), **near)
    add("wald", (2.0, (20,)), **near)
    add("multivariate_normal", ([1.0, 2.0, 3.0], [[2.0, 0.5, 0.1], [0.5, 1.0, 0.2],
                                                 [0.1, 0.2, 0.5]], (5,)), **near)
    add("orthogonal", (4, (2,)), exact=False, rtol=1e-10, seeds=SEEDS[:3])
    for a in (0.1, 0.7, 1.0, 4.5, 100.0):
        add("gamma", (a, (30,)), tag=str(a), **near)
        add("loggamma", (a, (30,)), tag=str(a), **near)
    add("beta", (0.7, 2.0, (30,)), **near)
    add("dirichlet", ([0.5, 1.0, 3.0], (10,)), **near)
    add("t", (3.0, (30,)), **near)
    add("chisquare", (3.0, (30,)), **near)
    add("f", (3.0, 5.0, (30,)), **near)
    add("generalized_normal", (1.5, (30,)), **near)
    add("ball", (3, 2, (10,)), **near)
    counts = dict(exact=False, agree=0.95, seeds=SEEDS[:3])
    add("categorical", ([[-1.0, 0.5, 2.0, 0.0], [0.3, 0.3, -2.0, 1.0]], -1, (50, 2)), **counts)
    add("categorical", ([[-1.0, 0.5, 2.0, 0.0], [0.3, 0.3, -2.0, 1.0]], -1, (2, 2), False),
        tag="norepl", **counts)
    add("choice", (6, (4,), False, [0.1, 0.2, 0.3, 0.15, 0.05, 0.2]), tag="p-norepl", **counts)
    add("geometric", (0.3, (60,)), **counts)
    add("poisson", ([0.5, 3.0, 7.0, 9.5], (30, 4)), **counts)  # Knuth's method (lam < 10)
    add("binomial", ([3.0, 20.0, 500.0], [0.3, 0.8, 0.4], (30, 3)), **counts)
    add("multinomial", (100.0, [0.2, 0.3, 0.5]), **counts)

    # fxad.nn.initializers vs jax.nn.initializers
    for name in ("glorot_uniform", "lecun_uniform", "he_uniform"):
        add("init." + name, ((4, 6),), seeds=SEEDS[:3])
        add("init." + name, ((3, 3, 4, 8), F32), tag="conv", seeds=SEEDS[:2])
    add("init.uniform", ((5, 4),), seeds=SEEDS[:2])
    add("init.variance_scaling", ((5, 4, 3),), dict(scale=1.5, mode="fan_out",
                                                    distribution="uniform", in_axis=0,
                                                    out_axis=(1, 2)), seeds=SEEDS[:2])
    for name in ("glorot_normal", "lecun_normal", "he_normal", "normal", "truncated_normal",
                 "orthogonal"):
        add("init." + name, ((4, 6),), exact=False, rtol=1e-10, seeds=SEEDS[:2])
    add("init.delta_orthogonal", ((3, 4, 6),), exact=False, rtol=1e-10, seeds=SEEDS[:2])
    return rows


ROWS = _rows()
_SPECIAL = {"key_data", "split_fold_chain"}


def run(mod, row):
    """Run a row with `mod` (fxad or jax); returns a NumPy array."""
    r = mod.random
    key = r.PRNGKey(row["seed"])
    fn, args, kwargs = row["fn"], [_arg(a) for a in row["args"]], row["kwargs"]
    if fn == "key_data":
        out = key
    elif fn == "split_fold_chain":  # a key carried through splits and folds, as a loop would
        for i in range(5):
            key, sub = r.split(key)
            key = r.fold_in(key, i)
        out = r.split(sub, 3)
    elif fn.startswith("init."):
        name = fn[5:]
        shape, dtype = args[0], (args[1] if len(args) > 1 else "float64")
        init = getattr(mod.nn.initializers, name)(**kwargs)
        out = init(key, shape, dtype)
    else:
        out = getattr(r, fn)(key, *args, **kwargs)
    return np.asarray(out)


def _arg(a):
    if isinstance(a, list) and a and isinstance(a[0], (list, float)):
        return np.asarray(a)
    if isinstance(a, list):
        return tuple(a)
    return a

"""fxad.random: JAX's functional, splittable random numbers, bit for bit.

Keys are uint32 arrays of shape (2,) (`key(seed)` / `PRNGKey(seed)`); a function of a key is
deterministic, so results are identical eagerly, under `jit` (the key is an input of the staged
program: the bits are computed when it runs, never frozen at trace time) and under `vmap` over
a batch of keys. The generator is counter-based Threefry-2x32, with JAX's default scheme, so
the same key gives JAX's bits; samplers use JAX's constructions on top of them
(notes/11_random.md lists which functions match JAX bit for bit and which to rounding).
Continuous samplers are reparameterized: differentiable in their parameters at a fixed key.
"""
from .keys import (  # noqa: F401
    PRNGKey, bits, clone, fold_in, key, key_data, key_impl, split, wrap_key_data)
from .basic import bernoulli, normal, rademacher, uniform  # noqa: F401
from .continuous import (  # noqa: F401
    cauchy, double_sided_maxwell, exponential, gumbel, laplace, logistic, lognormal, maxwell,
    multivariate_normal, orthogonal, pareto, rayleigh, triangular, truncated_normal, wald,
    weibull_min)
from .gamma_family import (  # noqa: F401
    ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, t)
from .discrete import (  # noqa: F401
    binomial, categorical, choice, geometric, multinomial, permutation, poisson, randint)
from ..rules.random.gamma import random_gamma_p  # noqa: F401

__all__ = [
    "PRNGKey", "ball", "bernoulli", "beta", "binomial", "bits", "categorical", "cauchy",
    "chisquare", "choice", "clone", "dirichlet", "double_sided_maxwell", "exponential", "f",
    "fold_in", "gamma", "generalized_normal", "geometric", "gumbel", "key", "key_data",
    "key_impl", "laplace", "loggamma", "logistic", "lognormal", "maxwell", "multinomial",
    "multivariate_normal", "normal", "orthogonal", "pareto", "permutation", "poisson",
    "rademacher", "randint", "rayleigh", "split", "t", "triangular", "truncated_normal",
    "uniform", "wald", "weibull_min", "wrap_key_data",
]

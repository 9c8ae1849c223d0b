"""scipy.stats's distributions, differentiable in the value and every parameter
(notes/09_scipy_stats_special.md). Each distribution is a module, as in jax.scipy.stats
(`import fxad.scipy.stats.norm as norm`), called with SciPy's signatures
(`norm.logpdf(x, loc, scale)`) or frozen (`norm(loc, scale).logpdf(x)`)."""
from . import (  # noqa: F401  (location-scale families with closed forms)
    cauchy, expon, gumbel_l, gumbel_r, laplace, logistic, lognorm, norm, pareto, t, uniform)
from . import beta, chi2, gamma, gennorm, truncnorm, vonmises, wrapcauchy  # noqa: F401
from . import bernoulli, betabinom, binom, geom, nbinom, poisson  # noqa: F401
from . import dirichlet, multinomial, multivariate_normal  # noqa: F401
from ._kde import gaussian_kde  # noqa: F401
from ._descriptive import mode, rankdata, sem  # noqa: F401

__all__ = [
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
    "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "lognorm",
    "mode", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson",
    "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy",
]

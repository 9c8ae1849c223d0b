"""scipy.stats's distributions, differentiable in the value and every parameter
(notes/09_scipy_stats_special.md)."""
from ._continuous import (  # noqa: F401
    cauchy, expon, gumbel_l, gumbel_r, laplace, logistic, lognorm, norm, pareto, t, uniform)
from ._shapes import beta, chi2, gamma, gennorm, truncnorm, vonmises, wrapcauchy  # noqa: F401
from ._discrete import bernoulli, betabinom, binom, geom, nbinom, poisson  # noqa: F401
from ._multivariate import dirichlet, multinomial, multivariate_normal  # noqa: F401
from ._kde import gaussian_kde  # noqa: F401
from ._descriptive import mode, rankdata, sem  # noqa: F401

"""scipy.stats's distributions, differentiable in the value and every parameter
(notes/09_scipy_stats_special.md)."""
from ._continuous import (  # noqa: F401
    cauchy, expon, gumbel_l, gumbel_r, laplace, logistic, lognorm, norm, pareto, t, uniform)
from ._shapes import beta, chi2, gamma, gennorm, truncnorm, vonmises, wrapcauchy  # noqa: F401

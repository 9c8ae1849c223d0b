"""The operation makers, one module per family. Each maker is a function of the generator
(`Gen`) returning (kind, expr, args) -- expr a line of Python with @0, @1, ... for its
arguments -- or raising Reject, and registers itself with `@maker(weight=...)`. A new family
is a module here and one import line below."""
from __future__ import annotations

from .. import registry
from . import (  # noqa: F401  (importing a family registers its makers)
    control_flow, elementwise, fft, indexing, jax_surface, linalg, nn, products, reductions,
    random, series, shapes, scipy_solvers, scipy_stats_special, statistics, decompositions)
from . import (  # noqa: F401  (families added later, registered after the ones above: the
    # order of the weighted list is part of what a seed means)
    special_functions, derivative_primitives, spectral, collectives, integer_ops, windowed,
    remat_and_callbacks, random_rejection)

registry.check_complete()

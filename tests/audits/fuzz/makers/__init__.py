"""The operation makers, one module per family. Each maker is a function of the generator
(`Gen`) returning (kind, expr, args) -- expr a line of Python with @0, @1, ... for its
arguments -- or raising Reject, and registers itself with `@maker(weight=...)`. A new family
is a module here and one import line below."""
from __future__ import annotations

from .. import registry
from . import (  # noqa: F401  (importing a family registers its makers)
    control_flow, elementwise, fft, indexing, jax_surface, linalg, nn, products, reductions,
    random, series, shapes, scipy_solvers, scipy_stats_special, statistics, decompositions)

registry.check_complete()

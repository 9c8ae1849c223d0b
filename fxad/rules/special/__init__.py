"""Special functions (SciPy's implementations as impls), with their derivatives in every
argument. Modules starting with `_` are the numerics behind the derivatives SciPy lacks."""
from . import basic, bessel, hypergeometric, incomplete, integrals, piecewise_stats  # noqa: F401

"""scipy.optimize's solvers with fxad's derivatives, and solutions differentiable in their
parameters by the implicit function theorem (notes/08_scipy_solvers.md)."""
from scipy.optimize import OptimizeResult  # noqa: F401  (the result type, SciPy's own)

from ._minimize import minimize  # noqa: F401
from ._roots import bisect, brenth, brentq, fixed_point, ridder, root, root_scalar  # noqa: F401
from ._least_squares import least_squares  # noqa: F401

__all__ = ["OptimizeResult", "bisect", "brenth", "brentq", "fixed_point", "least_squares",
           "minimize", "ridder", "root", "root_scalar"]

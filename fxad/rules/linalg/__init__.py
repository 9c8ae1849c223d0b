"""Linear algebra: solves that factor once, decompositions, and the matrix functions whose
derivatives are Sylvester equations."""
from . import decompositions, solve, sylvester  # noqa: F401

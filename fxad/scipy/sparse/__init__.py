"""scipy.sparse's names: fxad.scipy.sparse.linalg (the iterative solvers)."""
from . import linalg  # noqa: F401

__all__ = ["linalg"]

"""The rule tables, one file per family. Importing this package defines every primitive."""
from . import (  # noqa: F401
    cumulative, dot, elementwise, indexing, linalg_decomp, linalg_solve, piecewise, reductions,
    special, structural)

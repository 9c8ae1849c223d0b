"""The rule tables, one file per family. Importing this package defines every primitive
(`ops` imports the families; see fxad/rules/ops.py)."""
from . import ops  # noqa: F401  (first: the families import it)
from . import (  # noqa: F401
    cond, cumulative, dot, elementwise, fft, indexing, linalg_decomp, linalg_solve, loops,
    reductions, special, structural)

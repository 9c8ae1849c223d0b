"""The rule tables, one file per family. Importing this package defines every primitive."""
from . import elementwise, reductions, structural, indexing, dot, special, cumulative, linalg_solve, linalg_decomp  # noqa: F401

"""The rule tables, one file per family. Importing this package defines every primitive
(`ops` imports the families; see fxad/rules/ops.py)."""
from . import ops  # noqa: F401  (first: the families import it)
from . import (  # noqa: F401
    call, cond, cumulative, custom, dot, elementwise, fft, indexing, linalg_decomp, linalg_solve,
    reductions, scan, special, structural, while_loop)
from . import bitwise, random_bits, random_counts, random_gamma, random_gamma_grad  # noqa: F401

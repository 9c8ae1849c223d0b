"""The rule tables, one file per family. Importing this package defines every primitive
(`ops` imports the families; see fxad/rules/ops.py)."""
from . import ops  # noqa: F401  (first: the families import it)
from . import (  # noqa: F401
    bessel, call, callback, cond, conv, cumulative, custom, custom_linear, debug, dot, dynamic,
    elementwise, fft, indexing, linalg_decomp, linalg_more, linalg_solve, piecewise, reductions,
    remat, scan, signal_conv, special, special_hyper, special_incomplete, special_more,
    stats_misc, structural, ufunc_math, while_loop, windowed)
from . import collective  # noqa: F401,E402
from . import bitwise, random_bits, random_counts, random_gamma, random_gamma_grad  # noqa: F401,E402

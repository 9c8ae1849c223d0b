"""Primitive-level operations: one function per primitive (no NumPy conveniences)."""
from .rules.elementwise import complex_ as complex, conj, imag, real  # noqa: F401
from .rules.elementwise import (  # noqa: F401
    abs, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, ceil,
    convert_element_type, cos, cosh, div, eq, exp, expm1, floor, floor_divide, ge, gt, integer_pow,
    isfinite, isnan, le, log, log1p, logical_and, logical_not, logical_or, logistic, lt, max,
    min, mul, ne, neg, pow, rem, round, rsqrt, select, sign, sin, sinh, sqrt, stop_gradient, sub,
    tan, tanh, fmod, signbit, trunc, cbrt, exp2, log2, log10, hypot, float_power)
from .rules.reductions import (  # noqa: F401
    argmax, argmin, reduce_max, reduce_min, reduce_prod, reduce_sum)
from .rules.structural import broadcast_to, concatenate, flip, reshape, transpose  # noqa: F401
from .rules.indexing import getitem, scatter_add  # noqa: F401
from .rules.dot import dot_general  # noqa: F401
from .control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: F401,E402
from .rules.cumulative import argsort, cumprod, cumsum, searchsorted  # noqa: F401,E402
from .rules.convolve import convolve  # noqa: F401,E402

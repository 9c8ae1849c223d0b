"""The bind wrappers of the primitives, in one namespace: what rule files call for work done
by other families (`ops.mul`, `ops.reshape`, ...), resolved at call time. Private: the
public face of these is `fxad.lax`, which re-exports `__all__`.

fxad/rules/__init__.py imports this module first; it imports every family, and each family
does `from . import ops`, getting this (partly initialized) module, whose names are only
looked up when a rule runs."""
from .elementwise.arithmetic import complex_ as complex  # noqa: F401
from .elementwise.arithmetic import (
    add, conj, convert_element_type, div, imag, mul, neg, real, select, sub)
from .elementwise.piecewise import (
    abs, ceil, eq, floor, floor_divide, fmod, ge, gt, isfinite, isnan, le, logical_and,
    logical_not, logical_or, lt, max, min, ne, rem, round, sign, signbit, stop_gradient, trunc)
from .elementwise.transcendental import (
    arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, cbrt, cos, cosh, exp, expm1,
    integer_pow, log, log1p, logistic, pow, rsqrt, sin, sinh, sqrt, tan, tanh)
from .elementwise.ufunc_math import exp2, float_power, hypot, log10, log2  # noqa: F401
from .reduction.reduce import argmax, argmin, reduce_max, reduce_min, reduce_prod, reduce_sum  # noqa
from .structural.shape import broadcast_to, concatenate, flip, reshape, transpose  # noqa: F401
from .structural.indexing import getitem, scatter_add  # noqa: F401
from .contraction.dot import dot_general  # noqa: F401
from .reduction.cumulative import cumlogsumexp, cummax, cummin, cumprod, cumsum  # noqa: F401
from .structural.sorting import argsort, lexsort, searchsorted, top_k  # noqa: F401
from .contraction.convolve import convolve  # noqa: F401
from .structural.dynamic_slice import dynamic_slice, dynamic_update_slice  # noqa: F401
from .contraction.conv import conv_general_dilated  # noqa: F401  (normalized form; fxad.lax has the public one)
from .elementwise.bitwise import (  # noqa: F401  (not yet in fxad.lax: see notes/11_random.md)
    bitcast_convert_type, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, fma, nextafter, shift_left,
    shift_right_logical)
from .random.bits import (  # noqa: F401  (fxad.random's key primitives; not in fxad.lax)
    random_bits, random_fold_in, random_seed, random_split, threefry2x32)
from .random.gamma import random_gamma  # noqa: F401
from .random.gamma_grad import random_gamma_grad  # noqa: F401
from .random.counts import random_binomial, random_poisson  # noqa: F401
from .elementwise.arithmetic import mul_p  # noqa: F401  (for rules that stage equations directly)
from .structural.shape import reshape_p  # noqa: F401

__all__ = [
    "abs", "add", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "cbrt", "ceil", "complex", "conj", "convert_element_type", "cos", "cosh", "div", "eq", "exp",
    "expm1", "floor", "floor_divide", "fmod", "ge", "gt", "imag", "integer_pow", "isfinite",
    "isnan", "le", "log", "log1p", "logical_and", "logical_not", "logical_or", "logistic", "lt",
    "max", "min", "mul", "ne", "neg", "pow", "real", "rem", "round", "rsqrt", "select", "sign",
    "signbit", "sin", "sinh", "sqrt", "stop_gradient", "sub", "tan", "tanh", "trunc",
    "argmax", "argmin", "reduce_max", "reduce_min", "reduce_prod", "reduce_sum",
    "broadcast_to", "concatenate", "flip", "reshape", "transpose", "getitem", "scatter_add",
    "dot_general", "argsort", "cumprod", "cumsum", "searchsorted", "convolve",
    "exp2", "float_power", "hypot", "log10", "log2"]
# (fxad.lax takes the primitives added for JAX's surface, dynamic_slice, top_k, cummax, ...,
# from its topic modules in fxad/lax/, with JAX's signatures.)

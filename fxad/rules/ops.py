"""The bind wrappers of the primitives, in one namespace: what rule files call for work done
by other families (`ops.mul`, `ops.reshape`, ...), resolved at call time. Private: the
public face of these is `fxad.lax`, which re-exports `__all__`: every rule file's own
`__all__` (its bind wrappers that belong in fxad.lax), so a new primitive's wrapper is
listed once, in its block's file.

fxad/rules/__init__.py imports this module first; it imports every family, and each family
does `from . import ops`, getting this (partly initialized) module, whose names are only
looked up when a rule runs."""
from .elementwise.arithmetic import *  # noqa: F401,F403
from .elementwise.piecewise import *  # noqa: F401,F403
from .elementwise.transcendental import *  # noqa: F401,F403
from .elementwise.ufunc_math import *  # noqa: F401,F403
from .reduction.reduce import *  # noqa: F401,F403
from .reduction.cumulative import *  # noqa: F401,F403
from .structural.shape import *  # noqa: F401,F403
from .structural.indexing import *  # noqa: F401,F403
from .structural.sorting import *  # noqa: F401,F403
from .contraction.dot import *  # noqa: F401,F403
from .contraction.convolve import *  # noqa: F401,F403
from .elementwise import arithmetic, piecewise, transcendental, ufunc_math
from .reduction import cumulative, reduce
from .structural import indexing, shape, sorting
from .contraction import convolve as _convolve, dot

# Wrappers only rules call (fxad.lax has these under JAX's signatures, or not at all)
from .reduction.cumulative import cumlogsumexp, cummax, cummin  # noqa: F401
from .structural.sorting import lexsort, top_k  # noqa: F401
from .structural.dynamic_slice import dynamic_slice, dynamic_update_slice  # noqa: F401
from .contraction.conv import conv_general_dilated  # noqa: F401  (normalized form)
from .elementwise.bitwise import (  # noqa: F401  (fxad.lax.bitwise has them under JAX's names)
    bitcast_convert_type, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, clz, fma,
    nextafter, population_count, shift_left, shift_right_arithmetic, shift_right_logical)
from .random.bits import (  # noqa: F401  (fxad.random's key primitives; not in fxad.lax)
    random_bits, random_fold_in, random_seed, random_split, threefry2x32)
from .random.gamma import random_gamma  # noqa: F401
from .random.gamma_grad import random_gamma_grad  # noqa: F401
from .random.counts import random_binomial, random_poisson  # noqa: F401
from .elementwise.arithmetic import mul_p  # noqa: F401  (for rules that stage equations directly)
from .structural.shape import reshape_p, transpose_p  # noqa: F401
from .reduction.reduce import reduce_sum_p  # noqa: F401
from .contraction.dot import dot_general_p  # noqa: F401

__all__ = [name for module in (arithmetic, piecewise, transcendental, ufunc_math, reduce,
                               cumulative, shape, indexing, sorting, dot, _convolve)
           for name in module.__all__]

"""Keys that depend on a row's traced input (x * 0, converted to uint32 and xor-ed into a
fixed key), so the integer-valued bit and random primitives stage in a row: their tangents
are symbolic zeros, and differentiating through them in every mode must give exactly the
derivative of the float arithmetic around them."""
import numpy as np

import fxad.numpy as fnp
from fxad import lax
from fxad import random as fr
from fxad.rules import ops

KEY = fr.PRNGKey(5)


def key_of(x):
    zero = lax.convert_element_type(lax.mul(fnp.sum(x), 0.0), np.uint32)
    return ops.bitwise_xor(KEY, zero)


def as_float(bits, x):
    """x times the bits scaled into [0, 1): smooth in x, whatever the bits are."""
    return lax.mul(x, lax.mul(lax.convert_element_type(bits, np.float64), 2.0 ** -64))


def words(x):
    k = key_of(x)
    return fr.bits(k, fnp.shape(x), np.uint32), fr.bits(fr.fold_in(k, 1), fnp.shape(x), np.uint32)

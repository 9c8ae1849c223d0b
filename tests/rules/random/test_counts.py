"""Rule table: the count samplers (fxad.rules.random.counts): random_poisson and
random_binomial, staged through keys that depend on the row's input (traced_keys.py): integer
samples, so the derivative is the float arithmetic's around them."""
import numpy as np

import fxad.numpy as fnp
from fxad import lax
from fxad import random as fr

from ..common import SHAPES_UNARY, floats, row_tests, unary_rows
from .traced_keys import key_of

TABLE = unary_rows([  # (name, fn, domain)
    ("random_poisson", lambda x: lax.mul(x, lax.convert_element_type(
        fr.poisson(key_of(x), 4.0, fnp.shape(x)), np.float64)), floats(-2, 2)),
    ("random_binomial", lambda x: lax.mul(x, fr.binomial(key_of(x), 10.0, 0.3, fnp.shape(x))),
     floats(-2, 2)),
], SHAPES_UNARY, rtol=0, atol=0)
test_row = row_tests(TABLE)

"""Rule table: counter-based random bits (fxad.rules.random.bits): threefry2x32 and the key
primitives, staged through keys that depend on the row's input (tests/rules/random/
traced_keys.py)."""
import numpy as np

import fxad.numpy as fnp
from fxad import lax
from fxad import random as fr
from fxad.rules import ops

from ..common import SHAPES_UNARY, floats, row_tests, unary_rows
from .traced_keys import as_float, key_of

TABLE = unary_rows([  # (name, fn, domain)
    ("threefry2x32", lambda x: as_float(ops.threefry2x32(key_of(x)[0], key_of(x)[1],
                                                         np.uint32(3), np.uint32(4))[0], x),
     floats(-2, 2)),
    ("random_seed", lambda x: as_float(ops.random_seed(
        lax.convert_element_type(lax.mul(x, 0.0), np.int64))[..., 1], x), floats(-2, 2)),
    ("random_bits", lambda x: as_float(fr.bits(key_of(x), fnp.shape(x)), x), floats(-2, 2)),
    ("random_split", lambda x: as_float(fr.split(key_of(x), 3)[2, 0], x), floats(-2, 2)),
    ("random_fold_in", lambda x: as_float(fr.fold_in(key_of(x), 7)[0], x), floats(-2, 2)),
], SHAPES_UNARY, rtol=0, atol=0)  # bit for bit
test_row = row_tests(TABLE)

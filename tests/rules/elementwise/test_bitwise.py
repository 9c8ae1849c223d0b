"""Rule table: bit-level primitives (fxad.rules.elementwise.bitwise): shifts, bitwise logic,
bit counts (population_count, clz), bitcast_convert_type (integer-valued, staged through keys
that depend on the row's input: tests/rules/random/traced_keys.py), nextafter, and fma."""
import numpy as np

from fxad.rules import ops

from ..common import SHAPES_UNARY, Row, floats, row_tests, unary_rows
from ..random.traced_keys import as_float, words

TABLE = unary_rows([  # (name, fn, domain)
    ("shift_left", lambda x: as_float(ops.shift_left(words(x)[0], np.uint32(3)), x),
     floats(-2, 2)),
    ("shift_right_logical", lambda x: as_float(ops.shift_right_logical(words(x)[0],
                                                                       np.uint32(5)), x),
     floats(-2, 2)),
    ("shift_right_arithmetic", lambda x: as_float(ops.shift_right_arithmetic(
        words(x)[0], np.uint32(5)), x), floats(-2, 2)),
    ("population_count", lambda x: as_float(ops.population_count(words(x)[0]), x),
     floats(-2, 2)),
    ("clz", lambda x: as_float(ops.clz(ops.shift_right_logical(*words(x))), x), floats(-2, 2)),
    ("bitwise_and", lambda x: as_float(ops.bitwise_and(*words(x)), x), floats(-2, 2)),
    ("bitwise_or", lambda x: as_float(ops.bitwise_or(*words(x)), x), floats(-2, 2)),
    ("bitwise_xor", lambda x: as_float(ops.bitwise_xor(*words(x)), x), floats(-2, 2)),
    ("bitwise_not", lambda x: as_float(ops.bitwise_not(words(x)[0]), x), floats(-2, 2)),
    ("bitcast_convert_type", lambda x: as_float(ops.bitcast_convert_type(
        words(x)[0], np.int32) // 2 + 2 ** 30, x), floats(-2, 2)),
    ("nextafter", lambda x: ops.nextafter(x, 10.0), floats(-2, 2)),
], SHAPES_UNARY, rtol=0, atol=0) + [
    Row("fma", ops.fma, s, floats(-2, 2), rtol=0, atol=0)
    for s in [[(3,), (3,), (3,)], [(2, 3), (3,), ()], [(), (), ()]]]
test_row = row_tests(TABLE)

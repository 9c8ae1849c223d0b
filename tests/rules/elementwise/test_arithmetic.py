"""Rule table: elementwise arithmetic (fxad.rules.elementwise.arithmetic): the linear
operations, add_any, dtype conversion, select, and complex parts."""
import numpy as np
import pytest

import fxad.numpy as fnp
from fxad import lax
from fxad.rules.elementwise.arithmetic import add_any

from ..common import (Row, away_from_zero, binary_rows, bools, floats, ints, no_ties, row_tests,
                      unary_rows)

UNARY = [  # (name, function, domain)
    ("neg", fnp.negative, floats(-2, 2)),
    ("convert_element_type", lambda x: lax.convert_element_type(x, np.float32)
     .astype(np.float64) * 0 + x, floats(-2, 2)),
]

BINARY = [
    ("add", fnp.add, floats(-2, 2)),
    ("sub", fnp.subtract, floats(-2, 2)),
    ("mul", fnp.multiply, floats(-2, 2)),
    ("div", fnp.divide, away_from_zero(0.5, 2)),
    ("select", lambda x, y: fnp.where(x > y, x * y, fnp.sin(y)), floats(-2, 2)),
    # complex intermediates between real inputs and outputs: complex, conj, real, imag
    ("complex", lambda x, y: lax.real(lax.complex(x, y) ** 2) * x
     + lax.imag(lax.conj(lax.complex(x, y)) * lax.complex(y, x) ** 2), floats(-2, 2)),
]

M, V = (4, 5), (5,)
TABLE = unary_rows(UNARY) + binary_rows(BINARY, assume=no_ties) + [
    # operands of one shape (no broadcasting): the cotangent sum of the backward pass
    *[Row("add_any", lambda x, y: add_any(x, y) * x, [s, s], floats(-2, 2))
      for s in [(), (3,), (2, 3)]],
    Row("select_lax", lax.select, [M, M, M], [bools(), floats(-2, 2), floats(-2, 2)],
        grad=False),
    Row("select_broadcast", fnp.where, [M, V, ()], [bools(), floats(-2, 2), floats(-2, 2)],
        grad=False),
    Row("complex_values", lambda x, y: lax.complex(x, y) * lax.complex(y, 1.0), [M, V],
        grad=False),
    Row("real-imag-conj", lambda x, y: lax.real(lax.conj(lax.complex(x, y)) ** 2)
        + lax.imag(lax.complex(y, x) ** 3), [M, M], grad=False),
    Row("convert_to_f32", lambda x: lax.convert_element_type(x, np.float32), [M], grad=False),
    Row("convert_to_int", lambda x: lax.convert_element_type(x, np.int32), [M], grad=False),
    Row("convert_bool_to_f64", lambda x: lax.convert_element_type(x, np.float64), [M],
        bools(), grad=False),
    Row("convert_int_to_f64", lambda x: lax.convert_element_type(x, np.float64), [M],
        ints(-5, 5), grad=False),
    Row("neg_int", fnp.negative, [M], ints(-5, 5), grad=False),
]
test_row = row_tests(TABLE)


_OPERANDS = [np.float64(1.5), np.float32(-2.5), np.float16(0.5), np.int64(3), np.int32(-7),
             np.uint8(200), np.bool_(True), np.complex128(1 - 2j), np.array(2.5),
             np.array([1.0, 0.0], np.float32), np.array([3, 0]), True, 4, -0.0, 2j]


@pytest.mark.parametrize("name, ufunc", [("add", np.add), ("sub", np.subtract),
                                          ("mul", np.multiply), ("div", np.true_divide)])
def test_arithmetic_impls_agree_with_the_ufunc_for_every_operand_type(name, ufunc):
    """add/sub/mul/div take NumPy's scalar-math path for NumPy scalars (`arithmetic` in
    fxad/rules/elementwise/arithmetic.py); type and value must be exactly the ufunc's, for
    every pair of types."""
    from fxad.rules.elementwise import arithmetic
    impl = getattr(arithmetic, name + "_p").impl
    for x in _OPERANDS:
        for y in _OPERANDS:
            if name == "sub" and np.asarray(x).dtype == bool and np.asarray(y).dtype == bool:
                continue  # NumPy refuses bool - bool either way
            with np.errstate(all="ignore"):
                ours, ref = impl(x, y), ufunc(x, y)
            assert type(ours) is type(ref), (x, y)
            assert np.asarray(ours).dtype == np.asarray(ref).dtype, (x, y)
            np.testing.assert_array_equal(ours, ref, err_msg=f"{x!r} {name} {y!r}")

"""Rule table: NumPy's math ufuncs as primitives (fxad.rules.elementwise.ufunc_math): exp2,
log2, log10, float_power, hypot, each NumPy's own ufunc as its impl."""
import fxad
import fxad.numpy as fnp
from fxad import lax

from ..common import MAT, VEC, Row, away_from_zero, floats, grid, ints, row_tests

TABLE = [
    Row("exp2", fnp.exp2, [(2, 3)], grid(-2, 2), unique=True),
    Row("log2", lambda x: fnp.log2(x * x + 1.0), [(2, 3)], grid(-2, 2), unique=True),
    Row("log10", lambda x: fnp.log10(x * x + 1.0), [(2, 3)], grid(-2, 2), unique=True),
    Row("hypot", lambda x, y: fnp.hypot(x + 3.0, y), [(2, 3), (3,)], grid(-2, 2),
        unique=True),  # (kink at the origin)
    Row("float_power", lambda x: fnp.float_power(x * x + 0.5, 1.5), [(3,)], grid(-2, 2),
        unique=True),
    Row("float_power_lax", lax.float_power, [MAT, VEC], [floats(0.5, 3), floats(-2, 2)]),
    Row("hypot_broadcast", fnp.hypot, [VEC, MAT], away_from_zero(0.5, 2)),
    Row("log10_positive", fnp.log10, [MAT], floats(0.5, 3), grad=False),
    Row("gcd-lcm", lambda x, y: fnp.gcd(x, y) + fnp.lcm(x, y), [MAT, VEC],
        ints(-30, 30), grad=False),
]
test_row = row_tests(TABLE)


def test_hypot_derivative_at_the_origin_is_finite():
    assert fxad.grad(lambda x: fnp.hypot(x, 0.0 * x))(0.0) == 0.0

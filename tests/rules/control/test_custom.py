"""Rule table: the custom-rule primitives (fxad.rules.control.custom): custom_jvp_call,
custom_vjp_call and custom_lin (the linear half of custom_vjp_call's JVP, which every
custom_vjp row runs). tests/api/test_custom_rules.py checks the user-facing decorators."""
import fxad
import fxad.numpy as fnp

from ..common import Row, floats, row_tests


@fxad.custom_jvp
def _softplus(x):
    return fnp.logaddexp(x, 0.0)


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), t * fxad.nn.sigmoid(x)


@fxad.custom_vjp
def _cube(x):
    return x ** 3


_cube.defvjp(lambda x: (x ** 3, (x,)), lambda res, ct: (3.0 * res[0] ** 2 * ct,))

TABLE = [Row(n, f, [s], floats(-2, 2)) for n, f in [
    ("custom_jvp_call", lambda x: _softplus(x) * x),
    ("custom_vjp_call", lambda x: _cube(x) * fnp.sin(x)),
] for s in [(), (3,)]]
test_row = row_tests(TABLE)

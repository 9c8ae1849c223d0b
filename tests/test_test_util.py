"""fxad.test_util.check_grads: it catches derivatives off by 0.1% at first and second order,
in each mode, and reverse-only checking (JAX's modes=("rev",)) needs no forward mode."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.test_util import check_grads


def _scaled_identity(scale):
    """x -> x whose reverse rule multiplies by `scale` (1: right)."""
    @fxad.custom_vjp
    def f(x):
        return x
    f.defvjp(lambda x: (x, None), lambda _, g: (g * scale,))
    return f


def _opaque_square(helper):
    """x -> x**2 computed by plain NumPy (forward mode cannot trace it), its reverse rule
    2 x g written with `helper` (a custom_vjp identity) around x."""
    @fxad.custom_vjp
    def f(x):
        return fxad.pure_callback(lambda v: np.asarray(v * v), fxad.ShapeDtypeStruct((), float),
                                  x)
    f.defvjp(lambda x: (f(x), x), lambda x, g: (2.0 * helper(x) * g,))
    return f


@pytest.mark.parametrize("modes", [("rev",), ("fwd", "rev")])
def test_catches_a_first_order_reverse_rule_off_by_a_tenth_of_a_percent(modes):
    f = _scaled_identity(1.001)
    with pytest.raises(AssertionError, match="vjp vs finite differences"):
        check_grads(lambda x: fnp.sin(f(x)), (0.7,), order=1, modes=modes)
    check_grads(lambda x: fnp.sin(_scaled_identity(1.0)(x)), (0.7,), order=2, modes=modes)


def test_catches_a_second_order_error_in_reverse_only_mode():
    # first derivatives right; the derivative of the reverse rule is off by 0.1%
    f = _opaque_square(_scaled_identity(1.001))
    check_grads(f, (1.3,), order=1, modes=("rev",))
    with pytest.raises(AssertionError, match=r"\(order 2\)"):
        check_grads(f, (1.3,), order=2, modes=("rev",))
    check_grads(_opaque_square(_scaled_identity(1.0)), (1.3,), order=2, modes=("rev",))


def test_both_modes_check_forward_against_reverse():
    # forward mode (the JVP of fwd: x -> x) and reverse mode (g -> 1.001 g) disagree; each
    # alone is within finite-difference noise of the other only at 0.1%: caught
    f = _scaled_identity(1.001)
    with pytest.raises(AssertionError):
        check_grads(f, (np.array([0.5, 2.0]),), order=1, modes=("fwd", "rev"))


def test_reverse_only_checking_needs_no_forward_mode():
    # a reverse rule that applies a custom_vjp function to the cotangent, after an opaque
    # forward computation: forward mode cannot differentiate this; reverse mode can
    def double(helper):
        @fxad.custom_vjp
        def f(x):
            return fxad.pure_callback(lambda v: np.asarray(2.0 * v),
                                      fxad.ShapeDtypeStruct((), float), x)
        f.defvjp(lambda x: (f(x), None), lambda _, g: (helper(g) * 2.0,))
        return f
    check_grads(double(_scaled_identity(1.0)), (1.0,), order=2, modes=("rev",))

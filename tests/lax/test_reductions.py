"""lax.reduce, JAX's generic reduction, on the monoids fxad recognizes: values against NumPy,
dtypes kept, derivatives (the initial value's too), jit and vmap, and the errors for what is
not supported."""
import operator

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.errors import FxadValueError
from fxad.test_util import check_grads

X = np.arange(1.0, 25.0).reshape(2, 3, 4) / 7.0
I8 = np.array([[100, 90, -128], [127, 1, -3]], np.int8)
BOOL = np.array([[True, False, True], [True, True, True]])

# (computation, init, NumPy's reduction along axes)
MONOIDS = [
    (lax.add, 0.0, np.sum), (operator.add, 0.0, np.sum), (lambda a, b: a + b, 0.0, np.sum),
    (lax.mul, 1.0, np.prod), (operator.mul, 1.0, np.prod),
    (lax.max, -np.inf, np.max), (lambda a, b: lax.max(a, b), -np.inf, np.max),
    (lax.min, np.inf, np.min), (fnp.minimum, np.inf, np.min),
]


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
@pytest.mark.parametrize("k", range(len(MONOIDS)))
def test_reduce_of_a_monoid_matches_numpy(k, mode):
    comp, init, ref = MONOIDS[k]
    for dims in [(0,), (1, 2), (0, 1, 2), (), (2, 0)]:
        def f(x):
            return lax.reduce(x, init, comp, dims)
        if mode == "vmap":  # over the first axis: the dimensions shift by one
            g = fxad.vmap(lambda x: lax.reduce(x, init, comp, tuple(d - 1 for d in dims if d)))
            got, want = g(X), np.stack([ref(x, axis=tuple(d - 1 for d in dims if d))
                                        for x in X])
        else:
            got = (fxad.jit(f) if mode == "jit" else f)(X)
            want = ref(X, axis=dims)
        assert got.dtype == X.dtype and got.shape == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_reduce_derivatives_include_the_initial_value():
    for comp, init, _ in MONOIDS[:1] + MONOIDS[3:4] + MONOIDS[5:6] + MONOIDS[7:8]:
        check_grads(lambda x: lax.reduce(x, init, comp, (1,)), (X,), order=2)
    # a non-identity initial value is combined once, as XLA's reduce does, and differentiated
    np.testing.assert_allclose(lax.reduce(X, 5.0, lax.add, (0,)), 5.0 + X.sum(0), rtol=1e-15)
    np.testing.assert_allclose(lax.reduce(X, 2.0, lax.max, (0, 1, 2)), 3.0 + 3.0 / 7)
    check_grads(lambda x, c: lax.reduce(x, c, lax.mul, (0, 2)), (X, 1.3), order=2)


def test_reduce_keeps_integer_and_boolean_dtypes():
    got = lax.reduce(I8, np.int8(0), lax.add, (1,))
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, I8.sum(1, dtype=np.int8))  # wraps as JAX's int8 sum
    np.testing.assert_array_equal(lax.reduce(I8, np.int8(-128), lax.max, (0,)), I8.max(0))
    np.testing.assert_array_equal(lax.reduce(I8, np.int8(127), lax.min, (0, 1)), I8.min())
    for comp in (lax.bitwise_and, lax.logical_and):
        np.testing.assert_array_equal(lax.reduce(BOOL, True, comp, (1,)), BOOL.all(1))
    for comp in (lax.bitwise_or, operator.or_):
        np.testing.assert_array_equal(lax.reduce(BOOL, False, comp, (0,)), BOOL.any(0))
    np.testing.assert_array_equal(fxad.jit(lambda b: lax.reduce(b, True, lax.bitwise_and, (0,)))(
        BOOL), BOOL.all(0))


def test_reduce_refuses_what_it_does_not_recognize():
    with pytest.raises(FxadValueError, match="recognizes add, mul, max and min"):
        lax.reduce(X, 0.0, lambda a, b: a + 2 * b, (0,))
    with pytest.raises(FxadValueError, match="recognizes"):
        lax.reduce(X, 0.0, lambda a, b: a, (0,))
    with pytest.raises(FxadValueError, match="and/or \\(bool\\)"):
        lax.reduce(I8, np.int8(-1), lax.bitwise_and, (0,))  # integer bitwise and: not provided
    with pytest.raises(FxadValueError, match="one operand at a time"):
        lax.reduce((X, X), (0.0, 0.0), lambda a, b: (a[0] + b[0], a[1] + b[1]), (0,))
    with pytest.raises(FxadValueError, match="out of range"):
        lax.reduce(X, 0.0, lax.add, (3,))

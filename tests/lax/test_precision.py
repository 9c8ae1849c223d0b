"""JAX's `precision=` (checked, ignored on the CPU) and `preferred_element_type=` (honoured:
the result's type, accumulated in it) on every product and convolution; `lax.Precision`;
`fxad.typing`. Values against NumPy computed in the expected type."""
import inspect
import typing

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
import fxad.scipy.signal as fsig
import fxad.typing as ftyping
from fxad import lax
from fxad.test_util import check_grads

RNG = np.random.default_rng(11)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 2))
V = RNG.standard_normal(4)
X4 = RNG.standard_normal((2, 3, 6, 6))   # NCHW
W4 = RNG.standard_normal((4, 3, 3, 3))   # OIHW

# (name, function of (precision, preferred_element_type), NumPy reference in float64)
PRODUCTS = [
    ("lax.dot", lambda p, t: lax.dot(A, B, precision=p, preferred_element_type=t), A @ B),
    ("lax.dot_general", lambda p, t: lax.dot_general(A, B, (((1,), (0,)), ((), ())), p, t),
     A @ B),
    ("lax.batch_matmul", lambda p, t: lax.batch_matmul(A[None], B[None], p)[0], A @ B),
    ("numpy.dot", lambda p, t: fnp.dot(A, B, precision=p, preferred_element_type=t), A @ B),
    ("numpy.matmul", lambda p, t: fnp.matmul(A, B, precision=p, preferred_element_type=t),
     A @ B),
    ("numpy.tensordot", lambda p, t: fnp.tensordot(A, B, 1, precision=p,
                                                   preferred_element_type=t), A @ B),
    ("numpy.inner", lambda p, t: fnp.inner(A, B.T, precision=p, preferred_element_type=t),
     A @ B),
    ("numpy.vdot", lambda p, t: fnp.vdot(A[0], V, precision=p, preferred_element_type=t),
     A[0] @ V),
    ("numpy.einsum", lambda p, t: fnp.einsum("ij,jk->ik", A, B, precision=p,
                                             preferred_element_type=t), A @ B),
    ("numpy.vecdot", lambda p, t: fnp.vecdot(A, V, precision=p, preferred_element_type=t),
     A @ V),
    ("numpy.linalg.vecdot", lambda p, t: fnp.linalg.vecdot(A, V, precision=p,
                                                          preferred_element_type=t), A @ V),
    ("numpy.linalg.matmul", lambda p, t: fnp.linalg.matmul(A, B, precision=p,
                                                          preferred_element_type=t), A @ B),
    ("numpy.linalg.tensordot", lambda p, t: fnp.linalg.tensordot(
        A, B, axes=1, precision=p, preferred_element_type=t), A @ B),
    ("numpy.linalg.multi_dot", lambda p, t: fnp.linalg.multi_dot([A, B, B.T], precision=p),
     A @ B @ B.T),
    ("numpy.convolve", lambda p, t: fnp.convolve(V, A[0], precision=p,
                                                 preferred_element_type=t),
     np.convolve(V, A[0])),
    ("numpy.correlate", lambda p, t: fnp.correlate(V, A[0], "full", precision=p,
                                                   preferred_element_type=t),
     np.correlate(V, A[0], "full")),
    ("lax.conv", lambda p, t: lax.conv(X4, W4, (1, 1), "SAME", precision=p,
                                       preferred_element_type=t),
     np.asarray(lax.conv(X4, W4, (1, 1), "SAME"))),
    ("lax.conv_general_dilated", lambda p, t: lax.conv_general_dilated(
        X4, W4, (2, 1), "VALID", rhs_dilation=(1, 2), precision=p,
        preferred_element_type=t),
     np.asarray(lax.conv_general_dilated(X4, W4, (2, 1), "VALID", rhs_dilation=(1, 2)))),
    ("lax.conv_transpose", lambda p, t: lax.conv_transpose(
        X4.transpose(0, 2, 3, 1), W4.transpose(2, 3, 1, 0), (2, 2), "SAME", precision=p,
        preferred_element_type=t),
     np.asarray(lax.conv_transpose(X4.transpose(0, 2, 3, 1), W4.transpose(2, 3, 1, 0),
                                   (2, 2), "SAME"))),
    ("lax.conv_general_dilated_patches", lambda p, t: lax.conv_general_dilated_patches(
        X4, (2, 2), (1, 1), "VALID", precision=p, preferred_element_type=t),
     np.asarray(lax.conv_general_dilated_patches(X4, (2, 2), (1, 1), "VALID"))),
    ("scipy.signal.convolve", lambda p, t: fsig.convolve(V, A[0], precision=p),
     np.convolve(V, A[0])),
    ("scipy.signal.correlate2d", lambda p, t: fsig.correlate2d(A, B, precision=p),
     np.asarray(fsig.correlate2d(A, B))),
]
PRECISIONS = [None, lax.Precision.HIGHEST, "high", "fastest", "bfloat16_3x",
              ("highest", "default"), (lax.Precision.HIGH, lax.Precision.DEFAULT)]


@pytest.mark.parametrize("name, fn, want", PRODUCTS, ids=[p[0] for p in PRODUCTS])
@pytest.mark.parametrize("precision", PRECISIONS, ids=str)
def test_precision_is_accepted_and_changes_nothing(name, fn, want, precision):
    got = fn(precision, None)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert got.dtype == np.float64


@pytest.mark.parametrize("name, fn, want", PRODUCTS, ids=[p[0] for p in PRODUCTS])
@pytest.mark.parametrize("bad", ["higest", "F32_F32_F32", 3, ("high",)], ids=str)
def test_unknown_precision_is_an_error_naming_the_choices(name, fn, want, bad):
    with pytest.raises(ValueError, match="precision must be None, a lax.Precision"):
        fn(bad, None)


def test_precision_enum():
    P = lax.Precision
    assert [m.name for m in P] == ["DEFAULT", "HIGH", "HIGHEST"]
    assert [m.value for m in P] == [0, 1, 2]
    for alias, member in [("default", P.DEFAULT), ("fastest", P.DEFAULT),
                          ("bfloat16", P.DEFAULT), ("high", P.HIGH), ("bfloat16_3x", P.HIGH),
                          ("tensorfloat32", P.HIGH), ("highest", P.HIGHEST),
                          ("float32", P.HIGHEST), (2, P.HIGHEST)]:
        assert P(alias) is member
    assert repr(P.HIGH) == "Precision.HIGH" and str(P.HIGHEST) == "HIGHEST"
    with pytest.raises(ValueError):
        P("medium")


PREFERRED = [n for n in PRODUCTS if "preferred_element_type" in inspect.signature(
    {"lax.dot": lax.dot, "lax.dot_general": lax.dot_general, "numpy.dot": fnp.dot,
     "numpy.matmul": fnp.matmul, "numpy.tensordot": fnp.tensordot, "numpy.inner": fnp.inner,
     "numpy.vdot": fnp.vdot, "numpy.einsum": fnp.einsum, "numpy.vecdot": fnp.vecdot,
     "numpy.linalg.vecdot": fnp.linalg.vecdot, "numpy.linalg.matmul": fnp.linalg.matmul,
     "numpy.linalg.tensordot": fnp.linalg.tensordot, "numpy.convolve": fnp.convolve,
     "numpy.correlate": fnp.correlate, "lax.conv": lax.conv,
     "lax.conv_general_dilated": lax.conv_general_dilated,
     "lax.conv_transpose": lax.conv_transpose,
     "lax.conv_general_dilated_patches": lax.conv_general_dilated_patches,
     }.get(n[0], len)).parameters]


def test_every_preferred_product_is_tested():
    assert len(PREFERRED) == 18


@pytest.mark.parametrize("name, fn, want", PREFERRED, ids=[p[0] for p in PREFERRED])
def test_preferred_element_type_sets_the_result_type(name, fn, want):
    if name.startswith("lax.conv"):  # JAX's stricter rule for convolutions: float to float
        with pytest.raises(TypeError, match="does not fit"):
            fn(None, np.complex128)
        got = fn(None, np.longdouble)
        assert got.dtype == np.longdouble
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-12, atol=1e-12)
        return
    got = fn(None, np.complex128)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_preferred_accumulates_in_the_preferred_type():
    a = (RNG.integers(-128, 128, (5, 7))).astype(np.int8)
    b = (RNG.integers(-128, 128, (7, 3))).astype(np.int8)
    exact = a.astype(np.int64) @ b.astype(np.int64)   # overflows int8, fits int32
    assert np.abs(exact).max() > 127
    for f in [lambda t: lax.dot(a, b, preferred_element_type=t),
              lambda t: fnp.matmul(a, b, preferred_element_type=t),
              lambda t: fnp.einsum("ij,jk", a, b, preferred_element_type=t),
              lambda t: fnp.tensordot(a, b, 1, preferred_element_type=t),
              lambda t: fxad.jit(lambda a, b: fnp.dot(a, b, preferred_element_type=t))(a, b)]:
        got = f(np.int32)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, exact)
        got = f(np.float64)                      # integers to float: allowed, as in JAX
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, exact)
    # float32 operands accumulated in float64: the float64 product of the same values
    a32, b32 = A.astype(np.float32), B.astype(np.float32)
    got = fnp.dot(a32, b32, preferred_element_type=np.float64)
    np.testing.assert_array_equal(got, a32.astype(np.float64) @ b32.astype(np.float64))
    x = np.array([1e8, 1.0, -1e8], np.float32)
    assert fnp.dot(x, np.ones(3, np.float32), preferred_element_type=np.float64) == 1.0
    i = np.array([[2, -3]], np.int8).reshape(1, 1, 1, 2)
    got = lax.conv(np.full((1, 1, 1, 4), 100, np.int8), i, (1, 1), "VALID",
                   preferred_element_type=np.int32)
    np.testing.assert_array_equal(got, np.full((1, 1, 1, 3), -100, np.int32))


def test_narrowing_preferred_converts_the_result():
    # float64 operands, float32 result: computed in float64, then rounded (XLA's order)
    x = np.array([1e8 + 1, -1e8])
    got = lax.dot(x, np.ones(2), preferred_element_type=np.float32)
    assert got.dtype == np.float32 and got == 1.0
    got = fnp.matmul(A, B, preferred_element_type=np.float32)
    np.testing.assert_array_equal(got, (A @ B).astype(np.float32))
    c = A + 1j * A[::-1]
    got = fnp.dot(c, B, preferred_element_type=np.float64)   # complex to real: the real part
    np.testing.assert_allclose(got, (c @ B).real, rtol=1e-13)


@pytest.mark.parametrize("fn, match", [
    (lambda: lax.dot(np.ones(2, np.int32), np.ones(2, np.int32),
                     preferred_element_type=np.int8), "narrower"),
    (lambda: fnp.dot(np.ones(2, np.complex128), np.ones(2),
                     preferred_element_type=np.float32), "narrower"),
    (lambda: fnp.matmul(A, B, preferred_element_type="not a dtype"), "not a dtype"),
    (lambda: fnp.matmul(A, B, preferred_element_type=np.str_), "not a number type"),
    (lambda: lax.conv(X4, W4, (1, 1), "SAME", preferred_element_type=np.int32),
     "does not fit"),
    (lambda: lax.conv(X4, W4, (1, 1), "SAME", preferred_element_type=np.float32),
     "narrower"),
])
def test_impossible_preferred_types_are_errors(fn, match):
    with pytest.raises(TypeError, match=match):
        fn()


def test_conv_allows_integers_to_float_as_jax_does():
    x = np.arange(16, dtype=np.int32).reshape(1, 1, 4, 4)
    w = np.ones((1, 1, 2, 2), np.int32)
    got = lax.conv(x, w, (1, 1), "VALID", preferred_element_type=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, lax.conv(x, w, (1, 1), "VALID").astype(np.float32))


def test_preferred_derivatives_vmap_jit():
    a32, b32 = A.astype(np.float32), B.astype(np.float32)

    def f(a, b):
        return fnp.sum(fnp.matmul(a, b, preferred_element_type=np.float64) ** 2)
    ga, gb = fxad.grad(f, (0, 1))(a32, b32)
    assert ga.dtype == np.float32 and gb.dtype == np.float32
    p = a32.astype(np.float64) @ b32.astype(np.float64)
    np.testing.assert_allclose(ga, 2 * p @ b32.T.astype(np.float64), rtol=1e-6)
    check_grads(lambda a, b: lax.dot(a, b, preferred_element_type=np.complex128), (A, B),
                order=2)
    check_grads(lambda a, b: fnp.einsum("ij,jk", a + 1j * a, b, precision="highest",
                                        preferred_element_type=np.float64), (A, B), order=2)
    batched = fxad.vmap(lambda a: fnp.dot(a, B, preferred_element_type=np.float32))(
        np.stack([A, 2 * A]))
    np.testing.assert_array_equal(batched, np.stack([(A @ B).astype(np.float32),
                                                     (2 * A @ B).astype(np.float32)]))
    jitted = fxad.jit(lambda a: fnp.vdot(a, a, preferred_element_type=np.float32))(A[0])
    assert jitted.dtype == np.float32 and jitted == np.float32(A[0] @ A[0])


def test_vdot_conjugates_its_first_argument():
    a = np.array([1 + 2j, 3j, -1.0]), np.array([2 - 1j, 1 + 1j, 0.5j])
    np.testing.assert_allclose(fnp.vdot(*a), np.vdot(*a), rtol=1e-15)
    np.testing.assert_allclose(fnp.vdot(a[0].reshape(3, 1), a[1]), np.vdot(*a), rtol=1e-15)
    np.testing.assert_allclose(fxad.jit(fnp.vdot)(*a), np.vdot(*a), rtol=1e-15)
    np.testing.assert_allclose(fnp.vdot(A, A), np.vdot(A, A), rtol=1e-15)


def test_typing_names():
    assert np.ndarray in typing.get_args(ftyping.ArrayLike)
    assert fxad.Array in typing.get_args(ftyping.ArrayLike)
    assert {str, np.dtype} <= set(typing.get_args(ftyping.DTypeLike))

    def annotated(x: ftyping.ArrayLike, dtype: ftyping.DTypeLike = None) -> fxad.Array:
        return fnp.asarray(x, dtype)
    assert annotated([1, 2], np.float32).dtype == np.float32

"""More NumPy names (fxad/numpy/more.py, poly.py, index_tricks.py): values against NumPy,
derivatives where they exist, and staging where the output shape allows it."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.test_util import check_grads

RNG = np.random.default_rng(5)


def test_index_arithmetic():
    dims = (3, 4, 5)
    idx = (np.array([0, 2, 1]), np.array([3, 0, 1]), np.array([4, 4, 0]))
    np.testing.assert_array_equal(fnp.ravel_multi_index(idx, dims), np.ravel_multi_index(idx, dims))
    np.testing.assert_array_equal(fxad.jit(lambda *i: fnp.ravel_multi_index(i, dims))(*idx),
                                  np.ravel_multi_index(idx, dims))
    wrapped = (np.array([-1, 5]), np.array([9, -2]), np.array([0, 7]))
    np.testing.assert_array_equal(fnp.ravel_multi_index(wrapped, dims, mode="wrap"),
                                  np.ravel_multi_index(wrapped, dims, mode="wrap"))
    np.testing.assert_array_equal(fnp.ravel_multi_index(wrapped, dims, mode="clip"),
                                  np.ravel_multi_index(wrapped, dims, mode="clip"))
    with pytest.raises(ValueError, match="invalid entry"):
        fnp.ravel_multi_index((np.array([3]), np.array([0]), np.array([0])), dims)
    flat = np.array([0, 17, 59, 33])
    for got, want in zip(fxad.jit(lambda f: fnp.unravel_index(f, dims))(flat),
                         np.unravel_index(flat, dims)):
        np.testing.assert_array_equal(got, want)


def test_poly_roots_and_division():
    p = np.array([2.0, -3.0, -11.0, 6.0])  # 2 (x - 3)(x + 2)(x - 1/2)
    np.testing.assert_allclose(np.sort_complex(fnp.roots(p)), np.sort_complex(np.roots(p)),
                               rtol=1e-12)
    np.testing.assert_allclose(fnp.roots(np.array([0.0, 0.0, 1.0, -2.0, 0.0])),
                               np.roots([0.0, 0.0, 1.0, -2.0, 0.0]).astype(complex), atol=1e-14)
    # d root / d coefficients, against finite differences (distinct real roots)
    check_grads(lambda c: fnp.real(fnp.sort_complex(fnp.roots(c, strip_zeros=False))), (p,),
                order=1)
    with pytest.raises(fxad.errors.ConcretizationError, match="strip_zeros=False"):
        fxad.jit(fnp.roots)(p)
    np.testing.assert_allclose(fxad.jit(lambda c: fnp.roots(c, strip_zeros=False))(p),
                               fnp.roots(p), rtol=1e-12)
    np.testing.assert_allclose(fnp.poly(np.array([3.0, -2.0, 0.5])), p / 2, rtol=1e-13)
    a = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(fnp.poly(a), np.poly(a), rtol=1e-10)
    q, r = fnp.polydiv(p, np.array([1.0, -3.0]))
    wq, wr = np.polydiv(p, [1.0, -3.0])
    np.testing.assert_allclose(q, wq, rtol=1e-13)
    np.testing.assert_allclose(r, wr, atol=1e-12)
    check_grads(lambda u, v: fnp.polydiv(u, v)[0], (p, np.array([1.0, -3.0])), order=2)
    np.testing.assert_allclose(fnp.polysub(p, [1.0, 1.0]), np.polysub(p, [1.0, 1.0]))


def test_set_operations_gather_from_the_inputs():
    a, b = np.array([3.0, 1.0, 2.0, 3.0, 5.0]), np.array([5.0, 4.0, 3.0])
    np.testing.assert_array_equal(fnp.union1d(a, b), np.union1d(a, b))
    np.testing.assert_array_equal(fnp.intersect1d(a, b), np.intersect1d(a, b))
    np.testing.assert_array_equal(fnp.setdiff1d(a, b), np.setdiff1d(a, b))
    np.testing.assert_array_equal(fnp.setxor1d(a, b), np.setxor1d(a, b))
    g = fxad.grad(lambda v: fnp.sum(fnp.intersect1d(v, b) ** 2))(a)
    np.testing.assert_array_equal(g, [6.0, 0, 0, 0, 10.0])  # first occurrences
    vals, counts = fnp.unique_counts(a)
    np.testing.assert_array_equal(counts, np.unique_counts(a).counts)
    np.testing.assert_array_equal(fnp.unique_values(a), np.unique_values(a))


def test_shapes_and_puts():
    x = np.arange(6.0)
    np.testing.assert_array_equal(fnp.resize(x, (4, 4)), np.resize(x, (4, 4)))
    np.testing.assert_array_equal(fnp.put(x, np.array([0, 7]), np.array([9.0, 8.0]), mode="wrap"),
                                  [9, 8, 2, 3, 4, 5])
    a = np.arange(12.0).reshape(3, 4)
    i = np.array([[1], [0], [3]])
    want = a.copy()
    np.put_along_axis(want, i, -1.0, axis=1)
    np.testing.assert_array_equal(fnp.put_along_axis(a, i, -1.0, axis=1), want)
    with pytest.raises(ValueError, match="inplace=False"):
        fnp.put_along_axis(a, i, -1.0, axis=1, inplace=True)
    with pytest.raises(ValueError, match="inplace=False"):
        fnp.fill_diagonal(a, 0.0, inplace=True)
    z = np.array([1 + 2j, 1 - 1j, -1 + 0j])
    np.testing.assert_array_equal(fnp.sort_complex(z), np.sort_complex(z))
    zz = np.array([[2 + 1j, 1 - 1j, 1 + 3j], [-1 + 0j, 5 - 2j, -1 - 1j]])  # rows sort apart
    np.testing.assert_array_equal(fnp.sort_complex(zz), np.sort_complex(zz))
    np.testing.assert_array_equal(fnp.sort_complex(zz.real), np.sort_complex(zz.real))
    np.testing.assert_array_equal(fnp.trim_zeros(np.array([0.0, 0, 1, 2, 0])), [1.0, 2.0])
    np.testing.assert_array_equal(fnp.compress(np.array([1, 0, 1]), a, axis=0), a[[0, 2]])
    np.testing.assert_array_equal(fnp.extract(a > 6, a), a[a > 6])
    np.testing.assert_array_equal(fnp.concat([x, x]), np.concatenate([x, x]))
    np.testing.assert_array_equal(fnp.permute_dims(a, (1, 0)), a.T)
    np.testing.assert_array_equal(fnp.apply_over_axes(fnp.sum, a, [0, 1]),
                                  np.apply_over_axes(np.sum, a, [0, 1]))
    np.testing.assert_array_equal(fnp.fromfunction(lambda i, j: i + 2 * j, (2, 3)),
                                  np.fromfunction(lambda i, j: i + 2 * j, (2, 3)))


def test_index_tricks():
    np.testing.assert_array_equal(fnp.r_[0:4, 7, np.ones(2)], np.r_[0:4, 7, np.ones(2)])
    np.testing.assert_array_equal(fnp.r_["1", np.ones((2, 1)), np.zeros((2, 2))],
                                  np.r_["1", np.ones((2, 1)), np.zeros((2, 2))])
    np.testing.assert_array_equal(fxad.jit(lambda x: fnp.r_["0,2", x, x])(np.ones(3)),
                                  np.r_["0,2", np.ones(3), np.ones(3)])
    np.testing.assert_array_equal(fxad.jit(lambda x: fnp.c_[x, 2 * x])(np.ones(3)),
                                  np.c_[np.ones(3), 2 * np.ones(3)])
    a = np.arange(12.0).reshape(3, 4)
    rows, cols = np.array([0, 2]), np.array([1, 3])
    np.testing.assert_array_equal(a[fnp.ix_(rows, cols)], a[np.ix_(rows, cols)])
    np.testing.assert_array_equal(fxad.jit(lambda r, c: fnp.asarray(a)[fnp.ix_(r, c)])(rows, cols),
                                  a[np.ix_(rows, cols)])
    assert fnp.s_[1:2] == np.s_[1:2] and fnp.mgrid is np.mgrid
    with pytest.raises(ValueError, match="matrix directives"):
        fnp.r_["r", fxad.numpy.ones(2)]


M6 = np.arange(6.0).reshape(2, 3)
CONCATENATOR_KEYS = [  # NumPy's r_/c_ rules: ndmin, trans1d (the third directive), weak numbers
    lambda m, x: m[x, x], lambda m, x: m[x, 0, x], lambda m, x: m[x, 1:3, 7.5],
    lambda m, x: m["0,2", x, x], lambda m, x: m["0,2,0", x, x], lambda m, x: m["1,2,0", x, x],
    lambda m, x: m["1,2", x, x], lambda m, x: m["-1", M6, x[:2, None] * M6],
    lambda m, x: m["0,3,1", x, x], lambda m, x: m[x, 0:1:3j], lambda m, x: m["0", M6, M6 * x],
    lambda m, x: m[2, x, np.int32(3)], lambda m, x: m[x.astype(np.float32), 1.5],
    lambda m, x: m[x[0], x[1]], lambda m, x: m["0,2,-2", x, M6], lambda m, x: m["0,3,-2", x, M6],
]


@pytest.mark.parametrize("name", ["r_", "c_"])
@pytest.mark.parametrize("k", range(len(CONCATENATOR_KEYS)))
def test_r_and_c_follow_numpy_for_traced_pieces(name, k):
    """fxad.numpy.r_/c_ with traced pieces: NumPy's shapes, dtypes and values (eager, jit,
    vmap against a loop), and a gradient; where NumPy refuses, so does fxad."""
    from fxad.test_util import check_grads
    key, x = CONCATENATOR_KEYS[k], np.array([1.0, 2.0, 3.0])
    f = lambda x: key(getattr(fnp, name), x)  # noqa: E731
    try:
        want = key(getattr(np, name), x)
    except ValueError:
        with pytest.raises(ValueError):
            fxad.jit(f)(x)
        return
    for got in (f(x), fxad.jit(f)(x)):
        got = np.asarray(got)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    xs = np.stack([x, 2 * x])
    np.testing.assert_array_equal(fxad.vmap(f)(xs), np.stack([f(v) for v in xs]))
    if want.dtype == np.float64:  # (the float32 row: values only)
        check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def test_predicates_dtypes_aliases():
    z = np.array([1.0, 2j])
    np.testing.assert_array_equal(fnp.iscomplex(z), np.iscomplex(z))
    np.testing.assert_array_equal(fnp.isreal(z), np.isreal(z))
    assert fnp.iscomplexobj(z) and fnp.isrealobj(np.ones(2)) and fnp.isscalar(1.0)
    assert fnp.array_equiv(np.ones(3), np.ones((2, 3))) and not fnp.array_equiv(np.ones(3),
                                                                                 np.ones(2))
    assert fnp.finfo(fnp.float32).eps == np.finfo(np.float32).eps
    assert fnp.issubdtype(fnp.float64, fnp.floating) and fnp.bool is np.bool
    # NumPy's scalar type names are NumPy's own types (so `x.dtype.type is fnp.T` holds)
    for name in ("byte", "short", "intc", "intp", "long", "longlong", "ubyte", "ushort",
                 "uintc", "uintp", "ulong", "ulonglong", "half", "single", "double",
                 "longdouble", "csingle", "cdouble", "clongdouble", "float32", "int8"):
        assert getattr(fnp, name) is getattr(np, name), name
    x = np.ones(3, fnp.longdouble)
    assert fxad.grad(lambda v: fnp.sum(v * v))(x).dtype == np.longdouble
    np.testing.assert_allclose(fnp.acosh(np.array([2.0])), np.arccosh([2.0]))
    np.testing.assert_array_equal(fnp.hanning(5), np.hanning(5))
    np.testing.assert_allclose(fnp.vecmat(np.array([1j, 1.0]), np.eye(2)), [-1j, 1.0])


def test_vectorize_excluded_and_outputs():
    f = fnp.vectorize(lambda x, p: (x ** p, x * 2.0), excluded={1})
    a, b = f(np.arange(3.0), 2)
    np.testing.assert_array_equal(a, [0.0, 1.0, 4.0])
    np.testing.assert_array_equal(b, [0.0, 2.0, 4.0])
    g = fnp.vectorize(lambda v: fnp.sum(v ** 2), signature="(n)->()")
    np.testing.assert_allclose(fxad.grad(lambda m: fnp.sum(g(m)))(np.ones((2, 3))),
                               2 * np.ones((2, 3)))
    with pytest.raises(ValueError, match="invalid signature"):
        fnp.vectorize(lambda v: v, signature="(n->()")(np.ones(2))


def test_nonzero_and_argwhere_with_size_stage():
    x = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, 3.0]])
    want = np.nonzero(x)
    got = fxad.jit(lambda v: fnp.nonzero(v, size=4))(x)
    for g, w in zip(got, want):  # 3 nonzero: the fourth index is the fill value, 0
        np.testing.assert_array_equal(g, np.append(w, 0))
    got = fxad.jit(lambda v: fnp.argwhere(v, size=5, fill_value=-1))(x)
    np.testing.assert_array_equal(got, np.concatenate([np.argwhere(x), [[-1, -1]] * 2]))
    got = fxad.vmap(lambda v: fnp.flatnonzero(v, size=2))(x)
    np.testing.assert_array_equal(got, [[1, 0], [0, 2]])

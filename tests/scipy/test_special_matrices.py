"""fxad.scipy.linalg's special matrices: values and dtypes against SciPy (1-d, batched, integer
and complex inputs, the smallest sizes), derivatives to second order in both modes, vmap
against a loop, jit against eager, and SciPy's errors as clear FxadValueErrors."""
import numpy as np
import pytest
import scipy.linalg as sl

import fxad
from fxad.errors import FxadValueError
from fxad.scipy import linalg as fl
from fxad.test_util import check_grads

rng = np.random.default_rng(0)


def _vec(n, shift=0.5):
    return rng.standard_normal(n) + shift


# (name, args) of the constructors built from arrays; each row is checked against SciPy
BUILT = [
    ("circulant", lambda: (_vec(4),)),
    ("circulant", lambda: (rng.standard_normal((2, 3)),)),
    ("circulant", lambda: (np.array([1, 2, 3]),)),
    ("circulant", lambda: (np.array([2.0]),)),
    ("hankel", lambda: (_vec(4),)),
    ("hankel", lambda: (_vec(3), _vec(5))),
    ("hankel", lambda: (_vec(4), _vec(1))),
    ("hankel", lambda: (np.array([1 + 2j, 3, 4j]), np.array([0, 5, 6j]))),
    ("companion", lambda: (_vec(2),)),
    ("companion", lambda: (_vec(5),)),
    ("companion", lambda: (np.array([2, 3, 4]),)),
    ("companion", lambda: (rng.standard_normal((3, 4)) + 3,)),
    ("leslie", lambda: (_vec(2), _vec(1))),
    ("leslie", lambda: (_vec(4), _vec(3))),
    ("leslie", lambda: (rng.standard_normal((2, 3)), _vec(2))),
    ("leslie", lambda: (np.array([1, 2]), np.array([0.5]))),
    ("fiedler", lambda: (_vec(1),)),
    ("fiedler", lambda: (_vec(5),)),
    ("fiedler", lambda: (rng.standard_normal((2, 4)),)),
    ("fiedler", lambda: (np.zeros(0),)),
    ("fiedler_companion", lambda: (np.array([2.0]),)),
    ("fiedler_companion", lambda: (_vec(2),)),
] + [("fiedler_companion", (lambda n: lambda: (_vec(n),))(n)) for n in range(3, 10)] + [
    ("fiedler_companion", lambda: (np.array([1, -3, 2, 5]),)),
    ("fiedler_companion", lambda: (rng.standard_normal((2, 6)) + 3,)),
] + [("convolution_matrix", (lambda m, n, mode: lambda: (_vec(m), n, mode))(m, n, mode))
     for m in (1, 3, 4) for n in (1, 2, 5) for mode in ("full", "same", "valid")] + [
    ("convolution_matrix", lambda: (rng.standard_normal((2, 3)), 4, "same")),
]


@pytest.mark.parametrize("k", range(len(BUILT)),
                         ids=[f"{name}{i}" for i, (name, _) in enumerate(BUILT)])
def test_values_and_dtypes_as_scipy(k):
    name, make = BUILT[k]
    args = make()
    got, want = np.asarray(getattr(fl, name)(*args)), getattr(sl, name)(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    # jit against eager (sizes and modes are static)
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    rest = args[len(arrays):]
    jitted = fxad.jit(lambda *xs: getattr(fl, name)(*xs, *rest))
    np.testing.assert_array_equal(jitted(*arrays), want)


# differentiable rows: (function of float arrays, inputs)
GRADS = [
    ("circulant", fl.circulant, (_vec(4),)),
    ("hankel", fl.hankel, (_vec(3), _vec(4))),
    ("hankel_r_default", fl.hankel, (_vec(3),)),
    ("companion", fl.companion, (_vec(5) + 2,)),
    ("leslie", fl.leslie, (_vec(4), _vec(3))),
    ("fiedler", fl.fiedler, (np.array([0.3, -1.2, 2.5, 0.9]),)),  # distinct: no kink
    ("fiedler_companion", fl.fiedler_companion, (_vec(7) + 2,)),
    ("convolution_matrix", lambda a: fl.convolution_matrix(a, 5, "same"), (_vec(3),)),
]


@pytest.mark.parametrize("name, f, args", GRADS, ids=[g[0] for g in GRADS])
def test_derivatives_to_second_order(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name, f, args", GRADS, ids=[g[0] for g in GRADS])
def test_vmap_against_a_loop(name, f, args):
    stacked = [np.stack([a, 2 * a + 1, -a]) for a in args]
    got = fxad.vmap(f)(*stacked)
    want = np.stack([np.asarray(f(*[s[i] for s in stacked])) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


def test_batched_rows_match_each_matrix():
    """Leading axes are a batch, as in SciPy: each slice is the matrix of that slice."""
    a = rng.standard_normal((3, 5)) + 3
    for name in ("circulant", "companion", "fiedler", "fiedler_companion"):
        got = np.asarray(getattr(fl, name)(a))
        for i in range(3):
            np.testing.assert_array_equal(got[i], getattr(sl, name)(a[i]))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_matrices_of_a_size_are_scipys(n):
    for name, kw in [("hilbert", {}), ("invhilbert", {}), ("invhilbert", {"exact": True}),
                     ("pascal", {}), ("pascal", {"kind": "lower"}),
                     ("pascal", {"exact": False}), ("invpascal", {}),
                     ("invpascal", {"kind": "upper"}), ("dft", {}), ("dft", {"scale": "n"}),
                     ("dft", {"scale": "sqrtn"}), ("helmert", {}), ("helmert", {"full": True})]:
        got, want = getattr(fl, name)(n, **kw), getattr(sl, name)(n, **kw)
        assert np.asarray(got).dtype == want.dtype, (name, kw)
        np.testing.assert_array_equal(got, want)
    if n & (n - 1) == 0:
        np.testing.assert_array_equal(fl.hadamard(n), sl.hadamard(n))
        assert fl.hadamard(n, dtype=float).dtype == np.float64
    assert fl.dft(n, dtype=np.complex64).dtype == np.complex64
    np.testing.assert_array_equal(fl.pascal(n, kind=None), sl.pascal(n))


def test_constructors_under_grad_of_a_program():
    """A user program: the roots' sum of squares by the companion matrix's eigenvalues equals
    the same quantity from the coefficients (Newton: e1^2 - 2 e2), so its gradients agree."""
    a = np.array([2.0, -3.0, -5.0, 6.0])

    def by_matrix(a):
        return fxad.numpy.trace(fl.companion(a) @ fl.companion(a))

    def by_coefficients(a):
        e1, e2 = -a[1] / a[0], a[2] / a[0]
        return e1 ** 2 - 2 * e2

    np.testing.assert_allclose(by_matrix(a), by_coefficients(a), rtol=1e-14)
    np.testing.assert_allclose(fxad.grad(by_matrix)(a), fxad.grad(by_coefficients)(a),
                               rtol=1e-13)


@pytest.mark.parametrize("call, match", [
    (lambda: fl.companion([1.0]), "at least 2"),
    (lambda: fl.companion([0.0, 1.0, 2.0]), "must not be zero"),
    (lambda: fl.fiedler_companion([0.0, 1.0, 2.0]), "leading coefficient is zero"),
    (lambda: fl.leslie([1.0], np.zeros(0)), "at least 1"),
    (lambda: fl.leslie([1.0, 2.0, 3.0], [0.5]), "len\\(f\\) - 1 = 2"),
    (lambda: fl.convolution_matrix([1.0, 2.0], 0), "positive integer"),
    (lambda: fl.convolution_matrix([1.0, 2.0], 2.0), "positive integer"),
    (lambda: fl.convolution_matrix([1.0, 2.0], 3, "circular"), "'full', 'same' or 'valid'"),
    (lambda: fl.convolution_matrix(np.zeros(0), 3), "non-empty"),
])
def test_clear_errors(call, match):
    with pytest.raises(FxadValueError, match=match):
        call()

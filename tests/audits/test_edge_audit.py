"""Issue 16, item 4: math NumPy gets right must not go wrong in fxad at the edges.

The machine-driven audit (tests/audits/edge_audit.py) runs every row of its tables (the elementwise
functions of fxad.numpy, fxad.scipy.special and fxad.nn, the reductions, linear algebra) on
each input class (±1e300, ±1e-300, subnormals, 0, ±inf, NaN, ...) and checks values against
NumPy/SciPy and first derivatives (forward and reverse) against mpmath. Only the documented
differences (edge_audit.DOCUMENTED, notes/edge_audit.md) may fail, and each of them must.
The tests after it pin the cases the issue names, each of which failed before its fix.
"""
import warnings

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
import fxad.scipy.special as fss
from fxad import nn

from . import edge_audit as ea

ROWS = ea.rows()


@pytest.mark.parametrize("row,run", ROWS, ids=[r.name for r, _ in ROWS])
def test_only_documented_differences(row, run):
    failures = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(failures, [row])
    documented = {c for (n, c) in ea.DOCUMENTED if n == row.name}
    unexpected = {c: msgs[:3] for (n, c), msgs in failures.items() if c not in documented}
    assert not unexpected, f"{row.name}: {unexpected}"
    stale = documented - {c for (_, c) in failures}
    assert not stale, f"{row.name}: documented differences that no longer differ: {stale}"


def test_documented_differences_name_real_rows():
    names = {r.name for r, _ in ROWS}
    for name, cls in ea.DOCUMENTED:
        assert name in names and cls in ea.MATRIX_CLASSES, (name, cls)


def test_the_audit_catches_a_wrong_value_and_a_wrong_derivative(monkeypatch):
    """The harness is not vacuous: a 1-ulp value error and a 1e-12 derivative error fail."""
    row = ea.Row("log1p", lambda x: fnp.log1p(x) * (1 + 2 ** -52), np.log1p, lambda x: 1 / (1 + x))
    failures = {}
    ea.audit_elementwise(failures, [row])
    assert ("log1p", "normal") in failures
    from fxad.rules.elementwise.transcendental import sin_p
    true_jvp = sin_p.jvp

    def off(primals, tangents, **params):
        ans, t = true_jvp(primals, tangents, **params)
        return ans, fxad.lax.mul(t, 1 + 1e-12)
    monkeypatch.setattr(sin_p, "jvp", off)
    failures = {}
    ea.audit_elementwise(failures, [r for r in ea.UNARY if r.name == "sin"])
    assert ("sin", "normal") in failures


# --- the cases issue 16 names ---------------------------------------------------------------------

def test_hypot_is_numpys_at_every_magnitude_and_its_derivative_is_x_over_hypot():
    assert fnp.hypot(1e200, 1e200) == np.hypot(1e200, 1e200)  # was inf: sqrt(x² + y²)
    assert fnp.hypot(3e-200, 4e-200) == np.hypot(3e-200, 4e-200)  # was 0
    g = fxad.grad(fnp.hypot, argnums=(0, 1))(1e200, 1e200)  # was (0, 0)
    np.testing.assert_allclose(g, [np.sqrt(0.5)] * 2, rtol=1e-15)
    g = fxad.grad(fnp.hypot)(5e-324, 5e-324)  # the subnormal hypot rounds: x / hypot is 1
    np.testing.assert_allclose(g, np.sqrt(0.5), rtol=1e-15)
    assert fxad.grad(fnp.hypot)(0.0, 0.0) == 0.0  # a subgradient at the kink, not NaN


def test_log10_log2_exp2_logaddexp2_are_numpys_own():
    assert fnp.log10(1000.0) == 3.0  # was 2.9999999999999996: log(x) / ln 10
    x = np.random.default_rng(0).uniform(-3, 3, 1000)
    for f, g in [(fnp.log10, np.log10), (fnp.log2, np.log2), (fnp.exp2, np.exp2),
                 (fnp.sinc, np.sinc)]:
        with np.errstate(invalid="ignore"):
            assert np.array_equal(f(x), g(x), equal_nan=True), f
    assert np.array_equal(fnp.logaddexp2(x, x[::-1]), np.logaddexp2(x, x[::-1]))
    assert np.array_equal(fnp.float_power(np.abs(x), 0.7), np.float_power(np.abs(x), 0.7))


def test_ldexp_is_exact_where_two_to_the_power_overflows():
    assert fnp.ldexp(0.5, 1024) == np.ldexp(0.5, 1024)  # was inf: 0.5 * 2.0**1024
    assert fnp.ldexp(1e300, -1075) == np.ldexp(1e300, -1075)  # was 0
    assert fxad.grad(lambda x: fnp.ldexp(x, 1023))(0.25) == 2.0 ** 1023


@pytest.mark.parametrize("lse", [nn.logsumexp, fss.logsumexp], ids=["nn", "scipy.special"])
def test_logsumexp_of_only_minus_inf_is_minus_inf_with_zero_gradient(lse):
    x = np.array([-np.inf, -np.inf])
    assert lse(x) == -np.inf  # was NaN: the shift was (-inf) * 0
    np.testing.assert_array_equal(fxad.grad(lse)(x), [0.0, 0.0])  # was NaN: 0 / 0
    rows = np.array([[-np.inf, -np.inf, -np.inf], [0.5, -np.inf, 1.0]])
    got = lse(rows, axis=1)
    assert got[0] == -np.inf and np.isclose(got[1], np.logaddexp(0.5, 1.0))
    g = fxad.grad(lambda r: fnp.sum(lse(r, axis=1)))(rows)
    np.testing.assert_array_equal(g[0], 0.0)
    np.testing.assert_allclose(g[1], [1 / (1 + np.e ** 0.5), 0.0, 1 / (1 + np.e ** -0.5)])
    assert np.array_equal(fxad.jit(lambda r: lse(r, axis=1))(rows), got)
    # all-equal huge entries: the weights are 1/n (exp(x - lse(x)) would be exp(0) = 1)
    np.testing.assert_allclose(fxad.grad(lse)(np.full(4, 1e300)), np.full(4, 0.25))


def test_scipy_logsumexp_takes_scipys_arguments():
    import scipy.special as sc
    a, b = np.array([[0.5, 1.0, -2.0], [3.0, 0.0, 1.0]]), np.array([1.0, -0.5, 2.0])
    # (the direct formula: SciPy 1.15's logsumexp gives NaN for row 0, whose sum is positive)
    np.testing.assert_allclose(fss.logsumexp(a, 1, b), np.log(np.sum(b * np.exp(a), axis=1)),
                               rtol=1e-14)
    got, want = fss.logsumexp(a, b=-b, return_sign=True), sc.logsumexp(a, b=-b, return_sign=True)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    with np.errstate(invalid="ignore"):
        assert np.isnan(fss.logsumexp(a[0], b=-b))  # a negative sum: NaN, as SciPy
    np.testing.assert_allclose(fss.logsumexp(a, axis=0, keepdims=True),
                               sc.logsumexp(a, axis=0, keepdims=True), rtol=1e-14)


SINGULAR = [np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),   # last pivot 0
            np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]]),   # a middle pivot
            np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]),   # two zero pivots
            np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0]), np.zeros((3, 3))]  # rank 1 and 0


def _cofactors(a):
    n = a.shape[-1]
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1))
                      for j in range(n)] for i in range(n)])


@pytest.mark.parametrize("a", SINGULAR, ids=["rank2-last", "rank2-middle", "rank2-shift",
                                              "rank1", "zero"])
def test_det_gradient_at_singular_matrices_is_the_adjugate(a):
    want = _cofactors(a)  # the transposed adjugate; det(A) A⁻ᵀ was NaN
    for mode in (fxad.grad(fnp.linalg.det), fxad.jacfwd(fnp.linalg.det),
                 fxad.jit(fxad.grad(fnp.linalg.det))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.testing.assert_allclose(mode(a), want, atol=1e-13 * max(1, np.abs(a).max()) ** 2)
    c = a.astype(complex)  # complex matrices take the same path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fxad.grad(lambda m: fnp.real(fnp.linalg.det(m)))(c)
    np.testing.assert_allclose(got, want, atol=1e-13 * max(1, np.abs(a).max()) ** 2)


def test_det_gradient_batched_mixes_singular_and_invertible_and_scales():
    rng = np.random.default_rng(1)
    stack = np.stack(SINGULAR + [rng.normal(size=(3, 3)), 1e-150 * (rng.normal(size=(3, 3)))])
    want = np.stack([_cofactors(m) for m in stack])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fxad.grad(lambda s: fnp.sum(fnp.linalg.det(s)))(stack)
        vm = fxad.vmap(fxad.grad(fnp.linalg.det))(stack)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(vm, want, rtol=1e-12, atol=1e-13)
    # at scale 1e-150 det (1e-450) underflows to 0, its gradient (products of two entries,
    # 1e-300) does not: it comes from the singular values (det · A⁻ᵀ gave 0 here)
    assert fnp.linalg.det(stack[-1]) == 0
    np.testing.assert_allclose(got[-1], want[-1], rtol=1e-12, atol=0)


def test_det_second_derivative_is_unchanged_for_invertible_matrices():
    a = np.array([[2.0, 1.0, 0.5], [0.3, 3.0, 1.0], [1.0, 0.2, 4.0]])
    h = fxad.hessian(fnp.linalg.det)(a)  # [i, j, k, l] = ∂² det / ∂a_ij ∂a_kl
    grad, eps = fxad.grad(fnp.linalg.det), 1e-6
    fd = np.stack([(grad(a + eps * e) - grad(a - eps * e)) / (2 * eps)
                   for e in np.eye(9).reshape(9, 3, 3)]).reshape(3, 3, 3, 3)  # [k, l, i, j]
    np.testing.assert_allclose(h, fd.transpose(2, 3, 0, 1), rtol=1e-7, atol=1e-7)


def test_svd_family_returns_on_inf_entries_and_raises_on_nan():
    """numpy.linalg.svd, pinv and lstsq never return on this matrix (LAPACK's gesdd loops);
    fxad's SVD primitives give NaN for it, and raise LinAlgError for a NaN entry, as NumPy."""
    a = np.array([[4.0, np.inf, 2.0], [np.inf, 3.0, 1.0], [2.0, 1.0, 5.0]])
    assert np.isnan(fnp.linalg.svd(a)[1]).all() and np.isnan(fnp.linalg.pinv(a)).all()
    assert np.isnan(fnp.linalg.lstsq(a, np.ones(3))[0]).all()
    assert fnp.linalg.cond(a) == np.inf and fnp.linalg.cond(np.zeros((3, 3))) == np.inf
    batch = np.stack([a, np.eye(3)])  # the finite matrix of a stack is unaffected
    np.testing.assert_array_equal(fnp.linalg.svd(batch, compute_uv=False)[1], np.ones(3))
    with pytest.raises(np.linalg.LinAlgError):
        fnp.linalg.matrix_rank(np.where(np.isinf(a), np.nan, a))  # was 0


def test_zeros_are_constants_not_x_times_zero():
    """inf * 0 is NaN: tril/triu, relu and polyval's start used x * 0 as their zero."""
    m = np.array([[1.0, np.inf], [-np.inf, 3.0]])
    np.testing.assert_array_equal(fnp.tril(m), np.tril(m))
    np.testing.assert_array_equal(fnp.triu(m), np.triu(m))
    assert nn.relu(-np.inf) == 0.0 and np.isnan(nn.relu(np.nan))
    g = fxad.grad(lambda x: fnp.polyval(np.array([2.0, -3.0, 1.0]), x))(1e300)
    assert g == 4e300  # reverse mode went through (0 * x)'s inf * 0


def test_polygamma_takes_scipys_argument_order():
    import scipy.special as sc
    assert fss.polygamma(1, 2.0) == sc.polygamma(1, 2.0)  # was psi''(1): the arguments swapped
    np.testing.assert_allclose(fxad.grad(lambda x: fss.polygamma(1, x))(2.0), sc.polygamma(2, 2.0))

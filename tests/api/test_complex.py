"""Complex numbers with JAX's conventions: grad(f)(z) = df/dx - i df/dy for real-valued f;
holomorphic=True for holomorphic f; check_grads with complex inputs."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.test_util import check_grads

Z = np.array([3 + 4j, 1 - 2j, -0.5 + 0.25j])

FUNCS = [
    ("exp*z", lambda z: fnp.exp(z) * z), ("sin", fnp.sin), ("abs", fnp.abs),
    ("angle", fnp.angle), ("real/imag/conj", lambda z: fnp.real(z * z) + fnp.imag(fnp.conj(z) * 2.0)),
    ("vdot", lambda z: z @ z), ("cube", lambda z: fnp.sum(z ** 3)), ("log", fnp.log),
    ("sqrt", fnp.sqrt), ("sign", fnp.sign), ("complex", lambda z: lax.complex(fnp.real(z) ** 2, fnp.imag(z))),
    ("conj*z", lambda z: fnp.conj(z) * z), ("tracer.real/imag", lambda z: z.real * z.imag + z.conj()),
]


@pytest.mark.parametrize("name,f", FUNCS, ids=[f[0] for f in FUNCS])
def test_check_grads_complex(name, f):
    check_grads(f, (Z,), order=2)


def test_grad_of_real_valued_function_follows_jax_convention():
    # |z|^2 = x^2 + y^2: d/dx - i d/dy = 2x - 2iy = 2 conj(z)
    np.testing.assert_allclose(fxad.grad(lambda z: fnp.sum(fnp.abs(z) ** 2))(Z), 2 * np.conj(Z))
    np.testing.assert_allclose(fxad.grad(lambda z: fnp.sum(fnp.real(z)))(Z), np.ones(3))
    np.testing.assert_allclose(fxad.grad(lambda z: fnp.sum(fnp.imag(z)))(Z), -1j * np.ones(3))


def test_abs_of_complex_zero_has_derivative_zero():
    """Re(conj(z) dz) / |z| divides 0 by 0 at z = 0: the derivative there is 0 (JAX's value,
    and real abs's: sign(0) = 0), not NaN, e.g. for |x|² of a triangular factor's zeros."""
    z = np.array([0j, 3 + 4j])
    want = np.array([0j, 2 * (3 - 4j)])
    for g in (fxad.grad(lambda z: fnp.sum(fnp.abs(z) ** 2)),
              fxad.jit(fxad.grad(lambda z: fnp.sum(fnp.abs(z) ** 2)))):
        np.testing.assert_allclose(g(z), want, rtol=1e-15)
    np.testing.assert_allclose(fxad.jvp(fnp.abs, (z,), (np.full(2, 1 + 1j),))[1], [0, 1.4])


def test_holomorphic():
    np.testing.assert_allclose(fxad.grad(fnp.sin, holomorphic=True)(1 + 2j), np.cos(1 + 2j))
    np.testing.assert_allclose(fxad.grad(lambda z: z ** 3, holomorphic=True)(1 - 1j),
                               3 * (1 - 1j) ** 2)


def test_complex_output_without_holomorphic_is_a_type_error():
    with pytest.raises(TypeError, match="holomorphic"):
        fxad.grad(fnp.sin)(1 + 2j)


def test_real_input_through_complex_intermediate():
    x = np.array([0.5, 1.5])
    check_grads(lambda x: fnp.abs(x * (1 + 2j)), (x,), order=2)
    check_grads(lambda x: fnp.real(fnp.exp(1j * x)), (x,), order=2)
    g = fxad.grad(lambda x: fnp.sum(fnp.abs(x * (1 + 2j))))(x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, np.sqrt(5) * np.ones(2))


def test_vmap_and_jit_with_complex():
    g = lambda z: fnp.abs(z) ** 2
    np.testing.assert_allclose(fxad.vmap(fxad.grad(g))(Z), 2 * np.conj(Z))
    np.testing.assert_allclose(fxad.jit(fxad.grad(lambda z: fnp.sum(g(z))))(Z), 2 * np.conj(Z))


# --- complex linear algebra ----------------------------------------------------------------

import scipy.linalg as sl  # noqa: E402
import fxad.scipy.linalg as fsl  # noqa: E402

_rng = np.random.default_rng(7)
_A = _rng.standard_normal((3, 3)) + 1j * _rng.standard_normal((3, 3)) + 3 * np.eye(3)
_B = _rng.standard_normal((3, 2)) + 1j * _rng.standard_normal((3, 2))
_H = _A @ _A.conj().T + np.eye(3)  # Hermitian positive definite

# (name, fxad function, reference, arguments): trans=2 / 'C' is the conjugate transpose, and
# Cholesky reads one triangle as a Hermitian matrix (the diagonal's real part). Functions of a
# Hermitian matrix are differentiated along Hermitian directions (notes/linalg.md), so they
# are checked through herm_in, which makes every perturbation Hermitian.


def herm_in(f):
    return lambda a, *rest: f(0.5 * (a + fnp.conj(fnp.swapaxes(a, -1, -2))), *rest)


LINALG = [
    ("solve", fnp.linalg.solve, np.linalg.solve, (_A, _B)),
    ("inv", fnp.linalg.inv, np.linalg.inv, (_A,)),
    ("det", fnp.linalg.det, np.linalg.det, (_A,)),
    ("slogdet_sign", lambda a: fnp.linalg.slogdet(a)[0], lambda a: np.linalg.slogdet(a)[0], (_A,)),
    ("slogdet_log", lambda a: fnp.linalg.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1], (_A,)),
    ("solve_transposed", lambda a, b: fsl.solve(a, b, transposed=True),
     lambda a, b: np.linalg.solve(a.T, b), (_A, _B)),
    *[(f"lu_solve_{t}", lambda a, b, t=t: fsl.lu_solve(fsl.lu_factor(a), b, trans=t),
       lambda a, b, t=t: sl.lu_solve(sl.lu_factor(a), b, trans=t), (_A, _B)) for t in (0, 1, 2)],
    ("lu_solve_tuple_C", lambda a, b: fsl.lu_solve(tuple(fsl.lu_factor(a)), b, trans="C"),
     lambda a, b: sl.lu_solve(sl.lu_factor(a), b, trans=2), (_A, _B)),
    *[(f"solve_triangular_{lo}_{t}",
       lambda a, b, t=t, lo=lo: fsl.solve_triangular(a, b, trans=t, lower=lo == "L"),
       lambda a, b, t=t, lo=lo: sl.solve_triangular(a, b, trans=t, lower=lo == "L"), (_A, _B))
      for t in (0, 1, 2) for lo in "LU"],
    ("cholesky", herm_in(fnp.linalg.cholesky), np.linalg.cholesky, (_H,)),
    ("cholesky_upper", herm_in(lambda a: fnp.linalg.cholesky(a, upper=True)),
     lambda a: np.linalg.cholesky(a, upper=True), (_H,)),
    ("scipy_cholesky_upper", herm_in(lambda a: fsl.cholesky(a)), sl.cholesky, (_H,)),
    *[(f"cho_solve_{lo}",
       herm_in(lambda a, b, lo=lo: fsl.cho_solve(fsl.cho_factor(a, lower=lo), b)),
       lambda a, b, lo=lo: sl.cho_solve(sl.cho_factor(a, lower=lo), b), (_H, _B))
      for lo in (True, False)],
    ("cho_solve_tuple", herm_in(lambda a, b: fsl.cho_solve(tuple(fsl.cho_factor(a)), b)),
     lambda a, b: sl.cho_solve(sl.cho_factor(a), b), (_H, _B)),
    *[(f"solve_pos_{lo}",
       herm_in(lambda a, b, lo=lo: fsl.solve(a, b, assume_a="pos", lower=lo)),
       lambda a, b, lo=lo: sl.solve(a, b, assume_a="pos", lower=lo), (_H, _B))
      for lo in (True, False)],
    ("expm", fsl.expm, sl.expm, (0.3 * _A,)),
]


@pytest.mark.parametrize("name,f,ref,args", LINALG, ids=[r[0] for r in LINALG])
def test_complex_linalg_values_and_derivatives(name, f, ref, args):
    np.testing.assert_allclose(f(*args), ref(*args), rtol=1e-10, atol=1e-12)
    out = fxad.jit(f)(*args)
    assert out.dtype == np.asarray(ref(*args)).dtype  # staged dtypes are the eager ones
    check_grads(f, args, order=2)


@pytest.mark.parametrize("name,f", [
    ("eigh", lambda a: fnp.linalg.eigh(a)), ("qr", lambda a: fnp.linalg.qr(a)),
    ("svd", lambda a: fnp.linalg.svd(a)), ("norm2", lambda a: fnp.linalg.norm(a, 2))])
def test_complex_decompositions_values_and_derivatives(name, f):
    """Values (eager and staged, with NumPy's dtypes) are NumPy's; the derivatives, once
    refused, exist (tests/rules/test_linalg_complex.py checks them to second order)."""
    want = [np.asarray(x) for x in fxad.tree_util.tree_leaves(f(_H))]
    got = fxad.tree_util.tree_leaves(fxad.jit(f)(_H))
    assert [x.dtype for x in got] == [x.dtype for x in want]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    # |x|² of every result: smooth, and unchanged by the vectors' phases
    loss = lambda a: sum(fnp.sum(fnp.abs(x) ** 2) for x in fxad.tree_util.tree_leaves(f(a)))
    g = fxad.grad(loss)(_H)
    assert g.dtype == np.complex128 and np.all(np.isfinite(g))
    np.testing.assert_allclose(fxad.jit(fxad.grad(loss))(_H), g, rtol=1e-11, atol=1e-12)


def test_complex_hermitian_eigenvalues_differentiate_to_second_order():
    """dw = Re diag(vᴴ dA v) does not depend on the eigenvectors' phases; the second
    derivative goes through eigh's rule."""
    for lower in (True, False):
        f = lambda a: fnp.linalg.eigvalsh(a, "L" if lower else "U")
        np.testing.assert_allclose(f(_H), np.linalg.eigvalsh(_H, "L" if lower else "U"))
        check_grads(herm_in(f), (_H,), order=2)
        loss = lambda a: fnp.sum(f(a) * np.arange(1.0, 4.0))
        np.testing.assert_allclose(fxad.jit(fxad.grad(loss))(_H), fxad.grad(loss)(_H),
                                   rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("f", [fnp.imag, fnp.angle, lambda x: fnp.imag(x) * x + fnp.angle(-x)],
                         ids=["imag", "angle", "mixed"])
def test_real_input_gets_a_real_gradient_through_imag_and_angle(f, dtype):
    """imag of a real value is 0 and its angle piecewise constant: the cotangent of a real
    input is real (it was -i·ct, a complex gradient for a real input)."""
    x = np.array([1.5, -2.0, 0.5], dtype)
    g = fxad.grad(lambda z: fnp.sum(f(z) * 3.0))(x)
    assert g.dtype == dtype
    want = fxad.jvp(lambda z: fnp.sum(f(z) * 3.0), (x,), (np.ones(3, dtype),))[1]
    np.testing.assert_allclose(np.sum(g), want, atol=1e-6)
    assert fxad.jacrev(f)(x).dtype == dtype


def test_jacobians_of_complex_values_need_holomorphic_and_then_agree():
    """jacfwd of a complex input / jacrev of a complex output exist only for holomorphic f
    (forward and reverse mode would otherwise disagree: d/dx against d/dx - i d/dy)."""
    z = Z[:2]
    with pytest.raises(TypeError, match="jacfwd needs real-valued inputs.*holomorphic=True"):
        fxad.jacfwd(fnp.imag)(z)
    with pytest.raises(TypeError, match="jacrev needs real-valued outputs.*holomorphic=True"):
        fxad.jacrev(lambda z: z * z)(z)
    with pytest.raises(TypeError, match="needs real-valued inputs"):
        fxad.hessian(lambda z: fnp.sum(fnp.abs(z) ** 2))(z)
    with pytest.raises(TypeError, match=r"jacfwd\(holomorphic=True\) needs complex inputs"):
        fxad.jacfwd(lambda x: x * 1j, holomorphic=True)(np.ones(2))
    f = lambda z: fnp.sin(z) * z
    want = np.diag(np.cos(z) * z + np.sin(z))
    for jac in (fxad.jacfwd, fxad.jacrev):
        np.testing.assert_allclose(jac(f, holomorphic=True)(z), want, rtol=1e-12)
    np.testing.assert_allclose(fxad.hessian(lambda z: fnp.sum(z ** 3), holomorphic=True)(z),
                               np.diag(6 * z), rtol=1e-12)
    # Real inputs may have complex outputs forward; real outputs of complex inputs reverse.
    np.testing.assert_allclose(fxad.jacfwd(lambda x: x * 1j)(np.ones(2)), 1j * np.eye(2))
    np.testing.assert_allclose(fxad.jacrev(fnp.abs)(z), np.diag(np.conj(z) / np.abs(z)))


def test_four_hessian_orders_agree_for_a_holomorphic_function():
    z = np.array([1 + 2j, 0.5 - 1j])
    f = lambda z: fnp.sum(fnp.sin(z) * z ** 2)
    want = np.diag(2 * np.sin(z) + 4 * z * np.cos(z) - z ** 2 * np.sin(z))
    for outer in (fxad.jacfwd, fxad.jacrev):
        for inner in (fxad.jacfwd, fxad.jacrev):
            got = outer(inner(f, holomorphic=True), holomorphic=True)(z)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fxad.jit(fxad.hessian(f, holomorphic=True))(z), want, rtol=1e-12)

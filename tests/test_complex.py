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

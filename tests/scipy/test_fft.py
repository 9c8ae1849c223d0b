"""fxad.scipy.fft's DCTs (types 1-4, inverses, n-d): values and dtypes against SciPy over
types, norms, orthogonalize, n, axes and input dtypes; inverses invert; derivatives to second
order in both modes; vmap against a loop; jit against eager; the clear errors."""
import numpy as np
import pytest
import scipy.fft as sfft

import fxad
from fxad.errors import FxadValueError
from fxad.scipy import fft as ffft
from fxad.test_util import check_grads

rng = np.random.default_rng(0)
INPUTS = [((7,), -1, np.float64), ((8,), -1, np.float32), ((2,), -1, np.float64),
          ((3, 6), 0, np.float64), ((4, 3, 5), 1, np.int64), ((5,), -1, np.complex128)]


def _input(shape, dtype):
    if dtype == np.complex128:
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return (rng.standard_normal(shape) * 3).astype(dtype)


@pytest.mark.parametrize("fn", ["dct", "idct"])
@pytest.mark.parametrize("type", [1, 2, 3, 4])
@pytest.mark.parametrize("k", range(len(INPUTS)))
def test_as_scipy(k, type, fn):
    shape, axis, dtype = INPUTS[k]
    x = _input(shape, dtype)
    # SciPy drops `orthogonalize` for complex input (always its default): compared without it
    orths = (None,) if dtype == np.complex128 else (None, True, False)
    for norm in (None, "backward", "ortho", "forward"):
        for orth in orths:
            for n in (None, 4, 9):
                if type == 1 and (n or shape[axis]) < 2:
                    continue  # SciPy cannot either (see test_errors)
                kw = dict(type=type, n=n, axis=axis, norm=norm, orthogonalize=orth)
                want = getattr(sfft, fn)(x, **kw)
                got = np.asarray(getattr(ffft, fn)(x, **kw))
                assert got.shape == want.shape and got.dtype == want.dtype
                tol = 2e-5 if dtype == np.float32 else 1e-11
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("fn", ["dctn", "idctn"])
@pytest.mark.parametrize("type", [1, 2, 3, 4])
def test_n_dimensional_as_scipy(type, fn):
    x = rng.standard_normal((4, 3, 5))
    for kw in ({}, {"axes": [0]}, {"axes": (2, 0)}, {"s": [5, 6, 3]}, {"s": [6], "axes": [1]},
               {"norm": "ortho"}):
        want = getattr(sfft, fn)(x, type=type, **kw)
        np.testing.assert_allclose(getattr(ffft, fn)(x, type=type, **kw), want, rtol=1e-11,
                                   atol=1e-11 * np.abs(want).max())


@pytest.mark.parametrize("type", [1, 2, 3, 4])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_idct_inverts_dct(type, norm):
    x = rng.standard_normal((3, 7))
    np.testing.assert_allclose(ffft.idct(ffft.dct(x, type=type, norm=norm), type=type,
                                         norm=norm), x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ffft.idctn(ffft.dctn(x, type=type, norm=norm), type=type,
                                          norm=norm), x, rtol=1e-12, atol=1e-12)


def test_complex_input_transforms_both_parts():
    """fxad applies orthogonalize to complex input too (SciPy ignores it there): the result
    is the transform of the real part plus i times that of the imaginary part."""
    x = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    for type in (1, 2, 3):
        for norm, orth in (("ortho", False), (None, True)):
            kw = dict(type=type, norm=norm, orthogonalize=orth)
            np.testing.assert_allclose(ffft.dct(x, **kw),
                                       sfft.dct(x.real, **kw) + 1j * sfft.dct(x.imag, **kw),
                                       rtol=1e-12, atol=1e-12)


GRADS = [(f"{fn}{t}{norm}", getattr(ffft, fn), t, norm) for fn in ("dct", "idct")
         for t in (1, 2, 3, 4) for norm in (None, "ortho")]


@pytest.mark.parametrize("name, f, type, norm", GRADS, ids=[g[0] for g in GRADS])
def test_derivatives_vmap_and_jit(name, f, type, norm):
    x = rng.standard_normal(6)
    g = lambda x: f(x, type=type, norm=norm, n=7)
    check_grads(g, (x,), order=2, modes=("fwd", "rev"))
    xs = np.stack([x, 2 * x + 1, -x])
    np.testing.assert_allclose(fxad.vmap(g)(xs), np.stack([g(r) for r in xs]), rtol=1e-13,
                               atol=1e-13)
    np.testing.assert_allclose(fxad.jit(g)(x), g(x), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("call, match", [
    (lambda: ffft.dct(np.ones(4), type=5), "type must be 1, 2, 3 or 4"),
    (lambda: ffft.dct(np.ones(4), norm="unitary"), "norm must be"),
    (lambda: ffft.dct(np.ones(1), type=1), "type 1 needs at least 2 points"),
    (lambda: ffft.idct(np.ones(4), n=0), "n must be positive"),
    (lambda: ffft.dctn(np.ones((2, 3)), s=[2], axes=[0, 1]), "same length"),
])
def test_errors(call, match):
    with pytest.raises(FxadValueError, match=match):
        call()

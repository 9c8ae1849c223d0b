"""Rule table: the fft primitive (fxad.rules.contraction.fft) through numpy.fft's transforms: values
against NumPy, derivatives to second order in both modes (real and complex inputs), vmap
against a loop."""
import numpy as np
import pytest

import fxad.numpy as fnp
from fxad.test_util import check_grads

from ..common import M, check_values_match_numpy, grid, Row, row_tests


# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("fft", lambda m, x, **k: [m.fft.fft(x, **k), m.fft.ifft(x, **k), m.fft.irfft(x, **k)],
     [(M[0],), (M[0] + 1j * M[1],), (M[0].astype(np.float32),)],
     [{}, {"n": 7}, {"n": 3, "axis": 0, "norm": "ortho"}, {"norm": "forward"}]),
    ("rfft", lambda m, x, **k: [m.fft.rfft(x, **k), m.fft.rfft2(x), m.fft.rfftn(x, axes=(0,))],
     [(M[0],), (M[0].astype(np.float32),)], [{}, {"n": 8, "axis": 0}, {"norm": "ortho"}]),
    ("fftn", lambda m, x: [m.fft.fft2(x, s=(3, 7)), m.fft.ifftn(x, axes=(0, 2)),
                           m.fft.irfft2(x, s=(4, 6), norm="forward"), m.fft.irfftn(x),
                           m.fft.fftshift(x), m.fft.ifftshift(x, axes=1)],
     [(M,), (M + 1j,)], [{}]),
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


R = np.random.default_rng(7)

TABLE = [
    Row("fft", lambda x: fnp.real(fnp.fft.fft(x)) * fnp.imag(fnp.fft.ifft(x, 5, norm="ortho"))[:, :4],
        [(2, 4)], grid(-2, 2), unique=True),
    Row("rfft-irfft", lambda x: fnp.fft.irfft(fnp.fft.rfft(x, axis=0) ** 2, 5, axis=0), [(4, 2)],
        grid(-2, 2), unique=True),
    Row("rfftn", lambda x: fnp.real(fnp.fft.rfftn(x, s=(3, 5), norm="forward")
                                 * fnp.conj(fnp.fft.rfftn(x, s=(3, 5)))), [(2, 4)], grid(-2, 2), unique=True),
    Row("irfft2", lambda x: fnp.fft.irfft2(fnp.fft.fft2(x) * (1 + 1j), s=(3, 4))
     * fnp.fft.fftshift(x), [(3, 4)], grid(-2, 2), unique=True),
]
test_row = row_tests(TABLE)


FFTS = [
    ("fft", lambda a: fnp.fft.fft(a, 7, axis=0)), ("ifft", lambda a: fnp.fft.ifft(a, 3)),
    ("irfft", lambda a: fnp.fft.irfft(a)), ("irfft-odd", lambda a: fnp.fft.irfft(a, 7, norm="ortho")),
    ("fft2", lambda a: fnp.fft.fft2(a, norm="forward")), ("irfftn", lambda a: fnp.fft.irfftn(a, s=(3, 5))),
]


@pytest.mark.parametrize("name,f", FFTS, ids=[n for n, _ in FFTS])
def test_fft_of_complex_input_second_order(name, f):
    """Complex operands (check_grads differentiates real and imaginary parts), with weights
    so no cotangent is symmetric by accident."""
    z = R.standard_normal((4, 6)) + 1j * R.standard_normal((4, 6))

    def loss(z):
        y = f(z)
        w = np.cos(np.arange(y.size)).reshape(y.shape)
        return fnp.sum(fnp.real(y) * w) + fnp.sum(fnp.imag(y) ** 2) if y.dtype.kind == "c" \
            else fnp.sum(y * w + y ** 2)
    check_grads(loss, (z,), order=2)

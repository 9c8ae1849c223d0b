"""Rule table: fxad/rules/contraction/signal_conv.py (SciPy's n-d convolution as one bilinear window
primitive): every mode, both operand orders (SciPy's 'valid' swap), 1-3 dimensions, complex
operands, batch axes (fftconvolve's axes=); the transposes are checked by run_row's transpose
identity, the batching rule (one operand batched: a length-1 convolution axis; both: a batch
axis; one convolution either way) against a loop."""
import numpy as np
import pytest
import scipy.signal as ss

import fxad
from fxad.rules.contraction.signal_conv import convolve_window, freq_window, mode_window

from ..common import floats, Row, row_tests


def conv(mode, method="auto"):
    def f(a, v):
        start, size = mode_window(mode, np.shape(a), np.shape(v))
        return convolve_window(a, v, start, size, method)
    return f


SHAPES = [((7,), (3,)), ((3,), (6,)), ((4, 5), (2, 3)), ((2, 3), (3, 4)), ((3, 2, 4), (2, 2, 2))]
MODES = [("full", "auto"), ("same", "direct"), ("valid", "fft")]
TABLE = [(f"{m}-{meth}", conv(m, meth), list(s)) for m, meth in MODES for s in SHAPES]


def conv_axes(mode, axes, method="fft"):
    def f(a, v):
        conv, start, size = freq_window(mode, np.shape(a), np.shape(v), axes)
        return convolve_window(a, v, start, size, method, conv)
    return f


AXES_ROWS = [  # batch axes (equal lengths) next to convolution axes, every method
    ("full", (1,), "fft", [(3, 5), (3, 2)]), ("same", (0,), "direct", [(4, 2), (3, 2)]),
    ("valid", (0, 2), "auto", [(3, 2, 4), (2, 2, 2)]), ("same", (1,), "fft", [(2, 3), (1, 2)]),
]
TABLE += [(f"axes-{m}-{ax}-{meth}", conv_axes(m, ax, meth), s) for m, ax, meth, s in AXES_ROWS]


TABLE = [Row(n, f, s, floats(-2, 2)) for n, f, s in TABLE]
test_row = row_tests(TABLE)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_values_are_scipys(mode, shapes):
    rng = np.random.default_rng(0)
    a, v = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    for method in ("direct", "fft", "auto"):
        np.testing.assert_allclose(conv(mode, method)(a, v), ss.convolve(a, v, mode, method),
                                   rtol=1e-12, atol=1e-12)


def test_complex_operands_satisfy_the_transpose_identity():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    v = rng.standard_normal(3)
    from fxad.test_util import check_grads
    check_grads(conv("same"), (a, v), order=2)


@pytest.mark.parametrize("mode,axes,method", [("same", None, "auto"), ("valid", (1,), "direct"),
                                              ("full", (0, 1), "fft")])
@pytest.mark.parametrize("batched", ["a", "v", "both"])
def test_vmap_matches_loop(batched, mode, axes, method):
    rng = np.random.default_rng(2)
    a, v = rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 4, 2))
    f = conv(mode, method) if axes is None else conv_axes(mode, axes, method)
    axes = {"a": (0, None), "v": (None, 0), "both": (0, 0)}[batched]
    args = (a if axes[0] == 0 else a[0], v if axes[1] == 0 else v[0])
    got = fxad.vmap(f, in_axes=axes)(*args)
    want = np.stack([f(args[0][i] if axes[0] == 0 else args[0],
                       args[1][i] if axes[1] == 0 else args[1]) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    grad = fxad.grad(lambda a, v: fxad.numpy.sum(f(a, v) ** 2))
    g = fxad.vmap(grad, in_axes=axes)(*args)
    want = np.stack([grad(args[0][i] if axes[0] == 0 else args[0],
                          args[1][i] if axes[1] == 0 else args[1]) for i in range(3)])
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12)

"""Rule table: bit-level primitives (fxad.rules.elementwise.bitwise) and the random primitives
(fxad.rules.random.bits, random_gamma, random_counts).

Integer-valued primitives are staged by making the key depend on the traced input (x * 0,
converted to uint32 and xor-ed into a fixed key): their tangents are symbolic zeros, and the
rows check that differentiating through them in every mode gives exactly the derivative of the
float arithmetic around them. `random_gamma` has no row: its derivative is the implicit one
(the quantile's, at a fixed CDF value), which finite differences of the sampler at a fixed key
do not see; tests/random/test_gradients.py checks it against mpmath and SciPy."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad import random as fr
from fxad.rules import ops

from ..common import floats, run_row

KEY = fr.PRNGKey(5)


def key_of(x):
    zero = lax.convert_element_type(lax.mul(fnp.sum(x), 0.0), np.uint32)
    return ops.bitwise_xor(KEY, zero)


def as_float(bits, x):
    """x times the bits scaled into [0, 1): smooth in x, whatever the bits are."""
    return lax.mul(x, lax.mul(lax.convert_element_type(bits, np.float64), 2.0 ** -64))


SHAPES = [(), (3,), (2, 3)]


def _words(x):
    k = key_of(x)
    return fr.bits(k, fnp.shape(x), np.uint32), fr.bits(fr.fold_in(k, 1), fnp.shape(x), np.uint32)


ROWS = [  # (name, fn, element strategy)
    ("threefry2x32", lambda x: as_float(ops.threefry2x32(key_of(x)[0], key_of(x)[1],
                                                         np.uint32(3), np.uint32(4))[0], x),
     floats(-2, 2)),
    ("random_seed", lambda x: as_float(ops.random_seed(
        lax.convert_element_type(lax.mul(x, 0.0), np.int64))[..., 1], x), floats(-2, 2)),
    ("random_bits", lambda x: as_float(fr.bits(key_of(x), fnp.shape(x)), x), floats(-2, 2)),
    ("random_split", lambda x: as_float(fr.split(key_of(x), 3)[2, 0], x), floats(-2, 2)),
    ("random_fold_in", lambda x: as_float(fr.fold_in(key_of(x), 7)[0], x), floats(-2, 2)),
    ("shift_left", lambda x: as_float(ops.shift_left(_words(x)[0], np.uint32(3)), x),
     floats(-2, 2)),
    ("shift_right_logical", lambda x: as_float(ops.shift_right_logical(_words(x)[0],
                                                                       np.uint32(5)), x),
     floats(-2, 2)),
    ("bitwise_and", lambda x: as_float(ops.bitwise_and(*_words(x)), x), floats(-2, 2)),
    ("bitwise_or", lambda x: as_float(ops.bitwise_or(*_words(x)), x), floats(-2, 2)),
    ("bitwise_xor", lambda x: as_float(ops.bitwise_xor(*_words(x)), x), floats(-2, 2)),
    ("bitwise_not", lambda x: as_float(ops.bitwise_not(_words(x)[0]), x), floats(-2, 2)),
    ("bitcast_convert_type", lambda x: as_float(ops.bitcast_convert_type(
        _words(x)[0], np.int32) // 2 + 2 ** 30, x), floats(-2, 2)),
    ("nextafter", lambda x: ops.nextafter(x, 10.0), floats(-2, 2)),
    ("random_poisson", lambda x: lax.mul(x, lax.convert_element_type(
        fr.poisson(key_of(x), 4.0, fnp.shape(x)), np.float64)), floats(-2, 2)),
    ("random_binomial", lambda x: lax.mul(x, fr.binomial(key_of(x), 10.0, 0.3, fnp.shape(x))),
     floats(-2, 2)),
]
TERNARY = [("fma", ops.fma, [(3,), (3,), (3,)]), ("fma", ops.fma, [(2, 3), (3,), ()]),
           ("fma", ops.fma, [(), (), ()])]
# dx/da of gamma samples (alpha, x), and its derivatives of order 1 and 2 in alpha
GAMMA_GRAD = [("random_gamma_grad", lambda a, x: ops.random_gamma_grad(a, x), [(3,), (3,)]),
              ("random_gamma_grad", lambda a, x: ops.random_gamma_grad(a, x), [(2, 3), ()]),
              ("random_gamma_grad", lambda a, x: ops.random_gamma_grad(a, x, 1), [(3,), (3,)]),
              ("random_gamma_grad", lambda a, x: ops.random_gamma_grad(a, x, 2), [(), ()])]

TABLE = [(n, f, [s]) for n, f, _ in ROWS for s in SHAPES] + TERNARY + GAMMA_GRAD


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name, fn, elements", ROWS, ids=[r[0] for r in ROWS])
def test_row(name, fn, elements, shape):
    run_row(fn, [shape], elements)


@pytest.mark.parametrize("name, fn, shapes", TERNARY, ids=[str(t[2]) for t in TERNARY])
def test_fma_row(name, fn, shapes):
    run_row(fn, shapes, floats(-2, 2))


@pytest.mark.parametrize("name, fn, shapes", GAMMA_GRAD, ids=[str(t[2]) for t in GAMMA_GRAD])
def test_gamma_grad_row(name, fn, shapes):
    run_row(fn, shapes, floats(0.5, 6))


@pytest.mark.parametrize("name, fn, shapes", TABLE, ids=[f"{t[0]}-{t[2]}" for t in TABLE])
def test_vmap_and_jit_match_eager(name, fn, shapes):
    rng = np.random.default_rng(4)
    args = [rng.uniform(0.3, 0.9, (3,) + s) for s in shapes]
    want = np.stack([np.asarray(fn(*[a[i] for a in args])) for i in range(3)])
    np.testing.assert_array_equal(fxad.vmap(fn)(*args), want)
    np.testing.assert_array_equal(fxad.jit(fn)(*[a[0] for a in args]), want[0])

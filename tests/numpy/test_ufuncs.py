"""Rule table: fxad.numpy.ufuncs, the NumPy ufuncs built from primitives (logaddexp, exp2, log2,
hypot, sinc, clip, copysign, fmax / fmin, float_power, fmod / divmod, ldexp, modf, ...):
values against NumPy, derivatives to second order in both modes, vmap against a loop."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp

from ..rules.common import (
    MASK, M, V3, V7, _clip, check_values_match_numpy, check_vmap_matches_loop, grid, run_row)

R = np.random.default_rng(7)

# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("ufuncs", lambda m, x, y: [
        m.copysign(x, y), m.heaviside(x, 0.5), m.fmax(x, np.nan), m.fmin(np.nan, y),
        m.float_power(np.abs(x), 1.5), m.trunc(x), m.fmod(x, 0.3), m.signbit(-0.0 * x),
        m.isinf(x / 0.0), m.isposinf(x / 0.0), m.isneginf(x / 0.0), m.divmod(x, 0.3)[1],
        m.logical_xor(x > 0, y > 0), m.heaviside(np.array([np.nan, 0.0, -np.inf]), 0.5)],
     [(V7[:3], V3), (V7[:3].astype(np.float32), V3.astype(np.float32))], [{}]),
    ("ufuncs-more", lambda m, x: [m.cbrt(x), m.ldexp(x, 3), m.modf(x)[0], m.modf(x)[1],
                                  m.vecdot(M, M[0]), _clip(m, x, -0.5, 0.5),
                                  m.einsum("i,i->", x, x, optimize=True)],
     [(V7,), (V7.astype(np.float32),)], [{}]),
    # complex: each part on its own, as NumPy's
    ("nan_to_num-complex", lambda m, z, **k: m.nan_to_num(z, **k),
     [(np.array([np.nan + 1j, np.inf * 1j, complex(-np.inf, np.nan), 1 + 2j]),),
      (np.array([np.nan + 1j, complex(np.inf, -np.inf)], np.complex64),)],
     [{}, {"nan": 1.5, "posinf": 7.0, "neginf": -3.0}]),
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


TABLE = [
    ("logaddexp", lambda x, y: fnp.logaddexp(x, y), [(2, 3), (3,)]),
    ("logaddexp2", lambda x, y: fnp.logaddexp2(x, y), [(2, 3), (2, 3)]),
    ("exp2", fnp.exp2, [(2, 3)]),
    ("log2", lambda x: fnp.log2(x * x + 1.0), [(2, 3)]),
    ("log10", lambda x: fnp.log10(x * x + 1.0), [(2, 3)]),
    ("hypot", lambda x, y: fnp.hypot(x + 3.0, y), [(2, 3), (3,)]),  # kink at the origin
    ("deg2rad", fnp.deg2rad, [(3,)]),
    ("rad2deg", fnp.rad2deg, [(3,)]),
    ("sinc", fnp.sinc, [(2, 3)]),
    ("fabs", lambda x: fnp.fabs(x + 3.0), [(3,)]),
    ("clip", lambda x: fnp.clip(x, -0.5, 0.5) * x, [(2, 3)]),
    ("nan_to_num", lambda x: fnp.nan_to_num(x) * x, [(3,)]),
    ("copysign-heaviside", lambda x, y: fnp.copysign(x + 0.005, y + 0.005)
     * fnp.heaviside(x + 0.005, y),
     [(2, 3), (3,)]),
    ("fmax-fmin", lambda x, y: fnp.fmax(fnp.where(MASK, np.nan, x), y + 0.005)
     + fnp.fmin(x, fnp.where(MASK[0], np.nan, y + 0.005)), [(2, 3), (3,)]),
    ("float_power", lambda x: fnp.float_power(x * x + 0.5, 1.5), [(3,)]),
    ("fmod-divmod", lambda x, y: fnp.fmod(x, y * y + 0.7071) * fnp.divmod(x + 0.005, 0.7071)[1],
     [(2, 3), (3,)]),
    ("trunc-signbit", lambda x: (x + 0.005) * fnp.trunc(x + 0.005)
     + fnp.where(fnp.signbit(x + 0.005), x, 2 * x), [(2, 3)]),
    ("vecdot-ldexp-modf", lambda x, y: fnp.vecdot(x, y)[:, None] * fnp.ldexp(x, 2)
     + fnp.modf(x + 0.005)[0], [(2, 3), (3,)]),
]


def _off_jumps(x, y):
    """fmod(x, d) jumps where x is a nonzero multiple of d = y² + 0.7071."""
    r = x / (y * y + 0.7071)
    k = np.round(r)
    return bool(np.all((k == 0) | (np.abs(r - k) > 1e-3)))


ASSUME = {"fmod-divmod": _off_jumps}


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_ufuncs(name, fn, shapes):
    run_row(fn, shapes, grid(-2, 2), unique=True, assume=ASSUME.get(name))


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_vmap_matches_loop(name, fn, shapes):
    check_vmap_matches_loop(fn, shapes, R)


def test_derivatives_at_special_points_are_finite():
    assert fxad.grad(lambda x: fnp.hypot(x, 0.0 * x))(0.0) == 0.0
    assert fxad.grad(fnp.sinc)(0.0) == 0.0
    g = fxad.grad(lambda x: fnp.logaddexp(x, -np.inf))(1.0)
    assert g == 1.0
    assert np.isfinite(fxad.grad(lambda x: fnp.logaddexp(x, x))(-np.inf))


@pytest.mark.parametrize("a,tol", [
    (np.array([1 + 1e-15j, 2 - 0j]), 100), (np.array([1 + 1e-3j, 2.0]), 100),
    (np.array([1 + 1e-3j, 2.0]), 1e-2), (np.array([1.0, 2.0]), 100),
    (np.array([1 + 1e-7j], np.complex64), 1000), (np.array([1 + 1e-7j], np.complex64), 10),
    (np.array(3 + 0j), 100),
])
def test_real_if_close(a, tol):
    """NumPy's values and dtypes (real where every imaginary part is small, the input
    otherwise); under grad (values known) the derivative of the branch NumPy takes, also
    through plain np.real_if_close; under jit/vmap a complex input is refused clearly, a real
    one passes through."""
    from fxad.errors import ConcretizationError
    from fxad.test_util import check_grads
    want = np.real_if_close(a, tol)
    got = fnp.real_if_close(a, tol)
    assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape
    np.testing.assert_array_equal(got, want)
    re, im = np.real(a).astype(np.float64), np.imag(a).astype(np.float64)
    low = dict(eps=1e-2, atol=1e-4, rtol=1e-4) if a.dtype == np.complex64 else {}  # float32
    for m in (fnp, np):
        def f(re, im):
            z = lax_complex(re, im).astype(a.dtype) if a.dtype.kind == "c" else re + 0 * im
            out = m.real_if_close(z, tol)
            return fnp.real(out) * 1.5 + fnp.imag(out) * 0.5
        # (differences in the imaginary parts would cross NumPy's threshold: the function
        # jumps there; the derivative is the branch's, checked exactly below)
        check_grads(lambda re: f(re, im), (re,), order=2, modes=("fwd", "rev"), **low)
        g = fxad.grad(lambda re, im: fnp.sum(f(re, im)), argnums=(0, 1))(re, im)
        np.testing.assert_allclose(g[0], 1.5)
        np.testing.assert_allclose(g[1], 0.0 if want.dtype.kind == "f" else 0.5)
    if a.dtype.kind == "c":
        for t in (fxad.jit, fxad.vmap):
            with pytest.raises(ConcretizationError, match="real_if_close.*fxad.numpy.real"):
                t(lambda z: fnp.real_if_close(z, tol))(np.atleast_1d(a))
    else:
        np.testing.assert_array_equal(fxad.jit(fnp.real_if_close)(a), a)


def lax_complex(re, im):
    from fxad import lax
    return lax.complex(re, im)

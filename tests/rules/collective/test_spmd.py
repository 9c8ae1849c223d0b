"""The spmd primitive (what pmap binds) on every case of the collectives' table: its impl
(in process: the body vmapped), JVP, transpose (pmap of vjp is vjp of pmap) and batching rules
against the named vmap, the reference."""
import numpy as np
import pytest

import fxad
from fxad import jit, pmap, vmap

from ._cases import CASES, IDS, _inputs

_TOL = dict(rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,f,ref,shape,n", CASES, ids=IDS)
def test_pmap_equals_vmap(name, f, ref, shape, n):
    X, T = _inputs(shape, n), _inputs(shape, n, 1)
    P_, V = pmap(f, "i"), vmap(f, axis_name="i")
    np.testing.assert_allclose(P_(X), ref(X), **_TOL)
    y, dy = fxad.jvp(P_, (X,), (T,))
    np.testing.assert_allclose(dy, fxad.jvp(V, (X,), (T,))[1], **_TOL)
    C = np.random.default_rng(2).normal(size=np.shape(y))
    np.testing.assert_allclose(fxad.vjp(P_, X)[1](C)[0], fxad.vjp(V, X)[1](C)[0], **_TOL)
    np.testing.assert_allclose(jit(P_)(X), ref(X), **_TOL)
    np.testing.assert_allclose(pmap(jit(f), "i")(X), ref(X), **_TOL)
    # pmap of vjp is vjp of pmap (psum's transpose is psum)
    inner = pmap(lambda x, c: fxad.vjp(f, x)[1](c)[0], "i")(X, C)
    np.testing.assert_allclose(inner, fxad.vjp(V, X)[1](C)[0], **_TOL)
    # batched: a vmap around the pmap
    X3 = np.stack([X, 2 * X])
    np.testing.assert_allclose(vmap(P_)(X3), np.stack([ref(X), ref(2 * X)]), **_TOL)

"""Rule table: fxad.numpy.products beyond dot_general's own rows (kron, cross, vdot): values
against NumPy (complex ones too: vdot conjugates its first argument), derivatives to second
order in both modes, vmap against a loop."""
import numpy as np
import pytest

import fxad.numpy as fnp

from ..rules.common import check_values_match_numpy, check_vmap_matches_loop, grid, run_row

R = np.random.default_rng(7)
Z = R.standard_normal((3, 4)) + 1j * R.standard_normal((3, 4))
W = R.standard_normal((3, 4)) + 1j * R.standard_normal((3, 4))

# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("complex", lambda m, a, b: [
        m.vdot(a, b), m.vdot(a.real, b), m.vdot(a, b.real), m.dot(a, b.T), m.inner(a, b),
        m.outer(a[0], b[0]), m.matmul(a, b.T), m.tensordot(a, b, ([1], [1])),
        m.einsum("ij,ij->", a, b), m.kron(a[0], b[0]), m.cross(a[:, :3], b[:, :3])],
     [(Z, W), (Z.astype(np.complex64), W.astype(np.complex64))], [{}]),
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


def test_vdot_derivatives_complex():
    from fxad.test_util import check_grads
    check_grads(lambda a, b: fnp.vdot(a, b), (Z, W), order=2)

TABLE = [
    ("kron", lambda x, y: fnp.kron(x, y), [(2, 2), (2, 3)]),
    ("cross", lambda x, y: fnp.cross(x, y), [(2, 3), (3,)]),
    ("vdot", lambda x, y: fnp.vdot(x, y), [(2, 3), (2, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_products(name, fn, shapes):
    run_row(fn, shapes, grid(-2, 2), unique=True)


@pytest.mark.parametrize("name,fn,shapes", TABLE, ids=[t[0] for t in TABLE])
def test_vmap_matches_loop(name, fn, shapes):
    check_vmap_matches_loop(fn, shapes, R)

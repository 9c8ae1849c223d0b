"""Rule table: fxad.numpy.creation (logspace, geomspace, astype): values against NumPy,
derivatives to second order in both modes, vmap against a loop."""
import numpy as np
import pytest

import fxad.numpy as fnp

from ..rules.common import MAT, V7, VEC, check_values_match_numpy, floats, grid, Row, row_tests


# (name, f(module, *args, **kw), argument tuples, keyword sets): f(np, ...) == f(fnp, ...)
VALUES = [
    ("spaces", lambda m, x, y: [m.logspace(x, y, 5), m.geomspace(x, y + 3, 4), m.astype(V7, np.float32)],
     [(np.float64(0.5), np.float64(2.0))], [{}]),
]


@pytest.mark.parametrize("name,f,argsets,kws", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy(name, f, argsets, kws):
    check_values_match_numpy(f, argsets, kws)


# (start, stop, dtype) for the traced spaces: array ends put the samples on a new leading
# axis, float32 ends stay float32, an integer dtype is floored
TRACED_SPACES = [(0.5, 2.0, None), (np.array([0.5, -1.5, 2.0]), np.array([2.0, 3.0, -1.0]), None),
                 (np.array([[1.0], [-2.0]]), np.array([3.0, 0.5, -1.0]), None),
                 (np.float32([0.5, 1.5, 2.5]), np.float32([-1.0, 3.0, 2.0]), None),
                 (np.array([0.5, -1.5, 2.0]), np.array([2.0, 3.0, -4.0]), np.int32)]


@pytest.mark.parametrize("start,stop,dtype", TRACED_SPACES)
@pytest.mark.parametrize("num,endpoint", [(0, True), (1, True), (3, True), (4, False)])
def test_traced_spaces_match_numpy(start, stop, dtype, num, endpoint):
    import fxad
    for name, shift in [("linspace", 0.0), ("logspace", 0.0), ("geomspace", 5.0)]:
        want = getattr(np, name)(start + shift, stop + shift, num, endpoint=endpoint, dtype=dtype)
        got = np.asarray(fxad.jit(lambda a, b: getattr(fnp, name)(
            a + shift, b + shift, num, endpoint=endpoint, dtype=dtype))(start, stop))
        assert (got.shape, got.dtype) == (want.shape, want.dtype), name
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=name)


TABLE = [
    Row("linspace_array_ends", lambda a, b: fnp.linspace(a, b, 4) ** 2, [(3,), (3,)],
        grid(-2, 2), unique=True),
    Row("geomspace_array_ends", lambda a, b: fnp.geomspace(a * a + 1.0, b * b + 2.0, 3),
        [(2,), (2,)], grid(-2, 2), unique=True),
    Row("spaces", lambda a, b: fnp.logspace(a[0], b[0], 4) * fnp.geomspace(a[0] + 3.0, b[0] + 3.0, 4),
        [(1,), (1,)], grid(-2, 2), unique=True),
    # NumPy's calling forms: their values under vmap and jit
    Row("full_traced", lambda x: fnp.full((2, 4), x), [()], floats(-2, 2), grad=False),
    Row("full_like", lambda x: fnp.full_like(x, 2.0), [MAT], floats(-2, 2), grad=False),
    Row("zeros_like", fnp.zeros_like, [MAT], floats(-2, 2), grad=False),
    Row("ones_like", fnp.ones_like, [MAT], floats(-2, 2), grad=False),
    Row("linspace_traced", lambda a, b: fnp.linspace(a, b, 5), [(), ()], floats(-2, 2), grad=False),
    Row("array_of_tracers", lambda x, y: fnp.array([x, y, x]), [VEC, VEC], floats(-2, 2), grad=False),
    Row("array_nested", lambda x, y: fnp.array([[x, y], [y, x]]), [(), ()], floats(-2, 2), grad=False),
    Row("asarray_dtype", lambda x: fnp.asarray(x, np.float32), [MAT], floats(-2, 2), grad=False),
    Row("astype_method", lambda x: x.astype(np.float32), [MAT], floats(-2, 2), grad=False),
]
test_row = row_tests(TABLE)



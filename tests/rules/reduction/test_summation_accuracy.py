"""Float32 sums keep a tree's error bound on every path (eager, the eager tape, the staged
path, jit on both backends): reduce_sum along a reduced axis that comes before an unreduced
one (NumPy adds along such an axis one term after the next), the cotangents that
broadcasting and a scan's constants are reduced with, and cumsum and its transpose.

Each bound is the worst case of fxad's summation order: a sum whose every term passes
through at most d roundings is within d·u·Σ|x| (u = 2^-24 for float32; d·u << 1 here) of
the exact sum. The inputs are positive, so Σ|x| is the sum itself. Adding one term after
the next has d = n - 1, and on these inputs its error is several times the tree's bound."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax

U = 2.0 ** -24


def _within(got, terms, depth, axes=None):
    """|got - exact| <= depth·u·Σ|x|, elementwise, with the exact sum from float64."""
    terms = np.asarray(terms, np.float64)
    exact = terms.sum(axis=axes)
    bound = depth * U * np.abs(terms).sum(axis=axes)
    got = np.asarray(got)
    assert got.dtype == np.float32
    err = np.abs(got.astype(np.float64) - exact)
    worst = float(np.max(err / bound))
    assert worst <= 1.0, f"error {worst:.2f} times the bound of depth {depth}"


def _paths(f):
    """f on every path: eager (the tape for grad), staged, jit on NumPy and on Numba."""
    def staged(*a):
        old = fxad.config.eager_tape
        fxad.config.eager_tape = False
        try:
            return f(*a)
        finally:
            fxad.config.eager_tape = old
    out = [("eager", f), ("staged", staged), ("jit", fxad.jit(f))]
    try:
        import numba  # noqa: F401
        out.append(("jit-numba", fxad.jit(f, backend="numba")))
    except ImportError:
        pass
    return out


def _uniform(shape, seed=0):
    return np.random.default_rng(seed).uniform(1.0, 2.0, shape).astype(np.float32)


# (name, function of x, x's shape, the reduced axes of x, tree depth). Depths: halving
# 2^k rows takes k roundings; NumPy sums a contiguous run of 4 in order (3 roundings).
X2 = (2 ** 17, 3)
X3 = (2 ** 17, 2, 4)
REDUCTIONS = [
    ("sum-axis0", lambda x: fnp.sum(x, axis=0), X2, 0, 17),
    ("sum-axis0-keepdims", lambda x: fnp.sum(x, axis=0, keepdims=True)[0], X2, 0, 17),
    ("sum-axes02", lambda x: fnp.sum(x, axis=(0, 2)), X3, (0, 2), 17 + 3),
    ("sum-axis0-of-transpose", lambda x: fnp.sum(x.T, axis=1), X2, 0, 17),
    # transposes: the cotangent of a broadcast operand, of a scan's constant
    ("grad-broadcast", lambda x: fxad.grad(lambda b: fnp.sum(x * b))(np.ones(3, np.float32)),
     X2, 0, 17),
    ("grad-broadcast-size1-axis", lambda x: fxad.grad(lambda b: fnp.sum(x * b))(
        np.ones((2, 1), np.float32)), X3, (0, 2), 17 + 3),
]


@pytest.mark.parametrize("name,f,shape,axes,depth", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_sums_over_a_leading_axis_keep_a_trees_error_bound(name, f, shape, axes, depth):
    x = _uniform(shape)
    for path, g in _paths(f):
        got = np.asarray(g(x))
        _within(got.reshape(-1) if name.startswith("grad-broadcast-size1") else got, x, depth,
                axes)


def test_a_scans_constant_gets_its_cotangent_summed_as_a_tree():
    """d/dw of the last carry of c <- c + w·x_t is Σ_t x_t; each term's cotangent is
    exactly 1, so the error is the summation's alone (2^17 steps: depth 17)."""
    xs = _uniform((2 ** 17, 3), seed=1)

    def f(xs):
        def loss(w):
            c, _ = lax.scan(lambda c, x: (c + w * x, None), fnp.zeros(3, np.float32), xs)
            return fnp.sum(c)
        return fxad.grad(loss)(np.ones(3, np.float32))
    for path, g in _paths(f):
        _within(g(xs), xs, 17, 0)


def _cumsum_depth(n):
    """Roundings on the way from a term to a running sum of n (fxad's cumsum): up to n - 1
    in order for n <= 64; past that 15 within a block of 16, one adding the block's offset,
    and those of the offsets (the running sum of n // 16 block totals)."""
    return n - 1 if n <= 64 else 16 + _cumsum_depth(-(-n // 16))


def test_cumsum_and_its_transpose_keep_a_blocked_error_bound():
    n = 2 ** 20
    x = _uniform(n, seed=2)
    v = _uniform(n, seed=3)
    depth = _cumsum_depth(n)
    assert depth == 79
    run = np.cumsum(x.astype(np.float64))
    back = np.cumsum(v[::-1].astype(np.float64))[::-1]  # d/dx_i of Σ_j v_j·cumsum(x)_j
    for path, g in _paths(lambda x: fnp.cumsum(x)):
        got = np.asarray(g(x))
        assert got.dtype == np.float32
        worst = np.max(np.abs(got - run) / (depth * U * run))
        assert worst <= 1.0, (path, worst)
    for path, g in _paths(lambda x: fxad.grad(lambda x: fnp.sum(fnp.cumsum(x) * v))(x)):
        got = np.asarray(g(x))
        assert got.dtype == np.float32
        worst = np.max(np.abs(got - back) / (depth * U * back))
        assert worst <= 1.0, (path, worst)


@pytest.mark.parametrize("shape,axes", [((9, 3), (0,)), ((5, 30, 4), (1,)), ((12, 5, 17, 3),
                                                                             (0, 1, 3)),
                                        ((12, 5, 17, 3), (0, 2, 3)), ((40, 1), (0,))])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
def test_reordered_sums_are_sums(shape, axes, dtype):
    """The tree order gives NumPy's sums (to rounding), shapes and dtypes, with keepdims,
    for C- and Fortran-ordered inputs."""
    x = (np.random.default_rng(4).standard_normal(shape) * 10).astype(dtype)
    for a in (x, np.asfortranarray(x)):
        for kd in (False, True):
            got = fnp.sum(a, axis=axes, keepdims=kd)
            want = np.sum(a, axis=axes, keepdims=kd)
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_logsumexp_over_a_leading_axis_sums_its_exponentials_as_a_tree():
    """SciPy sums the exponentials in memory order. Bound (to first order): each e^(x-max)
    within 4 ulps, the tree's 20 roundings over 2^20 rows, so the log is within 24·u of
    log of the exact sum; then the log's and the shift's own roundings, 3·u·|result|."""
    x = _uniform((2 ** 20, 3), seed=5) - np.float32(1.0)
    exact = np.log(np.exp(x.astype(np.float64)).sum(axis=0))
    for path, g in _paths(lambda x: fxad.nn.logsumexp(x, axis=0)):
        got = np.asarray(g(x))
        assert got.dtype == np.float32 and got.shape == (3,)
        worst = np.max(np.abs(got - exact) / (24 * U + 3 * U * np.abs(exact)))
        assert worst <= 1.0, (path, worst)


@pytest.mark.parametrize("shape,axes,keepdims", [
    ((32, 64), (0,), False), ((33, 5), (0,), True), ((9, 3, 4), (0, 2), False),
    ((3, 20, 5), (1,), False), ((20, 3, 7), (0, 1), True), ((17, 2, 11), (0, 2), True),
    ((4, 5), (0,), False), ((64,), (0,), False)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_generated_sums_add_in_the_impls_order(shape, axes, keepdims, dtype):
    """jit's NumPy code resolves the summation plan when it is generated; its result is the
    eager impl's, bit for bit (also for a transposed, non-contiguous input)."""
    x = _uniform(shape, seed=3).astype(dtype)
    f = lambda v: lax.reduce_sum(v, axes, keepdims)  # noqa: E731
    for v in (x, np.ascontiguousarray(x.T).T):
        want = f(v)
        got = fxad.jit(f)(v)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want)

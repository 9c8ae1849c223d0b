"""Every sampler: its distribution (Kolmogorov-Smirnov or chi-square tests at fixed keys, so
the outcome is deterministic; thresholds a wrong distribution fails, see
test_the_checks_reject_near_misses), dtypes and shapes, eager == jit == vmap over keys bit
for bit, extreme parameters, and dropout."""
import math
import zlib

import numpy as np
import pytest
from scipy import stats

import fxad
import fxad.numpy as fnp
from fxad import nn
from fxad import random as fr

N = 100_000
P_MIN = 1e-4  # p-values below this fail: a fixed key makes each test deterministic


def key(i=0):
    return fr.fold_in(fr.PRNGKey(20240), i)


def ks_ok(x, dist):
    return stats.kstest(np.asarray(x, np.float64).ravel(), dist.cdf).pvalue > P_MIN


def chi2_ok(counts, probs):
    """Pearson's test, merging categories with expected counts below 5."""
    counts, probs = np.asarray(counts, float), np.asarray(probs, float)
    expected = probs * counts.sum()
    order = np.argsort(expected)
    c, e = counts[order], expected[order]
    while len(e) > 1 and e[0] < 5:  # merge the smallest into the next
        c, e = np.r_[c[0] + c[1], c[2:]], np.r_[e[0] + e[1], e[2:]]
        order = np.argsort(e)
        c, e = c[order], e[order]
    return stats.chisquare(c, e).pvalue > P_MIN


def counts_of(x, support):
    return np.array([(np.asarray(x) == v).sum() for v in support])


# --- continuous: one table, KS against SciPy's distribution ----------------------------------

CONTINUOUS = [
    ("uniform", lambda k: fr.uniform(k, (N,), minval=-2.0, maxval=3.0), stats.uniform(-2, 5)),
    ("uniform32", lambda k: fr.uniform(k, (N,), np.float32), stats.uniform()),
    ("normal", lambda k: fr.normal(k, (N,)), stats.norm()),
    ("normal32", lambda k: fr.normal(k, (N,), np.float32), stats.norm()),
    ("truncated_normal", lambda k: fr.truncated_normal(k, -1.0, 2.0, (N,)),
     stats.truncnorm(-1, 2)),
    ("truncated_tail", lambda k: fr.truncated_normal(k, 3.0, 5.0, (N,)), stats.truncnorm(3, 5)),
    ("exponential", lambda k: fr.exponential(k, (N,)), stats.expon()),
    ("laplace", lambda k: fr.laplace(k, (N,)), stats.laplace()),
    ("logistic", lambda k: fr.logistic(k, (N,)), stats.logistic()),
    ("gumbel", lambda k: fr.gumbel(k, (N,)), stats.gumbel_r()),
    ("gumbel_high", lambda k: fr.gumbel(k, (N,), mode="high"), stats.gumbel_r()),
    ("cauchy", lambda k: fr.cauchy(k, (N,)), stats.cauchy()),
    ("pareto", lambda k: fr.pareto(k, 3.0, (N,)), stats.pareto(3.0)),
    ("lognormal", lambda k: fr.lognormal(k, 0.5, (N,)), stats.lognorm(0.5)),
    ("rayleigh", lambda k: fr.rayleigh(k, 2.0, (N,)), stats.rayleigh(scale=2.0)),
    ("weibull_min", lambda k: fr.weibull_min(k, 2.0, 1.5, (N,)),
     stats.weibull_min(1.5, scale=2.0)),
    ("maxwell", lambda k: fr.maxwell(k, (N,)), stats.maxwell()),
    ("double_sided_maxwell", lambda k: np.abs(fr.double_sided_maxwell(k, 1.0, 2.0, (N,)) - 1) / 2,
     stats.maxwell()),
    ("wald", lambda k: fr.wald(k, 2.0, (N,)), stats.invgauss(2.0)),
    ("triangular", lambda k: fr.triangular(k, -1.0, 0.5, 3.0, (N,)),
     stats.triang(0.375, loc=-1, scale=4)),
    ("gamma0.3", lambda k: fr.gamma(k, 0.3, (N,)), stats.gamma(0.3)),
    ("gamma1", lambda k: fr.gamma(k, 1.0, (N,)), stats.gamma(1.0)),
    ("gamma4.5", lambda k: fr.gamma(k, 4.5, (N,)), stats.gamma(4.5)),
    ("gamma300_f32", lambda k: fr.gamma(k, 300.0, (N,), np.float32), stats.gamma(300.0)),
    ("loggamma0.05", lambda k: fr.loggamma(k, 0.05, (N,)), stats.loggamma(0.05)),
    ("beta", lambda k: fr.beta(k, 0.7, 2.0, (N,)), stats.beta(0.7, 2.0)),
    ("dirichlet_0", lambda k: fr.dirichlet(k, np.array([0.5, 1.0, 3.0]), (N,))[:, 0],
     stats.beta(0.5, 4.0)),
    ("dirichlet_2", lambda k: fr.dirichlet(k, np.array([0.5, 1.0, 3.0]), (N,))[:, 2],
     stats.beta(3.0, 1.5)),
    ("t", lambda k: fr.t(k, 3.0, (N,)), stats.t(3.0)),
    ("chisquare", lambda k: fr.chisquare(k, 3.0, (N,)), stats.chi2(3.0)),
    ("f", lambda k: fr.f(k, 3.0, 5.0, (N,)), stats.f(3.0, 5.0)),
    ("generalized_normal", lambda k: fr.generalized_normal(k, 1.5, (N,)), stats.gennorm(1.5)),
    ("ball_radius", lambda k: np.linalg.norm(fr.ball(k, 3, 2, (N,)), axis=-1) ** 3,
     stats.uniform()),
    ("orthogonal_entry", lambda k: (fr.orthogonal(k, 4, (N // 10,))[:, 0, 0] + 1) / 2,
     stats.beta(1.5, 1.5)),  # an entry of a Haar 4x4 orthogonal matrix, mapped to [0, 1]
]


@pytest.mark.parametrize("name, draw, dist", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_distribution(name, draw, dist):
    assert ks_ok(draw(key(zlib.crc32(name.encode()) % 1000)), dist)  # a fixed key per row


def test_the_checks_reject_near_misses():
    """The same tests fail for slightly wrong distributions (a 3% scale error, a 0.02 shift,
    a biased coin, a wrong shape parameter), so passing them means something."""
    z = fr.normal(key(1), (N,))
    assert ks_ok(z, stats.norm())
    assert not ks_ok(z * 1.03, stats.norm())
    assert not ks_ok(z + 0.02, stats.norm())
    assert not ks_ok(fr.gamma(key(2), 4.5, (N,)), stats.gamma(4.6))
    b = fr.bernoulli(key(3), 0.3, (N,))
    assert chi2_ok(counts_of(b, [0, 1]), [0.7, 0.3])
    assert not chi2_ok(counts_of(b, [0, 1]), [0.69, 0.31])


def test_multivariate_normal_moments():
    mean = np.array([1.0, -2.0, 0.5])
    cov = np.array([[2.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 0.5]])
    for method in ("cholesky", "eigh", "svd"):
        x = fr.multivariate_normal(key(4), mean, cov, (N,), method=method)
        assert x.shape == (N, 3)
        assert np.all(np.abs(x.mean(0) - mean) < 4 * np.sqrt(np.diag(cov) / N))
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.03)
        white = np.linalg.solve(np.linalg.cholesky(cov), (x - mean).T)
        assert ks_ok(white[0], stats.norm()) and ks_ok(white[2], stats.norm())


def test_orthogonal_is_orthogonal():
    for n, m in ((4, 4), (3, 5), (5, 2)):
        q = fr.orthogonal(key(5), n, (6,), m=m)
        assert q.shape == (6, n, m)
        small = min(n, m)
        gram = q @ np.swapaxes(q, -1, -2) if n < m else np.swapaxes(q, -1, -2) @ q
        np.testing.assert_allclose(gram, np.broadcast_to(np.eye(small), (6, small, small)),
                                   atol=1e-12)


# --- discrete: chi-square against the probabilities -------------------------------------------

def test_bernoulli_and_rademacher():
    for p in (0.3, np.float32(0.9)):
        for mode in ("low", "high"):
            b = fr.bernoulli(key(6), p, (N,), mode=mode)
            assert b.dtype == np.bool_
            assert chi2_ok(counts_of(b, [False, True]), [1 - p, p])
    r = fr.rademacher(key(7), (N,))
    assert r.dtype == np.int64 and chi2_ok(counts_of(r, [-1, 1]), [0.5, 0.5])
    assert fr.rademacher(key(7), (3,), np.float32).dtype == np.float32


@pytest.mark.parametrize("lo, hi, dtype", [(-5, 17, np.int64), (0, 3, np.int32),
                                           (-128, 128, np.int8), (0, 256, np.uint8),
                                           (10, 11, np.int16)])
def test_randint_is_uniform(lo, hi, dtype):
    x = fr.randint(key(8), (N,), lo, hi, dtype)
    assert x.dtype == dtype and x.min() >= lo and x.max() < hi
    support = np.arange(lo, hi)
    if len(support) == 1:
        assert np.all(x == lo)
    else:
        assert chi2_ok(counts_of(x.astype(np.int64), support), np.full(len(support), 1 / len(support)))


def test_randint_wide_ranges():
    x = fr.randint(key(9), (N,), -2 ** 62, 2 ** 62)
    assert ks_ok(x.astype(float), stats.uniform(-2.0 ** 62, 2.0 ** 63))
    x = fr.randint(key(9), (N,), 0, 2 ** 32 - 1, np.uint32)
    assert x.dtype == np.uint32 and ks_ok(x.astype(float), stats.uniform(0, 2.0 ** 32))
    # bounds beyond the dtype are clipped to it (as JAX): [0, 2**40) in int32 covers all >= 0
    x = fr.randint(key(9), (1000,), -10, 2 ** 40, np.int32)
    assert x.min() >= -10 and x.max() > 2 ** 30


def test_permutations_are_uniform():
    keys = fr.split(key(10), 12_000)
    perms = fxad.vmap(lambda k: fr.permutation(k, 3))(keys)
    codes = perms[:, 0] * 9 + perms[:, 1] * 3 + perms[:, 2]
    assert chi2_ok(counts_of(codes, [5, 7, 11, 15, 19, 21]), np.full(6, 1 / 6))
    for n in (1, 2, 1000, 5000):  # 5000 takes two sorting rounds
        assert sorted(fr.permutation(key(11), n)) == list(range(n))
    x = np.arange(12.0).reshape(3, 4)
    p = fr.permutation(key(12), x, axis=1)
    assert sorted(map(tuple, p.T)) == sorted(map(tuple, x.T))
    q = fr.permutation(key(12), x, axis=1, independent=True)
    assert all(sorted(q[i]) == sorted(x[i]) for i in range(3))


def test_choice():
    p = np.array([0.1, 0.0, 0.5, 0.25, 0.15])
    x = fr.choice(key(13), 5, (N,), p=p)
    assert chi2_ok(counts_of(x, [0, 2, 3, 4]), p[p > 0]) and not np.any(x == 1)
    x = fr.choice(key(13), np.arange(10.0, 16.0), (N,))
    assert chi2_ok(counts_of(x, np.arange(10.0, 16.0)), np.full(6, 1 / 6))
    keys = fr.split(key(14), 20_000)
    firsts = fxad.vmap(lambda k: fr.choice(k, 5, (3,), replace=False, p=p)[0])(keys)
    assert chi2_ok(counts_of(firsts, [0, 2, 3, 4]), p[p > 0])
    draws = fxad.vmap(lambda k: fr.choice(k, 5, (3,), replace=False))(keys)
    assert all(len(set(d)) == 3 for d in draws[:200])
    assert chi2_ok(counts_of(draws.ravel(), range(5)), np.full(5, 0.2))
    a = np.arange(20.0).reshape(4, 5)
    assert fr.choice(key(15), a, (2, 3), axis=1).shape == (4, 2, 3)


def test_categorical():
    logits = np.array([[0.0, 1.0, -np.inf, 2.0], [3.0, 0.0, 0.0, 0.0]])
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    x = fr.categorical(key(16), logits, shape=(N, 2))
    assert x.shape == (N, 2) and not np.any(x[:, 0] == 2)
    for row in range(2):
        keep = probs[row] > 0
        assert chi2_ok(counts_of(x[:, row], np.flatnonzero(keep)), probs[row][keep])
    y = fr.categorical(key(16), logits.T, axis=0, shape=(N, 2))
    assert chi2_ok(counts_of(y[:, 1], range(4)), probs[1])
    z = fxad.vmap(lambda k: fr.categorical(k, logits[1], shape=(2,), replace=False))(
        fr.split(key(17), 20_000))
    assert np.all(z[:, 0] != z[:, 1]) and chi2_ok(counts_of(z[:, 0], range(4)), probs[1])


def test_geometric():
    x = fr.geometric(key(18), 0.3, (N,))
    assert x.dtype == np.int64 and x.min() >= 1
    support = np.arange(1, 30)
    assert chi2_ok(counts_of(x, support), stats.geom(0.3).pmf(support) / stats.geom(0.3).cdf(29))


@pytest.mark.parametrize("lam", [0.5, 4.0, 9.99, 10.0, 25.0, 300.0, 1e5])
def test_poisson(lam):
    x = fr.poisson(key(19), lam, (N,))
    assert x.dtype == np.int64 and x.min() >= 0
    lo, hi = stats.poisson(lam).ppf([1e-6, 1 - 1e-6]).astype(int)
    support = np.arange(lo, hi + 1)
    pmf = stats.poisson(lam).pmf(support)
    assert chi2_ok(counts_of(x, support), pmf / pmf.sum())


@pytest.mark.parametrize("n, p", [(3, 0.3), (20, 0.8), (500, 0.4), (10 ** 5, 0.97)])
def test_binomial(n, p):
    x = fr.binomial(key(20), n, p, (N,))
    assert x.dtype == np.float64
    lo, hi = stats.binom(n, p).ppf([1e-6, 1 - 1e-6]).astype(int)
    support = np.arange(max(lo - 1, 0), hi + 1)
    pmf = stats.binom(n, p).pmf(support)
    assert chi2_ok(counts_of(x, support), pmf / pmf.sum())


def test_multinomial():
    p = np.array([0.2, 0.3, 0.5])
    x = fr.multinomial(key(21), 40.0, p, shape=(N // 10, 3))
    assert x.shape == (N // 10, 3) and np.all(x.sum(-1) == 40)
    support = np.arange(0, 41)
    for i in range(3):
        pmf = stats.binom(40, p[i]).pmf(support)
        assert chi2_ok(counts_of(x[:, i], support), pmf / pmf.sum())


# --- shapes, dtypes, eager == jit == vmap -----------------------------------------------------

ALL = [
    ("uniform", lambda k: fr.uniform(k, (3, 2), minval=-1.0, maxval=np.array([1.0, 4.0]))),
    ("normal", lambda k: fr.normal(k, (3,), np.float32)),
    ("normal_c", lambda k: fr.normal(k, (3,), np.complex128)),
    ("truncated_normal", lambda k: fr.truncated_normal(k, np.array([-1.0, 0.5]), 2.0)),
    ("exponential", lambda k: fr.exponential(k, (4,))),
    ("laplace", lambda k: fr.laplace(k, (4,))), ("logistic", lambda k: fr.logistic(k, (4,))),
    ("gumbel", lambda k: fr.gumbel(k, (2, 2), mode="high")), ("cauchy", lambda k: fr.cauchy(k, (4,))),
    ("pareto", lambda k: fr.pareto(k, np.array([1.0, 3.0]))),
    ("lognormal", lambda k: fr.lognormal(k, 0.3, (3,))),
    ("rayleigh", lambda k: fr.rayleigh(k, 2.0, (3,))),
    ("weibull_min", lambda k: fr.weibull_min(k, 1.0, 2.0, (3,))),
    ("maxwell", lambda k: fr.maxwell(k, (3,))),
    ("double_sided_maxwell", lambda k: fr.double_sided_maxwell(k, 0.0, 1.0, (3,))),
    ("wald", lambda k: fr.wald(k, 1.5, (3,))),
    ("triangular", lambda k: fr.triangular(k, 0.0, 0.3, 1.0, (3,))),
    ("multivariate_normal", lambda k: fr.multivariate_normal(k, np.zeros(2), np.eye(2), (3,))),
    ("orthogonal", lambda k: fr.orthogonal(k, 3)),
    ("gamma", lambda k: fr.gamma(k, np.array([0.2, 1.0, 7.0]))),
    ("loggamma", lambda k: fr.loggamma(k, 0.1, (3,))),
    ("beta", lambda k: fr.beta(k, 0.5, 2.0, (3,))),
    ("dirichlet", lambda k: fr.dirichlet(k, np.array([1.0, 2.0, 0.5]), (2,))),
    ("t", lambda k: fr.t(k, 4.0, (3,))), ("chisquare", lambda k: fr.chisquare(k, 2.0, (3,))),
    ("f", lambda k: fr.f(k, 2.0, 3.0, (3,))),
    ("generalized_normal", lambda k: fr.generalized_normal(k, 3.0, (3,))),
    ("ball", lambda k: fr.ball(k, 2, 1.5, (3,))),
    ("bernoulli", lambda k: fr.bernoulli(k, 0.4, (40,))),
    ("rademacher", lambda k: fr.rademacher(k, (40,))),
    ("randint", lambda k: fr.randint(k, (5,), 0, np.array([3, 10, 100, 7, 1]))),
    ("permutation", lambda k: fr.permutation(k, np.arange(6.0))),
    ("choice", lambda k: fr.choice(k, 7, (2,), replace=False, p=np.full(7, 1 / 7))),
    ("categorical", lambda k: fr.categorical(k, np.zeros((2, 5)))),
    ("geometric", lambda k: fr.geometric(k, 0.5, (4,))),
    ("poisson", lambda k: fr.poisson(k, np.array([0.5, 20.0, 3.0]))),
    ("binomial", lambda k: fr.binomial(k, 30.0, np.array([0.2, 0.9]))),
    ("multinomial", lambda k: fr.multinomial(k, 100.0, np.array([0.5, 0.5]), shape=(4, 2))),
    ("dropout", lambda k: nn.dropout(k, np.arange(1.0, 41.0), 0.5)),
]


@pytest.mark.parametrize("name, f", ALL, ids=[a[0] for a in ALL])
def test_eager_jit_and_vmap_over_keys_agree_bit_for_bit(name, f):
    keys = fr.split(key(22), 3)
    eager = np.stack([np.asarray(f(k)) for k in keys])
    assert np.asarray(fxad.jit(f)(keys[0])).tobytes() == eager[0].tobytes()
    assert np.asarray(fxad.vmap(f)(keys)).tobytes() == eager.tobytes()
    assert np.asarray(fxad.jit(fxad.vmap(f))(keys)).tobytes() == eager.tobytes()
    assert len({e.tobytes() for e in eager}) == 3  # three keys, three different draws


def test_jitted_samplers_draw_new_values_for_new_keys():
    f = fxad.jit(lambda k, mu: mu + fr.normal(k, (4,)))
    k1, k2 = fr.split(key(23))
    assert not np.array_equal(f(k1, 1.0), f(k2, 1.0))
    assert np.array_equal(f(k1, 1.0), f(k1, 1.0))


def test_parameters_batched_without_keys():
    """vmap over a parameter with one key: every example uses that key (a loop would too)."""
    k = key(24)
    a = np.array([0.5, 2.0, 9.0])
    assert np.array_equal(fxad.vmap(lambda s: fr.gamma(k, s, (4,)))(a),
                          np.stack([fr.gamma(k, s, (4,)) for s in a]))
    lam = np.array([1.0, 50.0])
    assert np.array_equal(fxad.vmap(lambda s: fr.poisson(k, s, (3,)))(lam),
                          np.stack([fr.poisson(k, s, (3,)) for s in lam]))
    assert np.array_equal(fxad.vmap(lambda lo: fr.uniform(k, (2,), minval=lo))(a - 3),
                          np.stack([fr.uniform(k, (2,), minval=lo) for lo in a - 3]))


# --- extreme parameters ---------------------------------------------------------------------

def test_extreme_parameters():
    k = key(25)
    assert np.all(fr.uniform(k, (5,), minval=2.0, maxval=2.0) == 2.0)
    big = fr.uniform(k, (1000,), minval=-1e300, maxval=1e300)
    assert np.all(np.isfinite(big)) and big.min() >= -1e300
    assert np.all(fr.uniform(k, (1000,), np.float16) < 1)
    assert np.all(np.isfinite(fr.normal(k, (10 ** 4,), np.float16)))
    assert not fr.bernoulli(k, 0.0, (1000,)).any() and fr.bernoulli(k, 1.0, (1000,)).all()
    g = fr.gamma(k, np.array([1e-300, 1e-3, 0.0, 1e6, np.nan]))
    assert g[0] >= 0 and g[1] >= 0 and g[2] == 0 and abs(g[3] / 1e6 - 1) < 0.01 and np.isnan(g[4])
    assert np.all(np.isfinite(fr.loggamma(k, 1e-30, (100,))))
    assert np.all(fr.poisson(k, 0.0, (10,)) == 0)
    assert abs(fr.poisson(k, 1e7, (100,)).mean() / 1e7 - 1) < 1e-3
    assert np.all(fr.binomial(k, 0.0, 0.3, (5,)) == 0)
    assert np.all(fr.binomial(k, 7.0, 1.0, (5,)) == 7)
    assert np.isnan(fr.binomial(k, 7.0, -0.1))
    t = fr.truncated_normal(k, 8.0, 9.0, (1000,))
    assert np.all((t > 8.0) & (t < 9.0))
    assert np.all(np.isfinite(fr.gumbel(k, (10 ** 4,))))
    assert np.all(np.isfinite(fr.logistic(k, (10 ** 4,), np.float32)))


def test_bad_parameters():
    k = key(26)
    with pytest.raises(ValueError, match="broadcast"):
        fr.uniform(k, (3,), minval=np.zeros(4))
    with pytest.raises(ValueError, match="broadcast"):
        fr.gamma(k, np.ones(3), (2,))
    with pytest.raises(TypeError, match="float"):
        fr.bernoulli(k, 1, (3,))
    with pytest.raises(ValueError, match="population"):
        fr.choice(k, 3, (4,), replace=False)
    with pytest.raises(TypeError, match="integer"):
        fr.randint(k, (3,), 0, 5, np.float64)
    with pytest.raises(ValueError, match="mode"):
        fr.gumbel(k, mode="highest")
    with pytest.raises(ValueError, match="cov"):
        fr.multivariate_normal(k, np.zeros(2), np.eye(3))
    with pytest.raises(ValueError, match="categories"):
        fr.categorical(k, np.zeros(3), shape=(4,), replace=False)


# --- dropout ----------------------------------------------------------------------------------

def test_dropout_masks_follow_the_key():
    x = np.ones((4, 50))
    f = fxad.jit(lambda k, x: nn.dropout(k, x, 0.3))
    k1, k2 = fr.split(key(27))
    a, b = f(k1, x), f(k2, x)
    assert np.array_equal(a, f(k1, x)) and not np.array_equal(a, b)
    assert np.array_equal(a, nn.dropout(k1, x, 0.3))  # jit == eager
    keys = fr.split(key(28), 4)
    assert np.array_equal(fxad.vmap(lambda k: nn.dropout(k, x[0], 0.3))(keys),
                          np.stack([nn.dropout(k, x[0], 0.3) for k in keys]))
    np.testing.assert_allclose(np.unique(a), [0.0, 1 / 0.7])
    # the idiom it implements
    assert np.array_equal(a, np.where(fr.bernoulli(k1, 0.7, x.shape), x / 0.7, 0.0))


def test_dropout_keeps_the_expectation_and_dtype():
    x = np.full(N, 2.0, np.float32)
    y = nn.dropout(key(29), x, 0.25)
    assert y.dtype == np.float32
    assert abs(y.mean() - 2.0) < 4 * 2.0 * np.sqrt(0.25 / 0.75 / N)
    assert nn.dropout(key(29), x, 0.25, deterministic=True) is x
    assert nn.dropout(key(29), x, 0.0) is x
    assert np.all(nn.dropout(key(29), x, 1.0) == 0)
    with pytest.raises(ValueError, match="rate"):
        nn.dropout(key(29), x, 1.5)


def test_dropout_gradient_is_the_mask():
    k, x = key(30), np.linspace(-1, 1, 8)
    g = fxad.grad(lambda x: fnp.sum(nn.dropout(k, x, 0.5) * 3.0))(x)
    np.testing.assert_array_equal(g, np.where(fr.bernoulli(k, 0.5, (8,)), 6.0, 0.0))


def test_dropout_broadcast_dims():
    y = nn.dropout(key(31), np.ones((3, 40)), 0.5, broadcast_dims=(0,))
    assert np.all(y == y[0]) and 0 < (y[0] > 0).sum() < 40
    assert math.isclose(float(y.max()), 2.0)

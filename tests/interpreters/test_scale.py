"""Scale: long programs and heavy fan-out.

- A chain of 20,000 primitives differentiates (grad, vjp, jvp, under jit) and stages and
  prints, with Python's default recursion limit: every graph walk must be iterative.
- A variable used 1,000 times gets exactly the sum of its cotangent contributions, and the
  reverse-mode program grows linearly with the number of uses. Linear growth is measured by
  counting equations in make_jaxpr(grad(f)), never by wall-clock time.
"""
import sys

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp

N_CHAIN = 20_000


@pytest.fixture(autouse=True)
def _default_recursion_limit():
    """Run at Python's default limit even if something raised it: a recursive walk over
    20,000 equations must fail here, not pass by luck."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def chain(x):
    """N_CHAIN primitives in a row, alternating mul and sin (nothing to fold away)."""
    for i in range(N_CHAIN):
        x = fnp.sin(x) if i % 2 else x * 1.0001
    return x


def chain_ref(x):
    """(chain(x), chain'(x)) in plain NumPy: the chain rule as a running product."""
    x = np.array(x, dtype=np.float64)
    d = np.ones_like(x)
    for i in range(N_CHAIN):
        if i % 2:
            d = d * np.cos(x)
            x = np.sin(x)
        else:
            d = d * 1.0001
            x = x * 1.0001
    return x, d


X0 = 0.3
XV = np.array([0.3, -0.2, 1.1])
REF_Y, REF_D = chain_ref(X0)
REF_YV, REF_DV = chain_ref(XV)


def test_chain_reference_is_not_degenerate():
    assert 1e-6 < abs(REF_D) < 1.0 and np.all(np.abs(REF_DV) > 1e-6)


def test_grad_of_20000_primitive_chain():
    np.testing.assert_allclose(fxad.grad(chain)(X0), REF_D, rtol=1e-10)


def test_vjp_of_20000_primitive_chain():
    y, f_vjp = fxad.vjp(chain, XV)
    np.testing.assert_allclose(y, REF_YV, rtol=1e-12)
    ct = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(f_vjp(ct)[0], ct * REF_DV, rtol=1e-10)


def test_jvp_and_linearize_of_20000_primitive_chain():
    y, t = fxad.jvp(chain, (XV,), (np.ones(3),))
    np.testing.assert_allclose(y, REF_YV, rtol=1e-12)
    np.testing.assert_allclose(t, REF_DV, rtol=1e-10)
    y, f_jvp = fxad.linearize(chain, XV)
    np.testing.assert_allclose(f_jvp(2 * np.ones(3)), 2 * REF_DV, rtol=1e-10)


def test_make_jaxpr_of_20000_primitive_chain_stages_and_prints():
    closed = fxad.make_jaxpr(chain)(X0)
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    assert len(names) == N_CHAIN
    assert names.count("sin") == names.count("mul") == N_CHAIN // 2
    text = str(closed)
    assert text.count(" sin ") == N_CHAIN // 2, text[:400]
    np.testing.assert_allclose(closed(X0)[0], REF_Y, rtol=1e-12)


def test_make_jaxpr_of_grad_of_20000_primitive_chain_prints():
    closed = fxad.make_jaxpr(fxad.grad(chain))(X0)
    n = len(closed.jaxpr.eqns)
    assert N_CHAIN < n < 4 * N_CHAIN, n  # forward + linear backward, no blow-up
    text = str(closed)
    assert len(text.splitlines()) >= n
    np.testing.assert_allclose(closed(X0)[0], REF_D, rtol=1e-10)


def test_jit_of_grad_of_20000_primitive_chain():
    """Simplification and code generation walk 50,000 equations without recursing."""
    g = fxad.jit(fxad.grad(chain))
    np.testing.assert_allclose(g(X0), REF_D, rtol=1e-10)
    np.testing.assert_allclose(g(X0 + 0.0), REF_D, rtol=1e-10)  # the cached program


def test_grad_of_jit_of_20000_primitive_chain():
    """The jit primitive's JVP (partial evaluation of the whole body) and transpose."""
    np.testing.assert_allclose(fxad.grad(fxad.jit(chain))(X0), REF_D, rtol=1e-10)


def test_vmap_of_grad_of_long_chain():
    np.testing.assert_allclose(fxad.vmap(fxad.grad(chain))(XV), REF_DV, rtol=1e-10)


# --- fan-out: one variable used many times ----------------------------------------------------

def weighted_uses(x, n):
    """Σ_{i=1..n} i·x, one mul and one add per use: the cotangent of x is n(n+1)/2."""
    acc = x * 1.0
    for i in range(2, n + 1):
        acc = acc + x * float(i)
    return acc


def power_uses(x, n):
    """x·x·...·x (n uses): at x = 1 each use contributes exactly 1 to the cotangent."""
    acc = x
    for _ in range(n - 1):
        acc = acc * x
    return acc


def indexed_uses(x, n):
    """Element i % 5 of a vector, n times, weighted by i: gather transposes to scatter-add,
    and the n scatters must accumulate."""
    acc = x[0] * 0.0
    for i in range(n):
        acc = acc + x[i % 5] * float(i)
    return acc


def indexed_ref(n):
    return np.array([sum(float(i) for i in range(n) if i % 5 == k) for k in range(5)])


N_FAN = 1000


@pytest.mark.parametrize("mode", ["grad", "vjp", "jit(grad)", "jacrev"])
def test_cotangent_of_a_variable_used_1000_times_is_exact(mode):
    n = N_FAN
    for f, x, want in [(weighted_uses, 0.7, n * (n + 1) / 2), (power_uses, 1.0, float(n)),
                       (indexed_uses, np.arange(5.0), indexed_ref(n))]:
        g = lambda x, f=f: f(x, n)  # noqa: E731
        if mode == "grad":
            got = fxad.grad(g)(x)
        elif mode == "vjp":
            got = fxad.vjp(g, x)[1](1.0)[0]
        elif mode == "jit(grad)":
            got = fxad.jit(fxad.grad(g))(x)
        else:
            got = fxad.jacrev(g)(x)
        # integers below 2**53 summed in any order: exact
        np.testing.assert_array_equal(got, want, err_msg=f"{f.__name__} {mode}")


def test_power_uses_derivative_away_from_one():
    x = 1.0007
    np.testing.assert_allclose(fxad.grad(lambda x: power_uses(x, N_FAN))(x),
                               N_FAN * x ** (N_FAN - 1), rtol=1e-11)


def _programs(f, x, n):
    """(make_jaxpr(grad(f)), the pullback alone staged with a traced cotangent) equations.
    For an f linear in x the first holds only the forward pass (the cotangent 1.0 is
    concrete, so the backward pass is computed while staging); the second is exactly the
    transposed program."""
    g = lambda x: f(x, n)  # noqa: E731
    whole = fxad.make_jaxpr(fxad.grad(g))(x).jaxpr.eqns
    backward = fxad.make_jaxpr(lambda ct: fxad.vjp(g, x)[1](ct)[0])(1.0).jaxpr.eqns
    return whole, backward


@pytest.mark.parametrize("f,x", [(weighted_uses, 0.7), (power_uses, 1.0),
                                 (indexed_uses, np.arange(5.0))],
                         ids=["weighted", "power", "indexed"])
def test_reverse_program_grows_linearly_with_uses(f, x):
    """Equation counts for n = 500, 1000, 2000 uses are exactly affine in n
    (e(2000) - e(1000) == 2 (e(1000) - e(500))) with a small constant per use, and the
    cotangent contributions are accumulated with one add per use. Re-summing contributions
    at every use (quadratic) would break all of it."""
    progs = {n: _programs(f, x, n) for n in (500, 1000, 2000)}
    for which in (0, 1):
        count = {n: len(p[which]) for n, p in progs.items()}
        assert count[2000] - count[1000] == 2 * (count[1000] - count[500]), (which, count)
        assert (count[2000] - count[1000]) / 1000 <= 6, (which, count)
    for n, (_, backward) in progs.items():
        names = [q.primitive.name for q in backward]
        adds = names.count("add") + names.count("add_any")
        assert n - 1 <= adds <= n, (n, adds)  # one per use
        assert len(names) <= 3 * n + 5, (n, len(names))


@pytest.mark.parametrize("f,x", [(weighted_uses, 0.7), (power_uses, 1.0)],
                         ids=["weighted", "power"])
def test_linearized_and_transposed_programs_grow_linearly(f, x):
    """The same for the two halves separately: linearize's linear program and the
    transpose of it (linear_transpose of f_jvp), each staged."""
    def sizes(n):
        _, f_jvp = fxad.linearize(lambda x: f(x, n), x)
        lin = len(f_jvp.jaxpr.jaxpr.eqns)
        f_t = fxad.linear_transpose(f_jvp, x)
        tr = len(fxad.make_jaxpr(f_t)(1.0).jaxpr.eqns)
        return lin, tr
    (l1, t1), (l2, t2), (l4, t4) = sizes(250), sizes(500), sizes(1000)
    assert l4 - l2 == 2 * (l2 - l1) and t4 - t2 == 2 * (t2 - t1), (l1, l2, l4, t1, t2, t4)
    assert (l4 - l2) / 500 <= 3 and (t4 - t2) / 500 <= 3, (l2, l4, t2, t4)

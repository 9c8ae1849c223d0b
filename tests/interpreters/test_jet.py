"""The jet interpreter: every primitive's Taylor-mode rule against nested jvps, driven by the
rule tables' rows (tests/rules/test_coverage.py finds them); the checker; the derivation's
cost."""
from __future__ import annotations

import numpy as np
import pytest

import fxad
import fxad.numpy as jnp
from fxad.__main__ import all_primitives, rule_matrix
from fxad.errors import OpaqueFunctionError, RuleNotImplementedError
from fxad.interpreters.jet import jet_from_jvp
from fxad.test_util import check_jet
from tests.rules.common import primitives_used
from tests.rules.test_coverage import COVERED_ELSEWHERE, TABLES


def _rows_covering_every_primitive():
    """One row per primitive: the first row (table order) that binds it."""
    chosen, seen = [], set()
    for mod in TABLES.values():
        for row in mod.TABLE:
            used = primitives_used(row.fn, row.shapes, row) - seen
            if used:
                seen |= used
                chosen.append(pytest.param(row, used, id=f"{row.id}-{'-'.join(sorted(used))}"))
    return chosen


ROWS = _rows_covering_every_primitive()


# Primitives whose rows cost seconds at order 5 (iterative special functions, factorizations:
# nested jvps of them grow as 2^K): checked to order 3 here, to keep the suite's time.
SLOW = {"betainc", "betainc_d", "betaincinv", "cofactor", "expm", "lu_pivots_to_permutation",
        "zeta_ds", "zeta", "eig", "stdtr", "stdtr_ddf", "stdtrit", "det", "gennorm_cdf",
        "gennorm_cdf_dbeta", "gennorm_ppf", "qr", "lu", "lu_factor", "lu_solve", "slogdet",
        "expm_frechet", "polar", "random_gamma_grad", "gammaincinv", "gammainccinv",
        "gammainc", "gammaincc", "gammainc_da", "riemann_zeta", "solve_triangular",
        "random_gamma"}


@pytest.mark.parametrize("row,used", ROWS)
def test_jet_matches_nested_jvps_on_every_primitive(row, used):
    """At the row's own arguments (its domains), along a random direction. Where forward
    mode refuses (an opaque callback), Taylor mode refuses with the same error."""
    args = row.args()
    try:
        fxad.jvp(row.fn, tuple(args), tuple(np.ones_like(a) for a in args))
    except (OpaqueFunctionError, RuleNotImplementedError) as e:
        with pytest.raises(type(e)):
            fxad.jet(row.fn, tuple(args), tuple((np.ones_like(a),) * 3 for a in args))
        return
    check_jet(row.fn, args, order=3 if used & SLOW else 5, rtol=1e-8, atol=1e-10)


def test_every_primitive_has_a_jet_rule_and_a_row():
    """The jet column is complete, and every primitive is checked above (or elsewhere)."""
    for name, _, have in rule_matrix():
        assert have["jet"], f"{name} has no jet rule (no JVP rule to derive one from)"
    covered = set()
    for p in ROWS:
        covered |= p.values[1]
    missing = set(all_primitives()) - covered - set(COVERED_ELSEWHERE)
    assert not missing, missing


def test_checker_rejects_a_rule_wrong_in_the_third_coefficient(monkeypatch):
    from fxad.rules.elementwise import transcendental as elementwise
    x = (np.array([0.3, -1.1, 2.0]),)
    f = lambda v: jnp.exp(v) * 2.0
    check_jet(f, x, order=5)
    prim = elementwise.exp_p
    true_rule = prim.jet

    def wrong_third(primals, series, **params):
        out, s = (true_rule or jet_from_jvp(prim))(
            primals, series, **params)
        s = list(s)
        if len(s) >= 3:
            s[2] = fxad.lax.mul(s[2], 1.0 + 1e-6)
        return out, s
    monkeypatch.setattr(prim, "jet", wrong_third)
    check_jet(f, x, order=2)  # the first two terms are still right
    with pytest.raises(AssertionError, match="term 3"):
        check_jet(f, x, order=5)


def _count_eqns(f, order):
    x = np.array([0.3, 0.5])
    series = [(np.ones(2),) + (np.zeros(2),) * (order - 1)]

    def g(x, v):
        _, s = fxad.jet(f, (x,), ((v,) + (x * 0,) * (order - 1),))
        return s
    return len(fxad.make_jaxpr(g)(x, series[0][0]).eqns)


@pytest.mark.parametrize("name,f,growth", [
    # hand-written recurrences: O(K^2) coefficient products
    ("hand rules", lambda x: jnp.exp(jnp.sin(x) * x), 4.5),
    # derived from JVP rules: O(K^3) to O(K^4) (each order reruns the rule's fast
    # primitives); nested jvps would be exponential (2^K: a factor 256 here)
    ("derived rule", lambda x: jnp.arctan(x), 16),
    ("chain of derived rules", lambda x: jnp.arcsinh(jnp.arctan(jnp.cbrt(x + 2.0))), 16),
])
def test_cost_is_polynomial_in_the_order(name, f, growth):
    """Doubling the order multiplies the staged program's size by a bounded factor."""
    n = [_count_eqns(f, k) for k in (3, 6, 12)]
    assert n[2] <= growth * n[1] and n[1] <= growth * n[0], n

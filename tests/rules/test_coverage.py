"""The rule tables are complete: every primitive has its rules and a row in some table.

The tables are found, not listed: every tests/**/test_*.py module with a module-level TABLE of
rows (tests/rules/common.py's Row: a (name, function, argument shapes) tuple that also says
how to check it) is one, so a new row or a new family's table is seen as it lands."""
import ast
import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fxad.numpy as fnp
from fxad import lax
from fxad.__main__ import all_primitives, rule_matrix
from fxad.test_util import check_grads

from .common import Row, primitives_used

TESTS = Path(__file__).resolve().parent.parent

# Checked exactly elsewhere (finite differences cannot see them) or only as transposes.
COVERED_ELSEWHERE = {"stop_gradient": "test_piecewise.test_stop_gradient_is_zero_at_every_order",
                     "scatter_add": "transpose of getitem, in test_indexing",
                     # the linear half of custom_vjp_call's JVP: every custom_vjp row runs it
                     "custom_lin": "tests/rules/control/test_custom.py (custom_vjp_call rows)",
                     # collectives bind only inside a named axis: their own table there
                     **{p: "tests/rules/collective/test_collectives.py" for p in (
                         "psum", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all",
                         "ppermute", "axis_index")},
                     "spmd": "tests/api/test_spmd.py (pmap and shard_map against vmap)"}


def _defines_table(path):
    tree = ast.parse(path.read_text())
    return any(isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and any(
        isinstance(t, ast.Name) and t.id == "TABLE"
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))
        for node in tree.body)


def table_modules():
    """{module name: module} of every test module under tests/ with a module-level TABLE."""
    found = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if _defines_table(path):
            name = ".".join(("tests",) + path.relative_to(TESTS).with_suffix("").parts)
            found[name] = importlib.import_module(name)
    return found


TABLES = table_modules()


def test_tables_are_found_and_are_tables_of_rows():
    for module in ("elementwise.test_arithmetic", "special.test_basic", "reduction.test_reduce",
                   "structural.test_shape", "structural.test_indexing",
                   "reduction.test_cumulative", "contraction.test_dot", "contraction.test_fft",
                   "contraction.test_convolve", "linalg.test_solve", "control.test_call"):
        assert f"tests.rules.{module}" in TABLES, sorted(TABLES)
    for name, mod in TABLES.items():
        assert mod.TABLE, name
        # every row is a Row and the module runs row_tests on its table: one row drives the
        # grad, jvp, vmap and jit checks
        assert getattr(mod, "test_row", None) is not None, f"{name} has no test_row"
        for row in mod.TABLE:
            assert isinstance(row, Row) and len(row) == 3, (name, row)
            label, fn, shapes = row
            assert isinstance(label, str) and callable(fn), (name, row)
            assert all(isinstance(s, tuple) for s in shapes), (name, row)


def test_every_primitive_has_every_rule():
    for name, linear, have in rule_matrix():
        for kind in ("impl", "shape", "jvp", "batch"):
            assert have[kind], f"{name} lacks a {kind} rule"
        if linear:
            assert have["transpose"], f"linear primitive {name} lacks a transpose rule"


def test_every_primitive_has_a_table_row():
    used = set()
    for mod in TABLES.values():
        for row in mod.TABLE:
            used |= primitives_used(row[1], row[2], row)
    missing = set(all_primitives()) - used - set(COVERED_ELSEWHERE)
    assert not missing, f"primitives with no row in any rule table: {sorted(missing)}"


def test_rules_command_prints_the_matrix():
    out = subprocess.run([sys.executable, "-m", "fxad", "rules"], capture_output=True,
                         text=True, check=True).stdout
    assert "MISSING" not in out
    for name in all_primitives():
        assert name in out


@pytest.mark.parametrize("mode", ["fwd", "rev"])
@pytest.mark.parametrize("order", [1, 2])
def test_checker_rejects_a_rule_off_by_a_tenth_of_a_percent(monkeypatch, mode, order):
    """Corrupt sin's JVP by 0.1%: check_grads must fail, in each mode and order."""
    x = (np.array([0.3, -1.1, 2.0]),)
    f = lambda v: fnp.sin(v) * 2.0
    check_grads(f, x, order=order, modes=(mode,))  # the true rule passes
    from fxad.rules.elementwise.transcendental import cos_p, sin_p
    true_jvp = sin_p.jvp

    def off_by_0_1_percent(primals, tangents):
        out, t = true_jvp(primals, tangents)
        return out, lax.mul(t, 1.001)
    monkeypatch.setattr(sin_p, "jvp", off_by_0_1_percent)
    if order == 1:
        with pytest.raises(AssertionError):
            check_grads(f, x, order=1, modes=(mode,))
    else:  # corrupt only the second derivative: the first-order check still passes
        monkeypatch.setattr(sin_p, "jvp", true_jvp)
        true_cos = cos_p.jvp
        monkeypatch.setattr(cos_p, "jvp", lambda p, t: (lambda o, tt: (o, lax.mul(tt, 1.001)))(
            *true_cos(p, t)))
        with pytest.raises(AssertionError, match="order 2"):
            check_grads(f, x, order=2, modes=(mode,))


def test_every_lax_function_has_a_row():
    """Every public function of fxad.lax that binds a primitive is used by some table row,
    directly (lax.name) or through an fxad.numpy name bound to it (fnp.name). scatter_add is
    reached through the transpose of getitem."""
    import inspect
    src = "".join(inspect.getsource(m) for m in TABLES.values())
    fnp_names = {n: getattr(fnp, n) for n in dir(fnp) if not n.startswith("_")}
    missing = []
    for n in dir(lax):
        f = getattr(lax, n)
        if n.startswith("_") or not callable(f) or not getattr(f, "__module__", "").startswith(
                "fxad.rules") or f.__module__.startswith("fxad.rules.collective"):
            continue  # collectives bind inside a named axis only: tests/rules/collective/_cases
        aliases = [a for a, g in fnp_names.items()
                   if g is f or getattr(g, "__wrapped__", None) is f]  # (wrapped: lists)
        if f"lax.{n}(" in src or f"lax.{n}," in src or any(
                f"fnp.{a}(" in src or f"fnp.{a}," in src or f"fnp.{a}]" in src for a in aliases):
            continue
        missing.append(n)
    assert missing == ["scatter_add"], f"lax functions with no table row: {missing}"

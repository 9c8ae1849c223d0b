"""Smoke test for benchmarks/run.py: every workload once at a tiny size (the --quick sizes,
one round, no calibration), fxad variants only (no peers), checking only that every result
agrees with the workload's hand-written NumPy floor. No timing assertions."""
import importlib.util
import pathlib
import sys

import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"
_spec = importlib.util.spec_from_file_location("fxad_benchmarks_run", _PATH)
run = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = run  # dataclasses look their module up in sys.modules
_spec.loader.exec_module(run)

CFG = run.Config(quick=True)  # no peers: fxad against the floor only


@pytest.mark.parametrize("name", list(run.WORKLOADS))
def test_workload_agrees_with_floor(name):
    rows, _ = run.run_all([name], CFG, repeat=1, min_run=0.0)
    assert rows, name
    bad = [f"{r.variant}: {r.status}: {r.detail}" for r in rows if r.status != "ok"]
    assert not bad, "\n".join(bad)
    libs = {r.lib for r in rows}
    assert libs == {"numpy", "fxad"}
    for r in rows:  # the harness measured something for every row
        assert (r.seconds is not None) or (r.peak_bytes is not None), r.variant
    # the table renders in both formats
    assert name in run.format_table(rows)
    assert name in run.format_table(rows, markdown=True)


def test_compare_reports_mismatches():
    import numpy as np
    ok, _ = run.compare([np.ones(3)], [np.ones(3)], 1e-9, 1e-12)
    assert ok
    for got, ref in [([np.ones(3) * 1.001], [np.ones(3)]),       # values
                     ([np.ones(3, np.float32)], [np.ones(3)]),   # dtype
                     ([np.ones(4)], [np.ones(3)]),               # shape
                     ([np.ones(3), np.ones(3)], [np.ones(3)]),   # structure
                     ([np.full(3, np.nan)], [np.ones(3)])]:      # non-finite
        ok, msg = run.compare(got, ref, 1e-9, 1e-12)
        assert not ok and msg


def test_failures_show_in_the_table():
    import numpy as np
    w = run.Workload("toy", "toy", np.ones(2), 1e-9, 1e-12, [
        run.Variant("floor", lambda: np.ones(2), "numpy"),
        run.Variant("wrong", lambda: np.zeros(2), mode="eager"),
        run.Variant("crash", lambda: 1 / 0, mode="jit")])
    rows = run.run_workload(w, repeat=1, min_run=0.0)
    assert [r.status for r in rows] == ["ok", "FAIL", "CRASH"]
    table = run.format_table(rows)
    assert "FAIL" in table and "CRASH" in table

"""Smoke test for benchmarks/nn.py: the CNN step and the attention block once at their
--quick sizes, fxad variants only, each result checked against the hand-written NumPy floor
(the harness is benchmarks/run.py's). No timing assertions."""
import importlib.util
import pathlib
import sys

import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "nn.py"
_spec = importlib.util.spec_from_file_location("fxad_benchmarks_nn", _PATH)
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


@pytest.mark.parametrize("name", list(bench.WORKLOADS))
def test_workload_agrees_with_floor(name):
    cfg = bench.R.Config(quick=True)  # no peers
    w = bench.WORKLOADS[name](cfg)
    rows = bench.R.run_workload(w, repeat=1, min_run=0.0)
    bad = [f"{r.variant}: {r.status}: {r.detail}" for r in rows if r.status != "ok"]
    assert not bad, "\n".join(bad)
    assert {r.lib for r in rows} == {"numpy", "fxad"} and len(rows) == 3
    assert all(r.seconds is not None for r in rows)
    assert bench._peer_ratios(rows)  # the ratio lines render (peers "not run")

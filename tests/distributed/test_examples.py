"""The distributed examples run (--smoke) against the tests' cluster and print what they
promise; each in its own interpreter, as a user would run it."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples" / "distributed"
EXPECT = {
    "dataset_gradient.py": "per-example gradients on the cluster == vmap here",
    "data_parallel_training.py": "trained the same parameters",
    "ode_sweep.py": "best fit rate=",
}


def test_every_example_is_listed():
    assert {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")} == set(EXPECT)


@pytest.mark.parametrize("script", sorted(EXPECT))
def test_example_runs(script, client, tmp_path):
    env = dict(os.environ, FXAD_DASK_SCHEDULER=client.scheduler.address,
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                        os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), "--smoke"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert EXPECT[script] in proc.stdout, proc.stdout

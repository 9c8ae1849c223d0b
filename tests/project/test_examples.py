"""Every script in examples/ runs (with --smoke: small sizes, a few seconds each) and prints
what it promises. Each runs in its own interpreter, as a user would run it."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_"))

# A line each script prints only when it got to its point (its own asserts passed).
EXPECT = {
    "quickstart.py": "reduce_sum",
    "train_mlp.py": "final test accuracy",
    "newton_hvp_scipy.py": "reached (1, ..., 1)",
    "straight_through.py": "QAT: trained through the STE",
    "per_example_grads.py": "mean of per-example gradients == gradient of the mean loss",
    "rnn_scan.py": "validation loss",
    "tanh_derivatives.py": "all match the closed form",
    "norm_hessian.py": "Hessian in (x, gamma)",
    "custom_rules.py": "hessian(safe_norm) matches",
    "show_program.py": "wrote the grad program as DOT",
    "plain_numpy_science.py": "jit(grad) and vmap(grad) agree with grad",
    "jax_autodiff_cookbook.py": "autodiff cookbook: every cell ran",
    "jax_custom_derivative_rules.py": "custom derivative rules: every cell ran",
    "ode_fit.py": "fitted Lotka-Volterra parameters",
    "hyperparameter_gradient.py": "implicit gradient matches finite differences",
    "gaussian_process.py": "a positive definite Hessian at the optimum",
    "cnn_and_transformer.py": "CNN and transformer block trained end to end",
    "pinn_poisson.py": "PINN trained",
    "taylor_ode.py": "Taylor-series integrator agrees with solve_ivp",
    "flop_counter.py": "flop counter: every count checked",
    "reaction_diffusion.py": "fitted reaction-diffusion parameters",
}


def test_examples_found():
    assert {p.name for p in EXAMPLES} >= set(EXPECT)


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script, tmp_path):
    # TMPDIR too: scripts that default to a temp directory write under tmp_path
    env = dict(os.environ, MPLBACKEND="Agg", TMPDIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                        os.environ.get("PYTHONPATH")])))
    # cwd is a temp dir so nothing a script writes can land in the repository
    proc = subprocess.run([sys.executable, str(script), "--smoke"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{script.name} failed:\n{proc.stdout[-3000:]}\n" \
                                 f"{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), f"{script.name} printed nothing"
    expected = EXPECT.get(script.name)
    if expected is not None:
        assert expected in proc.stdout, proc.stdout[-3000:]


def test_design_notes_print_what_their_code_prints():
    """The code blocks in README and notes/ run and still print the output written under them
    (the notes quote programs and error messages; a change to fxad must not leave them stale).
    Floats are compared as numbers, so another CPU or BLAS cannot fail it
    (tests/project/test_notes.py)."""
    notes = [str(ROOT / "README.md")] + sorted(str(p) for p in (ROOT / "notes").glob("*.md"))
    r = subprocess.run([sys.executable, str(ROOT / "notes" / "check_notes.py"), *notes],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]

"""The package layout (DESIGN.md §8): every module JAX's public tree has and fxad mirrors is an
importable module in fxad, the way JAX programs import it; packages by responsibility, no
file past 600 lines, no catch-all module names, and tests/ mirroring fxad/."""
import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fxad

FXAD = Path(fxad.__file__).resolve().parent
TESTS = Path(__file__).resolve().parents[1]

DISTRIBUTIONS = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet",
                 "expon", "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
                 "logistic", "lognorm", "multinomial", "multivariate_normal", "nbinom", "norm",
                 "pareto", "poisson", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]

# JAX's module path -> fxad's (the same below the package name)
MODULES = ["numpy", "numpy.linalg", "numpy.fft", "lax", "lax.linalg", "nn", "nn.initializers",
           "random", "tree_util", "tree", "flatten_util", "custom_derivatives", "errors",
           "test_util", "debug", "scipy", "scipy.special", "scipy.linalg", "scipy.signal",
           "scipy.integrate", "scipy.optimize", "scipy.stats", "typing", "example_libraries",
           "example_libraries.stax", "example_libraries.optimizers"] + \
    [f"scipy.stats.{d}" for d in DISTRIBUTIONS]


def test_every_mirrored_module_imports_as_a_module():
    """`import fxad.<path> as m` for each, in a fresh interpreter (as a JAX program's
    `import jax.<path>`), and each module is also the attribute `fxad.<path>`."""
    code = "\n".join(f"import fxad.{p} as m; assert m.__name__ == 'fxad.{p}'" for p in MODULES)
    subprocess.run([sys.executable, "-c", code], check=True)
    for path in MODULES:
        mod = importlib.import_module(f"fxad.{path}")
        obj = fxad
        for part in path.split("."):
            obj = getattr(obj, part)
        assert obj is mod, path


def test_jax_style_imports_and_calls():
    from fxad.nn.initializers import glorot_normal
    import fxad.scipy.stats.norm as norm
    from fxad.scipy.stats import multivariate_normal
    from fxad.lax.linalg import eigh
    assert glorot_normal()(fxad.random.key(0), (3, 2)).shape == (3, 2)
    assert np.isclose(norm.logpdf(0.3, 1.0, 2.0), -1.6733357137646179)
    assert np.isclose(fxad.scipy.stats.norm.logpdf(0.3, loc=1.0, scale=2.0),
                      -1.6733357137646179)
    assert np.isclose(norm(1.0, 2.0).logpdf(0.3), -1.6733357137646179)  # SciPy's frozen form
    assert np.isclose(multivariate_normal(np.zeros(2), np.eye(2)).logpdf(np.ones(2)),
                      -np.log(2 * np.pi) - 1.0)
    v, w = eigh(np.diag([2.0, 1.0]))
    np.testing.assert_allclose(w, [1.0, 2.0])
    assert fxad.checkpoint_policies.dots_saveable is not None  # JAX's attribute


def test_frozen_distribution_differentiates_in_its_parameters():
    import fxad.scipy.stats.norm as norm
    g = fxad.grad(lambda s: norm(1.0, s).logpdf(0.3))(2.0)
    np.testing.assert_allclose(g, -0.5 + 0.7 ** 2 / 8.0, rtol=1e-12)
    with pytest.raises(AttributeError, match="logpdf, pdf"):
        fxad.scipy.stats.vonmises(1.0).cdf(0.1)


@pytest.mark.parametrize("gone", ["nn_pooling", "nn_activations", "nn_initializers", "lax_more",
                                  "lax_convolution", "lax_windowed", "implicit"])
def test_prefixed_modules_are_packages_now(gone):
    assert not (FXAD / f"{gone}.py").exists() and not hasattr(fxad, gone)


def _sources(root):
    return [p for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts]


def test_no_file_under_fxad_is_over_600_lines():
    long = {str(p.relative_to(FXAD)): n for p in _sources(FXAD)
            if (n := len(p.read_text().splitlines())) > 600}
    assert not long, long


def test_no_catch_all_module_names():
    bad = [str(p.relative_to(FXAD)) for p in _sources(FXAD)
           if any(w in p.stem.lower().split("_") for w in ("more", "misc", "extra", "extras"))]
    assert not bad, bad


def test_rule_tests_mirror_rule_files():
    """tests/rules/<family>/test_<file>.py exists for every fxad/rules/<family>/<file>.py that
    defines primitives."""
    missing = []
    for p in _sources(FXAD / "rules"):
        rel = p.relative_to(FXAD / "rules")
        if len(rel.parts) != 2 or p.name.startswith("_") or "Primitive(" not in p.read_text() \
                and "elementwise(" not in p.read_text():
            continue
        want = TESTS / "rules" / rel.parent / f"test_{p.name}"
        if not want.exists():
            missing.append(str(want.relative_to(TESTS.parent)))
    assert not missing, missing

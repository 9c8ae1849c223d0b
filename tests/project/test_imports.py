"""`import fxad` stays light: SciPy's integrate, optimize, stats and sparse load when their
fxad namespaces are first used, and those namespaces are reachable every way Python offers."""
import subprocess
import sys

import pytest

HEAVY = ("scipy.integrate", "scipy.optimize", "scipy.stats", "scipy.sparse")


def _run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return out.stdout.split()


def test_import_fxad_leaves_heavy_scipy_modules_unloaded():
    loaded = _run("import sys, fxad\n"
                  f"print(*[m in sys.modules for m in {HEAVY!r}])")
    assert loaded == ["False"] * len(HEAVY)


@pytest.mark.parametrize("access", [
    "m = fxad.scipy.integrate",
    "from fxad.scipy import integrate as m",
    "import fxad.scipy.integrate as m",
    "m = getattr(fxad.scipy, 'integrate')",
])
def test_lazy_namespace_reachable(access):
    out = _run(f"import sys, fxad\n{access}\n"
               "print(m.__name__, 'scipy.integrate' in sys.modules, "
               "callable(m.odeint), m is sys.modules['fxad.scipy.integrate'])")
    assert out == ["fxad.scipy.integrate", "True", "True", "True"]


def test_lazy_namespaces_listed_and_starred():
    import fxad.scipy
    assert {"integrate", "optimize", "stats", "special", "linalg", "signal"} <= set(
        dir(fxad.scipy))
    ns = {}
    exec("from fxad.scipy import *", ns)
    assert set(fxad.scipy.__all__) <= set(ns)
    assert ns["optimize"].minimize is fxad.scipy.optimize.minimize
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        fxad.scipy.nope  # noqa: B018

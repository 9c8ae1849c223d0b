"""`import fxad` stays light: fxad.scipy's integrate, optimize and stats (which import
SciPy's) and fxad.sparse load when first used, and those namespaces are reachable every way
Python offers. (Whether SciPy's own modules import one another is SciPy's business and varies
between its versions: the test names fxad's modules.)"""
import subprocess
import sys

import pytest

HEAVY = ("fxad.scipy.integrate", "fxad.scipy.optimize", "fxad.scipy.stats", "fxad.sparse")


def _run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return out.stdout.split()


def test_import_fxad_leaves_heavy_namespaces_unloaded():
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
               "print(m.__name__, 'fxad.scipy.integrate' in sys.modules, "
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

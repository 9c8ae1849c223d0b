"""What pyproject.toml declares is what is tested and enforced: every requirement has a
minimum (CI's second run installs exactly those, via .ci/minimums.py), and fxad refuses a NumPy
older than its declared minimum instead of silently computing other dtypes with it."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import scipy

import fxad._versions

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pip's own copy of the same parser
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _minimum(name):
    for req in PROJECT["dependencies"]:
        m = re.fullmatch(r"\s*([\w.-]+)\s*>=\s*([\d.]+).*", req)
        if m and m.group(1).lower() == name:
            return tuple(int(p) for p in m.group(2).split("."))
    raise AssertionError(f"no minimum for {name} in {PROJECT['dependencies']}")


def _version(module):
    return tuple(int(p) for p in re.match(r"[\d.]+\d", module.__version__).group().split("."))


def test_minimums_script_pins_every_requirement():
    out = subprocess.run([sys.executable, str(ROOT / ".ci" / "minimums.py")], check=True,
                         capture_output=True, text=True).stdout.split()
    reqs = PROJECT["dependencies"] + PROJECT["optional-dependencies"]["test"]
    assert len(out) == len(reqs) and {"numpy", "scipy", "pytest", "mpmath"} <= \
        {pin.split("==")[0] for pin in out}, out
    for pin, req in zip(out, reqs):
        name, version = pin.split("==")
        assert req.replace(" ", "").startswith(f"{name}>={version}"), (pin, req)
    py = subprocess.run([sys.executable, str(ROOT / ".ci" / "minimums.py"), "--python"],
                        check=True, capture_output=True, text=True).stdout.strip()
    assert PROJECT["requires-python"].replace(" ", "") == f">={py}"


def test_minimums_script_pins_the_distributed_extra():
    """Requirements with extras of their own (dask[array]) are pinned as written."""
    out = subprocess.run([sys.executable, str(ROOT / ".ci" / "minimums.py"), "--extra",
                          "distributed"], check=True, capture_output=True, text=True).stdout.split()
    reqs = PROJECT["optional-dependencies"]["distributed"]
    assert [pin.split("==")[0] for pin in out[-len(reqs):]] == \
        [re.split(r"\s*>=", r)[0] for r in reqs]
    for pin, req in zip(out[-len(reqs):], reqs):
        assert req.replace(" ", "") == pin.replace("==", ">=")


def test_the_running_versions_are_declared_ones():
    assert _version(np)[:2] >= _minimum("numpy")
    assert _version(scipy)[:2] >= _minimum("scipy")
    assert sys.version_info[:2] >= tuple(map(int, PROJECT["requires-python"][2:].split(".")))


def test_fxad_refuses_a_numpy_older_than_declared():
    assert fxad._versions.MIN_NUMPY == _minimum("numpy")
    major, minor = fxad._versions.MIN_NUMPY
    older = f"{major - 1}.26.4" if minor == 0 else f"{major}.{minor - 1}.0"
    code = f"import numpy; numpy.__version__ = {older!r}; import fxad"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0 and "ImportError" in r.stderr, r.stderr
    assert f"fxad needs NumPy >= {major}.{minor}, this is NumPy {older}" in r.stderr, r.stderr
    same = f"import numpy; numpy.__version__ = '{major}.{minor}.0'; import fxad"
    subprocess.run([sys.executable, "-c", same], check=True, cwd=ROOT)

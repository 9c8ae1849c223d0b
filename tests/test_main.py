"""`python -m fxad rules`: every primitive with its rule columns and the file and line where its
block starts, filterable by rule family."""
import linecache
import re
import subprocess
import sys

import pytest

import fxad  # noqa: F401  (defines every primitive)
from fxad.__main__ import all_primitives, families


def _run(*args):
    return subprocess.run([sys.executable, "-m", "fxad", "rules", *args], capture_output=True,
                          text=True)


def test_every_primitive_is_placed_at_the_statement_that_defines_it():
    """The recorded line is the one defining the primitive in its own rule file, also for the
    primitives a helper creates (`elementwise("sin", ...)`, `_cumulative(...)`), not a line
    inside the helper."""
    wrong = []
    for name, p in all_primitives().items():
        line = linecache.getline(p.file, p.line)
        if f'"{name}"' not in line and not re.search(rf"\b{name}_p\s*=", line):
            wrong.append(f"{name}: {p.file}:{p.line}: {line.strip()}")
    assert not wrong, "\n".join(wrong)
    for p in all_primitives().values():  # the module is the file's
        assert p.file.endswith("/" + p.module.replace(".", "/") + ".py"), (p.name, p.module)


def test_rule_files_hold_their_families_primitives():
    prims = all_primitives()
    assert prims["sin"].family == "elementwise"
    assert prims["eigh"].family == "linalg"
    assert prims["scan"].family == "control"
    assert prims["dot_general"].file.endswith("fxad/rules/contraction/dot.py")
    assert prims["erf"].family == "special" and prims["erf"].module.startswith("fxad.rules.special.")
    assert {"elementwise", "structural", "reduction", "contraction", "linalg", "special",
            "random", "control"} <= set(families())


def test_rules_command_prints_where_each_block_is():
    out = _run().stdout.splitlines()
    assert out[0].split()[-2:] == ["defined", "at"]
    rows = {line.split()[0]: line.split()[-1] for line in out[1:]}
    assert set(rows) == set(all_primitives())
    p = all_primitives()["cholesky"]
    assert rows["cholesky"].endswith(f"fxad/rules/linalg/{p.file.rsplit('/', 1)[1]}:{p.line}")


@pytest.mark.parametrize("family", ["linalg", "control"])
def test_rules_command_filters_by_family(family):
    out = _run("--family", family).stdout.splitlines()[1:]
    want = {n for n, p in all_primitives().items() if p.family == family}
    assert {line.split()[0] for line in out} == want and want
    assert all(f"fxad/rules/{family}/" in line for line in out)


def test_an_unknown_family_names_the_families():
    r = _run("--family", "linag")
    assert r.returncode != 0 and "linalg" in r.stderr and "elementwise" in r.stderr

"""Print the oldest versions pyproject.toml allows, for CI's minimum-versions run.

    python .ci/minimums.py            # one pin a line: numpy==2.1, scipy==1.15, ..., pytest==8.0
    python .ci/minimums.py --extra compile   # ... and the compile extra's: numba==0.61
    python .ci/minimums.py --extra docs --extra examples   # ... sphinx==8.1, matplotlib==3.9
    python .ci/minimums.py --extra distributed   # ... dask[array]==2024.8.0, ...
    python .ci/minimums.py --python   # the oldest Python: 3.10

Pins every runtime dependency and every test-extra requirement at its declared minimum, and
those of each optional extra named with --extra (CI installs and tests the compile extra at its
minimum too), so each minimum pyproject.toml states is one that CI installs and tests. A
requirement without a `>=` minimum is an error: a version nobody has tested must not be claimed
by omission; so is an --extra that pyproject.toml does not declare.
"""
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pip's own copy of the same parser
    from pip._vendor import tomli as tomllib

project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())[
    "project"]
if "--python" in sys.argv[1:]:
    m = re.fullmatch(r"\s*>=\s*([\d.]+)\s*", project["requires-python"])
    if m is None:
        sys.exit(f"requires-python must be '>=X.Y', not {project['requires-python']!r}")
    print(m.group(1))
else:
    args, extras = sys.argv[1:], ["test"]
    while "--extra" in args:
        i = args.index("--extra")
        if i + 1 == len(args) or args[i + 1] not in project["optional-dependencies"]:
            sys.exit(f"--extra needs one of {sorted(project['optional-dependencies'])}")
        extras.append(args[i + 1])
        del args[i:i + 2]
    reqs = list(project["dependencies"])
    for extra in extras:
        reqs += project["optional-dependencies"][extra]
    for req in dict.fromkeys(reqs):  # a requirement two extras share, once
        m = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9,._-]+\])?)\s*>=\s*"
                         r"([\w.]+)\s*(,\s*<[^;]*)?", req)
        if m is None:
            sys.exit(f"pyproject.toml: {req!r} declares no minimum ('name>=version'), so CI "
                     f"cannot test it")
        print(f"{m.group(1)}=={m.group(2)}")

"""`python -m fxad rules [--family NAME]`: every primitive x {impl, shape, jvp, transpose,
batch, jet, lowering}, with the file and line where its block starts."""
from __future__ import annotations

import argparse
import os
import sys

from . import core

COLUMNS = ("impl", "shape", "jvp", "transpose", "batch", "jet", "lowering")


def all_primitives():
    """Every primitive fxad defines (wherever its block is), by name."""
    import fxad  # noqa: F401  (defines them all)
    found = {p.name: p for p in core.primitives() if (p.module or "").startswith("fxad.")}
    return dict(sorted(found.items()))


def rule_matrix():
    """(name, linear, {column: have it}) per primitive. A lowering is the primitive's own
    source form in jit's generated code; without one the code calls its impl."""
    rows = []
    for name, p in all_primitives().items():
        rows.append((name, p.linear, {"impl": p.impl is not None,
                                      "shape": p.abstract_eval is not None,
                                      "jvp": p.jvp is not None,
                                      "transpose": p.transpose is not None,
                                      "batch": p.batch is not None,
                                      "jet": p.jet is not None or p.jvp is not None,
                                      "lowering": bool(p.lowerings)}))
    return rows


def where(p):
    """fxad/rules/<family>/<file>.py:<line>, relative to the directory above the package."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(core.__file__)))
    path = os.path.relpath(p.file, root) if p.file else "?"
    return f"{path}:{p.line}"


def families():
    return sorted({p.family for p in all_primitives().values()})


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m fxad", description=(
        "rules: every primitive, a column per rule, and where its block is"))
    parser.add_argument("command", choices=["rules"])
    parser.add_argument("--family", help="only this rule family (the folder under fxad/rules/): "
                                         + ", ".join(families()))
    args = parser.parse_args(argv)
    prims = all_primitives()
    if args.family is not None and args.family not in families():
        parser.error(f"no rule family {args.family!r}; the families are: {', '.join(families())}")
    w = max(len(n) for n in prims) + 1
    print(f"{'primitive':{w}} {'linear':7} " + " ".join(f"{c:9}" for c in COLUMNS) + " defined at")
    for name, linear, have in rule_matrix():
        p = prims[name]
        if args.family is not None and p.family != args.family:
            continue
        derived = getattr(p.jet, "derived", p.jet is None)
        marks = ["derived" if c == "jet" and have[c] and derived
                 else "yes" if have[c] else "-" if c == "transpose" and not linear
                 else "impl" if c == "lowering" else "MISSING" for c in COLUMNS]
        print(f"{name:{w}} {'linear' if linear else '':7} " + " ".join(f"{m:9}" for m in marks)
              + " " + where(p))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # `python -m fxad rules | head`: the reader stopped early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)

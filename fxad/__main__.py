"""`python -m fxad rules`: every primitive x {impl, shape, jvp, transpose, batch, jet,
lowering}."""
from __future__ import annotations

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
    source form in jit's generated code; without one the code calls its impl. A jet rule is
    the primitive's own or, where none is written, the one Taylor mode derives from its JVP
    rule (fxad/interpreters/jet.py): "derived" in the table."""
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


def main(argv):
    if argv[:1] != ["rules"]:
        print("usage: python -m fxad rules")
        return 2
    print(f"{'primitive':22} {'linear':7} " + " ".join(f"{c:9}" for c in COLUMNS))
    prims = all_primitives()
    for name, linear, have in rule_matrix():
        derived = getattr(prims[name].jet, "derived", prims[name].jet is None)
        marks = ["derived" if c == "jet" and have[c] and derived
                 else "yes" if have[c] else "-" if c == "transpose" and not linear
                 else "impl" if c == "lowering" else "MISSING" for c in COLUMNS]
        print(f"{name:22} {'linear' if linear else '':7} " + " ".join(f"{m:9}" for m in marks))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""`python -m fxad rules`: the primitive x {impl, shape, jvp, transpose, batch} matrix."""
from __future__ import annotations

import sys

from .core import Primitive


def all_primitives():
    """Every primitive defined in fxad's rule files, by name."""
    from . import rules
    found = {}
    for mod in vars(rules).values():
        for v in vars(mod).values() if hasattr(mod, "__dict__") else ():
            if isinstance(v, Primitive):
                found[v.name] = v
    return dict(sorted(found.items()))


def rule_matrix():
    rows = []
    for name, p in all_primitives().items():
        rows.append((name, p.linear, {"impl": p.impl is not None,
                                      "shape": p.abstract_eval is not None,
                                      "jvp": p.jvp is not None,
                                      "transpose": p.transpose is not None,
                                      "batch": p.batch is not None}))
    return rows


def main(argv):
    if argv[:1] != ["rules"]:
        print("usage: python -m fxad rules")
        return 2
    cols = ["impl", "shape", "jvp", "transpose", "batch"]
    print(f"{'primitive':22} {'linear':7} " + " ".join(f"{c:9}" for c in cols))
    for name, linear, have in rule_matrix():
        marks = ["yes" if have[c] else "-" if c == "transpose" and not linear else "MISSING"
                 for c in cols]
        cells = " ".join(f"{m:9}" for m in marks)
        print(f"{name:22} {'linear' if linear else '':7} {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The soak: `python -m tests.audits.fuzz --n 10000 --seed S` (from the repository root) runs
programs, prints the failures grouped by property and known bug, and a summary of the op
kinds used and the primitives staged."""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

import fxad

from . import __doc__ as FUZZ_DOC
from .checks import PROPERTIES
from .minimize import _eqns
from .run import run_fuzz


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.audits.fuzz", description=FUZZ_DOC.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="number of programs")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (deterministic)")
    ap.add_argument("--max-ops", type=int, default=12)
    ap.add_argument("--props", default=",".join(PROPERTIES),
                    help="comma-separated subset of: " + ", ".join(PROPERTIES))
    ap.add_argument("--skip-known", action="store_true",
                    help="do not count failures explained by a known fxad bug (KNOWN_BUGS)")
    ap.add_argument("--show", type=int, default=3,
                    help="failures printed in full per (property, known bug) group")
    ap.add_argument("--every", type=int, default=100, help="progress line every N programs")
    args = ap.parse_args(argv)
    props = [s for s in args.props.split(",") if s]
    unknown = set(props) - set(PROPERTIES)
    if unknown:
        ap.error(f"unknown properties {sorted(unknown)}")
    from fxad.__main__ import all_primitives
    start = time.time()
    count, ops, prims, slowest = [0], Counter(), Counter(), [(0.0, None)]
    last = [time.time()]

    def on_program(p, failures):
        now = time.time()
        if now - last[0] > slowest[0][0]:
            slowest[0] = (now - last[0], count[0])
        last[0] = now
        count[0] += 1
        ops.update(p.ops())
        try:
            prims.update({e.primitive.name for e in _eqns(fxad.make_jaxpr(p.build())(*p.x0()))})
        except Exception:  # noqa: BLE001  (a failing program is reported by its property)
            pass
        if count[0] % args.every == 0:
            print(f"[{now - start:7.1f}s] {count[0]} programs, {len(failures)} failures",
                  flush=True)

    print(f"fxad fuzz: n={args.n} seed={args.seed} props={props}", flush=True)
    failures = run_fuzz(args.n, seed=args.seed, props=props, max_ops=args.max_ops,
                        on_program=on_program, collect=True, skip_known=args.skip_known)
    elapsed = time.time() - start
    groups = {}
    for e in failures:
        groups.setdefault((e.known is not None, e.prop, e.known), []).append(e)
    for (is_known, prop, known), es in sorted(groups.items(), key=lambda kv: kv[0][0]):
        for k, e in enumerate(es[:args.show]):
            print(f"\n===== {'known bug ' + known if is_known else 'NEW'}: {prop!r} failure "
                  f"{k + 1}/{len(es)} =====\n{e}", flush=True)
    new = [e for e in failures if e.known is None]
    print(f"\n===== summary =====\nprograms run: {count[0]}\nfailures: {len(failures)} "
          f"({len(new)} new, {len(failures) - len(new)} explained by known fxad bugs)\n"
          f"time: {elapsed:.1f}s ({elapsed / max(count[0], 1) * 1000:.0f} ms/program; slowest "
          f"{slowest[0][0]:.1f}s, program #{slowest[0][1]})")
    if failures:
        print("failures by property, known bug and minimized op list:")
        by = Counter((e.prop, e.known or "NEW", tuple((e.minimized or e.program).ops()))
                     for e in failures)
        for (prop, known, o), c in by.most_common():
            print(f"  {c:5d}  {prop} [{known}]: {list(o)}")
    print(f"op kinds used ({len(ops)}): " + ", ".join(f"{k}={v}" for k, v in sorted(ops.items())))
    everyone = set(all_primitives())
    missing = sorted(everyone - set(prims))
    print(f"primitives staged: {len(everyone & set(prims))} of {len(everyone)}; never: {missing}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

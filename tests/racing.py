"""Running one piece of a test's work in several threads at once."""
from __future__ import annotations

import sys
import threading


def race(work, args):
    """Run `work(a)` for each `a` in `args`, each in a thread of its own, all at once, with the
    interpreter switching threads as often as it can (so that races show up); fails with the
    first error a thread raised."""
    errors = []

    def run(a):
        try:
            work(a)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)
    threads = [threading.Thread(target=run, args=(a,)) for a in args]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, repr(errors[0])

"""Running the fuzzer: every property on a program, and the hypothesis drivers (deterministic:
derandomized, or seeded)."""
from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, seed as hypothesis_seed, settings

from .checks import PROPERTIES
from .generator import programs
from .minimize import FuzzFailure, known_bug, minimize, run_property


def check_program(p, props=None, do_minimize=True, skip_known=False):
    """Run every property on p; raise FuzzFailure at the first that fails (skip_known: a
    failure explained by a known, reported fxad bug is not one)."""
    for name in props or PROPERTIES:
        err = run_property(p, name)
        if err is not None and skip_known and known_bug(name, p):
            continue
        if err is not None:
            mini = minimize(p, name) if do_minimize else None
            if mini is p:
                mini = None
            merr = run_property(mini, name) if mini is not None else None
            raise FuzzFailure(name, p, merr or err, mini)


def fuzz_settings(n, seed=None):
    """Deterministic: derandomized, or seeded. No shrinking: hypothesis only draws a seed per
    program (shrinking it just gives other programs); `minimize` shrinks failures instead."""
    return settings(max_examples=n, deadline=None, derandomize=seed is None, database=None,
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=list(HealthCheck), print_blob=False)


def run_fuzz(n, seed=None, props=None, max_ops=12, on_program=None, collect=False,
             skip_known=False, makers=None):
    """Run n programs. collect=False: raise the first FuzzFailure (hypothesis shows it);
    collect=True: return the list of FuzzFailures and keep going. makers: only these
    maker functions (default: every registered one)."""
    failures = []

    @fuzz_settings(n, seed)
    @given(programs(max_ops=max_ops, makers=makers))
    def fuzz(p):
        try:
            check_program(p, props, skip_known=skip_known)
        except FuzzFailure as e:
            if not collect:
                raise
            failures.append(e)
        finally:
            if on_program is not None:
                on_program(p, failures)

    if seed is not None:
        fuzz = hypothesis_seed(seed)(fuzz)
    fuzz()
    return failures

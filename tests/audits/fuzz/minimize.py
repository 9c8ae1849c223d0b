"""Failures: running one property, minimizing a failing program, labelling failures that
known (reported) fxad bugs explain, and the report (a runnable script, fxad's jaxpr, a
finite-difference triage)."""
from __future__ import annotations

import traceback

import numpy as np

import fxad
from fxad.test_util import check_grads

from .checks import PROPERTIES
from .program import Line, Program


def _eqns(closed):
    """Every equation of a jaxpr, nested jaxprs (jit, scan, cond, ...) included."""
    from fxad.ir.jaxpr import ClosedJaxpr, Jaxpr
    stack = [closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed]
    while stack:
        j = stack.pop()
        for e in j.eqns:
            yield e
            for v in e.params.values():
                for w in (v if isinstance(v, (list, tuple)) else [v]):
                    if isinstance(w, ClosedJaxpr):
                        stack.append(w.jaxpr)
                    elif isinstance(w, Jaxpr):
                        stack.append(w)


# Known, reported fxad bugs that explain a property failing: {property: [predicate(program)]}.
# Each fixed one is removed (the two found so far, concatenate's and expm_frechet's float32
# cotangent/tangent dtypes, are fixed and pinned by regression tests in audits/test_fuzz.py).
KNOWN_BUGS: dict = {}


def known_bug(prop, p):
    """The name of a known (reported) fxad bug that explains `prop` failing on p, or None."""
    for pred in KNOWN_BUGS.get(prop, []):
        try:
            if pred(p):
                return pred.__name__
        except Exception:  # noqa: BLE001
            pass
    return None


class FuzzFailure(AssertionError):
    def __init__(self, prop, program, error, minimized=None):
        self.prop, self.program, self.error, self.minimized = prop, program, error, minimized
        self.known = known_bug(prop, minimized or program)
        super().__init__(report(prop, program, error, minimized, self.known))


def _error_text(e):
    if isinstance(e, AssertionError):
        return f"{type(e).__name__}: {e}"
    return "".join(traceback.format_exception(type(e), e, e.__traceback__)[-6:])


def run_property(p, name):
    """None if property `name` holds on program p, else the exception."""
    try:
        f = p.build()
        PROPERTIES[name](p, f)
    except Exception as e:  # noqa: BLE001  (an fxad error is a failure too)
        return e
    return None


def minimize(p, name):
    """A small program still failing `name`: the smallest sub-program with one output node
    (its ancestors and the inputs they use), then without the jit/checkpoint wrappers that
    are not needed for the failure."""
    best = p
    for node in range(p.n_in, p.n_in + len(p.lines)):
        sub = p.sub_program([node], drop_inputs=True)
        if len(sub.lines) < len(best.lines) and run_property(sub, name) is not None:
            best = sub
    if best is p:
        sub = p.sub_program(p.outputs, drop_inputs=True)
        if (len(sub.lines), sub.n_in) < (len(p.lines), p.n_in) and \
                run_property(sub, name) is not None:
            best = sub
    for k, ln in enumerate(best.lines):
        if ln.wrap:
            lines = list(best.lines)
            lines[k] = Line(ln.name, ln.kind, ln.expr, ln.args, "")
            sub = Program(best.in_shapes, best.inputs, lines, best.outputs, best.in_axes,
                          best.out_axes, best.shapes, best.values)
            if run_property(sub, name) is not None:
                best = sub
    return best


def _float32_jaxpr(p):
    return fxad.make_jaxpr(p.build())(*[a.astype(np.float32) for a in p.x0()])


def jaxpr_text(p, float32=False):
    try:
        if float32:
            return str(_float32_jaxpr(p))
        return str(fxad.make_jaxpr(p.build())(*p.x0()))
    except Exception as e:  # noqa: BLE001
        return f"(make_jaxpr failed: {type(e).__name__}: {e})"


def fd_triage(p):
    """check_grads' error at several finite-difference steps. A wrong derivative gives an
    error independent of eps; rounding noise grows like 1/eps, truncation like eps^2."""
    import re
    f, out = p.build(), []
    for eps in (1e-3, 1e-4, 1e-5, 1e-6, 1e-7):
        try:
            check_grads(f, p.x0(), order=2, modes=("fwd", "rev"), eps=eps)
            out.append(f"eps={eps:.0e}: pass")
        except AssertionError as e:
            m = re.search(r"max error (\S+)", str(e))
            out.append(f"eps={eps:.0e}: {m.group(1) if m else 'fail'}")
        except Exception as e:  # noqa: BLE001
            out.append(f"eps={eps:.0e}: {type(e).__name__}")
    return ("finite-difference triage (error per eps; constant = a wrong derivative, ~1/eps = "
            "rounding noise, ~eps^2 = truncation): " + ", ".join(out))


def report(prop, p, error, minimized=None, known=None):
    parts = [f"fuzz property {prop!r} failed" +
             (f" (known fxad bug: {known})" if known else ""), _error_text(error).rstrip()]
    if prop == "grads":
        parts.append(fd_triage(minimized or p))
    f32 = prop == "dtypes"
    for title, q in ([("minimized program", minimized)] if minimized is not None else []) + \
                    [("program", p)]:
        parts += [f"--- {title}: ops {q.ops()}; in_axes={q.in_axes} out_axes={q.out_axes}",
                  q.script() + ("  # (float32 inputs for this property)" if f32 else ""),
                  "--- make_jaxpr" + (" (float32 inputs):" if f32 else ":"),
                  jaxpr_text(q, float32=f32)]
    parts += ["--- vmap batch (inputs):", p.batch_script()]
    return "\n".join(parts)

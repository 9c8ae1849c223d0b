"""Pretty printer: one equation per line, e.g. `c:f64[3] = mul a b`."""
from __future__ import annotations

import keyword

import numpy as np

from .vars import Literal


class Namer:
    """Names variables a, b, ..., z, ba, bb, ... in order of first appearance, skipping Python
    keywords (`if`, `in`, ...) so the names are valid in generated source."""

    def __init__(self):
        self.names = {}
        self._count = 0

    def _next(self):
        while True:
            n, s = self._count, ""
            self._count += 1
            while True:
                s = chr(ord("a") + n % 26) + s
                n //= 26
                if n == 0:
                    break
            if not keyword.iskeyword(s):
                return s

    def __call__(self, v):
        if type(v) is Literal:
            return repr(v.val)
        name = self.names.get(v)
        if name is None:
            self.names[v] = name = self._next()
        return name


def _pp_param(value):
    if isinstance(value, np.dtype) or isinstance(value, type):
        return np.dtype(value).name
    if hasattr(value, "jaxpr") or type(value).__name__ == "Jaxpr":
        return "{...}"
    return repr(value)


def pp_eqn(eqn, namer, indent="    "):
    outs = " ".join(f"{namer(v)}:{v.aval.str_short()}" for v in eqn.outvars)
    params = ""
    if eqn.params:
        # Functions (a custom rule's fwd/bwd) are left out: `name` says whose they are.
        params = "[" + " ".join(f"{k}={_pp_param(v)}" for k, v in sorted(eqn.params.items())
                                if not _is_subjaxpr(v) and not callable(v)) + "]"
        if params == "[]":
            params = ""
    args = " ".join(namer(v) for v in eqn.invars)
    head = f"{outs} = " if eqn.outvars else ""  # no outputs: an effect, like a call
    line = f"{head}{eqn.primitive.name}{params} {args}".rstrip()
    for k, v in sorted(eqn.params.items()):
        if _is_subjaxpr(v):
            for i, b in enumerate(v if isinstance(v, tuple) else (v,)):
                sub = pp_jaxpr(getattr(b, "jaxpr", b), getattr(b, "consts", None),
                               indent=indent + "    ")
                label = f"{k}[{i}]" if isinstance(v, tuple) else k
                line += f"\n{indent}  {label}={sub.lstrip()}"
    return line


def _is_subjaxpr(v):
    if isinstance(v, tuple) and v:  # cond's branches
        return all(_is_subjaxpr(b) for b in v)
    return type(v).__name__ in ("Jaxpr", "ClosedJaxpr")


def pp_jaxpr(jaxpr, consts=None, indent="    "):
    namer = Namer()
    decl = lambda vs: " ".join(f"{namer(v)}:{v.aval.str_short()}" for v in vs)
    head = "{ lambda "
    if jaxpr.constvars:
        head += decl(jaxpr.constvars) + " ; "
    head += decl(jaxpr.invars) + ". let"
    lines = [head] + [indent + pp_eqn(e, namer, indent) for e in jaxpr.eqns]
    outs = ", ".join(namer(v) for v in jaxpr.outvars)
    lines.append(f"{indent[:-2]}in ({outs}) }}")
    return "\n".join(lines)

"""Pretty printer: one equation per line, e.g. `c:f64[3] = mul a b`."""
from __future__ import annotations

import numpy as np


class Namer:
    """Names variables a, b, ..., z, ba, bb, ... in order of first appearance."""

    def __init__(self):
        self.names = {}

    def __call__(self, v):
        from .jaxpr import Literal
        if type(v) is Literal:
            return repr(v.val)
        name = self.names.get(v)
        if name is None:
            n, s = len(self.names), ""
            while True:
                s = chr(ord("a") + n % 26) + s
                n //= 26
                if n == 0:
                    break
            self.names[v] = name = s
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
        params = "[" + " ".join(f"{k}={_pp_param(v)}" for k, v in sorted(eqn.params.items())
                                if not _is_subjaxpr(v)) + "]"
        if params == "[]":
            params = ""
    args = " ".join(namer(v) for v in eqn.invars)
    line = f"{outs} = {eqn.primitive.name}{params} {args}".rstrip()
    for k, v in sorted(eqn.params.items()):
        if _is_subjaxpr(v):
            sub = pp_jaxpr(getattr(v, "jaxpr", v), getattr(v, "consts", None),
                           indent=indent + "    ")
            line += f"\n{indent}  {k}={sub.lstrip()}"
    return line


def _is_subjaxpr(v):
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

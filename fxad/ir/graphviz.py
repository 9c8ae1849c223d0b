"""Drawing a program: Graphviz DOT text for a jaxpr (sub-jaxprs as clusters)."""
from __future__ import annotations

import shutil
import subprocess

from .vars import Literal
from .printer import Namer


def _esc(s):
    return str(s).replace('"', r'\"')


def to_dot(closed, name="fxad") -> str:
    lines = [f'digraph "{_esc(name)}" {{', "  rankdir=TB;",
             '  node [fontname="Helvetica", fontsize=10];']
    counter = [0]
    _emit(closed.jaxpr, lines, Namer(), counter, prefix="", indent="  ")
    lines.append("}")
    return "\n".join(lines)


def _emit(jaxpr, lines, namer, counter, prefix, indent):
    node = {}

    def src(v):
        if type(v) is Literal:
            counter[0] += 1
            n = f"{prefix}lit{counter[0]}"
            lines.append(f'{indent}{n} [label="{_esc(repr(v.val))}", shape=plaintext];')
            return n
        return node[v]
    for kind, vs in (("const", jaxpr.constvars), ("in", jaxpr.invars)):
        for v in vs:
            n = node[v] = f"{prefix}{kind}_{namer(v)}"
            lines.append(f'{indent}{n} [label="{namer(v)}: {v.aval.str_short()}", '
                         f'shape={"box" if kind == "const" else "invhouse"}, '
                         f'style=filled, fillcolor="{"#eeeeee" if kind == "const" else "#cce5ff"}"];')
    for e in jaxpr.eqns:
        counter[0] += 1
        n = f"{prefix}eq{counter[0]}"
        outs = ", ".join(f"{namer(v)}: {v.aval.str_short()}" for v in e.outvars)
        lines.append(f'{indent}{n} [label="{e.primitive.name}\\n{_esc(outs)}", shape=ellipse];')
        for v in e.invars:
            lines.append(f"{indent}{src(v)} -> {n};")
        for k, val in e.params.items():
            subs = val if isinstance(val, tuple) else (val,)  # cond: a tuple of branches
            for i, sub in enumerate(subs):
                if type(sub).__name__ != "ClosedJaxpr":
                    continue
                label = f"{k}[{i}]" if isinstance(val, tuple) else k
                cl = f"cluster_{n}_{k}_{i}"
                lines.append(f'{indent}subgraph {cl} {{ label="{e.primitive.name}: {label}"; '
                             'style=dashed;')
                _emit(sub.jaxpr, lines, Namer(), counter, prefix=f"{n}_{k}{i}_",
                      indent=indent + "  ")
                lines.append(f"{indent}}}")
        for v in e.outvars:
            node[v] = n
    for i, v in enumerate(jaxpr.outvars):
        o = f"{prefix}out{i}"
        lines.append(f'{indent}{o} [label="out {i}", shape=house, style=filled, '
                     'fillcolor="#d4edda"];')
        lines.append(f"{indent}{src(v)} -> {o};")


def render(dot_text: str, path: str, fmt: str = "svg"):
    """Render DOT text with Graphviz's `dot` if it is installed; returns the path written,
    or None (the text is still yours) when `dot` is not available."""
    exe = shutil.which("dot")
    if exe is None:
        return None
    subprocess.run([exe, f"-T{fmt}", "-o", path], input=dot_text.encode(), check=True)
    return path

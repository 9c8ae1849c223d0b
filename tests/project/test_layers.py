"""The layering of DESIGN.md §8, enforced: every import in fxad (module level and inside
functions) goes to the importing module's own layer or a lower one, there is no import circle
except among rule families, and `python -m fxad rules` lists every primitive defined anywhere
in fxad."""
import ast
import subprocess
import sys
from pathlib import Path

import fxad
from fxad.core import Primitive

ROOT = Path(fxad.__file__).resolve().parent

# Bottom to top. A module may import its own layer or lower ones.
LAYERS = [
    ("errors",),
    ("core", "tree_util"),
    ("ir",),
    ("interpreters",),
    ("rules",),
    ("control_flow", "jit", "custom_derivatives", "debug"),
    None,  # faces: api, lax, numpy, scipy, nn, random, test_util, __init__, __main__, ...
]


def layer_of(module):
    """module: dotted name below fxad ('rules.contraction.dot', 'api', '' for the package itself)."""
    top = module.split(".")[0]
    for i, names in enumerate(LAYERS[:-1]):
        if top in names:
            return i
    return len(LAYERS) - 1


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        yield ".".join(parts), path, is_pkg


def _imports(module, path, is_pkg):
    """(line, imported module below fxad) for every fxad import in the file."""
    package = module.split(".") if is_pkg else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "fxad" or a.name.startswith("fxad."):
                    yield node.lineno, a.name[5:]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1] if node.level > 1 else package
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and (node.module == "fxad" or node.module.startswith("fxad.")):
                target = node.module.split(".")[1:]
            else:
                continue
            target = [p for p in target if p]
            # `from . import x` / `from .pkg import x` may import submodules named x
            for a in node.names:
                sub = ".".join(target + [a.name])
                if (ROOT / Path(*target, a.name)).with_suffix(".py").exists() or \
                        (ROOT / Path(*target, a.name) / "__init__.py").exists():
                    yield node.lineno, sub
                else:
                    yield node.lineno, ".".join(target)


def _graph():
    return {m: sorted({t for _, t in _imports(m, p, pkg)}) for m, p, pkg in _modules()}


def test_no_module_imports_from_a_higher_layer():
    upward = []
    for module, path, is_pkg in _modules():
        for line, target in _imports(module, path, is_pkg):
            if layer_of(target) > layer_of(module):
                upward.append(f"fxad/{path.relative_to(ROOT)}:{line}: {module or 'fxad'} "
                              f"(layer {layer_of(module)}) imports {target} "
                              f"(layer {layer_of(target)})")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_no_import_circles_outside_rule_families():
    graph = _graph()
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))
    for v in graph:
        if v not in index:
            visit(v)
    bad = [c for c in circles if not all(m.startswith("rules.") for m in c)]
    assert not bad, f"import circles: {bad}"


def test_ir_names_no_primitive():
    """The IR learns about primitives only through hooks registered on them."""
    import fxad.core
    names = {p.name for p in fxad.core.primitives() if (p.module or "").startswith("fxad.")}
    offenders = []
    for path in sorted((ROOT / "ir").glob("*.py")):
        tree = ast.parse(path.read_text())
        in_fstrings = {id(c) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)
                       for c in n.values}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    node.value in names and id(node) not in in_fstrings:
                offenders.append(f"{path.name}:{node.lineno}: {node.value!r}")
    assert not offenders, offenders


def test_rules_command_lists_every_primitive_defined_in_fxad():
    """Every `Primitive(...)` in fxad's source, found by parsing (not by what happens to be
    imported), is listed by `python -m fxad rules`, with its lowering."""
    defined = set()
    for _, path, _ in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Primitive" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                defined.add(node.args[0].value)
    registered = {p.name for p in fxad.core.primitives()
                  if (p.module or "").startswith("fxad.")}
    # helpers like elementwise(name, impl) create primitives from names given as arguments
    assert defined <= registered, sorted(defined - registered)
    out = subprocess.run([sys.executable, "-m", "fxad", "rules"], capture_output=True,
                         text=True, check=True).stdout
    listed = {line.split()[0] for line in out.splitlines()[1:] if line.strip()}
    assert registered <= listed, sorted(registered - listed)
    assert "lowering" in out.splitlines()[0]
    assert isinstance(fxad.core.primitives()[0], Primitive)

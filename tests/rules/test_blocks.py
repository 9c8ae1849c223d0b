"""Each primitive's block in fxad/rules/ reads in one order (DESIGN.md §4, notes/02_rules.md):
definition, impl, shape, JVP, transpose, batching, jet, lowerings, simplification, one block per
primitive, with nothing in it that its rules do not use. Checked on the source, so a block
registered out of order or spread over its file fails here."""
import ast
from pathlib import Path

import fxad

RULES = Path(fxad.__file__).resolve().parent / "rules"
ORDER = ["definition", "impl", "shape", "jvp", "transpose", "batching", "jet", "lowering",
         "simplification"]
# registration method or helper (first argument the primitive) -> its place in ORDER
STAGE = {"def_impl": 1, "def_abstract_eval": 2, "elementwise_shape": 2,
         "def_jvp": 3, "defjvp": 3, "defjvp_with_output": 3, "defderiv": 3, "defjvp_zero": 3,
         "deflinear": 3, "defbilinear": 3, "derivable": 3, "def_transpose": 4,
         "def_batch": 5, "defbatch_elementwise": 5, "defbatch_unary_axes": 5, "def_jet": 6,
         "def_lowering": 7, "def_inline": 7, "def_simplify": 8}


def _stage(node, prim):
    """The stage a top-level statement registers for `prim` (0: its definition), or None."""
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return None
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        t = node.targets[0]
        if isinstance(t, ast.Name) and t.id == prim:
            return 0
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == prim:
            return STAGE.get(t.attr, 3)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            if isinstance(f, ast.Attribute) and f.attr in STAGE and \
                    isinstance(f.value, ast.Name) and f.value.id == prim:
                return STAGE[f.attr]
            if isinstance(f, ast.Name) and f.id in STAGE and sub.args and \
                    isinstance(sub.args[0], ast.Name) and sub.args[0].id == prim:
                return STAGE[f.id]
    return None


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _defines(node):
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _problems(source, rel):
    nodes = ast.parse(source).body
    prims = [n.targets[0].id for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and n.targets[0].id.endswith("_p")]
    out = []
    for p in prims:
        stages = [_stage(n, p) for n in nodes]
        regs = [i for i, s in enumerate(stages) if s is not None]
        first, last = regs[0], regs[-1]
        seen = -1
        for i in regs:
            if stages[i] < seen:
                out.append(f"{rel}:{nodes[i].lineno}: {p}'s {ORDER[stages[i]]} comes after its "
                           f"{ORDER[seen]}")
            seen = max(seen, stages[i])
        used = set().union(*(_names(nodes[i]) for i in regs))
        inside = [i for i in range(first, last + 1) if stages[i] is None]
        kept, grew = set(), True
        while grew:  # helpers the rules use, and the helpers those use
            grew = False
            for i in inside:
                if i not in kept and _defines(nodes[i]) & used:
                    kept.add(i)
                    used |= _names(nodes[i])
                    grew = True
        for i in inside:
            if i not in kept:
                what = sorted(_defines(nodes[i])) or type(nodes[i]).__name__
                out.append(f"{rel}:{nodes[i].lineno}: {what} sits inside {p}'s block "
                           f"(lines {nodes[first].lineno}-{nodes[last].lineno}), used by none "
                           "of its rules")
        for q in prims:  # another primitive's registrations inside this block
            if q != p and any(_stage(nodes[i], q) is not None for i in range(first + 1, last)):
                out.append(f"{rel}:{nodes[first].lineno}: {p}'s block is interleaved with {q}'s")
    return out


def test_every_block_is_in_order_and_in_one_piece():
    problems = [msg for path in sorted(RULES.rglob("*.py"))
                for msg in _problems(path.read_text(), path.relative_to(RULES.parent.parent))]
    assert not problems, "\n".join(problems)


def test_the_checker_sees_blocks_out_of_order_spread_or_interleaved():
    ok = ('sin_p = elementwise("sin", np.sin)\n'
          'defderiv(sin_p, lambda x: cos(x))\n'
          'sin_p.def_lowering(lower)\n')
    assert _problems(ok, "probe.py") == []
    late_jvp = ('sin_p = elementwise("sin", np.sin)\n'
                'sin_p.def_lowering(lower)\n'
                'defderiv(sin_p, lambda x: cos(x))\n')
    assert _problems(late_jvp, "probe.py") == [
        "probe.py:3: sin_p's jvp comes after its lowering"]
    spread = ok.replace("sin_p.def_lowering", "def unrelated(): pass\nsin_p.def_lowering")
    assert "unrelated" in _problems(spread, "probe.py")[0]
    mixed = ('a_p = Primitive("a")\nb_p = Primitive("b")\na_p.def_impl(f)\nb_p.def_impl(g)\n')
    assert any("interleaved" in m for m in _problems(mixed, "probe.py"))

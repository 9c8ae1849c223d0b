"""Code generation (fxad.ir.codegen) and drawing (fxad.ir.graphviz)."""
import os
import re
import shutil
import stat

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.ir import graphviz as fdot

from fxad.ir.codegen import compile_jaxpr, compiled_for
from fxad.ir.simplify import simplify


def _code_lines(source):
    """The source without the `del` lines that free dead intermediates."""
    return [ln for ln in source.splitlines() if not ln.strip().startswith("del ")]

RNG = np.random.default_rng(0)
A23 = RNG.uniform(0.5, 1.5, (2, 3))
B33 = RNG.uniform(0.5, 1.5, (3, 3))
V3 = np.array([0.3, -0.7, 1.1])
IDX = np.array([2, 0, 2])
inner = fxad.jit(lambda y: fnp.sin(y) * 2.0)

# (name, fn, args, text the generated source must contain)
PROGRAMS = [
    ("infix", lambda a, b: (a + b) * a - b / a, (A23 + 3.0, A23[::-1].copy()), " / "),
    ("np-unary", lambda a: fnp.exp(fnp.sin(-a)) + fnp.abs(a) + lax.stop_gradient(a),
     (A23,), "_np.exp("),
    ("np-binary", lambda a, b: fnp.maximum(a, b) + fnp.power(a, b) + fnp.where(a > b, a, b)
     + (a <= b) * 1.0, (A23, A23.T.copy().reshape(2, 3)), "_np.where("),
    ("reduce_sum", lambda a: fnp.sum(a, axis=1, keepdims=True) * a + fnp.sum(a),
     (A23,), "_np.add.reduce("),
    ("reshape-transpose-broadcast", lambda a: fnp.transpose(a.reshape(3, 2)) +
     fnp.broadcast_to(a[0], (2, 3)), (A23,), "_np.transpose("),
    ("matmul-2d", lambda a, b: a @ b, (A23, B33), " @ "),
    ("mat-vec", lambda a, b: a @ b, (A23, V3), " @ "),
    ("dot-batched", lambda a, b: fnp.matmul(a, b), (RNG.uniform(size=(2, 2, 3)),
                                                    RNG.uniform(size=(2, 3, 2))),
     "_dot_general_0("),
    ("a-bT", lambda a, b: fnp.einsum("ij,kj->ik", a, b), (A23, B33), None),
    ("aT-b", lambda a, b: fnp.einsum("ji,jk->ik", a, b), (A23, A23 * 2.0), None),
    ("outer", lambda a, b: fnp.outer(a, b), (V3, V3[:2].copy()), None),
    ("tensordot", lambda a, b: fnp.tensordot(a, b, axes=([0, 2], [2, 0])),
     (RNG.uniform(size=(2, 3, 4)), RNG.uniform(size=(4, 2, 2))), None),
    ("square", lambda a: a ** 2 + a ** 3, (A23,), "_np.square("),
    ("getitem", lambda a: a[:, IDX] * a[1], (A23,), "_getitem_0("),
    ("nested-jit", lambda a: inner(a) + inner(a * 3.0), (V3,), "_jit_0("),
    ("logistic-convert", lambda a: lax.logistic(a).astype(np.float32), (V3,), "_logistic_0("),
    ("special-literals", lambda a: fnp.minimum(a, float("inf")) + fnp.maximum(a, -float("inf"))
     + (a > float("nan")) * 1.0, (V3,), "_np.inf"),
    ("multiple-outputs", lambda a: (a, fnp.tanh(a), fnp.sum(a)), (V3,), "return ("),
]
IDS = [p[0] for p in PROGRAMS]


def _close(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15, equal_nan=True)


@pytest.mark.parametrize("name,fn,args,marker", PROGRAMS, ids=IDS)
def test_one_line_per_equation_and_same_values(name, fn, args, marker):
    closed = fxad.make_jaxpr(fn)(*args)
    comp = compile_jaxpr(closed)
    print(comp.source)
    lines = _code_lines(comp.source)
    assert lines[0].startswith("def ") and lines[0].endswith(":")
    assert lines[-1].strip().startswith("return (")
    body = lines[1:-1]
    assert len(body) == len(closed.eqns)
    for line in body:
        assert re.match(r"^    [a-z_][a-z0-9_, ]* = ", line), line
    if marker is not None:
        assert marker in comp.source
    assert "fxad" not in comp.source
    _close(comp(*args), closed(*args))
    # and against the function itself, eagerly
    want = fn(*args)
    _close(comp(*args), list(want) if isinstance(want, tuple) else [want])


@pytest.mark.parametrize("name,fn,args,marker", PROGRAMS, ids=IDS)
def test_simplified_program_compiles_to_same_values(name, fn, args, marker):
    closed = fxad.make_jaxpr(fn)(*args)
    simple = simplify(closed)
    comp = compile_jaxpr(simple)
    assert len(_code_lines(comp.source)) == len(simple.eqns) + 2
    assert len(simple.eqns) <= len(closed.eqns) or "jit" in [e.primitive.name
                                                             for e in closed.eqns]
    _close(comp(*args), closed(*args))


def test_single_output_call_unpacks_with_trailing_comma():
    closed = fxad.make_jaxpr(lambda a: inner(a) + 1.0)(V3)
    src = compile_jaxpr(closed).source
    assert re.search(r"^    \w+, = _jit_0\(", src, re.M), src
    np.testing.assert_allclose(compile_jaxpr(closed)(V3)[0], np.sin(V3) * 2.0 + 1.0)


def test_literal_and_input_outputs():
    closed = fxad.make_jaxpr(lambda a: (2.0, a))(V3)
    comp = compile_jaxpr(closed)
    assert len(_code_lines(comp.source)) == 2  # no equations
    out = comp(V3)
    assert out[0] == 2.0 and out[1] is V3  # a loop or branch body passes operands through
    # ...but what jit returns to the user is a copy: updating it must not change the input.
    out = compile_jaxpr(closed, boundary=True)(V3)
    assert np.array_equal(out[1], V3) and not np.shares_memory(out[1], V3)


@pytest.mark.parametrize("value", [complex(float("nan"), 1.0), complex(float("inf"), 0.0),
                                   complex(1.0, -float("inf"))], ids=str)
def test_nonfinite_complex_literal(value):
    f = lambda a: a * value
    closed = fxad.make_jaxpr(f)(V3)
    with np.errstate(invalid="ignore"):
        want = f(V3)
        got = compile_jaxpr(closed)(V3)[0]
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(fxad.jit(f)(V3), want)


def test_long_program_variable_names_are_valid_python():
    """Generated variable names run a, b, ..., z, ba, ... and must never be a Python keyword
    (`if` is the 214th name, then `in`, `is`, `or`, `def`, `for`, ...)."""
    n = 800

    def f(x):
        for _ in range(n):
            x = fnp.sin(x)
        return x
    closed = fxad.make_jaxpr(f)(V3)
    assert len(closed.eqns) == n
    comp = compile_jaxpr(closed)
    assert len(_code_lines(comp.source)) == n + 2
    np.testing.assert_allclose(comp(V3)[0], f(V3), rtol=1e-13)
    np.testing.assert_allclose(fxad.jit(f)(V3), f(V3), rtol=1e-13)


def test_compiled_for_is_cached_and_simplified():
    closed = fxad.make_jaxpr(lambda a: fnp.sin(a) * 1.0 + fnp.sin(a))(V3)
    c1 = compiled_for(closed)
    assert compiled_for(closed) is c1
    assert len(_code_lines(c1.source)) == 2 + 2  # sin, add (the *1.0 and 2nd sin removed)
    np.testing.assert_allclose(c1(V3)[0], 2 * np.sin(V3), rtol=1e-15)


def test_constants_are_bound_not_inlined():
    c = RNG.uniform(size=(3,))
    closed = fxad.make_jaxpr(lambda a: a * c)(V3)
    comp = compile_jaxpr(closed)
    assert "_c0" in comp.source and repr(float(c[0])) not in comp.source
    np.testing.assert_allclose(comp(V3)[0], V3 * c, rtol=1e-15)


# --- DOT -----------------------------------------------------------------------------------------

_NODE = re.compile(r"^\s*(\w+) \[label=")
_EDGE = re.compile(r"^\s*(\w+) -> (\w+);$")


def _parse(text):
    nodes, edges = set(), []
    for line in text.splitlines():
        m = _EDGE.match(line)
        if m:
            edges.append(m.groups())
            continue
        m = _NODE.match(line)
        if m:
            assert m.group(1) not in nodes, f"node {m.group(1)} declared twice"
            nodes.add(m.group(1))
    return nodes, edges


def test_to_dot_flat_program():
    c = np.array([1.0, 2.0, 3.0])
    closed = fxad.make_jaxpr(lambda a, b: fnp.sum(fnp.sin(a) * b + c) * 2.0)(V3, V3)
    text = closed.to_dot()
    print(text)
    assert text.startswith("digraph")
    assert text.rstrip().endswith("}")
    assert text.count("{") == text.count("}")
    for e in closed.eqns:
        assert f'label="{e.primitive.name}\\n' in text
    assert "->" in text
    nodes, edges = _parse(text)
    for a, b in edges:
        assert a in nodes and b in nodes, (a, b)
    # one edge per equation input (literals included) and one per output
    assert len(edges) == sum(len(e.invars) for e in closed.eqns) + len(closed.jaxpr.outvars)
    assert "subgraph" not in text


def test_to_dot_jit_call_is_a_cluster():
    g = fxad.jit(lambda y: fnp.cos(y) + 1.0)
    closed = fxad.make_jaxpr(lambda a: g(a) * fnp.exp(a))(V3)
    text = closed.to_dot()
    print(text)
    assert text.startswith("digraph")
    assert "subgraph cluster" in text
    for name in ("jit", "cos", "add", "exp", "mul"):
        assert f'label="{name}\\n' in text, name
    assert text.count("{") == text.count("}")
    nodes, edges = _parse(text)
    assert all(a in nodes and b in nodes for a, b in edges)


def test_render_without_graphviz_returns_none(monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    path = tmp_path / "g.svg"
    text = fxad.make_jaxpr(fnp.sin)(V3).to_dot()
    assert fdot.render(text, str(path)) is None
    assert not path.exists()


def test_render_runs_dot_and_writes_the_file(monkeypatch, tmp_path):
    """With a stand-in `dot` that copies stdin to -o and logs its arguments."""
    fake = tmp_path / "dot"
    log = tmp_path / "args.txt"
    fake.write_text("#!/bin/sh\n"
                    f'echo "$@" > "{log}"\n'
                    'out=""\n'
                    'while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift;; esac; shift; done\n'
                    'cat > "$out"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: str(fake) if name == "dot"
                        else None)
    text = fxad.make_jaxpr(fnp.sin)(V3).to_dot()
    path = tmp_path / "g.png"
    assert fdot.render(text, str(path), fmt="png") == str(path)
    assert path.read_text() == text
    assert "-Tpng" in log.read_text().split()


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_render_with_real_graphviz(tmp_path):
    path = tmp_path / "g.svg"
    text = fxad.make_jaxpr(lambda a: inner(a) * a)(V3).to_dot()
    assert fdot.render(text, str(path)) == str(path)
    assert os.path.getsize(path) > 0 and "<svg" in path.read_text()


def test_generated_code_reuses_dead_buffers_but_never_a_viewed_one():
    """Intermediates that die are overwritten in place (`out=`); an array that a view
    (reshape, transpose, ...) still refers to is never overwritten."""
    def f(x):
        a = fnp.sin(x) * 2.0          # fresh, dies in the next line: reused
        b = a + 1.0
        v = fnp.reshape(b, (3, 2))    # a view of b ...
        c = b * 3.0                   # ... so b must not be overwritten here
        return fnp.sum(v) + fnp.sum(c), v
    x = np.linspace(0.0, 1.0, 6)
    src = fxad.jit(f).lower(x).as_text()
    assert "out=" in src, src
    for _ in range(2):
        s, v = fxad.jit(f)(x)
        b = np.sin(x) * 2.0 + 1.0
        np.testing.assert_allclose(v, b.reshape(3, 2), rtol=1e-15)
        np.testing.assert_allclose(s, b.sum() + (3 * b).sum(), rtol=1e-14)

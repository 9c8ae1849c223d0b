"""Code generation: a jaxpr becomes the source of one Python function, one NumPy call per
equation, compiled once. Running it has no interpreter loop and no tracing. The source only
uses names fxad generated: variables `a, b, ...`, constants `_c0, ...`, the NumPy module
`_np`, and `_<primitive>_<k>` for primitive impls with their parameters bound.

This module names no primitive: each primitive's block registers how it is written
(`Primitive.def_lowering`: `a + b`, `_np.sin(a)`, ...), which ufunc can write into a dead
input (`inplace`), and what its results may alias (`memory`).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import core
from .jaxpr import Literal, eval_jaxpr
from .printer import Namer

class LoweringContext:
    """What a primitive's lowering rule gets besides its argument sources: `name(obj, hint)`
    puts a Python object (a function, a compiled program, a ufunc) into the generated code's
    namespace and returns the name to call it by; `in_avals` and `ranks` describe the
    equation's operands."""

    def __init__(self, ns):
        self.ns = ns
        self._names = {}
        self.in_avals = []

    ranks = property(lambda self: tuple(len(a.shape) for a in self.in_avals))

    def name(self, obj, hint="fn"):
        key = id(obj)
        got = self._names.get(key)
        if got is None:
            if getattr(np, getattr(obj, "__name__", ""), None) is obj:
                got = f"_np.{obj.__name__}"  # NumPy's own function: read as NumPy
            else:
                got = f"_{hint}_{len(self._names)}"
                self.ns[got] = obj
            self._names[key] = got
        return got


def _reusable_input(e, i, last, keep, fresh):
    """An input of equation i whose buffer can take the result: the primitive is a ufunc
    that takes `out=`, the input dies here, it is a fresh array, and it has the result's
    shape and dtype (so NumPy computes in place, no cast)."""
    if e.primitive.inplace is None or len(e.outvars) != 1:
        return None
    out = e.outvars[0].aval
    if not out.shape:
        return None
    for v in e.invars:
        if type(v) is not Literal and v in fresh and last.get(v) == i and v not in keep and \
                v.aval.shape == out.shape and v.aval.dtype == out.dtype:
            return v
    return None


def literal(v):
    """Source text for a literal; non-finite values are spelled with names in the source's
    namespace (`nan` and `inf` are not Python literals)."""
    x = v.val
    if isinstance(x, complex):
        return f"complex({_float_text(x.real)}, {_float_text(x.imag)})"
    if isinstance(x, float):
        return _float_text(x)
    return repr(x)


def _float_text(x):
    if math.isfinite(x):
        return repr(x)
    return "_np.nan" if math.isnan(x) else ("_np.inf" if x > 0 else "-_np.inf")


def shared_outputs(jaxpr, inputs=True):
    """Positions of the outputs that may share memory with a constant or anything a
    primitive keeps (an inner program's constants), and with `inputs`, with an input: a
    program returns copies of those, so a caller who updates a result in place changes
    nothing fxad holds. `jit` returns no view of its inputs either (as JAX); loop and
    branch bodies may pass their operands through."""
    external = set(jaxpr.constvars) | (set(jaxpr.invars) if inputs else set())
    for e in jaxpr.eqns:
        memory = e.primitive.memory
        if memory == "any" or (memory == "views" and not external.isdisjoint(e.invars)):
            external.update(e.outvars)
    return tuple(i for i, v in enumerate(jaxpr.outvars)
                 if type(v) is not Literal and v in external)


class Compiled:
    """A compiled jaxpr: call it with the jaxpr's inputs; `.source` is what runs."""

    def __init__(self, fn, source, closed, shared=()):
        self.fn = fn
        self.source = source
        self.closed = closed
        self.shared = shared  # outputs the code copies (see shared_outputs)

    def __call__(self, *args):
        if core._nan_hook is not None and core.nan_checking():
            # debug_nans: run equation by equation, so the check can name the culprit
            outs = eval_jaxpr(self.closed.jaxpr, self.closed.consts, *args)
            for i in self.shared:
                outs[i] = _copy(outs[i])
            return outs
        return self.fn(*args)


def eqn_lines(jaxpr, namer, ctx, indent):
    """One line of source per equation. Intermediates are deleted after their last use, so
    their memory is reused by the next allocation of the same size instead of fresh pages
    being mapped (and faulted in) on every call; that matters for large temporaries."""
    last = {}
    for i, e in enumerate(jaxpr.eqns):
        for v in e.invars:
            if type(v) is not Literal:
                last[v] = i
    keep = set(jaxpr.outvars) | set(jaxpr.invars) | set(jaxpr.constvars)
    dead = {}
    for v, i in last.items():
        if v not in keep:
            dead.setdefault(i, []).append(v)
    lines = []
    fresh = set()  # arrays this program allocated and nothing else references
    for i, e in enumerate(jaxpr.eqns):
        args = [literal(v) if type(v) is Literal else namer(v) for v in e.invars]
        outs = ", ".join(namer(v) for v in e.outvars)
        comma = "," if len(e.outvars) == 1 and e.primitive.multiple_results else ""
        reuse = _reusable_input(e, i, last, keep, fresh)
        if reuse is not None:  # write the result over an input that dies here
            ufunc = ctx.name(e.primitive.inplace, e.primitive.name)
            lines.append(f"{indent}{outs} = {ufunc}({', '.join(args)}, out={namer(reuse)})")
        elif not e.outvars:  # an effect (a callback): called for what it does
            lines.append(f"{indent}{_expr(e, args, ctx)}")
        else:
            lines.append(f"{indent}{outs}{comma} = {_expr(e, args, ctx)}")
        if e.primitive.memory == "fresh":
            fresh.update(v for v in e.outvars if v.aval.shape)
        else:  # its result may be a view of (or be) an input
            fresh.difference_update(e.invars)
        if i in dead:
            lines.append(f"{indent}del {', '.join(namer(v) for v in dead[i])}")
    return lines


def _copy(x):
    """A private copy of an array result (NumPy and Python scalars are immutable: as is)."""
    return x.copy() if isinstance(x, np.ndarray) else x


def namespace(closed, namer):
    ns = {"_np": np, "_copy": _copy}
    for i, (v, c) in enumerate(zip(closed.jaxpr.constvars, closed.consts)):
        ns[f"_c{i}"] = c
        namer.names[v] = f"_c{i}"
    return ns


def exec_source(source, ns, name):
    exec(compile(source, f"<fxad jit {name}>", "exec"), ns)  # noqa: S102 - our own source
    return ns[name]


def compile_jaxpr(closed, name="_compiled", boundary=False) -> Compiled:
    """`boundary`: the program's results go to the user (jit), so none may be a view of an
    input either."""
    jaxpr = closed.jaxpr
    namer = Namer()
    ns = namespace(closed, namer)
    lines = [f"def {name}({', '.join(namer(v) for v in jaxpr.invars)}):"]
    lines += eqn_lines(jaxpr, namer, LoweringContext(ns), "    ")
    shared = shared_outputs(jaxpr, inputs=boundary)
    outs = ", ".join(literal(v) if type(v) is Literal else
                     f"_copy({namer(v)})" if i in shared else namer(v)
                     for i, v in enumerate(jaxpr.outvars))
    lines.append(f"    return ({outs}{',' if len(jaxpr.outvars) == 1 else ''})")
    source = "\n".join(lines)
    return Compiled(exec_source(source, ns, name), source, closed, shared)


def _expr(e, args, ctx):
    """The source computing an equation: the primitive's own lowering (registered in its
    rule block) where it has one that applies, else a call of its impl with the parameters
    bound once."""
    p, params = e.primitive, e.params
    ctx.in_avals = [v.aval for v in e.invars]
    rule = p.lowerings.get("numpy")
    if rule is not None:
        src = rule(ctx, args, **params)
        if src is not None:
            return src
    fn = ctx.name(functools.partial(p.impl, **params) if params else p.impl, p.name)
    return f"{fn}({', '.join(args)})"


_BACKENDS = {}  # name -> compile(simplified closed jaxpr, boundary); numba_backend registers


def register_backend(name, compile_program):
    """Another code generator for `compiled_for` (fxad/ir/numba_backend registers "numba" on
    import: this module does not import it)."""
    _BACKENDS[name] = compile_program


def compiled_for(closed, boundary=False, backend="numpy"):
    """The compiled, simplified program of a closed jaxpr, built once and kept on it
    (`boundary`: see compile_jaxpr). `backend` "numba" compiles it to native code
    (fxad/ir/numba_backend); callers check that Numba is available."""
    key = ("compiled", boundary, backend)
    c = closed.cache.get(key)
    if c is None:
        from .simplify import simplify
        if backend == "numpy":
            c = compile_jaxpr(simplify(closed), boundary=boundary)
        else:
            c = _BACKENDS[backend](simplify(closed), boundary)
        closed.cache[key] = c
    return c

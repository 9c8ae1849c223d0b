"""Code generation: a jaxpr becomes the source of one Python function, one NumPy call per
equation, compiled once. Running it has no interpreter loop and no tracing. The source only
uses names fxad generated: variables `a, b, ...`, constants `_c0, ...`, the NumPy module
`_np`, and `_<primitive>_<k>` for primitive impls with their parameters bound.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import core
from .jaxpr import Literal, eval_jaxpr
from .printer import Namer

# Primitives written inline as NumPy expressions (readable and cheapest); others call impl.
_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_NP_UNARY = {"neg": "negative", "exp": "exp", "log": "log", "log1p": "log1p",
             "expm1": "expm1", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh",
             "sinh": "sinh", "cosh": "cosh", "sqrt": "sqrt", "abs": "abs", "sign": "sign",
             "floor": "floor", "ceil": "ceil", "arcsin": "arcsin", "arccos": "arccos",
             "arctan": "arctan", "arcsinh": "arcsinh", "arccosh": "arccosh",
             "arctanh": "arctanh", "stop_gradient": "asarray"}
_NP_BINARY = {"max": "maximum", "min": "minimum", "pow": "power", "arctan2": "arctan2",
              "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
              "gt": "greater", "ge": "greater_equal", "select": "where"}


# Elementwise primitives that can write into an existing array (`out=`), and the primitives
# whose results are new arrays (not views of their inputs), which may therefore be overwritten
# once dead.
_UFUNC = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "true_divide",
          **{k: v for k, v in _NP_UNARY.items() if k != "stop_gradient"},
          **{k: v for k, v in _NP_BINARY.items() if k != "select"}}
_FRESH = set(_UFUNC) | {"select", "dot_general", "reduce_sum", "logistic"}


def _reusable_input(e, i, last, keep, fresh):
    """An input of equation i whose buffer can take the result: it dies here, it is a fresh
    array, and it has the result's shape and dtype (so NumPy computes in place, no cast)."""
    if e.primitive.name not in _UFUNC or len(e.outvars) != 1:
        return None
    out = e.outvars[0].aval
    if not out.shape:
        return None
    for v in e.invars:
        if type(v) is not Literal and v in fresh and last.get(v) == i and v not in keep and \
                v.aval.shape == out.shape and v.aval.dtype == out.dtype:
            return v
    return None


def _literal(v):
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


def _eqn_lines(jaxpr, namer, ns, counts, indent):
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
        args = [_literal(v) if type(v) is Literal else namer(v) for v in e.invars]
        outs = ", ".join(namer(v) for v in e.outvars)
        comma = "," if len(e.outvars) == 1 and e.primitive.multiple_results else ""
        reuse = _reusable_input(e, i, last, keep, fresh)
        if reuse is not None:  # write the result over an input that dies here
            ufunc = _UFUNC[e.primitive.name]
            lines.append(f"{indent}{outs} = _np.{ufunc}({', '.join(args)}, out={namer(reuse)})")
        else:
            lines.append(f"{indent}{outs}{comma} = {_expr(e, args, ns, counts)}")
        if e.primitive.name in _FRESH and len(e.outvars) == 1 and e.outvars[0].aval.shape:
            fresh.add(e.outvars[0])
        elif e.primitive.name not in _FRESH:  # its result may be a view of (or be) an input
            fresh.difference_update(e.invars)
        if i in dead:
            lines.append(f"{indent}del {', '.join(namer(v) for v in dead[i])}")
    return lines


def _copy(x):
    """A private copy of an array result (NumPy and Python scalars are immutable: as is)."""
    return x.copy() if isinstance(x, np.ndarray) else x


def _namespace(closed, namer):
    ns = {"_np": np, "_copy": _copy}
    for i, (v, c) in enumerate(zip(closed.jaxpr.constvars, closed.consts)):
        ns[f"_c{i}"] = c
        namer.names[v] = f"_c{i}"
    return ns


def _exec(source, ns, name):
    exec(compile(source, f"<fxad jit {name}>", "exec"), ns)  # noqa: S102 - our own source
    return ns[name]


def compile_jaxpr(closed, name="_compiled", boundary=False) -> Compiled:
    """`boundary`: the program's results go to the user (jit), so none may be a view of an
    input either."""
    jaxpr = closed.jaxpr
    namer = Namer()
    ns = _namespace(closed, namer)
    lines = [f"def {name}({', '.join(namer(v) for v in jaxpr.invars)}):"]
    lines += _eqn_lines(jaxpr, namer, ns, {}, "    ")
    shared = shared_outputs(jaxpr, inputs=boundary)
    outs = ", ".join(_literal(v) if type(v) is Literal else
                     f"_copy({namer(v)})" if i in shared else namer(v)
                     for i, v in enumerate(jaxpr.outvars))
    lines.append(f"    return ({outs}{',' if len(jaxpr.outvars) == 1 else ''})")
    source = "\n".join(lines)
    return Compiled(_exec(source, ns, name), source, closed, shared)


def compile_scan_loop(closed, n_consts, n_carry, reverse, name="_scan_loop"):
    """A whole scan as one Python function: the loop with the body's source inline, so a step
    costs its NumPy calls and nothing else. Arguments (length, *consts, *carry, *xs)."""
    jaxpr = closed.jaxpr
    namer = Namer()
    ns = _namespace(closed, namer)
    n_x = len(jaxpr.invars) - n_consts - n_carry
    for i, v in enumerate(jaxpr.invars):
        namer.names[v] = (f"_q{i}" if i < n_consts else f"_k{i - n_consts}"
                          if i < n_consts + n_carry else f"_x{i - n_consts - n_carry}")
    params = [f"_q{i}" for i in range(n_consts)] + [f"_k{i}" for i in range(n_carry)] + \
        [f"_s{i}" for i in range(n_x)]
    lines = [f"def {name}(_n, {', '.join(params)}):"]
    y_avals = closed.out_avals[n_carry:]
    for j, a in enumerate(y_avals):
        ns[f"_dt{j}"] = a.dtype
        lines.append(f"    _y{j} = _np.empty((_n,) + {a.shape!r}, _dt{j})")
    steps = "range(_n - 1, -1, -1)" if reverse else "range(_n)"
    lines.append(f"    for _i in {steps}:")
    read = {v for e in jaxpr.eqns for v in e.invars} | set(jaxpr.outvars)
    xs_v = jaxpr.invars[n_consts + n_carry:]
    lines += [f"        _x{i} = _s{i}[_i]" for i in range(n_x) if xs_v[i] in read]
    lines += _eqn_lines(jaxpr, namer, ns, {}, "        ")
    outs = [_literal(v) if type(v) is Literal else namer(v) for v in jaxpr.outvars]
    # Outputs may name the old carry: store the ys first, then replace the carry in one
    # tuple assignment (every new carry is computed from the old ones).
    lines += [f"        _y{j}[_i] = {o}" for j, o in enumerate(outs[n_carry:])]
    if n_carry:
        lines.append(f"        {', '.join(f'_k{i}' for i in range(n_carry))}, = "
                     f"{', '.join(outs[:n_carry])},")
    if len(lines) == 1 + len(y_avals) + 1:  # nothing in the loop body
        lines.append("        pass")
    shared = shared_outputs(jaxpr, inputs=False)  # carries that may be a body constant
    rets = [f"_copy(_k{i})" if i in shared else f"_k{i}"
            for i in range(n_carry)] + [f"_y{j}" for j in range(len(y_avals))]
    lines.append(f"    return [{', '.join(rets)}]")
    source = "\n".join(lines)
    return Compiled(_exec(source, ns, name), source, closed)


def _expr(e, args, ns, counts):
    name, p = e.primitive.name, e.params
    if name in _INFIX:
        return f"{args[0]} {_INFIX[name]} {args[1]}"
    if name in _NP_UNARY:
        return f"_np.{_NP_UNARY[name]}({args[0]})"
    if name in _NP_BINARY:
        return f"_np.{_NP_BINARY[name]}({', '.join(args)})"
    if name == "reduce_sum":
        return f"_np.sum({args[0]}, {p['axes']!r}, keepdims={p['keepdims']})"
    if name == "reshape":
        return f"_np.reshape({args[0]}, {p['new_shape']!r})"
    if name == "transpose":
        return f"_np.transpose({args[0]}, {p['perm']!r})"
    if name == "broadcast_to":
        return f"_np.broadcast_to({args[0]}, {p['shape']!r})"
    if name == "dot_general":
        from ..rules.dot import fast_form
        form = fast_form(p["dimension_numbers"], len(e.invars[0].aval.shape),
                         len(e.invars[1].aval.shape))
        a, b = args
        code = {"ab": f"{a} @ {b}", "abT": f"{a} @ {b}.T", "aTb": f"{a}.T @ {b}",
                "outer": f"_np.multiply.outer({a}, {b})"}.get(form)
        if code is not None:
            return code
    if name == "integer_pow" and p["y"] == 2:
        return f"_np.square({args[0]})"
    if name == "jit":
        fn = f"_jit_{counts.setdefault('jit', 0)}"
        counts["jit"] += 1
        ns[fn] = compiled_for(p["jaxpr"])
        return f"{fn}({', '.join(args)})"
    # Any other primitive: its impl with the parameters bound once.
    k = counts.get(name, 0)
    counts[name] = k + 1
    fn = f"_{name}_{k}"
    ns[fn] = functools.partial(e.primitive.impl, **p) if p else e.primitive.impl
    return f"{fn}({', '.join(args)})"


def compiled_scan_for(closed, n_consts, n_carry, reverse):
    """The compiled loop of a scan with this body, built once and kept on the body."""
    key = ("compiled_scan", n_consts, n_carry, reverse)
    c = closed.cache.get(key)
    if c is None:
        from .simplify import simplify
        c = closed.cache[key] = compile_scan_loop(simplify(closed), n_consts, n_carry, reverse)
    return c


def compiled_for(closed, boundary=False):
    """The compiled, simplified program of a closed jaxpr, built once and kept on it
    (`boundary`: see compile_jaxpr)."""
    key = ("compiled", boundary)
    c = closed.cache.get(key)
    if c is None:
        from .simplify import simplify
        c = closed.cache[key] = compile_jaxpr(simplify(closed), boundary=boundary)
    return c

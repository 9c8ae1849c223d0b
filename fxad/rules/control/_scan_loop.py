"""The whole loop of a scan as one generated Python function (the body's NumPy calls inline),
compiled once per body: scan's eager impl and its NumPy lowering."""
from __future__ import annotations

from ...ir import codegen
from ...ir.jaxpr import Literal
from ...ir.printer import Namer
from ...ir.simplify import simplify


def compile_loop(closed, n_consts, n_carry, reverse, name="_scan_loop"):
    """A whole scan as one Python function: the loop with the body's source inline, so a step
    costs its NumPy calls and nothing else. Arguments (length, *consts, *carry, *xs)."""
    jaxpr = closed.jaxpr
    namer = Namer()
    ns = codegen.namespace(closed, namer)
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
    lines += codegen.eqn_lines(jaxpr, namer, codegen.LoweringContext(ns), "        ")
    outs = [codegen.literal(v) if type(v) is Literal else namer(v) for v in jaxpr.outvars]
    # Outputs may name the old carry: store the ys first, then replace the carry in one
    # tuple assignment (every new carry is computed from the old ones).
    lines += [f"        _y{j}[_i] = {o}" for j, o in enumerate(outs[n_carry:])]
    if n_carry:
        lines.append(f"        {', '.join(f'_k{i}' for i in range(n_carry))}, = "
                     f"{', '.join(outs[:n_carry])},")
    if len(lines) == 1 + len(y_avals) + 1:  # nothing in the loop body
        lines.append("        pass")
    shared = codegen.shared_outputs(jaxpr, inputs=False)  # carries that may be a body constant
    rets = [f"_copy(_k{i})" if i in shared else f"_k{i}"
            for i in range(n_carry)] + [f"_y{j}" for j in range(len(y_avals))]
    lines.append(f"    return [{', '.join(rets)}]")
    source = "\n".join(lines)
    return codegen.Compiled(codegen.exec_source(source, ns, name), source, closed)


def compiled_loop_for(closed, n_consts, n_carry, reverse):
    """The compiled loop of a scan with this body, built once and kept on the body."""
    key = ("compiled_scan", n_consts, n_carry, reverse)
    c = closed.cache.get(key)
    if c is None:
        c = closed.cache[key] = compile_loop(simplify(closed), n_consts, n_carry, reverse)
    return c

"""Structured control flow (JAX's signatures): cond, switch, scan, fori_loop, while_loop.

Python functions are staged into jaxprs; constants they close over (arrays, or values being
differentiated by an outer transformation) are hoisted into explicit operands, so the
primitives in fxad/rules/control/cond.py, scan.py and while_loop.py see every input that can carry a
derivative.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .core import ShapedArray, Tracer, get_aval
from .errors import FxadTypeError, FxadValueError
from .ir.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from .ir.intern import intern
from .ir.staging import stage
from .rules.control.cond import cond_p
from .rules.control.scan import bind_scan
from .rules.control.while_loop import while_p
from .tree_util import tree_flatten, tree_unflatten
from .rules import ops


def _leaf(x):
    return x if isinstance(x, (Tracer, np.ndarray)) else np.asarray(x)


def _trace(fun, in_tree, in_avals, what):
    """Stage fun (of a pytree) -> (jaxpr with constants hoisted to leading inputs, the
    constant values, output treedef)."""
    store = {}

    def flat(*leaves):
        out, store["out"] = tree_flatten(fun(*tree_unflatten(in_tree, list(leaves))))
        return [_leaf(o) for o in out]
    closed = stage(flat, in_avals, name=what)
    j = closed.jaxpr
    hoisted = intern(ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars), []))
    return hoisted, list(closed.consts), store["out"]


def _avals(leaves):
    return [ShapedArray(get_aval(x).shape, get_aval(x).dtype) for x in leaves]


def _describe(avals):
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """Apply branches[index](*operands) (index clamped into range)."""
    a = get_aval(index)
    if a.shape != () or a.dtype.kind not in "iub":
        raise FxadTypeError(f"switch: the branch index must be an integer scalar, got "
                            f"{a.str_short()}; convert it with int(...) or "
                            "fxad.numpy.asarray(index).astype(int) (a float index would be "
                            "truncated silently)")
    return _switch(index, branches, operands, [f"branch {i}" for i in range(len(branches))])


def _switch(index, branches, operands, names):
    """switch; `names` are the branches' names in error messages."""
    branches = list(branches)
    if not branches:
        raise FxadValueError("switch needs at least one branch")
    leaves, in_tree = tree_flatten(operands)
    leaves = [_leaf(x) for x in leaves]
    avals = _avals(leaves)
    traced = [_trace(lambda *ops, b=b: b(*ops), in_tree, avals, f"branch {i}")
              for i, b in enumerate(branches)]
    out0 = traced[0][0].out_avals
    for i, (j, _, tree) in enumerate(traced[1:], 1):
        if tree != traced[0][2] or j.out_avals != out0:
            raise FxadTypeError(
                f"{names[i]} returns {tree} {_describe(j.out_avals)} but {names[0]} returns "
                f"{traced[0][2]} {_describe(out0)}; every branch must return the same "
                "structure, shapes and dtypes")
    # Every branch takes all branches' constants (ignoring the others'), then the operands.
    all_consts = [c for _, cs, _ in traced for c in cs]
    offs = np.cumsum([0] + [len(cs) for _, cs, _ in traced])
    const_avals = _avals(all_consts)
    jaxprs = []
    for i, (j, cs, _) in enumerate(traced):
        jaxprs.append(stage(
            lambda *a, j=j, i=i: eval_jaxpr(j.jaxpr, [], *a[offs[i]:offs[i + 1]],
                                            *a[offs[-1]:]),
            const_avals + avals, name=f"branch {i}"))
    index = ops.convert_element_type(index, np.int64) if not isinstance(index, int) \
        else np.int64(index)
    index = ops.min(ops.max(index, 0), len(branches) - 1)
    outs = cond_p.bind(index, *all_consts, *leaves, branches=tuple(jaxprs))
    return tree_unflatten(traced[0][2], outs)


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """true_fun(*operands) if pred else false_fun(*operands), as one primitive."""
    if get_aval(pred).shape != ():
        raise FxadTypeError(f"cond needs a scalar predicate, got shape {get_aval(pred).shape}; "
                            "for elementwise choice use fxad.numpy.where")
    return _switch(ops.convert_element_type(ops.ne(pred, 0), np.int64),
                   [false_fun, true_fun], operands, ["false_fun", "true_fun"])


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int = 1) -> tuple[Any, Any]:
    """carry, ys = scan(f, init, xs): loop c, y = f(c, x) over the leading axis of xs.
    `unroll` is accepted for compatibility; each step runs the compiled body once."""
    return _scan(f, init, xs, length, reverse, "scan")


def _scan(f, init, xs, length, reverse, name):
    """scan; `name` is the construct named in errors (fori_loop lowers to this)."""
    init_leaves, carry_tree = tree_flatten(init)
    init_leaves = [_leaf(x) for x in init_leaves]
    x_leaves, x_tree = tree_flatten(xs)
    x_leaves = [_leaf(x) for x in x_leaves]
    lengths = {get_aval(x).shape[0] if get_aval(x).shape else None for x in x_leaves}
    if None in lengths:
        raise FxadValueError(f"{name}: every leaf of xs needs a leading axis to scan over")
    if length is not None:
        lengths.add(int(length))
    if not lengths:
        raise FxadValueError(f"{name}: pass length= when xs is None")
    if len(lengths) != 1:
        raise FxadValueError(f"{name}: inconsistent lengths {sorted(lengths)}: the leading "
                             "axes of xs and the length argument must agree")
    n = lengths.pop()
    carry_avals = _avals(init_leaves)
    slice_avals = [ShapedArray(a.shape[1:], a.dtype) for a in _avals(x_leaves)]
    n_carry = len(init_leaves)
    y_store = {}

    def body(*leaves):
        c = tree_unflatten(carry_tree, list(leaves[:n_carry]))
        x = tree_unflatten(x_tree, list(leaves[n_carry:]))
        res = f(c, x)
        if not (isinstance(res, tuple) and len(res) == 2):
            raise FxadTypeError(f"{name}: the body must return a pair (carry, y)")
        c_leaves, c_tree = tree_flatten(res[0])
        if c_tree != carry_tree:
            raise FxadTypeError(f"{name}: the body returns a carry with structure {c_tree}, but "
                                f"the initial carry has structure {carry_tree}")
        y_leaves, y_store["tree"] = tree_flatten(res[1])
        return list(c_leaves) + list(y_leaves)
    in_tree = tree_flatten(tuple([0] * (n_carry + len(x_leaves))))[1]
    jaxpr, consts, _ = _trace(lambda *a: body(*a), in_tree, carry_avals + slice_avals,
                              "scan body")
    got = jaxpr.out_avals[:n_carry]
    if got != carry_avals:
        raise FxadTypeError(f"{name}: the body's carry output {_describe(got)} differs from the "
                            f"initial carry {_describe(carry_avals)}; the carry must keep its "
                            "shapes and dtypes (e.g. start from 0.0, not 0)")
    outs = bind_scan(consts, init_leaves, x_leaves, jaxpr, n, bool(reverse))
    return (tree_unflatten(carry_tree, outs[:n_carry]),
            tree_unflatten(y_store["tree"], outs[n_carry:]))


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """while cond_fun(val): val = body_fun(val). Reverse mode works in eager mode."""
    leaves, tree = tree_flatten(init_val)
    leaves = [_leaf(x) for x in leaves]
    avals = _avals(leaves)
    cj, cc, _ = _trace(lambda v: cond_fun(v), tree_flatten((init_val,))[1], avals,
                       "while_loop cond")
    if len(cj.out_avals) != 1 or cj.out_avals[0].shape != () or \
            cj.out_avals[0].dtype != np.bool_:
        got = ", ".join(a.str_short() for a in cj.out_avals)
        raise FxadTypeError(f"while_loop: cond_fun must return a boolean scalar, but it "
                            f"returned ({got}); compare explicitly, e.g. `x < 5` or "
                            "`fxad.numpy.any(x != 0)`")
    bj, bc, out_tree = _trace(lambda v: body_fun(v), tree_flatten((init_val,))[1], avals,
                              "while_loop body")
    if out_tree != tree or bj.out_avals != avals:
        raise FxadTypeError(f"while_loop: body_fun returns {out_tree} {_describe(bj.out_avals)}"
                            f" but the loop value is {tree} {_describe(avals)}; they must "
                            "match in structure, shapes and dtypes")
    outs = while_p.bind(*cc, *bc, *leaves, cond_jaxpr=cj, body_jaxpr=bj, n_cc=len(cc),
                        n_bc=len(bc))
    return tree_unflatten(tree, outs)


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """for i in range(lower, upper): val = body_fun(i, val). Static bounds lower to scan
    (reverse mode everywhere); traced bounds to while_loop. `unroll` is accepted for JAX
    code: the loop runs as generated code either way."""
    static = not isinstance(lower, Tracer) and not isinstance(upper, Tracer)
    if static:
        lo, hi = int(lower), int(upper)
        carry, _ = _scan(lambda v, i: (body_fun(i, v), None), init_val,
                         np.arange(lo, max(hi, lo)), None, False, "fori_loop")
        return carry
    _, val = while_loop(lambda c: ops.lt(c[0], upper),
                        lambda c: (ops.add(c[0], 1), body_fun(c[0], c[1])),
                        (ops.convert_element_type(lower, np.int64), init_val))
    return val

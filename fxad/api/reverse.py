"""Reverse mode: vjp, grad, value_and_grad, linear_transpose (= linearize + transpose),
and stop_gradient."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core import _PY_SCALARS, Tracer, get_aval, is_float
from ..errors import FxadTypeError
from ..interpreters.jvp import Zero
from ..interpreters.tape import TapeVJP, tape_active
from ..interpreters.transpose import backward_pass, vjp_flat
from ..ir.staging import stage
from ..rules import ops
from ..tree_util import register_pytree_node, tree_flatten, tree_unflatten
from .common import (Argnums, _argnums_split, _check_callable, _check_cotangent, _check_inputs,
                     _flat_fun, _leaf, _partial, _result, _split_aux)


def vjp(f: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """(f(*primals), f_vjp[, aux]); f_vjp(ct) returns a tuple with one cotangent per primal.

    >>> import fxad, fxad.numpy as fnp
    >>> y, f_vjp = fxad.vjp(lambda x, w: x * w, 3.0, 4.0)
    >>> ct_x, ct_w = f_vjp(1.0)
    >>> print(y, ct_x, ct_w)
    12.0 4.0 3.0
    """
    _check_callable("vjp", f)
    flat_p, tree_p = tree_flatten(primals)
    return _vjp_leaves(f, [_leaf(p) for p in flat_p], tree_p, has_aux, "vjp", snapshot=True)


def _vjp_leaves(f, flat_p, tree_p, has_aux, name, snapshot=False, once=False):
    """vjp of f at the primals given as leaves (already arrays) and their tree: eagerly on
    the tape of derived pullbacks when no outer transformation is active (fast), else
    linearize + transpose (staged; composes with everything). With `snapshot`, f_vjp (which
    outlives the call) keeps private copies of its residuals; grad and jacrev use it at once
    and need none. `once`: f_vjp is called exactly once (grad), so it may free as it goes."""
    fun, store = _flat_fun(f, tree_p, has_aux, name)
    if tape_active():
        tape = TapeVJP(fun, flat_p, name)
        outs, out_avals = tape.primal_outs, tape.out_avals
        pullback = lambda cts: tape.pullback(cts, free=once)  # noqa: E731

        def program():  # the staged program, made only if the function is flattened
            lin = vjp_flat(fun, flat_p, name)[2]
            return _VJPProgram(lin, store, tree_p), list(lin.jaxpr.snapshot().consts)
        if snapshot:
            tape.snapshot()
    else:
        outs, pullback, lin = vjp_flat(fun, flat_p, name)
        out_avals = lin.out_avals
        if snapshot:
            lin.jaxpr = lin.jaxpr.snapshot()
        program = lambda: (_VJPProgram(lin, store, tree_p), list(lin.jaxpr.consts))  # noqa
    out, aux = _split_aux(outs, store, has_aux)
    f_vjp = _vjp_function(pullback, out_avals, store["n_out"], store["out"], tree_p, program)
    return (out, f_vjp, aux) if has_aux else (out, f_vjp)


class VJPFunction:
    """The function vjp returns: call it with a cotangent of the output's structure. As JAX's
    (a tree_util.Partial), it is also a pytree whose leaves are the residuals reverse mode
    kept, so it can be returned from a jitted function, carried through a scan, or flattened
    to see the residuals."""
    __slots__ = ("_call", "_trusted", "_program", "_made")

    def __init__(self, call, trusted, program):
        self._call, self._trusted, self._program, self._made = call, trusted, program, None

    def __call__(self, ct):
        return self._call(ct)

    def _flatten(self):
        if self._made is None:
            self._made = self._program()
        prog, consts = self._made
        return consts, prog

    def __reduce__(self):  # pickled as its staged program and residuals (as a pytree)
        consts, prog = self._flatten()
        return (_rebuild_vjp_function, (prog, consts))


def _rebuild_vjp_function(prog, consts):
    return prog.function(consts)


class _VJPProgram:
    """A vjp's staged linear program without its residuals: VJPFunction's static part."""

    def __init__(self, lin, store, tree_p):
        self.lin, self.n_out, self.out_tree, self.tree_p = lin, store["n_out"], store["out"], \
            tree_p

    def function(self, consts):
        lin, consts = self.lin, list(consts)

        def pullback(cts_out):
            cts = [ct for ct, m in zip(cts_out, lin.out_mask) if m]
            cts_in = iter(backward_pass(lin.jaxpr.jaxpr, consts, cts))
            return [_result(next(cts_in)) if m else np.zeros(a.shape, a.dtype)
                    for a, m in zip(lin.in_avals, lin.in_mask)]
        made = (self, consts)
        return _vjp_function(pullback, lin.out_avals, self.n_out, self.out_tree, self.tree_p,
                             lambda: made)


def _vjp_function(pullback, out_avals, n_out, out_tree, tree_p, program):
    def f_vjp(ct):
        flat_ct, tree_ct = tree_flatten(ct)
        if tree_ct != out_tree:
            raise FxadTypeError(f"f_vjp expects a cotangent with the output's structure "
                                f"{out_tree}, got {tree_ct}")
        for i, (o, c) in enumerate(zip(out_avals[:n_out], flat_ct)):
            _check_cotangent("f_vjp", i, o, get_aval(c))
        # a Python number standing in for a 0-d cotangent takes the output's dtype (the
        # pullbacks were derived for exactly the outputs' types)
        return trusted([c if get_aval(c).dtype == o.dtype or not is_float(o.dtype)
                        else np.asarray(c, o.dtype) for c, o in
                        zip([_leaf(c) for c in flat_ct], out_avals)])

    def trusted(flat_ct):  # flat cotangents known to match the outputs (grad's own ones)
        cts = pullback(flat_ct + [Zero(a) for a in out_avals[n_out:]])
        return tree_unflatten(tree_p, [_result(c) for c in cts])
    return VJPFunction(f_vjp, trusted, program)


register_pytree_node(VJPFunction, VJPFunction._flatten,
                     lambda prog, consts: prog.function(consts))


def _value_and_grad(f, argnums, has_aux, holomorphic, name, allow_int=False):
    _check_callable(name, f)
    splits = {}  # number of positional arguments -> checked (single, nums)

    def vg(*args, **kwargs):
        split = splits.get(len(args))
        if split is None:
            split = splits[len(args)] = _argnums_split(name, args, argnums)
        single, nums = split
        dyn = (args[nums[0]],) if len(nums) == 1 else tuple([args[i] for i in nums])
        flat_p, tree_p = tree_flatten(dyn)
        flat_p = [_leaf(p) for p in flat_p]
        if not allow_int:
            _check_inputs(name, dyn, nums, flat_p, holomorphic)
        res = _vjp_leaves(_partial(f, args, nums, kwargs), flat_p, tree_p, has_aux, name,
                          once=True)
        out, f_vjp = res[0], res[1]
        a = get_aval(_leaf(out)) if not isinstance(out, (tuple, list, dict)) else None
        if a is None or a.shape != ():
            what = f"shape {a.shape}" if a is not None else f"type {type(out).__name__}"
            raise FxadTypeError(
                f"{name} requires a scalar output, but the output had {what}; use "
                "jacrev (or vjp) for a non-scalar output, or sum the output")
        if a.dtype.kind == "c" and not holomorphic:
            raise FxadTypeError(f"{name} requires a real-valued output, got a complex one "
                                f"({a.str_short()}); use holomorphic=True for a holomorphic "
                                "function, or take .real")
        if a.dtype.kind not in "fc":
            raise FxadTypeError(f"{name} requires a floating-point output, got {a.dtype}")
        g = f_vjp._trusted([np.array(1, a.dtype)])  # the output was just checked: 0-d, float
        g = g[0] if single else g
        return ((out, res[2]), g) if has_aux else (out, g)
    return vg


def value_and_grad(f: Callable, argnums: Argnums = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """(f(*args), ∇f(*args)) for a scalar-valued f, by reverse mode.

    >>> import fxad, fxad.numpy as fnp
    >>> value, g = fxad.value_and_grad(lambda x: fnp.sum(x ** 2))(fnp.array([1.0, 2.0]))
    >>> print(value, g)
    5.0 [2. 4.]
    """
    return _value_and_grad(f, argnums, has_aux, holomorphic, "value_and_grad", allow_int)


def grad(f: Callable, argnums: Argnums = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """∇f for a scalar-valued f (reverse mode: linearize, then transpose). With
    `allow_int`, integer arguments are accepted and get integer zeros as gradients (JAX
    gives float0 zeros). `argnums` picks the arguments (a tuple gives a tuple of gradients);
    `has_aux`: f returns (output, aux), and the result is (gradient, aux).

    >>> import fxad, fxad.numpy as fnp
    >>> print(fxad.grad(lambda x: x ** 3)(2.0))
    12.0
    >>> print(fxad.grad(fxad.grad(fnp.sin))(fnp.pi / 2))    # grad composes: -sin(pi / 2)
    -1.0
    """
    vg = _value_and_grad(f, argnums, has_aux, holomorphic, "grad", allow_int)

    def g(*args, **kwargs):
        (_, *aux), gr = vg(*args, **kwargs) if has_aux else ((None,), vg(*args, **kwargs)[1])
        return (gr, aux[0]) if has_aux else gr
    return g


def linear_transpose(f: Callable, *primals: Any) -> Callable:
    """The transpose of a linear f; `primals` give the input shapes and dtypes only."""
    _check_callable("linear_transpose", f)
    flat_p, tree_p = tree_flatten(primals)
    avals = [get_aval(_leaf(p)) for p in flat_p]
    fun, store = _flat_fun(f, tree_p, where="linear_transpose")
    closed = stage(fun, avals, name="linear_transpose").snapshot()

    def f_t(ct):
        flat_ct, tree_ct = tree_flatten(ct)
        if tree_ct != store["out"]:
            raise FxadTypeError(f"the transpose expects a cotangent with structure "
                                f"{store['out']}, got {tree_ct}")
        flat_ct = [_leaf(c) for c in flat_ct]
        for i, (o, c) in enumerate(zip(closed.out_avals, flat_ct)):
            _check_cotangent("linear_transpose", i, o, get_aval(c))
        cts = backward_pass(closed.jaxpr, closed.consts, flat_ct)
        return tree_unflatten(tree_p, [_result(c) for c in cts])
    return f_t


def stop_gradient(x: Any) -> Any:
    """x, with zero derivative at every order."""
    if isinstance(x, Tracer):  # a traced array, the common case: a leaf
        return ops.stop_gradient(x)
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [ops.stop_gradient(_leaf(v) if type(v) not in _PY_SCALARS else v)
                                 for v in leaves])

"""closure_convert and named_call."""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..core import get_aval, is_float
from ..errors import FxadTypeError
from ..ir.jaxpr import eval_jaxpr
from ..ir.staging import stage
from ..tree_util import tree_flatten, tree_unflatten
from .common import _check_callable, _flat_fun
from .shapes import abstract


def closure_convert(fun: Callable, *example_args: Any) -> tuple[Callable, list]:
    """(converted, consts): `converted(*args, *consts)` computes `fun(*args)`, with the
    floating-point values `fun` closes over (arrays, or values an enclosing transformation
    is differentiating) passed explicitly as `consts`. A custom_vjp function can then take
    them as arguments and give them cotangents. `fun` is staged once, for the shapes and
    dtypes of `example_args`."""
    _check_callable("closure_convert", fun)
    flat, in_tree = tree_flatten(example_args)
    flat_fun, store = _flat_fun(fun, in_tree, where="closure_convert")
    closed = stage(flat_fun, [abstract(x) for x in flat], name="closure_convert")
    jaxpr, consts = closed.jaxpr, closed.consts
    hoist = [i for i, c in enumerate(consts) if is_float(get_aval(c).dtype)]
    hoisted = [consts[i] for i in hoist]
    n_args = len(flat)

    def converted(*args_and_consts):
        if len(args_and_consts) < len(hoisted):
            raise FxadTypeError(f"closure_convert: the converted function takes the "
                                f"arguments and then the {len(hoisted)} constants it returned")
        args = args_and_consts[:len(args_and_consts) - len(hoisted)]
        given = args_and_consts[len(args):]
        leaves, tree = tree_flatten(args)
        if tree != in_tree or len(leaves) != n_args:
            raise FxadTypeError(f"closure_convert: the converted function was made for "
                                f"arguments {in_tree}, called with {tree}")
        values = list(consts)
        for i, c in zip(hoist, given):
            values[i] = c
        return tree_unflatten(store["out"], eval_jaxpr(jaxpr, values, *leaves))
    return converted, hoisted


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """`fun`, under a name (JAX names the staged call; fxad's programs have no named scopes,
    so this is `fun` itself, renamed)."""
    _check_callable("named_call", fun)

    @functools.wraps(fun)
    def call(*args, **kwargs):
        return fun(*args, **kwargs)
    if name is not None:
        call.__name__ = call.__qualname__ = name
    return call

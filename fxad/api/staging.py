"""make_jaxpr: the program fxad builds for a function, to read."""
from __future__ import annotations

from typing import Callable


from ..core import (_PY_SCALARS, get_aval)
from ..ir.jaxpr import ClosedJaxpr
from ..ir.staging import stage
from ..tree_util import tree_flatten
from .common import (Argnums, _check_callable, _flat_fun, _leaf, _partial)


def make_jaxpr(f: Callable, static_argnums: Argnums = ()) -> Callable[..., ClosedJaxpr]:
    """make_jaxpr(f)(*args) -> the ClosedJaxpr fxad builds for f at these argument types."""
    _check_callable("make_jaxpr", f)
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def make(*args, **kwargs):
        dyn_idx = [i for i in range(len(args)) if i not in static]
        g = _partial(f, args, dyn_idx, kwargs)
        flat, tree = tree_flatten(tuple(args[i] for i in dyn_idx))
        fun, _ = _flat_fun(g, tree, where="make_jaxpr")
        return stage(fun, [get_aval(x if type(x) in _PY_SCALARS else _leaf(x))
                           for x in flat]).snapshot()
    return make

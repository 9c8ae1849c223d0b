"""vmap: in_axes/out_axes as in JAX, over the batching interpreter."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core import (_PY_SCALARS, check_output, get_aval, new_trace)
from ..errors import FxadValueError
from ..interpreters.batching import BatchTrace
from ..interpreters.named_axes import axis_frame, check_axis_name
from ..rules.helpers import broadcast_batched, moveaxis
from ..tree_util import broadcast_prefix, tree_flatten, tree_unflatten
from .common import (_check_callable, _is_index, _leaf, _result)


def _norm_axis(ax, nd, what):
    if ax is None:
        return None
    if not _is_index(ax):
        raise FxadValueError(f"vmap {what}_axes entries must be ints or None, got {ax!r}")
    n = nd + (what == "out")  # an output axis may be inserted after the last one
    if n == 0:
        raise FxadValueError(f"vmap {what}_axes value {ax} given for a scalar, which has no "
                             "axis to map over; use None for it (unbatched)")
    if not -n <= ax < n:
        raise FxadValueError(f"vmap {what}_axes value {ax} is out of range for an array with "
                             f"{nd} dimensions (valid: {-n} to {n - 1}, or None)")
    return int(ax) % n


def _axes_for(axes, tree, n_leaves, what, where="vmap"):
    """One axis per leaf of `tree` (which has `n_leaves`) from the in_axes/out_axes prefix,
    or an error naming it (`what` is "in" or "out"; `where` the transformation)."""
    if axes is None or _is_index(axes):  # the common cases, without walking the tree
        return [axes] * n_leaves
    if isinstance(axes, (tuple, list)) and isinstance(tree, (tuple, list)) and \
            len(axes) == len(tree) and all(a is None or _is_index(a) for a in axes) and \
            all(type(t) is np.ndarray or type(t) in _PY_SCALARS for t in tree):
        return list(axes)  # one int/None per array argument
    try:
        return broadcast_prefix(tuple(axes) if isinstance(axes, list) else axes, tree)
    except ValueError as e:
        raise FxadValueError(f"{where} {what}_axes={axes!r} does not match the structure of the "
                             f"{'arguments' if what == 'in' else 'outputs'}: it must be an "
                             f"int, None, or a pytree prefix of them.\n{e}") from None


def vmap(f: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None) -> Callable:
    """Vectorize f over a mapped axis of its inputs (JAX semantics for in_axes/out_axes): `in_axes`
    gives each argument's mapped axis (None: not mapped), `out_axes` where the mapped axis goes
    in the outputs; `axis_name` names the mapped axis for the collectives of `fxad.lax` (psum,
    all_gather, axis_index, ...) called inside `f` (vmaps nest, each binding its own name; the
    reference semantics of pmap and shard_map); composes with every other transformation.

    >>> import fxad, fxad.numpy as fnp
    >>> print(fxad.vmap(fnp.dot, in_axes=(0, None))(fnp.eye(2), fnp.array([3.0, 4.0])))
    [3. 4.]
    >>> print(fxad.vmap(lambda v: fxad.lax.psum(v, "i"), axis_name="i")(fnp.array([1.0, 2.0])))
    [3. 3.]
    """
    _check_callable("vmap", f)
    if axis_name is not None:
        check_axis_name(axis_name, "vmap")
    def vf(*args, **kwargs):
        flat, in_tree = tree_flatten(args)
        # Python scalars stay Python scalars (weakly typed, as eagerly): an unbatched 2.0
        # must not turn float32 results into float64. A batched one is an error below.
        flat = [x if type(x) in _PY_SCALARS else _leaf(x) for x in flat]
        if isinstance(in_axes, (tuple, list)) and len(in_axes) != len(args):
            raise FxadValueError(f"vmap in_axes has {len(in_axes)} entries but the "
                                 f"function was called with {len(args)} arguments")
        axes = _axes_for(in_axes, args, len(flat), "in")
        axes = [_norm_axis(a, get_aval(x).ndim, "in") for a, x in zip(axes, flat)]
        sizes = {}
        for i, (x, a) in enumerate(zip(flat, axes)):
            if a is not None:
                sizes.setdefault(get_aval(x).shape[a], []).append(f"leaf {i} (axis {a})")
        if len(sizes) > 1:
            detail = "; ".join(f"size {n}: {', '.join(w)}" for n, w in sizes.items())
            raise FxadValueError(f"vmap got inconsistent sizes for the mapped axis: {detail}. "
                                 "Every mapped input needs the same size along its in_axes "
                                 "axis; use in_axes=None for an argument that is not batched")
        n = next(iter(sizes)) if sizes else axis_size
        if n is None:
            raise FxadValueError("vmap needs at least one argument with a mapped axis, or "
                                 "axis_size= for a function with no batched input")
        if axis_size is not None and n != axis_size:
            raise FxadValueError(f"vmap axis_size={axis_size} but the mapped inputs have size "
                                 f"{n}; leave axis_size out when an input is mapped")
        with new_trace(BatchTrace, "vmap", axis_size=n, axis_name=axis_name) as trace, \
                axis_frame(axis_name, n, trace):
            out = f(*tree_unflatten(in_tree, [trace.box(x, a) for x, a in zip(flat, axes)]),
                    **kwargs)
            flat_out, out_tree = tree_flatten(out)
            flat_out = [check_output(o, i, "vmap") for i, o in enumerate(flat_out)]
            oaxes = _axes_for(out_axes, out, len(flat_out), "out")
            res = []
            for o, oa in zip(flat_out, oaxes):
                v, d = trace.unbox(o)
                if oa is None:
                    if d is not None:
                        raise FxadValueError("vmap out_axes=None requires the output not to "
                                             "depend on the mapped inputs, but it does")
                    res.append(v)
                    continue
                if d is None:
                    v, d = broadcast_batched(v, None, n), 0
                res.append(moveaxis(v, d, _norm_axis(oa, get_aval(v).ndim - 1, "out")))
        return tree_unflatten(out_tree, [_result(x) for x in res])
    return vf

"""pmap and shard_map: SPMD programs over named axes, staged once per signature and run by an
executor (in process by default; see fxad/rules/collective/spmd.py for the primitive and
fxad/distributed for Dask)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..core import BoundedCache, ShapedArray, Tracer, check_output, get_aval
from ..errors import FxadValueError
from ..interpreters.named_axes import check_axis_name, env_key
from ..rules.collective.replication import varying_outputs
from ..rules.collective.spmd import spmd_p, stage_body
from ..tree_util import broadcast_prefix, cache_key, tree_flatten, tree_unflatten
from .batching import _axes_for
from .common import _check_callable, _is_index, _leaf, _result

__all__ = ["pmap", "shard_map"]


class _Anonymous:
    """The name of an axis the user did not name: no collective can refer to it."""
    __slots__ = ()

    def __repr__(self):
        return "<unnamed pmap axis>"


def _is_dask_array(x):
    return hasattr(x, "__dask_graph__") and hasattr(x, "chunks")


def _aval(x):
    """A value's aval; a dask.array's from its metadata (never computing it)."""
    if _is_dask_array(x):
        return ShapedArray(tuple(int(s) for s in x.shape), np.dtype(x.dtype))
    return get_aval(x)


def _arg(x, executor, where):
    if isinstance(x, Tracer):
        return x
    if _is_dask_array(x):
        if executor is None or not getattr(executor, "takes_dask_arrays", False):
            raise FxadValueError(f"{where}: a dask.array argument needs a distributed "
                                 "executor (executor=fxad.distributed.DaskExecutor(client)), "
                                 "which uses its chunks where they lie; or pass "
                                 "np.asarray(x) to compute it here")
        return x
    return _leaf(x)


def _shard_avals(flat, in_dims):
    out = []
    for x, d in zip(flat, in_dims):
        a = _aval(x)
        out.append(a if d is None else ShapedArray(a.shape[:d] + a.shape[d + 1:], a.dtype))
    return out


def spmd_call(fun, flat, in_dims, out_dims, axis_name, size, executor, cache, key, where):
    """Run `fun` (flat shard arguments -> (flat shard outputs, aux)) once per index of the
    axis: staged once per signature (kept with its aux in `cache` under `key` and the shard
    avals), bound as an spmd call. `out_dims`: one int for all outputs. Returns (outputs,
    aux, which outputs may differ between indices)."""
    avals = _shard_avals(flat, in_dims)
    key = (key, tuple((a.shape, a.dtype) for a in avals), tuple(in_dims), size, env_key())
    hit = cache.get(key) if cache is not None else None
    if hit is None:
        store = {}

        def body(*a):
            outs, store["aux"] = fun(*a)
            return [check_output(o, i, where) for i, o in enumerate(outs)]
        closed, lifted = stage_body(body, avals, axis_name, size)
        if lifted:  # closes over an enclosing transformation's values: this call only
            flat, in_dims = lifted + list(flat), [None] * len(lifted) + list(in_dims)
        hit = (closed, store["aux"], varying_outputs(closed, axis_name, in_dims))
        if not lifted and cache is not None:
            cache[key] = hit
    body, aux, varying = hit
    od = (out_dims,) * len(body.out_avals)
    outs = spmd_p.bind(*flat, body=body, axis_name=axis_name, size=size,
                       in_dims=tuple(in_dims), out_dims=od, executor=executor)
    return outs, aux, varying


def pmap(fun: Callable, axis_name: Any = None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums: Any = (), devices: Any = None, backend: Any = None,
         axis_size: int | None = None, donate_argnums: Any = (),
         global_arg_shapes: Any = None, executor: Any = None) -> Callable:
    """Run `fun` once per index of the mapped axis of its arguments (JAX's `pmap` semantics:
    `in_axes`/`out_axes`, `axis_name` for the collectives of `fxad.lax`, arguments in
    `static_broadcasted_argnums` passed to every index as they are). The function is staged
    once per signature; `executor` runs it: the default runs in process and gives exactly
    `vmap(fun, in_axes, out_axes, axis_name=axis_name)`; `fxad.distributed.DaskExecutor(client)`
    runs each index as a Dask task. Unlike JAX, the axis size is not limited by a device
    count, and `devices`/`backend`/`donate_argnums` are accepted and ignored. Differentiable
    (grad of pmap, pmap of grad), batchable and jit-able. out_axes=None returns an output
    unmapped: allowed where fxad can tell the output is the same at every index (computed
    from unmapped arguments and psum/pmax/pmin/all_gather results), refused otherwise."""
    _check_callable("pmap", fun)
    if global_arg_shapes is not None:
        raise FxadValueError("pmap: global_arg_shapes is not supported (JAX removed it too)")
    name = _Anonymous() if axis_name is None else check_axis_name(axis_name, "pmap")
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)
    cache = BoundedCache(32)

    def mapped(*args, **kwargs):
        if kwargs:
            raise FxadValueError("pmap: pass the arguments positionally (JAX's pmap does not "
                                 "map keyword arguments either)")
        bad = [i for i in static if not -len(args) <= i < len(args)]
        if bad:
            raise FxadValueError(f"pmap: static_broadcasted_argnums {bad} out of range for "
                                 f"{len(args)} positional argument(s)")
        st = tuple(i % len(args) for i in static)
        dyn = [a for i, a in enumerate(args) if i not in st]
        flat, in_tree = tree_flatten(tuple(dyn))
        flat = [_arg(x, executor, "pmap") for x in flat]
        ax = in_axes
        if isinstance(in_axes, (tuple, list)):  # one per argument, or per non-static one
            if len(in_axes) == len(args):
                ax = tuple(a for i, a in enumerate(in_axes) if i not in st)
            elif len(in_axes) != len(dyn):
                raise FxadValueError(f"pmap in_axes has {len(in_axes)} entries but the "
                                     f"function was called with {len(args)} arguments")
            else:
                ax = tuple(in_axes)
        dims = _axes_for(ax, tuple(dyn), len(flat), "in", "pmap")
        norm, sizes = [], {}
        for i, (x, d) in enumerate(zip(flat, dims)):
            if d is not None:
                nd = len(_aval(x).shape)
                if not _is_index(d) or not -nd <= d < nd:
                    raise FxadValueError(f"pmap in_axes value {d!r} is out of range for "
                                         f"argument leaf {i} of rank {nd}")
                d = int(d) % nd
                sizes.setdefault(_aval(x).shape[d], []).append(f"leaf {i} (axis {d})")
            norm.append(d)
        if len(sizes) > 1:
            detail = "; ".join(f"size {n}: {', '.join(w)}" for n, w in sizes.items())
            raise FxadValueError(f"pmap got inconsistent sizes for the mapped axis: {detail}")
        n = next(iter(sizes)) if sizes else axis_size
        if sizes and axis_size is not None and axis_size != n:
            raise FxadValueError(f"pmap: axis_size={axis_size} but the mapped axis has size "
                                 f"{n}; leave axis_size out or make them agree")
        if n is None:
            raise FxadValueError("pmap needs an argument with a mapped axis, or axis_size=")
        for i in st:
            if not _hashable(args[i]):
                raise FxadValueError(f"pmap: static argument {i} ({type(args[i]).__name__}) "
                                     "must be hashable: static arguments are part of the "
                                     "cache key")

        def body(*leaves):
            d_it = iter(tree_unflatten(in_tree, list(leaves)))
            full = [args[i] if i in st else next(d_it) for i in range(len(args))]
            return tree_flatten(fun(*full))
        key = (tuple((i, type(args[i]), args[i]) for i in st), cache_key(in_tree) or in_tree)
        outs, out_tree, varying = spmd_call(body, flat, norm, 0, name, n, executor,
                                   cache if cache_key(in_tree) is not None else None, key,
                                   "pmap")
        oax = _axes_for(out_axes, tree_unflatten(out_tree, outs), len(outs), "out", "pmap")
        res = []
        for j, (o, a, v) in enumerate(zip(outs, oax, varying)):
            if a is None:  # unmapped: the same at every index, so index 0's
                if v:
                    raise FxadValueError(
                        f"pmap out_axes=None for output leaf {j}, which may differ between "
                        f"indices of the axis: map it (out_axes=0), or make it the same "
                        f"everywhere with psum/pmean/pmax/pmin/all_gather over the axis")
                res.append(_index0(o))
                continue
            nd = len(_aval(o).shape)
            if not _is_index(a) or not -nd <= a < nd:
                raise FxadValueError(f"pmap out_axes value {a!r} is out of range for an "
                                     f"output of rank {nd - 1}")
            a = int(a) % nd
            res.append(o if a == 0 else np.moveaxis(o, 0, a) if not isinstance(o, Tracer)
                       else _moveaxis(o, 0, a))
        return tree_unflatten(out_tree, [_result(x) for x in res])
    return mapped


def _hashable(x):
    try:
        hash(x)
        return True
    except TypeError:
        return False


def _moveaxis(x, src, dst):
    from ..rules.helpers import moveaxis
    return moveaxis(x, src, dst)


def shard_map(f: Callable, mesh: Any = None, in_specs: Any = None, out_specs: Any = None, *,
              check_rep: bool = True, check_vma: bool = True, auto: Any = frozenset(),
              axis_names: Any = None, executor: Any = None) -> Callable:
    """Run `f` once per shard of a `fxad.sharding.Mesh` (JAX's `shard_map` semantics): each
    argument is split into blocks as its `PartitionSpec` in `in_specs` says (a dimension
    named by mesh axes is cut into that many blocks, the first named axis major), `f` sees
    one block of each and may call collectives over the mesh axes; each output is assembled
    from the blocks as its spec in `out_specs` says. Over mesh axes an output spec does not
    name, the output must be the same in every shard, which is checked when the body is
    staged (as JAX's check_rep/check_vma: an output that may vary, i.e. not computed from
    replicated arguments and psum/pmax/pmin/all_gather results, is refused; with
    check_vma=False or check_rep=False the first shard's value is taken). A Mesh names logical
    shards, so their number is not limited by devices. `executor` as for pmap (a distributed
    executor runs the shards of the first mesh axis as its tasks; the other axes run inside
    them). Differentiable, batchable and jit-able."""
    from ..sharding import Mesh
    _check_callable("shard_map", f)
    if not isinstance(mesh, Mesh):
        raise FxadValueError(f"shard_map needs mesh=fxad.sharding.Mesh(...), got {mesh!r}")
    if auto:
        raise FxadValueError("shard_map: auto= (partly automatic sharding) is not supported")
    axes, sizes = tuple(mesh.axis_names), dict(mesh.shape)
    cache = BoundedCache(32)

    def mapped(*args):
        flat, in_tree = tree_flatten(tuple(args))
        flat = [_arg(x, None, "shard_map") for x in flat]
        specs = _spec_leaves(in_specs, tuple(args), len(flat), "in_specs")
        blocks, present = [], []
        for i, (x, sp) in enumerate(zip(flat, specs)):
            where = f"in_specs (argument leaf {i})"
            parts = _spec_parts(sp, len(get_aval(x).shape), sizes, axes, where)
            b, order = _to_blocks(x, parts, sizes, axes, where)
            blocks.append(b)
            present.append(order)

        def level(k, leaves, present):
            """The shards of mesh axes k.. : (flat outputs with a leading axis for each of
            those axes its out spec names, (out tree, specs, block shapes))."""
            if k == len(axes):
                outs, tree = tree_flatten(f(*tree_unflatten(in_tree, list(leaves))))
                specs = _spec_leaves(out_specs, tree_unflatten(tree, outs), len(outs),
                                     "out_specs")
                shapes = [tuple(get_aval(o).shape) for o in outs]
                parts = [_spec_parts(sp, len(s), sizes, axes, f"out_specs (output leaf {j})")
                         for j, (sp, s) in enumerate(zip(specs, shapes))]
                return outs, (tree, parts, shapes)
            nm = axes[k]
            dims = [0 if nm in p else None for p in present]
            rest = [[a for a in p if a != nm] for p in present]
            outs, aux, varying = spmd_call(
                lambda *ls: level(k + 1, ls, rest), list(leaves), dims, 0, nm, sizes[nm],
                executor if k == 0 else None, cache, (k, cache_key(in_tree) or in_tree),
                "shard_map")
            named = [{a for _, names in parts for a in names} for parts in aux[1]]
            for j, (nmd, v) in enumerate(zip(named, varying)):
                if v and nm not in nmd and check_rep and check_vma:
                    raise FxadValueError(
                        f"shard_map: output leaf {j} may differ between the shards of mesh "
                        f"axis {nm!r}, but its out_specs entry does not name {nm!r} (which "
                        f"says it is the same in every shard): name {nm!r} in its "
                        f"PartitionSpec, or make it the same everywhere with psum/pmean/"
                        f"all_gather over {nm!r}; check_vma=False takes the first shard's "
                        "value unchecked")
            return [o if nm in nmd else _index0(o) for o, nmd in zip(outs, named)], aux
        outs, (tree, parts, shapes) = level(0, blocks, present)
        res = [_from_blocks(o, p, s, sizes, axes) for o, p, s in zip(outs, parts, shapes)]
        return tree_unflatten(tree, [_result(x) for x in res])
    return mapped


def _spec_parts(spec, nd, sizes, axes, where):
    """[(dim, (mesh axes...))] of a PartitionSpec, checked."""
    from ..sharding import PartitionSpec
    if spec is None:
        spec = PartitionSpec()
    if not isinstance(spec, PartitionSpec):
        raise FxadValueError(f"shard_map {where}: expected a PartitionSpec, got {spec!r}")
    if len(spec) > nd:
        raise FxadValueError(f"shard_map {where}: {spec} has {len(spec)} entries for a value "
                             f"of rank {nd}")
    out, used = [], []
    for dim, entry in enumerate(spec):
        names = () if entry is None else tuple(entry) if isinstance(entry, (tuple, list)) \
            else (entry,)
        for nm in names:
            if nm not in sizes:
                raise FxadValueError(f"shard_map {where}: {spec} names {nm!r}, which is not "
                                     f"an axis of the mesh {axes}")
            if nm in used:
                raise FxadValueError(f"shard_map {where}: {spec} names {nm!r} twice")
            used.append(nm)
        if names:
            out.append((dim, names))
    return out


def _to_blocks(x, parts, sizes, axes, where):
    """x reshaped so that each mesh axis its spec names is a leading axis, in mesh order
    (the block of a shard is then the rest). Returns (x, those axes)."""
    from ..rules import ops
    shape = tuple(get_aval(x).shape)
    named = dict(parts)
    new_shape, lead = [], {}
    for dim, s in enumerate(shape):
        names = named.get(dim, ())
        k = math.prod(int(sizes[nm]) for nm in names)
        if s % k:
            raise FxadValueError(f"shard_map {where}: dimension {dim} has size {s}, not a "
                                 f"multiple of the {k} shards of mesh axes {names}")
        for nm in names:
            lead[nm] = len(new_shape)
            new_shape.append(sizes[nm])
        new_shape.append(s // k)
    if not lead:
        return x, []
    order = [nm for nm in axes if nm in lead]
    pos = [lead[nm] for nm in order]
    perm = pos + [i for i in range(len(new_shape)) if i not in pos]
    return ops.transpose(ops.reshape(x, tuple(new_shape)), tuple(perm)), order


def _from_blocks(x, parts, block_shape, sizes, axes):
    """The inverse of _to_blocks for an output: its leading mesh axes (in mesh order) put
    back before the dimensions they split, and merged with them."""
    from ..rules import ops
    order = [nm for nm in axes if any(nm in names for _, names in parts)]
    if not order:
        return x
    named, k = dict(parts), len(order)
    perm, shape = [], []
    for dim, s in enumerate(block_shape):
        names = named.get(dim, ())
        perm += [order.index(nm) for nm in names]
        perm.append(k + dim)
        shape.append(s * math.prod(int(sizes[nm]) for nm in names))
    return ops.reshape(ops.transpose(x, tuple(perm)), tuple(shape))


def _index0(x):
    from ..rules import ops
    return ops.getitem(x, 0)


def _spec_leaves(specs, tree, n, what):
    from ..sharding import PartitionSpec
    if specs is None or isinstance(specs, PartitionSpec):
        return [specs] * n
    try:
        return broadcast_prefix(specs, tree, is_leaf=lambda s: isinstance(s, PartitionSpec))
    except (ValueError, TypeError) as e:
        raise FxadValueError(f"shard_map {what} does not match the structure of the "
                             f"{'arguments' if what == 'in_specs' else 'outputs'}: give a "
                             f"PartitionSpec or a pytree prefix of them.\n{e}") from None

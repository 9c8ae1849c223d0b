"""vmap over a dask.array, chunk by chunk where the chunks lie."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import FxadValueError
from ..tree_util import tree_flatten, tree_unflatten
from .dask_executor import _import_dask, is_dask_array

__all__ = ["vmap_chunks"]


def _call(fn, *blocks):
    return tuple(tree_flatten(fn(*blocks))[0])


def vmap_chunks(fun: Callable, in_axes: Any = 0, out_axes: int = 0) -> Callable:
    """`vmap(fun, in_axes, out_axes)` for arguments that are dask.arrays: each chunk along the
    mapped axis is one Dask task that runs `jit(vmap(fun))` on that chunk where it lies, and
    the results are dask.arrays (lazy: nothing is computed or brought to the client until
    you ask, e.g. `.compute()` or `.sum().compute()`). Mapped arguments may also be NumPy
    arrays (cut into the same chunks); unmapped ones (`in_axes` None) are sent whole. The
    chunks of the first mapped dask.array set the split; along the other axes every chunk
    holds whole examples (rechunked on the cluster if needed). `out_axes` is one int for
    every output. Collectives over a named axis need pmap/shard_map. Not in JAX."""
    from ..api.batching import vmap
    from ..api.shapes import ShapeDtypeStruct, eval_shape
    from ..api.batching import _axes_for
    from ..jit import jit
    if not isinstance(out_axes, int):
        raise FxadValueError(f"vmap_chunks out_axes must be one int, got {out_axes!r}")

    def mapped(*args):
        _import_dask()
        import dask.array as da
        from dask import delayed
        flat, tree = tree_flatten(tuple(args))
        dims = _axes_for(in_axes, tuple(args), len(flat), "in", "vmap_chunks")
        moved, sizes = [], set()
        for x, d in zip(flat, dims):
            if d is None:
                moved.append(x)
                continue
            x = x if is_dask_array(x) else np.asarray(x)
            d = int(d) % x.ndim
            sizes.add(x.shape[d])
            moved.append(da.moveaxis(x, d, 0) if is_dask_array(x) else np.moveaxis(x, d, 0))
        if len(sizes) != 1:
            raise FxadValueError("vmap_chunks needs at least one mapped argument, all of one "
                                 f"size along their mapped axes (got sizes {sorted(sizes)})")
        first = next((x for x, d in zip(moved, dims) if d is not None and is_dask_array(x)),
                     None)
        if first is None:
            raise FxadValueError("vmap_chunks: no mapped argument is a dask.array; use vmap")
        split = first.chunks[0]
        inputs = []  # per argument: its blocks (mapped) or the value itself
        for x, d in zip(moved, dims):
            if d is None:
                inputs.append(x)
                continue
            if not is_dask_array(x):
                x = da.from_array(x, chunks=(split,) + tuple(-1 for _ in x.shape[1:]))
            want = (split,) + tuple((n,) for n in x.shape[1:])
            if x.chunks != want:
                x = x.rechunk((split,) + tuple(-1 for _ in x.shape[1:]))
            inputs.append(x.to_delayed().reshape(len(split)))
        mapped_dims = [None if d is None else 0 for d in dims]
        batched = jit(vmap(lambda *leaves: fun(*tree_unflatten(tree, list(leaves))),
                           in_axes=tuple(mapped_dims)))
        results, out_tree = None, None
        for k, n in enumerate(split):
            ins = [x if d is None else x[k] for x, d in zip(inputs, dims)]
            avals = [ShapeDtypeStruct((n,) + x.shape[1:], x.dtype) if d is not None else
                     ShapeDtypeStruct(x.shape, x.dtype) if is_dask_array(x) else x
                     for x, d in zip(moved, dims)]
            shapes, tree_k = tree_flatten(eval_shape(batched, *avals))
            task = delayed(_call, pure=False, nout=len(shapes))(batched, *ins)
            parts = [da.from_delayed(task[j], s.shape, s.dtype) for j, s in enumerate(shapes)]
            if results is None:
                results, out_tree = [[p] for p in parts], tree_k
            else:
                for r, p in zip(results, parts):
                    r.append(p)
        outs = [da.moveaxis(da.concatenate(r, axis=0), 0, out_axes) for r in results]
        return tree_unflatten(out_tree, outs)
    return mapped

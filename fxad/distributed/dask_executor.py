"""DaskExecutor: run the shards of a pmap/shard_map as Dask tasks.

One step (one call of the mapped function) is one Dask graph: per shard, a task per stage of
the body; between stages, each collective as a tree reduction (psum, pmax, pmin) or one task
that gathers the operands and hands every shard its result (the others). Dask schedules the
tasks (where their inputs lie), moves the data, and retries tasks whose worker died; fxad only
builds the graph. The stage programs are sent to each worker once and kept there (with their
compiled code) for as long as the staged body lives on the client.
"""
from __future__ import annotations

import itertools
import uuid

import numpy as np

from ..core import ShapedArray
from ..errors import DistributedError, FxadValueError
from ..ir.jaxpr import Literal
from .stages import (Exchange, combine, plan, run_collective, run_stage, shard_of,
                     tree_reducible)

__all__ = ["DaskExecutor", "is_dask_array"]

_INLINE_BYTES = 1 << 16  # smaller arrays travel inside the task graph

_INSTALL = ("fxad.distributed.DaskExecutor needs Dask: pip install 'fxad[distributed]' "
            "(dask[array], distributed, cloudpickle)")


def _import_dask():
    try:
        import dask
        import dask.array  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as e:
        raise DistributedError(f"{_INSTALL}; importing it failed: {e}") from None
    return dask


def is_dask_array(x):
    """Is x a dask.array (checked without importing Dask)?"""
    return hasattr(x, "__dask_graph__") and hasattr(x, "chunks")


def aval_of(x):
    return ShapedArray(tuple(int(s) for s in x.shape), np.dtype(x.dtype))


class DaskExecutor:
    """Runs each shard of a pmap or shard_map on a Dask cluster: `pmap(f, executor=
    DaskExecutor(client))`. `client` is a `distributed.Client` (None: the current one).
    `outputs="numpy"` brings the results back as NumPy arrays; `outputs="dask"` leaves them
    on the cluster as a (persisted) dask.array. `retries`: how often Dask retries a task whose
    worker died (the tasks are pure). A dask.array argument is used chunk-wise where it lies
    (its chunks along the mapped axis become the shards). A failure raises DistributedError
    naming the step; nothing of the caller's is changed. Not in JAX."""

    def __init__(self, client=None, *, outputs="numpy", retries=2):
        _import_dask()
        from distributed import get_client
        if outputs not in ("numpy", "dask"):
            raise FxadValueError(f"DaskExecutor outputs= must be 'numpy' or 'dask', got "
                                 f"{outputs!r}")
        self.client = client if client is not None else get_client()
        self.outputs, self.retries = outputs, int(retries)
        self._id = uuid.uuid4().hex[:8]
        self._steps = itertools.count()

    takes_dask_arrays = True

    def __repr__(self):
        return f"DaskExecutor({self.client!r}, outputs={self.outputs!r})"

    def __reduce__(self):
        raise DistributedError("a DaskExecutor cannot be pickled (it holds a client); create "
                               "one where it is used")

    # --- the step ----------------------------------------------------------------------------

    def _plan(self, body, axis_name):
        """The body's plan, with its stage programs scattered to every worker (once)."""
        key = ("dask plan", self._id, id(self.client))
        hit = body.cache.get(key)
        if hit is None:
            where = f"pmap over {axis_name!r}"
            p = plan(body, axis_name, where)
            stages = [s for s in p.steps if type(s) is not Exchange]
            try:
                futures = self.client.scatter([s.program for s in stages], broadcast=True,
                                              hash=False) if stages else []
            except Exception as e:  # noqa: BLE001  (named: what could not be sent)
                raise DistributedError(
                    f"{where}: its stages could not be sent to the workers ({type(e).__name__}: "
                    f"{e}). Every function the body calls must pickle (cloudpickle); a "
                    "closure over a value of an enclosing transformation does not") from e
            hit = (p, dict(zip(map(id, stages), futures)))
            body.cache[key] = hit
        return hit

    def run(self, args, body, axis_name, size, in_dims, out_dims):
        dask = _import_dask()
        from dask import delayed
        p, programs = self._plan(body, axis_name)
        step = f"fxad-{self._id}-{next(self._steps)}"
        # each shard's environment: index, argument shards
        envs = [dict() for _ in range(size)]
        for i in range(size):
            envs[i][p.invars[0]] = np.int32(i)
        for v, x, d in zip(p.invars[1:], args, in_dims):
            shards = self._shards(x, d, size, delayed)
            for i in range(size):
                envs[i][v] = shards[i]

        def read(env, v):
            if type(v) is Literal:
                return v.val
            got = env.get(v, env)
            return p.consts[v] if got is env else got  # (a constant returned as it is)
        for s in p.steps:
            if type(s) is Exchange:
                self._exchange(s, envs, read, axis_name, size, step, delayed)
                continue
            prog = programs[id(s)]
            for i, env in enumerate(envs):
                outs = delayed(run_stage, pure=True, nout=len(s.outs))(
                    prog, f"{s.label}, shard {i}", *[read(env, v) for v in s.ins],
                    dask_key_name=f"{step}-{s.label.split(': ')[-1].replace(' ', '')}-{i}")
                if len(s.outs) == 1:
                    outs = [outs[0]]
                env.update(zip(s.outs, outs))
        shard_outs = [[read(env, v) for v in p.outvars] for env in envs]
        return self._collect(shard_outs, body, size, out_dims, dask, delayed, axis_name)

    def _shards(self, x, d, size, delayed):
        if d is None:
            if is_dask_array(x):
                return [x.to_delayed().ravel()[0] if x.npartitions == 1 else x] * size
            if np.asarray(x).nbytes >= _INLINE_BYTES:  # sent once, not once per task
                f = self.client.scatter(np.asarray(x), broadcast=True, hash=False)
                return [f] * size
            return [np.asarray(x)] * size
        if is_dask_array(x):
            import dask.array as da
            x = da.moveaxis(x, d, 0)
            # one chunk per shard along the mapped axis, the rest of a shard in one chunk
            # (a no-op when the data is already laid out that way: nothing moves)
            want = {0: 1, **{k: -1 for k in range(1, x.ndim)}}
            if any(len(c) != (x.shape[k] if k == 0 else 1) for k, c in enumerate(x.chunks)):
                x = x.rechunk(want)
            blocks = x.to_delayed().reshape(size)
            return [delayed(np.squeeze, pure=True)(b, 0) for b in blocks]
        parts = [shard_of(x, i, d) for i in range(size)]
        if parts[0].nbytes < _INLINE_BYTES:  # small: inside the graph (no extra round trip)
            return parts
        return self.client.scatter(parts, hash=False)

    def _exchange(self, s, envs, read, axis_name, size, step, delayed):
        e = s.eqn
        operands = [read(env, e.invars[0]) for env in envs]
        name = e.primitive.name
        if tree_reducible(e):  # a binary tree of combines: log2(size) rounds
            level, r = operands, 0
            while len(level) > 1:
                nxt = [delayed(combine, pure=True)(name, level[k], level[k + 1],
                                                   dask_key_name=f"{step}-{name}{id(e)}-{r}-{k}")
                       for k in range(0, len(level) - 1, 2)]
                if len(level) % 2:
                    nxt.append(level[-1])
                level, r = nxt, r + 1
            total = level[0]
            for env in envs:
                env[e.outvars[0]] = total
            return
        everyone = delayed(run_collective, pure=True, nout=size)(
            e.primitive, e.params, axis_name, size, s.label, *operands,
            dask_key_name=f"{step}-{name}{id(e)}")
        for i, env in enumerate(envs):
            env[e.outvars[0]] = everyone[i]

    def _collect(self, shard_outs, body, size, out_dims, dask, delayed, axis_name):
        client = self.client
        flat = [o for outs in shard_outs for o in outs]
        lazy = [k for k, o in enumerate(flat) if hasattr(o, "__dask_graph__") or
                type(o).__name__ == "Future"]
        for k in lazy:  # a scattered input returned as it is: fetched like the others
            if not hasattr(flat[k], "__dask_graph__"):
                flat[k] = delayed(np.asarray, pure=True)(flat[k])
        n_out = len(body.out_avals)
        if self.outputs == "dask":
            import dask.array as da
            res = []
            for j, (a, od) in enumerate(zip(body.out_avals, out_dims)):
                parts = [da.from_delayed(delayed(np.asarray)(shard_outs[i][j]), a.shape, a.dtype)
                         for i in range(size)]
                res.append(da.stack(parts, axis=od))
            try:
                return list(client.persist(res, retries=self.retries))
            except Exception as e:  # noqa: BLE001
                raise _failed(e, axis_name) from e
        try:
            futures = client.compute([flat[k] for k in lazy], retries=self.retries)
            values = client.gather(futures)
        except DistributedError:
            raise
        except Exception as e:  # noqa: BLE001
            raise _failed(e, axis_name) from e
        for k, v in zip(lazy, values):
            flat[k] = v
        res = []
        for j, (a, od) in enumerate(zip(body.out_avals, out_dims)):
            parts = [np.asarray(flat[i * n_out + j], a.dtype).reshape(a.shape)
                     for i in range(size)]
            res.append(np.stack(parts, axis=od))
        return res


def _failed(e, axis_name):
    if isinstance(e, DistributedError):
        return e
    return DistributedError(f"a step of the pmap over {axis_name!r} failed on the cluster "
                            f"({type(e).__name__}: {e}); the caller's values are unchanged")

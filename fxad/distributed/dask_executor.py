"""DaskExecutor: run the shards of a pmap/shard_map as Dask tasks.

One step (one call of the mapped function) is one Dask graph. Its shards are split into
groups: one per worker thread when the arguments come from the client, one per shard when
they are dask.array chunks (each stays where it lies). Per group, a task per stage of the
body runs the group's shards one after another. A collective between stages is computed
inside each task that needs its result, from every group's operands (one round of transfers,
no task of its own) when its operands are small or the groups few; otherwise by one task that
receives all operands and hands every group its part. Dask schedules the tasks (where their
inputs lie), moves the data, and retries tasks whose worker died; fxad only builds the graph.
The stage programs are sent to each worker once and kept there (with their compiled code) for
as long as the staged body lives on the client.

Every task takes Dask a few milliseconds to schedule, and each stage waits for the one before.
So a *tiny* step (the longest chain of its tasks computes for less than `TINY` seconds, and
its arguments are small NumPy values) runs, from its next call on, as one task on one worker
that performs the whole step with the same functions (the same numbers); should such a step
grow slow, the next call spreads it again. `DaskExecutor(coalesce=False)` always spreads.
"""
from __future__ import annotations

import itertools
import math
import time
import uuid

import numpy as np

from ..core import ShapedArray
from ..errors import DistributedError, FxadValueError
from ..ir.jaxpr import Literal
from .stages import Exchange, plan, shard_of
from .tasks import (CollectiveInfo, Result, Spec, run_exchange, run_group, run_whole, stack_group,
                    values_of)

__all__ = ["DaskExecutor", "is_dask_array"]

_INLINE_BYTES = 1 << 16  # smaller arrays travel inside the task graph
_FUSE_BYTES = 1 << 20  # a collective whose operands (all shards) are smaller runs in its users
TINY = 5e-3  # seconds: a step computing less than this (longest chain) runs as one task
_WHOLE_BYTES = 1 << 18  # ... when its arguments together are no bigger
_WORKERS_TTL = 5.0  # seconds between two looks at the number of worker threads

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
    (its chunks along the mapped axis become the shards). `coalesce`: whether a tiny step
    (see the module docstring) may run as one task; `last_mode` says how the last step ran
    ("spread" or "whole"). A failure raises DistributedError naming the step; nothing of the
    caller's is changed. Not in JAX."""

    def __init__(self, client=None, *, outputs="numpy", retries=2, coalesce=True):
        _import_dask()
        from distributed import get_client
        if outputs not in ("numpy", "dask"):
            raise FxadValueError(f"DaskExecutor outputs= must be 'numpy' or 'dask', got "
                                 f"{outputs!r}")
        self.client = client if client is not None else get_client()
        self.outputs, self.retries, self.coalesce = outputs, int(retries), bool(coalesce)
        self._id = uuid.uuid4().hex[:8]
        self._steps = itertools.count()
        self._workers = (0, -_WORKERS_TTL)  # (worker threads, when counted)
        self.last_mode = None

    takes_dask_arrays = True

    def __repr__(self):
        return f"DaskExecutor({self.client!r}, outputs={self.outputs!r})"

    def __reduce__(self):
        raise DistributedError("a DaskExecutor cannot be pickled (it holds a client); create "
                               "one where it is used")

    def _plan(self, body, axis_name):
        """The body's plan, with its stage programs (and, for whole steps, the plan itself)
        scattered to every worker (once)."""
        key = self._plan_key()
        hit = body.cache.get(key)
        if hit is None:
            where = f"pmap over {axis_name!r}"
            p = plan(body, axis_name, where)
            stages = [s for s in p.steps if type(s) is not Exchange]
            try:
                futures = self._scatter_everywhere([s.program for s in stages] + [p])
            except DistributedError:  # the cluster, not the program
                raise
            except Exception as e:  # noqa: BLE001  (named: what could not be sent)
                raise DistributedError(
                    f"{where}: its stages could not be sent to the workers ({type(e).__name__}: "
                    f"{e}). Every function the body calls must pickle (cloudpickle); a "
                    "closure over a value of an enclosing transformation does not") from e
            hit = (p, dict(zip(map(id, stages), futures)), futures[-1])
            body.cache[key] = hit
        return hit

    def _scatter_everywhere(self, values):
        """Send values to every worker; a connection lost meanwhile (a worker restarting)
        is retried as often as tasks are."""
        for attempt in range(self.retries + 1):
            try:
                return self.client.scatter(values, broadcast=True, hash=False)
            except OSError as e:
                if attempt == self.retries:
                    raise DistributedError(f"sending values to the workers failed "
                                           f"({type(e).__name__}: {e}); the caller's values "
                                           "are unchanged") from e

    # --- the step ----------------------------------------------------------------------------

    def run(self, args, body, axis_name, size, in_dims, out_dims):
        _import_dask()
        try:
            return self._step(args, body, axis_name, size, in_dims, out_dims)
        except DistributedError:
            # every copy of the stage programs gone (all their workers restarted): send them
            # again and run the step once more; any other failure is the caller's to see
            hit = body.cache.get(self._plan_key())
            if hit is None or not any(f.status in ("lost", "cancelled", "error")
                                      for f in [*hit[1].values(), hit[2]]):
                raise
            body.cache[self._plan_key()] = None  # (a miss: planned and sent again)
            return self._step(args, body, axis_name, size, in_dims, out_dims)

    def _plan_key(self):
        return ("dask plan", self._id, id(self.client))

    def _step(self, args, body, axis_name, size, in_dims, out_dims):
        from dask import delayed
        p, programs, whole = self._plan(body, axis_name)
        step = f"fxad-{self._id}-{next(self._steps)}"
        mode_key = ("dask mode", self._id)
        small = self.coalesce and self.outputs == "numpy" and _small(args)
        if small and body.cache.get(mode_key) == "whole":
            outs, seconds = self._whole(whole, args, axis_name, size, in_dims, step)
            if seconds > 4 * TINY:  # grown slow: spread the next call again
                body.cache[mode_key] = "spread"
            self.last_mode = "whole"
            return _stacked(outs, body, out_dims)
        chunked = any(is_dask_array(x) for x in args)
        groups = [(i, 1) for i in range(size)] if chunked else _split(size, self._threads())
        env = {p.invars[0]: ("grp", [("index", lo, n) for lo, n in groups])}
        for v, x, d in zip(p.invars[1:], args, in_dims):
            env[v] = self._argument(x, d, size, groups, delayed)

        def entry(v):
            if type(v) is Literal:
                return ("all", ("lit", v.val))
            return env[v] if v in env else ("all", ("lit", p.consts[v]))
        direct = _direct_uses(p)
        for k, s in enumerate(p.steps):
            if type(s) is Exchange:
                env[s.eqn.outvars[0]] = self._exchange(s, entry, groups, size, axis_name,
                                                       s.eqn.outvars[0] in direct,
                                                       f"{step}-x{k}", delayed)
                continue
            tasks = []
            for g, (lo, n) in enumerate(groups):
                deps = _Deps()
                items = [deps.bind(_template(entry(v), g, groups)) for v in s.ins]
                tasks.append(delayed(run_group, pure=True)(
                    programs[id(s)], s.label, lo, Spec(items, n), *deps.objs,
                    dask_key_name=f"{step}-s{k}-g{g}"))
            for j, v in enumerate(s.outs):
                env[v] = ("grp", [("out", t, j) for t in tasks])
        outs = [entry(v) for v in p.outvars]
        if self.outputs == "dask":
            self.last_mode = "spread"
            return self._on_cluster(outs, body, groups, out_dims, delayed, axis_name)
        values, seconds = self._gather(outs, groups, axis_name, delayed)
        if small and seconds < TINY:
            body.cache[mode_key] = "whole"
        self.last_mode = "spread"
        return _stacked(values, body, out_dims)

    def _threads(self):
        """How many tasks the cluster runs at once (looked up at most every few seconds)."""
        n, when = self._workers
        now = time.monotonic()
        if now - when > _WORKERS_TTL:
            n = max(1, sum(self.client.nthreads().values()))
            self._workers = (n, now)
        return n

    def _argument(self, x, d, size, groups, delayed):
        if d is None:
            if is_dask_array(x):
                return ("all", ("dep", x.to_delayed().ravel()[0] if x.npartitions == 1 else x))
            x = np.asarray(x)
            if x.nbytes >= _INLINE_BYTES:  # sent once, not once per task
                return ("all", ("dep", self._scatter_everywhere(x)))
            return ("all", ("lit", x))
        if is_dask_array(x):
            import dask.array as da
            x = da.moveaxis(x, d, 0)
            # one chunk per shard along the mapped axis, the rest of a shard in one chunk
            # (a no-op when the data is already laid out that way: nothing moves)
            want = {0: 1, **{k: -1 for k in range(1, x.ndim)}}
            if any(len(c) != (x.shape[k] if k == 0 else 1) for k, c in enumerate(x.chunks)):
                x = x.rechunk(want)
            blocks = x.to_delayed().reshape(size)
            return ("grp", [("parts", [("chunk", blocks[lo])]) for lo, _ in groups])
        parts = [[shard_of(x, i, d) for i in range(lo, lo + n)] for lo, n in groups]
        if sum(a.nbytes for a in parts[0]) < _INLINE_BYTES:  # inside the graph
            return ("grp", [("parts", [("lit", a) for a in g]) for g in parts])
        return ("grp", [("seq", f) for f in self.client.scatter(parts, hash=False)])

    def _exchange(self, s, entry, groups, size, axis_name, direct, key, delayed):
        """A collective's result: computed by its users (small operands, or few groups), or
        by a task of its own."""
        e = s.eqn
        info = CollectiveInfo(e.primitive, e.params, axis_name, size, s.label,
                              e.outvars[0].aval.dtype)
        operand = entry(e.invars[0])
        a = e.invars[0].aval
        nbytes = size * math.prod(map(int, a.shape)) * np.dtype(a.dtype).itemsize
        if not direct and (len(groups) <= 2 or nbytes <= _FUSE_BYTES):
            return ("lazy", info, operand)
        deps = _Deps()
        items = [(deps.bind(_template(operand, g, groups)), n) for g, (_, n) in
                 enumerate(groups)]
        task = delayed(run_exchange, pure=True)(Spec([("coll", info, items, 0)], size),
                                               *deps.objs, dask_key_name=key)
        return ("grp", [("slice", task, 0, lo, n) for lo, n in groups])

    def _whole(self, whole, args, axis_name, size, in_dims, step):
        try:
            res = self.client.submit(run_whole, whole, axis_name, size, tuple(in_dims),
                                     *[np.asarray(x) for x in args], key=f"{step}-whole",
                                     pure=False, retries=self.retries).result()
        except Exception as e:  # noqa: BLE001
            raise _failed(e, axis_name) from e
        return list(res.outs), res.seconds

    def _gather(self, outs, groups, axis_name, delayed):
        """Every output's shard values on the client, and the step's longest chain of work."""
        deps = _Deps()
        items = [[deps.bind(_template(o, g, groups)) for g in range(len(groups))] for o in outs]
        lazy = [o for o in deps.objs if hasattr(o, "__dask_graph__")]
        try:
            computed = iter(self.client.compute(lazy, retries=self.retries)) if lazy else ()
            futures = [next(computed) if hasattr(o, "__dask_graph__") else o for o in deps.objs]
            values = self.client.gather(futures)
        except DistributedError:
            raise
        except Exception as e:  # noqa: BLE001
            raise _failed(e, axis_name) from e
        seconds = max((v.seconds for v in values if type(v) is Result), default=0.0)
        shards = [[x for it, (_, n) in zip(row, groups) for x in values_of(it, values, n)]
                  for row in items]
        return shards, seconds

    def _on_cluster(self, outs, body, groups, out_dims, delayed, axis_name):
        import dask.array as da
        res = []
        for o, a, od in zip(outs, body.out_avals, out_dims):
            parts = []
            for g, (_, n) in enumerate(groups):
                deps = _Deps()
                item = deps.bind(_template(o, g, groups))
                parts.append(da.from_delayed(delayed(stack_group, pure=True)(
                    Spec([item], n), *deps.objs), (n,) + a.shape, a.dtype))
            res.append(da.moveaxis(da.concatenate(parts, axis=0), 0, od))
        try:
            return list(self.client.persist(res, retries=self.retries))
        except Exception as e:  # noqa: BLE001
            raise _failed(e, axis_name) from e


class _Deps:
    """A task's dependencies, in order, each once; `bind` turns a template (which holds the
    objects) into a spec item (which holds their positions)."""

    def __init__(self):
        self.objs, self._at = [], {}

    def index(self, obj):
        k = self._at.get(id(obj))
        if k is None:
            k = self._at[id(obj)] = len(self.objs)
            self.objs.append(obj)
        return k

    def bind(self, t):
        kind = t[0]
        if kind in ("out", "seq", "slice", "chunk", "dep"):
            return (kind, self.index(t[1])) + tuple(t[2:])
        if kind == "parts":
            return ("parts", [self.bind(x) for x in t[1]])
        if kind == "coll":
            return ("coll", t[1], [(self.bind(x), n) for x, n in t[2]], t[3])
        return t


def _template(entry, g, groups):
    """An environment entry as group g reads it."""
    if entry[0] == "all":
        return entry[1]
    if entry[0] == "grp":
        return entry[1][g]
    _, info, operand = entry  # a collective computed where it is used
    return ("coll", info, [(_template(operand, h, groups), n) for h, (_, n) in
                           enumerate(groups)], groups[g][0])


def _direct_uses(p):
    """Collective results read by another collective or returned by the body: these get a
    task of their own (a collective is computed by its users only when they are stages)."""
    used = {v for v in p.outvars if type(v) is not Literal}
    for s in p.steps:
        if type(s) is Exchange:
            used.update(v for v in s.eqn.invars if type(v) is not Literal)
    return used


def _split(size, parts):
    """`size` shards in at most `parts` contiguous groups of near-equal sizes: (first, n)."""
    parts = max(1, min(size, parts))
    q, r = divmod(size, parts)
    out, lo = [], 0
    for g in range(parts):
        n = q + (g < r)
        out.append((lo, n))
        lo += n
    return out


def _small(args):
    total = 0
    for x in args:
        if is_dask_array(x):
            return False
        total += np.asarray(x).nbytes
    return total <= _WHOLE_BYTES


def _stacked(shards, body, out_dims):
    res = []
    for vals, a, od in zip(shards, body.out_avals, out_dims):
        parts = [np.asarray(v, a.dtype).reshape(a.shape) for v in vals]
        res.append(np.stack(parts, axis=od))
    return res


def _failed(e, axis_name):
    if isinstance(e, DistributedError):
        return e
    return DistributedError(f"a step of the pmap over {axis_name!r} failed on the cluster "
                            f"({type(e).__name__}: {e}); the caller's values are unchanged")

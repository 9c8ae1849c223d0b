"""What a DaskExecutor's tasks run on the workers.

A step's shards are split into a few *groups* (one per worker when the data comes from the
client, one shard each when it comes from dask.array chunks); a task runs one stage for one
group, shard after shard, and returns a `Result`: per stage output, the list of the group's
values. What a task reads is described by a `Spec` (plain data, opaque to Dask) whose items
point into the task's dependencies (which Dask substitutes by their values):

- ``("lit", v)``: the same value for every shard;
- ``("dep", j)``: dependency j itself, the same for every shard (a scattered argument);
- ``("out", j, k)``: output k of dependency j's Result, one value per shard;
- ``("seq", j)``: dependency j is the list of the group's shard values (scattered per group);
- ``("chunk", j)``: dependency j is a dask.array block holding one shard (leading axis 1);
- ``("slice", j, k, lo, n)``: shards lo..lo+n of output k of dependency j (a collective's
  result for all shards);
- ``("index", lo, n)``: the shards' indices;
- ``("coll", info, items, lo)``: a collective computed here from every group's operands
  (`items`: (item, number of shards) per group, in shard order), this group's part taken
  from shard lo.

Every collective, wherever it runs, is computed by `collective` from the operands in shard
order, so a step's numbers do not depend on how its shards were grouped or placed.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import DistributedError
from ..ir.jaxpr import Literal
from .stages import Exchange, run_collective, run_stage, shard_of

__all__ = ["CollectiveInfo", "Result", "Spec", "collective", "run_exchange", "run_group",
           "run_whole", "stack_group", "values_of"]


class Result:
    """A task's outputs and the compute time on its longest chain of tasks (seconds)."""
    __slots__ = ("outs", "seconds")

    def __init__(self, outs, seconds):
        self.outs, self.seconds = outs, seconds

    def __reduce__(self):
        return Result, (self.outs, self.seconds)


class Spec:
    """What a task reads (see the module docstring): `items`, and the number of shards."""
    __slots__ = ("items", "n")

    def __init__(self, items, n):
        self.items, self.n = items, n

    def __reduce__(self):
        return Spec, (self.items, self.n)


class CollectiveInfo:
    """A collective equation as a task needs it."""
    __slots__ = ("prim", "params", "axis_name", "size", "label", "dtype")

    def __init__(self, prim, params, axis_name, size, label, dtype):
        self.prim, self.params, self.axis_name = prim, params, axis_name
        self.size, self.label, self.dtype = size, label, dtype

    def __reduce__(self):
        return CollectiveInfo, (self.prim, self.params, self.axis_name, self.size, self.label,
                                self.dtype)


_COMBINE = {"psum": np.add, "pmax": np.maximum, "pmin": np.minimum}


def _tree(op, values):
    """A pairwise tree over the shards in order: (0+1)+(2+3), ..."""
    level = list(values)
    while len(level) > 1:
        nxt = [op(level[k], level[k + 1]) for k in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def collective(info, operands):
    """Every shard's result of a collective, from all shards' operands (in shard order).
    psum, pmax and pmin of floating operands without index groups are a pairwise tree of
    elementwise combines; every other collective is computed as a named vmap does it."""
    op = _COMBINE.get(info.prim.name)
    if op is not None and info.params.get("axis_index_groups") is None and \
            np.dtype(info.dtype).kind in "fc":
        try:
            total = np.asarray(_tree(op, [np.asarray(x) for x in operands]), info.dtype)
        except Exception as e:  # noqa: BLE001  (named with the step)
            raise DistributedError(f"{info.label} failed: {type(e).__name__}: {e}") from e
        return [total] * len(operands)
    return run_collective(info.prim, info.params, info.axis_name, info.size, info.label,
                          *operands)


def value_of(item, deps):
    kind = item[0]
    if kind == "lit":
        return item[1]
    if kind == "dep":
        return deps[item[1]]
    if kind == "chunk":
        return np.squeeze(np.asarray(deps[item[1]]), 0)
    raise AssertionError(f"fxad internal error: a per-shard spec item {kind!r} read as one")


def values_of(item, deps, n):
    """The n values (one per shard of the group) an item describes."""
    kind = item[0]
    if kind == "out":
        return list(deps[item[1]].outs[item[2]])
    if kind == "seq":
        return list(deps[item[1]])
    if kind == "slice":
        _, j, k, lo, m = item
        return list(deps[j].outs[k][lo:lo + m])
    if kind == "index":
        return [np.int32(item[1] + s) for s in range(item[2])]
    if kind == "parts":
        return [value_of(it, deps) for it in item[1]]
    if kind == "coll":
        _, info, items, lo = item
        operands = [x for it, m in items for x in values_of(it, deps, m)]
        return collective(info, operands)[lo:lo + n]
    return [value_of(item, deps)] * n


def _prior(deps):
    return max((d.seconds for d in deps if type(d) is Result), default=0.0)


def run_group(program, label, first, spec, *deps):
    """One stage for the shards first..first+n-1 of a group."""
    t0 = time.perf_counter()
    n = spec.n
    ins = [values_of(it, deps, n) for it in spec.items]
    outs = [run_stage(program, f"{label}, shard {first + s}", *[x[s] for x in ins])
            for s in range(n)]
    cols = tuple(list(col) for col in zip(*outs)) if outs and outs[0] else ()
    return Result(cols, _prior(deps) + time.perf_counter() - t0)


def run_exchange(spec, *deps):
    """A collective in a task of its own: all shards' results (output 0)."""
    t0 = time.perf_counter()
    (item,) = spec.items
    return Result((values_of(item, deps, spec.n),), _prior(deps) + time.perf_counter() - t0)


def stack_group(spec, *deps):
    """A group's values of one output, stacked along a new leading axis."""
    (item,) = spec.items
    return np.stack([np.asarray(x) for x in values_of(item, deps, spec.n)])


def run_whole(plan, axis_name, size, in_dims, *args):
    """A whole step in one task: every shard's stages and the collectives between them, with
    the same functions (and so the same numbers) as the step spread over tasks. Returns a
    Result whose outputs are, per body output, the list of every shard's value."""
    t0 = time.perf_counter()
    envs = [{plan.invars[0]: np.int32(i)} for i in range(size)]
    for v, x, d in zip(plan.invars[1:], args, in_dims):
        for i, env in enumerate(envs):
            env[v] = x if d is None else shard_of(x, i, d)

    def read(env, v):
        if type(v) is Literal:
            return v.val
        return env[v] if v in env else plan.consts[v]
    for s in plan.steps:
        if type(s) is Exchange:
            e = s.eqn
            info = CollectiveInfo(e.primitive, e.params, axis_name, size, s.label,
                                  e.outvars[0].aval.dtype)
            outs = collective(info, [read(env, e.invars[0]) for env in envs])
            for env, o in zip(envs, outs):
                env[e.outvars[0]] = o
            continue
        for i, env in enumerate(envs):
            outs = run_stage(s.program, f"{s.label}, shard {i}", *[read(env, v) for v in s.ins])
            env.update(zip(s.outs, outs))
    cols = tuple([read(env, v) for env in envs] for v in plan.outvars)
    return Result(cols, time.perf_counter() - t0)

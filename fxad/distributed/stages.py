"""An SPMD body split at its collectives: stages (straight-line programs each shard runs on
its own) and, between them, the collectives that exchange values across the shards. This is
what a distributed executor schedules; the pieces here run on the workers."""
from __future__ import annotations

import numpy as np

from ..core import ShapedArray
from ..errors import DistributedError
from ..interpreters.batching import vmap_flat
from ..ir.codegen import compiled_for
from ..ir.jaxpr import ClosedJaxpr, Jaxpr, Literal
from ..ir.simplify import inline_calls
from ..ir.staging import stage

__all__ = ["Plan", "plan", "run_stage", "run_collective", "shard_of"]


class Stage:
    """A straight-line piece of the body: `program` maps the live values `ins` to `outs`."""
    __slots__ = ("program", "ins", "outs", "label")

    def __init__(self, program, ins, outs, label):
        self.program, self.ins, self.outs, self.label = program, ins, outs, label


class Exchange:
    """A collective equation between stages (operands are Vars or Literals)."""
    __slots__ = ("eqn", "label")

    def __init__(self, eqn, label):
        self.eqn, self.label = eqn, label


class Plan:
    """`steps` (Stage and Exchange in order), the body's input and output variables, and its
    constants (by variable)."""
    __slots__ = ("steps", "invars", "outvars", "consts", "n_stages")

    def __init__(self, steps, invars, outvars, consts):
        self.steps, self.invars, self.outvars, self.consts = steps, invars, outvars, consts
        self.n_stages = sum(type(s) is Stage for s in steps)


def _holds_axis(params, name):
    """Does a parameter of an equation (a nested program) use a collective over `name`?"""
    stack = list(params.values())
    while stack:
        v = stack.pop()
        if isinstance(v, ClosedJaxpr):
            for e in v.jaxpr.eqns:
                if e.primitive.collective and name in e.params["axis_name"]:
                    return True
                stack.extend(e.params.values())
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
    return False


def plan(body, axis_name, where):
    """Split a body at its top-level collectives over `axis_name`. A collective over that axis
    inside a nested program (a loop, a branch, a custom rule) cannot be split out: a clear
    error says so."""
    closed = inline_calls(body)
    j, consts = closed.jaxpr, dict(zip(closed.jaxpr.constvars, closed.consts))
    # Each equation goes to the earliest stage its inputs allow: a value's level is the number
    # of collectives on its longest chain of inputs. Stage k holds the level-k equations;
    # after it, every collective of a level-k operand runs, in one round (independent
    # collectives, such as a pmean of each of a model's gradients, do not wait for each other).
    level, stages, rounds = {}, {}, {}
    for e in j.eqns:
        k = max((level.get(v, 0) for v in e.invars if type(v) is not Literal), default=0)
        if e.primitive.collective:
            if tuple(e.params["axis_name"]) != (axis_name,):
                raise DistributedError(
                    f"{where}: {e.primitive.name} over {e.params['axis_name']!r} mixes the "
                    f"distributed axis {axis_name!r} with other axes; apply it once per axis")
            rounds.setdefault(k, []).append(e)
            level.update((v, k + 1) for v in e.outvars)
            continue
        if _holds_axis(e.params, axis_name):
            raise DistributedError(
                f"{where}: a collective over the distributed axis {axis_name!r} inside "
                f"'{e.primitive.name}' cannot run between stages; move it out of the "
                "loop/branch/custom rule, or run this map in process (executor=None)")
        stages.setdefault(k, []).append(e)
        level.update((v, k) for v in e.outvars)
    pieces = []
    for k in range(max([0, *stages, *rounds]) + 1):
        pieces.append(stages.get(k, []))
        pieces.extend(rounds.get(k, []))
    # liveness: what each stage needs from before and must keep for later
    needed_later = [set() for _ in pieces]
    live = {v for v in j.outvars if type(v) is not Literal}
    for k in range(len(pieces) - 1, -1, -1):
        needed_later[k] = set(live)
        p = pieces[k]
        eqns = p if isinstance(p, list) else [p]
        for e in reversed(eqns):
            live.difference_update(e.outvars)
            live.update(v for v in e.invars if type(v) is not Literal)
    steps, n = [], 0
    for k, p in enumerate(pieces):
        if not isinstance(p, list):
            steps.append(Exchange(p, f"{where}: {p.primitive.name} "
                                     + (f"after stage {n - 1}" if n else "before stage 0")))
            continue
        if not p:
            continue
        defined = [v for e in p for v in e.outvars]
        used = []
        for e in p:
            for v in e.invars:
                if type(v) is not Literal and v not in consts and v not in used and \
                        v not in defined:
                    used.append(v)
        outs = [v for v in defined if v in needed_later[k]]
        ins = used
        cv = [v for e in p for v in e.invars if type(v) is not Literal and v in consts]
        cv = list(dict.fromkeys(cv))
        program = _primal(ClosedJaxpr(Jaxpr(cv, ins, p, outs), [consts[v] for v in cv]))
        steps.append(Stage(program, ins, outs, f"{where}: stage {n}"))
        n += 1
    return Plan(steps, j.invars, j.outvars, consts)


_CUSTOM = ("custom_jvp_call", "custom_vjp_call")


def _primal(closed):
    """A stage as it is evaluated: custom-derivative calls replaced by their primal function
    (staged), so that no Python closure of the client (which may hold values of finished
    transformations) is shipped. A worker only evaluates; derivatives were taken before."""
    if not any(e.primitive.name in _CUSTOM for e in closed.jaxpr.eqns):
        return closed
    j = closed.jaxpr

    def run(*args):
        env = dict(zip(j.constvars, closed.consts))
        env.update(zip(j.invars, args))
        read = lambda v: v.val if type(v) is Literal else env[v]  # noqa: E731
        for e in j.eqns:
            ins = [read(v) for v in e.invars]
            if e.primitive.name in _CUSTOM:
                out = list(e.params["fun"](*ins))
            else:
                out = e.primitive.bind(*ins, **e.params)
                out = out if e.primitive.multiple_results else [out]
            env.update(zip(e.outvars, out))
        return [read(v) for v in j.outvars]
    return _primal(stage(run, [v.aval for v in j.invars], name="stage"))


# --- what the workers run ------------------------------------------------------------------------

def run_stage(stage, label, *ins):
    """One shard's stage: its compiled program (compiled once per worker: the program object
    is shipped once and its compiled code kept on it)."""
    try:
        return tuple(compiled_for(stage, boundary=True)(*ins))
    except Exception as e:  # noqa: BLE001  (named with the step, the cause kept)
        raise DistributedError(f"{label} failed: {type(e).__name__}: {e}") from e


def run_collective(prim, params, axis_name, size, label, *shards):
    """A collective over all shards' operands at once (as vmap with the axis name does it);
    returns every shard's result."""
    try:
        stacked = np.stack([np.asarray(s) for s in shards])
        outs, dims = vmap_flat(lambda x: [prim.bind(x, **params)], [stacked], [0], size,
                               name=label, axis_name=axis_name)
        out, d = outs[0], dims[0]
        if d is None:
            return [out] * size
        out = np.moveaxis(np.asarray(out), d, 0)
        return [np.array(out[i]) for i in range(size)]
    except Exception as e:  # noqa: BLE001
        raise DistributedError(f"{label} failed: {type(e).__name__}: {e}") from e


def shard_of(x, i, d):
    """Shard i of x along axis d (a private copy, so shards alias nothing)."""
    return np.array(np.take(np.asarray(x), i, axis=d))


def aval_of_var(v):
    return v.aval if isinstance(v.aval, ShapedArray) else ShapedArray(v.aval.shape, v.aval.dtype)

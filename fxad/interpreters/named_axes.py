"""Named axes: the per-thread environment of axis names bound by `vmap(axis_name=...)`, `pmap`
and `shard_map`, and the primitive class of the collectives that read it.

An axis frame says that code now runs once per index of a named axis of a given size. Its
`owner` is the trace that answers a collective on that axis: a named vmap's batching trace
(it reduces over its batch dimension), or the staging trace of a `pmap`/`shard_map` body (it
records the collective; an executor carries it out between stages). A frame without an owner
only names the axis and its size, for transformations of such a body (its collectives are
then always applied to traced values, which their traces handle).

A collective is bound like any primitive, by the highest trace among its arguments, except
that the owner of its axis takes it when no argument is traced at that level or above:
`psum(1.0, 'i')` under `vmap(axis_name='i')` is the axis size, `axis_index('i')` (which has
no operands) the index of each example.
"""
from __future__ import annotations

import threading

from ..core import Primitive, Tracer, escaped_tracer
from ..errors import FxadValueError, UnboundAxisError


class AxisFrame:
    """`index`: the staged index along the axis of a pmap or shard_map body (computed from
    the body's own index input), which axis_index returns there."""
    __slots__ = ("name", "size", "owner", "index")

    def __init__(self, name, size, owner, index=None):
        self.name, self.size, self.owner, self.index = name, size, owner, index

    def __repr__(self):
        return f"AxisFrame({self.name!r}, {self.size})"


class _Env(threading.local):
    def __init__(self):
        self.frames = []  # innermost last
        self.batch_axis = None  # the axis whose batching rule runs now (nested vmaps inherit it)


_env = _Env()


class axis_frame:
    """`with axis_frame(name, size, owner):` binds an axis name for the block (restored on
    every exit path). `name=None` binds nothing."""
    __slots__ = ("frame",)

    def __init__(self, name, size, owner=None, index=None):
        self.frame = None if name is None else AxisFrame(name, size, owner, index)

    def __enter__(self):
        if self.frame is not None:
            _env.frames.append(self.frame)
        return self.frame

    def __exit__(self, *exc):
        f = self.frame
        if f is not None:
            frames = _env.frames
            while frames and frames[-1] is not f:  # left behind by an error: dropped too
                frames.pop()
            if frames:
                frames.pop()
        return False


def check_axis_name(name, where):
    """An axis name is any hashable value except a tuple (which lists several) or None."""
    try:
        hash(name)
    except TypeError:
        raise FxadValueError(f"{where}: axis_name must be hashable, got {name!r}") from None
    if isinstance(name, (tuple, list)):
        raise FxadValueError(f"{where}: axis_name must be one name, got {name!r}")
    return name


def lookup(name, where="a collective"):
    """The innermost frame binding `name`, or an UnboundAxisError naming it."""
    for f in reversed(_env.frames):
        if f.name == name:
            return f
    bound = [f.name for f in _env.frames]
    raise UnboundAxisError(
        f"{where}: unbound axis name {name!r}. Collectives run inside a transformation that "
        f"binds the axis: vmap(f, axis_name={name!r}), pmap(f, axis_name={name!r}) or "
        f"shard_map over a mesh with an axis {name!r}"
        + (f" (bound here: {', '.join(map(repr, bound))})" if bound else " (none is bound here)"))


def axis_size(names, where="axis_size"):
    """The product of the sizes of the named axes (a name or a tuple of names)."""
    n = 1
    for name in (names if isinstance(names, tuple) else (names,)):
        n *= lookup(name, where).size
    return n


def env_key():
    """The bound names and sizes, innermost last: part of the key of any cache of programs
    staged while axes are bound (an all_gather's shape depends on its axis size)."""
    frames = _env.frames
    return tuple([(f.name, f.size) for f in frames]) if frames else ()


def current_batch_axis():
    return _env.batch_axis


def batching_key():
    """Part of the key of any cache of batched programs: a body batched along a named axis
    (its collectives reduce over the batch) is another program than the same body batched
    along an unnamed one or under other bound sizes."""
    return env_key(), _env.batch_axis


class batching_axis:
    """Within the block, nested batching (a rule that vmaps a body) continues the axis
    `name`: set by the batching trace around each rule it runs."""
    __slots__ = ("name", "prev")

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.prev, _env.batch_axis = _env.batch_axis, self.name

    def __exit__(self, *exc):
        _env.batch_axis = self.prev
        return False


Primitive.collective = False  # (a class default: only CollectivePrimitive's are)


class CollectivePrimitive(Primitive):
    """A primitive whose parameter `axis_name` (a tuple of names) names the axes it works
    across. Its batching rule is `rule(vals, dims, frame=(name, size), **params)`, given the
    batching trace's own axis: the rule reduces (gathers, permutes) along the batch
    dimension when that axis is among `axis_name`, else it maps the collective over it."""
    collective = True

    def __init__(self, name, multiple_results=False):
        super().__init__(name, multiple_results)
        self.derivable = False  # eager grad stages these: their pullbacks are collectives

    def bind(self, *args, **params):
        names = params["axis_name"]
        frames = [lookup(n, self.name) for n in names]
        if not args and frames[0].index is not None:  # axis_index in a pmap/shard_map body
            return frames[0].index
        top = None
        for a in args:
            if isinstance(a, Tracer):
                t = a._trace
                if not t.active:
                    raise escaped_tracer(a, self.name)
                if top is None or t.level > top.level:
                    top = t
        for f in frames:
            o = f.owner
            if o is not None and (top is None or o.level > top.level):
                top = o
        if top is None:  # the axes are bound only by name (a body being transformed)
            raise FxadValueError(
                f"{self.name} over {', '.join(map(repr, names))}: its operands are not traced "
                "by the transformation that maps that axis. This is an fxad bug; please "
                "report it with the program")
        return top.process_primitive(self, args, params)

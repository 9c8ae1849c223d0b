"""Meshes of named logical shards and partition specs, for `fxad.shard_map` (JAX's
`jax.sharding` names). In fxad a mesh names *logical* shards: its shape is free (not tied to a
device count), and an executor (in process, or fxad.distributed.DaskExecutor) decides where
each shard runs."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import FxadValueError

__all__ = ["Mesh", "PartitionSpec", "P", "NamedSharding", "make_mesh"]


class PartitionSpec(tuple):
    """How an array's dimensions are split over mesh axes: one entry per leading dimension,
    None (not split), a mesh axis name, or a tuple of names (split over their product, the
    first major). Dimensions past the entries are not split. JAX's `PartitionSpec`."""

    def __new__(cls, *entries):
        return super().__new__(cls, entries)

    def __repr__(self):
        return f"PartitionSpec{tuple.__repr__(self)}"

    def __reduce__(self):
        return (PartitionSpec, tuple(self))


P = PartitionSpec


class Mesh:
    """A grid of logical shards with named axes: `Mesh(devices, axis_names)` where only the
    shape of `devices` (an array, or a nested list, of anything) matters, or
    `make_mesh(axis_shapes, axis_names)`. `.shape` maps names to sizes. Unlike JAX's, usable
    as a context manager only for code that reads it explicitly (fxad has no global mesh)."""

    def __init__(self, devices: Any, axis_names: Any):
        shape = np.shape(np.asarray(devices, dtype=object))
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if len(names) != len(shape):
            raise FxadValueError(f"Mesh: {len(names)} axis names {names} for a device array "
                                 f"of shape {shape}")
        if len(set(names)) != len(names):
            raise FxadValueError(f"Mesh: axis names {names} must be distinct")
        self.devices = np.asarray(devices, dtype=object)
        self.axis_names = names
        self.shape = dict(zip(names, (int(s) for s in shape)))

    @property
    def size(self):
        return math.prod(map(int, list(self.shape.values())))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        return isinstance(other, Mesh) and self.axis_names == other.axis_names and \
            self.shape == other.shape

    def __hash__(self):
        return hash((self.axis_names, tuple(self.shape.values())))

    def __repr__(self):
        return f"Mesh({', '.join(f'{k!r}: {v}' for k, v in self.shape.items())})"

    def __reduce__(self):
        return (make_mesh, (tuple(self.shape.values()), self.axis_names))


def make_mesh(axis_shapes: Any, axis_names: Any, **kwargs: Any) -> Mesh:
    """A Mesh of the given shape and axis names (JAX's `jax.make_mesh`; its device options
    are accepted and ignored)."""
    shape = tuple(int(s) for s in axis_shapes)
    return Mesh(np.arange(math.prod(map(int, shape))).reshape(shape), axis_names)


class NamedSharding:
    """A mesh and a PartitionSpec (JAX's `NamedSharding`): describes how an array is split;
    fxad uses it only to carry the pair (e.g. for `shard_map`'s specs)."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec):
        if not isinstance(spec, PartitionSpec):
            raise FxadValueError(f"NamedSharding needs a PartitionSpec, got {spec!r}")
        self.mesh, self.spec = mesh, spec

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"

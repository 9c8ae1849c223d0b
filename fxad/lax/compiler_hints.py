"""Hints JAX passes to its compiler that leave values unchanged: `optimization_barrier` and
`with_sharding_constraint`. fxad runs a program in one process (a shard_map's shards are
explicit), so both are the identity, as JAX's on one device; they are kept so JAX code ports
unchanged, and still check their arguments."""
from __future__ import annotations

from ..errors import FxadTypeError
from ..sharding import NamedSharding, PartitionSpec
from ..tree_util import tree_leaves


def optimization_barrier(operand, /):
    """operand unchanged (any pytree of arrays), as JAX's `lax.optimization_barrier`, which only
    stops XLA from moving computations across it; differentiable (the identity), and under jit
    fxad's compiler keeps the program's order anyway."""
    return operand


def _is_sharding(s):
    return s is None or isinstance(s, (PartitionSpec, NamedSharding))


def with_sharding_constraint(x, shardings):
    """x unchanged (any pytree of arrays), as JAX's `lax.with_sharding_constraint` on one
    device: fxad has no implicit placement of arrays across devices. `shardings` (a
    PartitionSpec, NamedSharding or None, or a pytree of them) is checked and otherwise
    ignored; to split work into shards, use `fxad.shard_map`."""
    for s in tree_leaves(shardings, is_leaf=_is_sharding):
        if not _is_sharding(s):
            raise FxadTypeError(
                f"with_sharding_constraint: shardings must be fxad.sharding.PartitionSpec, "
                f"NamedSharding or None (or a pytree of them), got {type(s).__name__}")
    return x


__all__ = ["optimization_barrier", "with_sharding_constraint"]

"""Collectives over named axes (JAX's lax parallel operators): psum, pmean, pmax, pmin,
all_gather, psum_scatter, all_to_all, ppermute, pshuffle, pswapaxes, axis_index, axis_size.
They work inside `vmap(axis_name=...)`, `pmap` and `shard_map`; the primitives and their rules
are in fxad/rules/collective/."""
from ..rules.collective import (  # noqa: F401
    all_gather, all_to_all, axis_index, axis_size, pmax, pmean, pmin, ppermute, pshuffle,
    psum, psum_scatter, pswapaxes)

__all__ = ["all_gather", "all_to_all", "axis_index", "axis_size", "pmax", "pmean", "pmin",
           "ppermute", "pshuffle", "psum", "psum_scatter", "pswapaxes"]

"""Collectives over named axes (psum, pmax, pmin, all_gather, psum_scatter, all_to_all,
ppermute, axis_index) and the SPMD map primitive that pmap and shard_map bind."""
from . import exchange, reductions, spmd  # noqa: F401
from .exchange import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403

__all__ = reductions.__all__ + exchange.__all__

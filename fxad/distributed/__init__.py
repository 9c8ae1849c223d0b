"""Running SPMD programs (pmap, shard_map) past one process: `DaskExecutor` runs each shard
as a Dask task, the program split at its collectives into stages (fxad/distributed/stages.py);
`vmap_chunks` maps a function over a dask.array chunk by chunk, where the chunks lie. Needs
the optional extra: pip install 'fxad[distributed]'. Not in JAX (whose pmap runs on
devices)."""
from ..errors import DistributedError
from .chunks import vmap_chunks
from .dask_executor import DaskExecutor

__all__ = ["DaskExecutor", "DistributedError", "vmap_chunks"]

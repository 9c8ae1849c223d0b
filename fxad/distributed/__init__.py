"""Running SPMD programs (pmap, shard_map) past one process: `DaskExecutor` runs each shard
as a Dask task, the program split at its collectives into stages (fxad/distributed/stages.py).
Needs the optional extra: pip install 'fxad[distributed]'. Not in JAX (whose pmap runs on
devices)."""
from ..errors import DistributedError
from .dask_executor import DaskExecutor

__all__ = ["DaskExecutor", "DistributedError"]

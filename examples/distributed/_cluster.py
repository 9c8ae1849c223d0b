"""The Dask client the distributed examples use: the scheduler in $FXAD_DASK_SCHEDULER if set
(the tests' cluster), else a LocalCluster of 2 worker processes started here."""
import os


def client():
    from distributed import Client, LocalCluster
    address = os.environ.get("FXAD_DASK_SCHEDULER")
    if address:
        return Client(address, timeout="60s")
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster)

"""One LocalCluster of 2 worker processes (1 thread each) for the distributed tests, started
once and closed when they are done (not at the end of the whole run: its idle workers would
take a share of a core from the rest of the suite), every wait bounded."""
import pytest


@pytest.fixture(scope="package")
def client():
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.array")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, death_timeout=60)
    c = distributed.Client(cluster, timeout="60s")
    try:
        yield c
    finally:
        c.close(timeout=30)
        cluster.close(timeout=30)

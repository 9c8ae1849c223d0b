"""fxad on Dask (issue 29's targets), in one run:

    python benchmarks/dask_spmd.py [--quick] [--skip-memory] [--only=overhead|speedup|memory]

  overhead   per-step time of a tiny pmap step (psum of a few numbers) on a LocalCluster of
             1 and 2 worker processes, for 2, 4 and 8 shards; the in-process executor for
             comparison (median of 30 steps after 3 warm-up steps)
  speedup    a compute-bound data-parallel gradient step (>= 250 ms of work per shard, 2
             shards): DaskExecutor on 2 workers against the in-process executor (one
             process), and the same work in plain NumPy in 1 process against 2 processes
             (multiprocessing); the ratio of the two speedups
  memory     a gradient summed over a dask.array dataset 4x larger than one worker's memory
             limit, made on the workers; the largest resident size any worker reached

Not a test. One BLAS thread everywhere (set before NumPy is imported; the worker processes
inherit it). The machine may be shared: the script prints its load average before and after.
"""
import os
import sys

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import multiprocessing  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import fxad  # noqa: E402
import fxad.numpy as fnp  # noqa: E402
from fxad import lax  # noqa: E402
from fxad.distributed import DaskExecutor  # noqa: E402


def _cluster(n_workers, memory_limit="auto"):
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit=memory_limit)
    return cluster, Client(cluster)


def _median_time(fn, n, warm=3):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


# --- overhead --------------------------------------------------------------------------------

def overhead(quick):
    n = 10 if quick else 30
    step = lambda x: lax.psum(x, "i") * 2.0  # noqa: E731
    rows = []
    for shards in (2, 4, 8):
        x = np.ones((shards, 4))
        f = fxad.pmap(step, "i")
        rows.append(("in process", shards, _median_time(lambda: f(x), n)))
    for workers in (1, 2):
        cluster, client = _cluster(workers)
        try:
            ex = DaskExecutor(client)
            for shards in (2, 4, 8):
                x = np.ones((shards, 4))
                f = fxad.pmap(step, "i", executor=ex)
                rows.append((f"Dask, {workers} worker(s)", shards, _median_time(lambda: f(x), n)))
            rt = _median_time(lambda: client.submit(np.add, 1, 1, pure=False).result(), n)
            rows.append((f"Dask round trip alone, {workers} worker(s)", 1, rt))
        finally:
            client.close()
            cluster.close()
    print("\n## per-step overhead of a tiny pmap step (median ms)\n")
    print("| executor | shards | ms/step |\n|---|---|---|")
    for name, shards, t in rows:
        print(f"| {name} | {shards} | {t * 1e3:.1f} |")


# --- speedup ---------------------------------------------------------------------------------

D, H, B, LAYERS = 512, 512, 1024, 6


def _params(seed=0):
    r = np.random.default_rng(seed)
    return [r.normal(size=(D if i == 0 else H, H)) / np.sqrt(H) for i in range(LAYERS)]


def _loss(ws, x):
    h = x
    for w in ws:
        h = fnp.tanh(h @ w)
    return fnp.mean(h ** 2)


def _numpy_grad(ws, x):
    """The same gradient by hand in NumPy (the floor)."""
    hs = [x]
    for w in ws:
        hs.append(np.tanh(hs[-1] @ w))
    g = 2 * hs[-1] / hs[-1].size
    grads = [None] * len(ws)
    for i in range(len(ws) - 1, -1, -1):
        g = g * (1 - hs[i + 1] ** 2)
        grads[i] = hs[i].T @ g
        g = g @ ws[i].T
    return grads


def _numpy_shard(args):
    ws, x, repeat = args
    for _ in range(repeat):
        g = _numpy_grad(ws, x)
    return g


def speedup(quick):
    repeat = 1 if quick else 3  # repeats of the gradient per shard (work per shard)
    ws = _params()
    xs = np.random.default_rng(1).normal(size=(2, B, D))

    def step(ws, x):
        g = None
        for _ in range(repeat):
            g = fxad.grad(_loss)(ws, x)
        return lax.pmean(g, "d")
    # fxad: in process (the shards one after another in one process) vs 2 Dask workers
    local = fxad.pmap(step, "d", in_axes=(None, 0))
    t_shard = _median_time(lambda: _numpy_shard((ws, xs[0], repeat)), 3, warm=1)
    t_local = _median_time(lambda: local(ws, xs), 3, warm=1)
    cluster, client = _cluster(2)
    try:
        f = fxad.pmap(step, "d", in_axes=(None, 0), executor=DaskExecutor(client))
        [client.scatter(ws, broadcast=True)]
        got = f(ws, xs)
        np.testing.assert_allclose(got, local(ws, xs), rtol=1e-10)
        t_dask = _median_time(lambda: f(ws, xs), 5, warm=1)
    finally:
        client.close()
        cluster.close()
    # plain NumPy: 2 shards in 1 process vs in 2 processes
    t_np1 = _median_time(lambda: [_numpy_shard((ws, x, repeat)) for x in xs], 3, warm=1)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(_numpy_shard, [(ws, x, 1) for x in xs])  # warm the workers
        t_np2 = _median_time(lambda: pool.map(_numpy_shard, [(ws, x, repeat) for x in xs]), 5,
                             warm=1)
    s_fx, s_np = t_local / t_dask, t_np1 / t_np2
    print("\n## data-parallel gradient step, 2 shards (median s)\n")
    print(f"work per shard (NumPy floor, one gradient x{repeat}): {t_shard:.3f} s")
    print("| | 1 process | 2 processes | speedup |\n|---|---|---|---|")
    print(f"| fxad (in process / DaskExecutor, 2 workers) | {t_local:.3f} | {t_dask:.3f} | "
          f"{s_fx:.2f}x |")
    print(f"| plain NumPy (1 process / multiprocessing, 2) | {t_np1:.3f} | {t_np2:.3f} | "
          f"{s_np:.2f}x |")
    print(f"\nfxad's speedup is {100 * s_fx / s_np:.0f}% of plain NumPy's")


# --- memory ----------------------------------------------------------------------------------

def memory(quick):
    import dask.array as da
    limit = 300e6 if quick else 400e6
    n_chunks, d = 32, 64
    rows = int(4 * limit / n_chunks / d / 8)  # the dataset: 4x one worker's memory limit
    cluster, client = _cluster(2, memory_limit=int(limit))
    try:
        X = da.random.RandomState(0).normal(size=(n_chunks, rows, d), chunks=(1, rows, d))
        w = np.linspace(-1, 1, d)
        per_chunk = fxad.pmap(fxad.grad(lambda w, x: fnp.sum(fnp.tanh(x @ w))), "c",
                              in_axes=(None, 0), executor=DaskExecutor(client))
        client.run(_reset_peak)
        base = client.run(_rss)
        t = time.perf_counter()
        g = per_chunk(w, X).sum(0)
        elapsed = time.perf_counter() - t
        peaks = client.run(_peak_rss)
        assert np.all(np.isfinite(g))
    finally:
        client.close()
        cluster.close()
    size = n_chunks * rows * d * 8
    print("\n## a gradient over a dataset larger than the workers' memory\n")
    print(f"dataset {size / 1e6:.0f} MB in {n_chunks} chunks of {size / n_chunks / 1e6:.0f} MB "
          f"(made on the workers); 2 workers with a memory limit of {limit / 1e6:.0f} MB each "
          f"(the dataset is {size / limit:.1f}x one worker's limit); {elapsed:.1f} s")
    for addr, peak in peaks.items():
        print(f"worker {addr}: resident {base[addr] / 1e6:.0f} MB before the step, peak "
              f"{peak / 1e6:.0f} MB during it (one chunk: {size / n_chunks / 1e6:.0f} MB)")


def _reset_peak():
    try:  # Linux: reset the high-water mark of the resident set
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def _status(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def _peak_rss():
    return _status("VmHWM:")


def _rss():
    return _status("VmRSS:")


def main():
    quick = "--quick" in sys.argv[1:]
    only = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--only=")]
    print(f"load average before: {os.getloadavg()}")
    for name, part in (("overhead", overhead), ("speedup", speedup), ("memory", memory)):
        if (not only or name in only) and not (name == "memory" and "--skip-memory" in sys.argv):
            part(quick)
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()

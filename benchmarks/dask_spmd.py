"""fxad on Dask (issue 29's targets), in one run:

    python benchmarks/dask_spmd.py [--quick] [--skip-memory] [--only=overhead|speedup|memory]

  overhead   per-step time of a tiny pmap step (psum of a few numbers) on a LocalCluster of
             1 and 2 worker processes, for 2, 4 and 8 shards, spread over tasks
             (coalesce=False) and as the executor runs it by default (one task, since the
             step is tiny); a bare client.submit round trip and the in-process executor for
             comparison (median of 30 steps after 3 warm-up steps)
  speedup    a compute-bound data-parallel gradient step (>= 250 ms of work per shard, 2
             shards): DaskExecutor on a LocalCluster of 2 workers against one of 1 worker,
             and the same gradients in plain NumPy in a multiprocessing pool of 2 processes
             against a pool of 1; the ratio of the two speedups
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
            for coalesce in (False, True):
                ex = DaskExecutor(client, coalesce=coalesce)
                for shards in (2, 4, 8):
                    x = np.ones((shards, 4))
                    f = fxad.pmap(step, "i", executor=ex)
                    t = _median_time(lambda: f(x), n)
                    rows.append((f"Dask, {workers} worker(s), "
                                 f"{'default' if coalesce else 'coalesce=False'} "
                                 f"(ran {ex.last_mode})", shards, t))
            rt = _median_time(lambda: client.submit(np.add, 1, 1, pure=False).result(), n)
            rows.append((f"Dask round trip alone (client.submit), {workers} worker(s)", 1, rt))
        finally:
            client.close()
            cluster.close()
    print("\n## per-step overhead of a tiny pmap step (median ms)\n")
    print("| executor | shards | ms/step |\n|---|---|---|")
    for name, shards, t in rows:
        print(f"| {name} | {shards} | {t * 1e3:.1f} |")


# --- speedup ---------------------------------------------------------------------------------

D, H, LAYERS = 512, 512, 6


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


def _numpy_shards(args):
    ws, xs = args
    return [_numpy_grad(ws, x) for x in xs]


def _step(ws, x):
    return lax.pmean(fxad.grad(_loss)(ws, x), "d")


def speedup(quick):
    """The same step on 1 and on 2 worker processes: fxad's pmap on a LocalCluster of 1 and
    of 2 workers, and the hand-written NumPy gradient in a multiprocessing pool of 1 and of
    2 processes (each process computing its shards' gradients; the mean is not counted)."""
    batch = 1024 if quick else 2048  # rows per shard: >= 250 ms of work per shard when quiet
    ws = _params()
    xs = np.random.default_rng(1).normal(size=(2, batch, D))
    t_shard = _median_time(lambda: _numpy_grad(ws, xs[0]), 3, warm=1)
    want = fxad.pmap(_step, "d", in_axes=(None, 0))(ws, xs)
    t_fx = {}
    for workers in (1, 2):
        cluster, client = _cluster(workers)
        try:
            f = fxad.pmap(_step, "d", in_axes=(None, 0), executor=DaskExecutor(client))
            for a, b in zip(f(ws, xs), want):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)
            t_fx[workers] = _median_time(lambda: f(ws, xs), 5, warm=1)
        finally:
            client.close()
            cluster.close()
    t_np = {}
    for procs in (1, 2):
        with multiprocessing.get_context("spawn").Pool(procs) as pool:
            work = [(ws, xs[i::procs]) for i in range(procs)]
            t_np[procs] = _median_time(lambda: pool.map(_numpy_shards, work), 5, warm=1)
    s_fx, s_np = t_fx[1] / t_fx[2], t_np[1] / t_np[2]
    print("\n## data-parallel gradient step, 2 shards (median s)\n")
    print(f"work per shard (NumPy floor, one gradient of a {batch} x {D} batch): {t_shard:.3f} s")
    print("| | 1 process | 2 processes | speedup |\n|---|---|---|---|")
    print(f"| fxad pmap, DaskExecutor (LocalCluster of 1 / of 2 workers) | {t_fx[1]:.3f} | "
          f"{t_fx[2]:.3f} | {s_fx:.2f}x |")
    print(f"| plain NumPy (multiprocessing pool of 1 / of 2) | {t_np[1]:.3f} | {t_np[2]:.3f} | "
          f"{s_np:.2f}x |")
    print(f"\nfxad's speedup is {100 * s_fx / s_np:.0f}% of plain NumPy's; fxad on 2 workers "
          f"takes {t_fx[2] / t_np[2]:.2f}x the time of NumPy on 2 processes")


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

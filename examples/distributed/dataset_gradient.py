"""A loss and its gradient summed over a dataset that lives on a Dask cluster, chunk by chunk.

The dataset is a dask.array made on the workers (nothing of it is ever on the client); each
chunk is one shard of a pmap run by DaskExecutor: the shard's loss and gradient are computed
where the chunk lies, and only the (small) per-chunk results come back. Then the size of
every example's gradient, by `vmap_chunks` (a vmap over the dask.array's rows, one task per
chunk), reduced on the cluster: only the largest one comes back.

    python examples/distributed/dataset_gradient.py [--smoke]
"""
import sys

import numpy as np

import fxad
import fxad.numpy as fnp
from fxad.distributed import DaskExecutor, vmap_chunks

from _cluster import client as make_client


def chunk_loss(w, x, y):
    """Logistic loss of one chunk (summed, so chunk sums add up to the dataset's)."""
    z = x @ w
    return fnp.sum(fnp.logaddexp(0.0, z) - y * z)


def main(smoke):
    import dask.array as da
    n_chunks, rows, d = (4, 2_000, 8) if smoke else (16, 200_000, 32)
    client = make_client()
    try:
        rs = da.random.RandomState(0)
        X = rs.normal(size=(n_chunks, rows, d), chunks=(1, rows, d))
        w_true = np.linspace(-1, 1, d)
        y = (X @ w_true + rs.normal(size=(n_chunks, rows), chunks=(1, rows)) > 0) * 1.0
        X, y = client.persist([X, y])  # made and kept on the workers
        per_chunk = fxad.pmap(fxad.value_and_grad(chunk_loss), "chunks", in_axes=(None, 0, 0),
                              executor=DaskExecutor(client))
        w = np.zeros(d)
        losses, grads = per_chunk(w, X, y)
        loss, grad = losses.sum(), grads.sum(0)
        print(f"loss over {n_chunks} chunks of {rows} rows: {loss:.6f}")
        if smoke:  # small enough to check against the whole dataset in one process
            Xl, yl = X.compute().reshape(-1, d), y.compute().reshape(-1)
            v, g = fxad.value_and_grad(chunk_loss)(w, Xl, yl)
            assert np.isclose(loss, v, rtol=1e-12) and np.allclose(grad, g, rtol=1e-10)
            print("chunk-wise loss and gradient == the whole dataset's")
        for _ in range(3 if smoke else 20):  # a few steps of gradient descent
            w = w - 1.0 / (n_chunks * rows) * grad
            losses, grads = per_chunk(w, X, y)
            grad = grads.sum(0)
        print(f"after descent: loss {losses.sum():.6f}")
        example_grad = fxad.grad(chunk_loss)  # one row x, one label y: that example's gradient
        norms = vmap_chunks(lambda w, x, y: fnp.linalg.norm(example_grad(w, x, y)),
                            in_axes=(None, 0, 0))(w, X.reshape(-1, d), y.reshape(-1))
        largest = float(norms.max().compute())
        print(f"largest per-example gradient norm: {largest:.4f}")
        if smoke:
            here = fxad.vmap(lambda x, t: fnp.linalg.norm(example_grad(w, x, t)))
            want = here(X.compute().reshape(-1, d), y.compute().reshape(-1)).max()
            assert np.isclose(largest, want, rtol=1e-12)
            print("per-example gradients on the cluster == vmap here")
    finally:
        client.close()


if __name__ == "__main__":
    main("--smoke" in sys.argv[1:])

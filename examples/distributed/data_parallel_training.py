"""Data-parallel training: each step is one pmap'd value_and_grad whose gradients are
averaged across the shards with pmean, run by Dask workers (one shard per worker here).

    python examples/distributed/data_parallel_training.py [--smoke]
"""
import sys

import numpy as np

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.distributed import DaskExecutor

from _cluster import client as make_client


def predict(params, x):
    w1, b1, w2, b2 = params
    return fnp.tanh(x @ w1 + b1) @ w2 + b2


def loss(params, x, y):
    return fnp.mean((predict(params, x) - y) ** 2)


def train_step(params, x, y):
    """One shard's step: its loss and gradient, averaged over the shards ('data' axis)."""
    value, grads = fxad.value_and_grad(loss)(params, x, y)
    value, grads = lax.pmean((value, grads), "data")
    return [p - 0.1 * g for p, g in zip(params, grads)], value


def main(smoke):
    n_shards, batch, hidden, steps = (2, 64, 16, 5) if smoke else (2, 4096, 256, 50)
    r = np.random.default_rng(0)
    x = r.normal(size=(n_shards, batch, 4))
    y = np.sin(x.sum(-1, keepdims=True))
    params = [r.normal(size=(4, hidden)) * 0.5, np.zeros(hidden),
              r.normal(size=(hidden, 1)) * 0.5, np.zeros(1)]
    client = make_client()
    try:
        step = fxad.pmap(train_step, "data", in_axes=(None, 0, 0),
                         executor=DaskExecutor(client))
        local = fxad.pmap(train_step, "data", in_axes=(None, 0, 0))  # in process
        p_dask, p_local, first = params, params, None
        for i in range(steps):
            new, value = step(p_dask, x, y)
            p_dask = [p[0] for p in new]  # every shard holds the same parameters
            new_l, value_l = local(p_local, x, y)
            p_local = [p[0] for p in new_l]
            first = value[0] if first is None else first
            assert np.allclose(value, value_l, rtol=1e-12)
        print(f"training loss {first:.5f} -> {value[0]:.5f} over {steps} data-parallel steps")
        assert value[0] < first
        for a, b in zip(p_dask, p_local):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        print("Dask workers and the in-process executor trained the same parameters")
    finally:
        client.close()


if __name__ == "__main__":
    main("--smoke" in sys.argv[1:])

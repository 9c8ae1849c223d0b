"""Train a small MLP classifier with an AdamW optimizer written in a few lines of fxad + NumPy.

Shows: value_and_grad over a pytree (dict) of parameters, jit of the whole loss-and-gradient
step, a residual (skip) connection, dropout whose randomness comes from an explicit
np.random.default_rng (the mask is an ordinary input, so the loss stays a pure function), and
decoupled weight decay (AdamW: decay is applied to the weights, not added to the gradient).

    python examples/train_mlp.py           # full run
    python examples/train_mlp.py --smoke   # a few seconds
    python examples/train_mlp.py --out-dir DIR   # the training curves' PNG goes there
"""
import argparse
import time

import numpy as np

import fxad
import fxad.numpy as fnp
import _figures as figures
from fxad.tree_util import tree_map


def spirals(n_per_class, n_classes, rng, noise=0.3):
    """Interleaved 2-D spirals: not linearly separable, so the hidden layers must work."""
    xs, ys = [], []
    for c in range(n_classes):
        r = np.linspace(0.1, 1.0, n_per_class)
        theta = np.linspace(0, 4.0, n_per_class) + 2 * np.pi * c / n_classes
        theta = theta + noise * rng.standard_normal(n_per_class)
        xs.append(np.stack([r * np.sin(theta), r * np.cos(theta)], axis=1))
        ys.append(np.full(n_per_class, c))
    return np.concatenate(xs), np.concatenate(ys)


def init_params(rng, n_in, n_hidden, n_out):
    def dense(m, n):  # He initialisation for gelu layers
        return rng.standard_normal((m, n)) * np.sqrt(2.0 / m), np.zeros(n)
    (w1, b1), (w2, b2), (w3, b3) = dense(n_in, n_hidden), dense(n_hidden, n_hidden), \
        dense(n_hidden, n_out)
    return {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "w3": w3, "b3": b3}


def forward(params, x, mask):
    """Logits. `mask` is the (already rescaled) dropout mask; all-ones at evaluation."""
    h = fxad.nn.gelu(x @ params["w1"] + params["b1"])
    h = h + fxad.nn.gelu(h @ params["w2"] + params["b2"])   # skip connection
    h = h * mask
    return h @ params["w3"] + params["b3"]


def loss_fn(params, x, y_onehot, mask):
    logp = fxad.nn.log_softmax(forward(params, x, mask), axis=-1)
    return -fnp.mean(fnp.sum(logp * y_onehot, axis=-1))


# jit stages value_and_grad once per input shape and then runs generated NumPy code.
loss_and_grad = fxad.jit(fxad.value_and_grad(loss_fn))


class AdamW:
    def __init__(self, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-2,
                 decay_mask=None):
        self.lr, self.b1, self.b2, self.eps, self.wd = lr, b1, b2, eps, weight_decay
        self.decay_mask = decay_mask  # which leaves get weight decay (not biases)
        self.t = 0
        self.m = self.v = None

    def step(self, params, grads):
        if self.m is None:
            self.m = tree_map(np.zeros_like, params)
            self.v = tree_map(np.zeros_like, params)
        self.t += 1
        b1, b2 = self.b1, self.b2
        self.m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, self.m, grads)
        self.v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, self.v, grads)
        c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t   # bias correction

        def update(p, m, v, decay):
            return p - self.lr * ((m / c1) / (np.sqrt(v / c2) + self.eps) + self.wd * decay * p)
        return tree_map(update, params, self.m, self.v, self.decay_mask)


def accuracy(params, x, y):
    logits = forward(params, x, np.ones((1, params["w2"].shape[0])))
    return float(np.mean(np.argmax(logits, axis=1) == y))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny run for CI")
    figures.add_argument(ap)
    args = ap.parse_args()
    n_per_class, hidden, epochs, batch = (150, 32, 12, 50) if args.smoke else (300, 64, 60, 50)
    n_classes, p_drop = 3, 0.1

    rng = np.random.default_rng(0)
    x, y = spirals(n_per_class, n_classes, rng)
    perm = rng.permutation(len(x))
    x, y = x[perm], y[perm]
    n_train = int(0.8 * len(x))
    xtr, ytr, xte, yte = x[:n_train], y[:n_train], x[n_train:], y[n_train:]
    onehot = np.eye(n_classes)[ytr]

    params = init_params(rng, 2, hidden, n_classes)
    opt = AdamW(lr=1e-2, weight_decay=1e-3,
                decay_mask={k: float(k.startswith("w")) for k in params})
    print(f"spirals: {n_train} train / {len(xte)} test points, {n_classes} classes "
          f"(chance = {1 / n_classes:.2f})")
    curves = {"loss": [], "train": [], "test": []}
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        order = rng.permutation(n_train)
        losses = []
        for i in range(0, n_train - batch + 1, batch):   # drop the ragged tail: one jit shape
            idx = order[i:i + batch]
            keep = rng.random((batch, hidden)) >= p_drop
            mask = keep / (1.0 - p_drop)                  # inverted dropout
            loss, grads = loss_and_grad(params, xtr[idx], onehot[idx], mask)
            params = opt.step(params, grads)
            losses.append(float(loss))
        curves["loss"].append(np.mean(losses))
        curves["train"].append(accuracy(params, xtr, ytr))
        curves["test"].append(accuracy(params, xte, yte))
        print(f"epoch {epoch:3d}  loss {curves['loss'][-1]:.4f}  "
              f"train acc {curves['train'][-1]:.3f}  test acc {curves['test'][-1]:.3f}")
    acc = accuracy(params, xte, yte)
    print(f"final test accuracy {acc:.3f} (chance {1 / n_classes:.2f}) "
          f"in {time.perf_counter() - t0:.1f}s")
    if not args.smoke:   # the smoke run is too short to promise much
        assert acc > 0.8, acc
    plot(curves, params, x, y, n_classes, args)


def plot(curves, params, x, y, n_classes, args):
    """Training loss, train and test accuracy per epoch, and the learned decision regions."""
    plt = figures.pyplot()
    if plt is None:
        return
    epochs = np.arange(1, len(curves["loss"]) + 1)
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(13, 4))
    ax1.plot(epochs, curves["loss"])
    ax1.set(title="training loss (cross-entropy)", xlabel="epoch", yscale="log")
    ax2.plot(epochs, curves["train"], label="train")
    ax2.plot(epochs, curves["test"], label="test")
    ax2.axhline(1 / n_classes, color="0.6", ls=":", label="chance")
    ax2.set(title="accuracy", xlabel="epoch", ylim=(0, 1.02))
    ax2.legend()
    g = np.linspace(-1.2, 1.2, 150)
    gx, gy = np.meshgrid(g, g)
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1)
    logits = forward(params, grid, np.ones((1, params["w2"].shape[0])))
    ax3.contourf(gx, gy, np.argmax(logits, axis=1).reshape(gx.shape), alpha=0.3,
                 levels=np.arange(n_classes + 1) - 0.5, cmap="viridis")
    ax3.scatter(x[:, 0], x[:, 1], c=y, s=6, cmap="viridis")
    ax3.set(title="decision regions and the data", aspect="equal")
    fig.suptitle("An MLP on three spirals, trained with AdamW on fxad's gradients")
    fig.tight_layout()
    figures.save(fig, args, "train_mlp.png")


if __name__ == "__main__":
    main()

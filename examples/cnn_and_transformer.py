"""A small CNN and a transformer block, trained end to end with fxad (issue 19's story):

- a CNN (3x3 conv + ReLU + 2x2 max-pool, twice, then a dense layer) classifying 12x12 images of
  four noisy shapes (a synthetic stand-in for a digits set, so the script needs no download);
- a pre-norm transformer block (causal multi-head attention + MLP, layer norms, dropout from
  `fxad.random` keys) learning to predict the running maximum of a sequence of tokens.

Both train with `jit(value_and_grad(loss))` and plain SGD with momentum. The dropout mask
comes from a key split per step, so every jitted step draws a fresh mask (a NumPy RNG call
inside `jit` would be frozen at trace time).

    python examples/cnn_and_transformer.py [--smoke] [--out-dir DIR]   # the CNN's filters: PNG
"""
from __future__ import annotations

import argparse

import numpy as np

import fxad
import fxad.numpy as fnp
import _figures as figures
from fxad import lax, nn, random

SMOKE = False


# --- data ---------------------------------------------------------------------------------------

def shapes_dataset(n, rng, size=12):
    """n images (N, H, W, 1) of a square, a cross, a ring or a diagonal bar, placed at random
    offsets, with Gaussian noise; labels 0..3."""
    imgs = np.zeros((n, size, size, 1))
    labels = rng.integers(0, 4, n)
    yy, xx = np.mgrid[0:6, 0:6]
    templates = [np.ones((6, 6)), ((yy == 2) | (yy == 3) | (xx == 2) | (xx == 3)) * 1.0,
                 ((np.abs(yy - 2.5) + np.abs(xx - 2.5)) > 2.4) * 1.0, (np.abs(yy - xx) <= 1) * 1.0]
    for i, c in enumerate(labels):
        r, s = rng.integers(0, size - 6, 2)
        imgs[i, r:r + 6, s:s + 6, 0] = templates[c]
    return imgs + 0.3 * rng.standard_normal(imgs.shape), labels


# --- the CNN ------------------------------------------------------------------------------------

def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def cnn(params, x):
    w1, b1, w2, b2, wd, bd = params
    h = nn.max_pool(nn.relu(conv(x, w1) + b1), (2, 2), strides=(2, 2))
    h = nn.max_pool(nn.relu(conv(h, w2) + b2), (2, 2), strides=(2, 2))
    return fnp.reshape(h, (h.shape[0], -1)) @ wd + bd


def cnn_loss(params, x, y):
    logits = cnn(params, x)
    return -fnp.mean(fnp.sum(nn.log_softmax(logits) * nn.one_hot(y, 4), axis=-1))


def init_cnn(key):
    k = random.split(key, 3)
    he = nn.initializers.he_normal()
    return [he(k[0], (3, 3, 1, 8)), np.zeros(8), he(k[1], (3, 3, 8, 16)), np.zeros(16),
            nn.initializers.glorot_normal()(k[2], (3 * 3 * 16, 4)), np.zeros(4)]


# --- the transformer block ----------------------------------------------------------------------

D, HEADS, VOCAB = 32, 4, 8


def block(params, tokens, key, train):
    emb, pos, wq, wk, wv, wo, w1, w2, wout = params
    x = emb[tokens] + pos[: tokens.shape[1]]
    b, t, _ = x.shape
    h = nn.layer_norm(x)
    q, k, v = (fnp.reshape(h @ w, (b, t, HEADS, D // HEADS)) for w in (wq, wk, wv))
    att = fnp.reshape(nn.dot_product_attention(q, k, v, is_causal=True), (b, t, D)) @ wo
    if train:
        att = nn.dropout(key, att, 0.1)
    x = x + att
    x = x + nn.gelu(nn.layer_norm(x) @ w1) @ w2
    return nn.layer_norm(x) @ wout  # logits of the running maximum at each position


def block_loss(params, tokens, targets, key):
    logp = nn.log_softmax(block(params, tokens, key, True))
    return -fnp.mean(fnp.sum(logp * nn.one_hot(targets, VOCAB), axis=-1))


def init_block(key, t):
    ks = random.split(key, 9)
    g = nn.initializers.glorot_normal()
    return [random.normal(ks[0], (VOCAB, D)) * 0.5, random.normal(ks[1], (t, D)) * 0.1,
            g(ks[2], (D, D)), g(ks[3], (D, D)), g(ks[4], (D, D)), g(ks[5], (D, D)),
            g(ks[6], (D, 2 * D)), g(ks[7], (2 * D, D)), g(ks[8], (D, VOCAB))]


# --- training -----------------------------------------------------------------------------------

def sgd(loss, params, batches, lr, steps):
    step = fxad.jit(fxad.value_and_grad(loss))
    vel = [np.zeros_like(p) for p in params]
    for i in range(steps):
        value, grads = step(params, *batches(i))
        vel = [0.9 * v + g for v, g in zip(vel, grads)]
        params = [p - lr * v for p, v in zip(params, vel)]
    return params, float(value)


def main():
    global SMOKE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="small problem for CI")
    figures.add_argument(ap)
    args = ap.parse_args()
    SMOKE = args.smoke
    rng = np.random.default_rng(0)
    key = random.PRNGKey(0)
    steps = 40 if SMOKE else 300

    x, y = shapes_dataset(256 if SMOKE else 2048, rng)
    xt, yt = shapes_dataset(200, rng)
    bs = 32

    def cnn_batches(i):
        j = (i * bs) % (len(x) - bs)
        return x[j:j + bs], y[j:j + bs]
    params, value = sgd(cnn_loss, init_cnn(random.fold_in(key, 1)), cnn_batches, 0.05, steps)
    acc = float(np.mean(np.argmax(cnn(params, xt), axis=-1) == yt))
    print(f"CNN: final training loss {value:.3f}, test accuracy {acc:.2f} (4 classes)")
    assert acc > (0.4 if SMOKE else 0.9), acc
    plot_filters(params, xt, yt, args)

    t = 12
    tokens = rng.integers(0, VOCAB, (4096, t))
    targets = np.maximum.accumulate(tokens, axis=1)

    def seq_batches(i):
        j = (i * bs) % (len(tokens) - bs)
        return tokens[j:j + bs], targets[j:j + bs], random.fold_in(key, 1000 + i)
    before = float(block_loss(init_block(random.fold_in(key, 2), t), tokens[:64], targets[:64],
                              key))
    params, value = sgd(block_loss, init_block(random.fold_in(key, 2), t), seq_batches, 0.02,
                        steps)
    pred = np.argmax(block(params, tokens[-256:], key, False), axis=-1)
    acc = float(np.mean(pred == targets[-256:]))
    print(f"transformer block: loss {before:.3f} -> {value:.3f}, running-max accuracy {acc:.2f}")
    assert value < before and acc > (0.3 if SMOKE else 0.8), (before, value, acc)
    print("CNN and transformer block trained end to end")


def plot_filters(params, x, y, args):
    """The first layer's eight learned 3x3 filters, and one test image of each class."""
    plt = figures.pyplot()
    if plt is None:
        return
    w1 = np.asarray(params[0])[:, :, 0, :]  # (3, 3, 8)
    fig, axes = plt.subplots(2, 8, figsize=(12, 4.2))
    lim = np.max(np.abs(w1))
    for i, ax in enumerate(axes[0]):
        ax.imshow(w1[:, :, i], cmap="RdBu_r", vmin=-lim, vmax=lim)
        ax.set_title(f"filter {i}", fontsize=9)
    names = ["square", "cross", "ring", "bar"]
    for c, ax in enumerate(axes[1][:4]):
        ax.imshow(x[np.flatnonzero(y == c)[0], :, :, 0], cmap="gray")
        ax.set_title(names[c], fontsize=9)
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
    for ax in axes[1][4:]:
        ax.axis("off")
    fig.suptitle("The CNN's first-layer 3x3 filters (top) and test images of the four classes")
    fig.tight_layout()
    figures.save(fig, args, "cnn_filters.png")


if __name__ == "__main__":
    main()

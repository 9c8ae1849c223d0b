"""The first six derivatives of tanh, by nesting grad six times and vmapping over a grid of
points, checked against the closed form and plotted to a PNG (matplotlib is optional: without
it a text table is printed instead).

Closed form: every derivative of tanh is a polynomial in t = tanh(x):
    P_0(t) = t,   P_{k+1}(t) = P_k'(t) * (1 - t^2).

    python examples/tanh_derivatives.py [--out-dir DIR]   # the PNG goes there (default: temp)
    python examples/tanh_derivatives.py --smoke            # fewer points
"""
import argparse
import time

import numpy as np
from numpy.polynomial import polynomial as P

import fxad
import fxad.numpy as fnp
import _figures as figures

ORDER = 6


def closed_form(x, order):
    """Values of the order-th derivative of tanh at x, from the polynomial recursion."""
    p = np.array([0.0, 1.0])             # P_0(t) = t
    one_minus_t2 = np.array([1.0, 0.0, -1.0])
    for _ in range(order):
        p = P.polymul(P.polyder(p), one_minus_t2)
    return P.polyval(np.tanh(x), p)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="fewer points for CI")
    figures.add_argument(ap)
    args = ap.parse_args()
    xs = np.linspace(-4.0, 4.0, 41 if args.smoke else 401)

    # f, f', f'', ... : grad of a scalar function is again a scalar function, so it nests.
    fs = [fnp.tanh]
    for _ in range(ORDER):
        fs.append(fxad.grad(fs[-1]))
    t0 = time.perf_counter()
    ys = [fxad.vmap(f)(xs) for f in fs]   # vmap: all points in one pass per order
    dt = time.perf_counter() - t0

    for k, y in enumerate(ys):
        err = np.max(np.abs(y - closed_form(xs, k)))
        assert err < 1e-9 * max(1.0, np.max(np.abs(y))), (k, err)
    print(f"orders 0..{ORDER} at {len(xs)} points in {dt * 1e3:.0f} ms; all match the "
          "closed form (polynomials in tanh)")

    # The same derivatives, without vmap, at one point: a scalar check of the nesting.
    print("at x = 0.5:", ", ".join(f"d{k}={float(f(0.5)):+.5f}" for k, f in enumerate(fs)))

    plt = figures.pyplot()
    if plt is None:
        print("text table instead of a plot")
        pick = np.linspace(0, len(xs) - 1, 9).astype(int)
        print("      x " + "".join(f"{'d' + str(k):>10s}" for k in range(ORDER + 1)))
        for i in pick:
            print(f"{xs[i]:7.2f} " + "".join(f"{y[i] + 0.0:10.4f}" for y in ys))  # no -0.0
        return

    # one panel per order: the peaks grow from 1 (tanh) to about 52 (sixth derivative)
    fig, axes = plt.subplots(2, 4, figsize=(12, 5.5), sharex=True)
    for k, ax in enumerate(axes.flat):
        if k > ORDER:
            ax.axis("off")
            continue
        ax.plot(xs, ys[k])
        ax.axhline(0.0, color="0.8", lw=0.8)
        ax.set_title("tanh" if k == 0 else f"$d^{{{k}}}/dx^{{{k}}}$ tanh", fontsize=10)
    fig.suptitle("tanh and its first six derivatives (fxad.grad nested, vmapped)")
    fig.tight_layout()
    figures.save(fig, args, "tanh_derivatives.png")


if __name__ == "__main__":
    main()

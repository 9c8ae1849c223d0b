"""Read the programs fxad builds for one function: its gradient, its linearization (the
tangent program, with the primal work already done) and its VJP (the transposed linear
program), and write the gradient program as a Graphviz DOT file.

    python examples/show_program.py                  # DOT file goes to a temp directory
    python examples/show_program.py --out grad.dot   # ...or here; render: dot -Tsvg grad.dot
"""
import argparse
import os
import tempfile

import numpy as np

import fxad
import fxad.numpy as fnp


def f(x, w):
    """A one-layer network's loss: enough structure (matmul, nonlinearity, reduction)."""
    return fnp.sum(fnp.tanh(x @ w) ** 2)


def prims(closed):
    return sorted({e.primitive.name for e in closed.eqns})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="where to write the DOT file (default: a temp directory)")
    ap.add_argument("--smoke", action="store_true", help="accepted for CI; already small")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))

    print("== the function ==")
    print(fxad.make_jaxpr(f)(x, w))

    print("\n== grad(f, argnums=1): forward pass, then the transposed tangent program ==")
    grad_prog = fxad.make_jaxpr(fxad.grad(f, argnums=1))(x, w)
    print(grad_prog)

    print("\n== linearize(f, x, w): only the linear tangent program is kept ==")
    y, f_jvp = fxad.linearize(f, x, w)
    print(f_jvp.jaxpr)
    lin_prims = prims(f_jvp.jaxpr)
    print("primitives in it:", lin_prims, "(tanh was evaluated at linearize time: no tanh)")
    assert "tanh" not in lin_prims
    dx, dw = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    assert np.allclose(f_jvp(dx, dw), fxad.jvp(f, (x, w), (dx, dw))[1])

    print("\n== vjp(f, x, w) applied to a cotangent: the transposed program ==")
    vjp_prog = fxad.make_jaxpr(lambda x, w, ct: fxad.vjp(f, x, w)[1](ct))(x, w, 1.0)
    print(vjp_prog)
    print("outputs:", [str(a.str_short()) for a in vjp_prog.out_avals], "(one per primal)")

    dot = grad_prog.to_dot()
    out = args.out or os.path.join(tempfile.mkdtemp(prefix="fxad_"), "grad.dot")
    with open(out, "w") as fh:
        fh.write(dot + "\n")
    assert dot.lstrip().startswith("digraph")
    print(f"\nwrote the grad program as DOT ({dot.count('->')} edges) to {out}")
    print(f"render it with: dot -Tsvg {out} -o grad.svg")


if __name__ == "__main__":
    main()

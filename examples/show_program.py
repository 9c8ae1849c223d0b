"""Read the programs fxad builds for one function: its gradient, its linearization (the
tangent program, with the primal work already done) and its VJP (the transposed linear
program), and write the gradient program as a Graphviz DOT file, drawn as SVG when Graphviz
is installed (the `graphviz` Python package, or its `dot` program on PATH).

    python examples/show_program.py                  # grad.dot (+ grad.svg) in a temp directory
    python examples/show_program.py --out-dir DIR    # ...or in DIR
"""
import argparse
import os
import shutil
import subprocess
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
    ap.add_argument("--out-dir", help="where to write the files (default: a temp directory)")
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
    out_dir = args.out_dir or tempfile.mkdtemp(prefix="fxad_")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "grad.dot")
    with open(out, "w") as fh:
        fh.write(dot + "\n")
    assert dot.lstrip().startswith("digraph")
    print(f"\nwrote the grad program as DOT ({dot.count('->')} edges) to {out}")
    svg = render_svg(dot, os.path.join(out_dir, "grad.svg"))
    if svg:
        print(f"drew it as {svg}")
    else:
        print("Graphviz is not installed, so no drawing: install its `dot` program (e.g. "
              "apt-get install graphviz, brew install graphviz) or `pip install graphviz` "
              f"with the program, then: dot -Tsvg {out} -o grad.svg")


def render_svg(dot, path):
    """Draw DOT text as SVG with Graphviz, if it is installed; the path written, else None."""
    try:
        import graphviz  # the Python package (it needs the dot program too)
        with open(path, "w") as fh:
            fh.write(graphviz.Source(dot).pipe(format="svg", encoding="utf-8"))
        return path
    except Exception:  # not installed, or installed without its program: try the program
        pass
    exe = shutil.which("dot")
    if exe is None:
        return None
    subprocess.run([exe, "-Tsvg", "-o", path], input=dot, text=True, check=True)
    return path


if __name__ == "__main__":
    main()

"""What the examples share to draw their figures: matplotlib is optional (the `examples` extra).

    import _figures as figures
    plt = figures.pyplot()              # matplotlib.pyplot on the Agg backend, or None
    figures.save(fig, args, "name.png")  # into --out-dir (default: a new temp directory)

Without matplotlib an example prints its text output only and says how to get the figure.
"""
import os
import tempfile


def pyplot():
    """matplotlib.pyplot drawing to files (Agg: no display needed), or None without it."""
    try:
        import matplotlib
    except ImportError:
        print("(matplotlib is not installed, so no figure: pip install -e \".[examples]\")")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def add_argument(parser):
    parser.add_argument("--out-dir", help="where to write the figure (default: a temp directory)")


def save(fig, args, name):
    """Write fig as PNG `name` in args.out_dir and say where."""
    out_dir = args.out_dir or tempfile.mkdtemp(prefix="fxad_")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=100)
    fig.clf()
    print(f"wrote {path}")
    return path

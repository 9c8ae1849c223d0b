"""The gallery's figures: the examples that draw one are run at build time into _gallery/.

With ``FXAD_GALLERY_DIR`` set to a folder where the examples already wrote their figures
(`python examples/<script>.py --smoke --out-dir DIR`, as CI does), the figures are copied from there
instead, so CI runs each example once. The figures need matplotlib (the `examples` extra, which
the `docs` extra includes); the program drawing needs Graphviz's `dot`, and without it the
gallery shows the DOT text instead.

    python notes/docs_gallery.py DIR   # run those examples (--smoke) into DIR; check each figure
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "_gallery")

# script -> the files it writes into --out-dir (the gallery page shows them)
FIGURES = {
    "tanh_derivatives.py": ["tanh_derivatives.png"],
    "train_mlp.py": ["train_mlp.png"],
    "gaussian_process.py": ["gaussian_process.png"],
    "ode_fit.py": ["ode_fit.png"],
    "cnn_and_transformer.py": ["cnn_filters.png"],
    "show_program.py": ["grad.dot"],  # and grad.svg when Graphviz is installed
}


def _run(script, out_dir):
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", script),
                           "--smoke", "--out-dir", out_dir], cwd=out_dir, env=env, capture_output=True,
                          text=True)
    if proc.returncode:
        raise RuntimeError(f"examples/{script} failed while building the gallery:\n"
                           f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")


def make_figures(app=None):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise RuntimeError("the gallery needs matplotlib: pip install -e \".[docs]\"") from None
    os.makedirs(OUT, exist_ok=True)
    given = os.environ.get("FXAD_GALLERY_DIR")
    for script, files in FIGURES.items():
        if not given and all(os.path.exists(os.path.join(OUT, f)) for f in files) and \
                os.path.getmtime(os.path.join(OUT, files[0])) >= \
                os.path.getmtime(os.path.join(ROOT, "examples", script)):
            continue  # drawn since the script last changed
        if not given:
            _run(script, OUT)
            continue
        for f in files + (["grad.svg"] if script == "show_program.py" else []):
            src = os.path.join(given, f)
            if os.path.exists(src):
                shutil.copyfile(src, os.path.join(OUT, f))
            elif not f.endswith(".svg"):
                raise RuntimeError(f"FXAD_GALLERY_DIR={given} has no {f} (run "
                                   f"examples/{script} --smoke --out-dir {given})")
    _program_figure()


def _program_figure():
    """_gallery/program.md: the SVG drawing when Graphviz made one, else the DOT text."""
    svg = os.path.join(OUT, "grad.svg")
    if os.path.exists(svg):
        text = "![The grad program drawn by Graphviz](_gallery/grad.svg)\n"  # from gallery.md
    else:
        with open(os.path.join(OUT, "grad.dot")) as fh:
            dot = fh.read()
        text = ("Graphviz was not installed when this page was built, so here is the DOT text "
                "(`dot -Tsvg grad.dot -o grad.svg` draws it):\n\n```text\n" + dot + "```\n")
    path = os.path.join(OUT, "program.md")
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as fh:
            fh.write(text)


def _written(path):
    """Whether path is a non-empty file, and a PNG image if it is named so."""
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as fh:
        head = fh.read(8)
    return head == b"\x89PNG\r\n\x1a\n" if path.endswith(".png") else bool(head)


def draw_all(out_dir):
    """Run every example of FIGURES into out_dir and check that each wrote its files (CI)."""
    os.makedirs(out_dir, exist_ok=True)
    missing = []
    for script, files in FIGURES.items():
        _run(script, out_dir)
        missing += [f"examples/{script}: {f}" for f in files
                    if not _written(os.path.join(out_dir, f))]
        print(f"examples/{script}: wrote {', '.join(files)}")
    if missing:
        sys.exit("figures not written: " + "; ".join(missing))


def setup(app):
    app.connect("builder-inited", make_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    draw_all(sys.argv[1])

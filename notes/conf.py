"""Sphinx configuration of fxad's documentation site; its source is this folder.

    pip install -e ".[docs]"
    python -m sphinx -W -b html notes /tmp/fxad-site     # then open /tmp/fxad-site/index.html

The design notes are Markdown (MyST). The API reference is generated at build time from the
public modules' ``__all__`` (docs_api.py: a page per module and one per public name, under
api/_generated/, which git ignores); the gallery page shows the figures that the examples draw
(docs_gallery.py runs them into _gallery/, also ignored). Only NumPy and SciPy are needed to
import fxad, so the API pages build without the optional extras (Numba, Dask) installed.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # this checkout's fxad, not an installed one
sys.path.insert(0, HERE)                   # docs_api, docs_gallery

import fxad  # noqa: E402

project = "fxad"
author = "the fxad developers"
copyright = "the fxad developers"
release = version = fxad.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "docs_api",
    "docs_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_gallery", "**/__pycache__"]
templates_path = []

# MyST: `#section` links in the notes resolve to headings; $...$ math as in the notes.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# Docstrings write `name` for code, as the notes do.
default_role = "code"
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "signature"
autosummary_generate = False  # docs_api writes the pages (one per public name)
add_module_names = False

html_theme = "furo"
html_title = f"fxad {release}"
html_static_path = []
html_show_sourcelink = False
pygments_style = "friendly"

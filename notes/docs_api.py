"""The API reference, written at build time from the public modules' ``__all__``.

The public modules are those of `PUBLIC` and every module a public module names in its
``__all__``. Each gets a page under api/_generated/: its docstring, its submodules, a summary
table of its names, then each name's signature and docstring (one page per module keeps the
build fast: a page per name made the theme's navigation quadratic). A name that is NumPy's,
SciPy's or Python's own object re-exported as it is (a dtype such as ``fxad.numpy.float32``, a
constant such as ``fxad.numpy.pi``) is listed as such: its documentation is the original's.
tests/project/test_docstrings.py walks the same modules (``public_modules``).
"""
import functools
import importlib
import inspect
import os
import re
import types

ROOT = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(ROOT, "api", "_generated")


# The public modules, beside those a public module names in its ``__all__`` (a module missing here
# is still found that way). A listed module that does not exist (yet) is skipped.
PUBLIC = [
    "fxad", "fxad.numpy", "fxad.numpy.linalg", "fxad.numpy.fft", "fxad.lax", "fxad.lax.linalg",
    "fxad.nn", "fxad.nn.initializers", "fxad.random", "fxad.scipy", "fxad.scipy.special",
    "fxad.scipy.stats", "fxad.scipy.linalg", "fxad.scipy.signal", "fxad.scipy.fft",
    "fxad.scipy.ndimage", "fxad.scipy.interpolate", "fxad.scipy.cluster",
    "fxad.scipy.cluster.vq", "fxad.scipy.sparse", "fxad.scipy.sparse.linalg",
    "fxad.scipy.optimize",
    "fxad.scipy.integrate", "fxad.tree_util", "fxad.tree", "fxad.flatten_util", "fxad.test_util",
    "fxad.debug", "fxad.typing", "fxad.errors", "fxad.custom_derivatives",
    "fxad.checkpoint_policies", "fxad.example_libraries", "fxad.example_libraries.stax",
    "fxad.example_libraries.optimizers", "fxad.sparse", "fxad.extend", "fxad.distributed",
    "fxad.sharding",
]

# Where a module has no ``__all__`` yet, its public names are those not starting with "_",
# except what it imported for its own use from these libraries.
_OWN_USE = ("typing", "collections", "functools", "itertools", "abc", "dataclasses", "types",
            "contextlib", "threading", "warnings", "weakref", "operator", "math", "enum")


def _import(name):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:
            return None  # listed in PUBLIC, not in this version
        raise


def public_modules():
    """[(dotted name, module)] of every public module, fxad first, parents before children."""
    seen, order, todo = set(), [], list(PUBLIC)
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        mod = _import(name)
        if mod is None:
            continue
        order.append((name, mod))
        for attr in getattr(mod, "__all__", ()):
            obj = getattr(mod, attr, None)
            if isinstance(obj, types.ModuleType) and obj.__name__.startswith("fxad"):
                todo.append(f"{name}.{attr}")
    order.sort(key=lambda item: (item[0] != "fxad", item[0].split(".")))
    return order


def _exported(mod):
    names = getattr(mod, "__all__", None)
    if names is not None:
        return list(names)
    out = []
    for n in dir(mod):
        obj = getattr(mod, n)
        origin = (getattr(obj, "__module__", None) or "").partition(".")[0]
        if not n.startswith("_") and origin not in _OWN_USE:
            out.append(n)
    return out


def public_names(mod):
    """The public names of `mod` that are not modules, sorted case-insensitively."""
    return sorted((n for n in _exported(mod)
                   if not isinstance(getattr(mod, n, None), types.ModuleType)),
                  key=lambda n: (n.lower(), n))


def is_foreign(obj):
    """Whether obj is another library's object re-exported unchanged (NumPy's dtypes, ...)."""
    if isinstance(obj, functools.partial):
        return is_foreign(obj.func)
    if isinstance(obj, (bool, int, float, complex, str, type(None))):
        return True
    mod = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", "")
    if inspect.isclass(obj) or callable(obj):
        return not (mod or "").startswith("fxad")
    return True


def _title(text, ch="="):
    return f"{text}\n{ch * len(text)}\n"


def _entry(name, obj, seen):
    """The autodoc directive documenting obj as `name` of the current module."""
    if inspect.isclass(obj):
        # autodoc also indexes a class under its defining module's name (its canonical name),
        # so a class several public modules export is indexed under the first one only.
        noindex = "   :no-index:\n" if id(obj) in seen else ""
        seen.add(id(obj))
        return f".. autoclass:: {name}\n   :members:\n{noindex}"
    if callable(obj):
        return f".. autofunction:: {name}\n"
    return f".. autodata:: {name}\n   :annotation:\n"


def _foreign_line(name, obj):
    origin = getattr(obj, "__module__", None) or type(obj).__module__
    shown = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if shown and origin and (inspect.isclass(obj) or callable(obj)):
        return f"- ``{name}``: ``{origin}.{shown}``"
    return f"- ``{name}``: ``{obj!r}``"


def _module_page(modname, mod, children, seen):
    """A module's page: its docstring, its submodules, a table of its names, then each name."""
    lines = [_title(modname), f".. automodule:: {modname}\n   :no-members:\n   :no-index:\n",
             f".. currentmodule:: {modname}\n"]
    if children:
        lines.append(_title("Modules", "-"))
        lines.append(".. toctree::\n   :maxdepth: 1\n")
        lines += [f"   {c}" for c in children]
        lines.append("")
    names = public_names(mod)
    own = [n for n in names if not is_foreign(getattr(mod, n))]
    foreign = [n for n in names if is_foreign(getattr(mod, n))]
    if own:
        lines.append(_title("Summary", "-"))
        lines.append(".. autosummary::\n   :nosignatures:\n")
        lines += [f"   {n}" for n in own]
        lines.append("")
    if foreign:
        lines.append(_title("Re-exported unchanged", "-"))
        lines.append("These are NumPy's, SciPy's or Python's own objects, exported here so that "
                     "code written against the original runs on fxad; their documentation is "
                     "the original's.\n")
        lines += [_foreign_line(n, getattr(mod, n)) for n in foreign]
        lines.append("")
    if own:
        lines.append(_title("Reference", "-"))
        lines += [_entry(n, getattr(mod, n), seen) for n in own]
    return "\n".join(lines)


def _write(path, text):
    """Write only what changed, so an incremental build rereads only those pages."""
    if os.path.exists(path):
        with open(path) as fh:
            if fh.read() == text:
                return
    with open(path, "w") as fh:
        fh.write(text)


def generate(app=None):
    os.makedirs(OUT, exist_ok=True)
    mods = public_modules()
    wanted, seen = set(), set()
    names = {m for m, _ in mods}
    for modname, mod in mods:
        children = sorted(c for c in names if c.rpartition(".")[0] == modname)
        page = f"{modname}.rst"
        _write(os.path.join(OUT, page), _module_page(modname, mod, children, seen))
        wanted.add(page)
    for stale in set(os.listdir(OUT)) - wanted:  # a module that is no longer public
        os.remove(os.path.join(OUT, stale))


# fxad's docstrings are plain text with `code` spans (as the notes write them), not reST: `*args`,
# `|x|`, `name_` and indented blocks mean nothing special. So the site escapes reST's inline
# markup outside code spans and separates blocks of a different indentation by a blank line.
_CODE = re.compile(r"(``.+?``|`[^`]+`)", re.S)
_MARKUP = re.compile(r"([\\*|]|_(?!\w))")
_BULLET = re.compile(r"^(\s*)[-*] ")


_BEFORE, _AFTER = "'\"([{<-/:", "'\")]}>-/:.,;!?\\"  # what may touch a code span in reST


def _escape(text):
    parts = _CODE.split(text)
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        parts[i] = _MARKUP.sub(r"\\\1", parts[i])
    for i in range(1, len(parts), 2):  # a code span touching a word (`x`s): an escaped space
        if parts[i - 1] and not parts[i - 1][-1].isspace() and parts[i - 1][-1] not in _BEFORE:
            parts[i] = "\\ " + parts[i]
        if parts[i + 1] and not parts[i + 1][0].isspace() and parts[i + 1][0] not in _AFTER:
            parts[i] = parts[i] + "\\ "
    return "".join(parts)


def plain_to_rst(lines):
    """fxad's plain-text docstring lines as reST that renders them as they read."""
    # (a doctest paragraph, >>> lines and their output, is a literal block in reST: as it is)
    paras = re.split(r"(\n[ \t]*\n)", "\n".join(lines))
    text = "".join(p if i % 2 or p.lstrip().startswith(">>>") else _escape(p)
                   for i, p in enumerate(paras)).split("\n")
    out, prev, item = [], None, None  # prev: the last non-blank line; item: a bullet's indent
    for i, line in enumerate(text):
        stripped = line.strip()
        if not stripped:
            out.append(line)
            item = None if prev is None else item
            continue
        if set(stripped) <= set("-=~^") and len(stripped) >= 3 and prev is not None \
                and out and out[-1].strip():
            out[-1] = f"**{out[-1].strip()}**"  # a section underline: a bold heading instead
            out.append("")
            prev = None
            continue
        indent = len(line) - len(line.lstrip())
        bullet = _BULLET.match(line.replace("\\*", "*", 1))
        if prev is not None and out and out[-1].strip():
            pindent = len(prev) - len(prev.lstrip())
            continuation = item is not None and indent == item + 2 and not bullet
            if bullet and not _BULLET.match(prev.replace("\\*", "*", 1)) and indent == pindent:
                out.append("")
            elif indent != pindent and not continuation:
                out.append("")
            elif item is not None and not bullet and not continuation and indent <= item:
                out.append("")
        if bullet:
            item = indent
        elif item is not None and indent <= item:
            item = None
        out.append(line)
        prev = line
    return out


def _to_rst(app, what, name, obj, options, lines):
    lines[:] = plain_to_rst(lines)


def setup(app):
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", _to_rst)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Every public module defines __all__, and every public callable in it (function, class,
callable object such as a partial) has a docstring of fxad's own: the API reference
(notes/docs_api.py, which walks the same modules) shows it, and `help()` shows it. The examples
in those docstrings (>>> lines) run and print what they say.

A name that is NumPy's, SciPy's or Python's own object re-exported unchanged (a dtype, a
constant) is documented by its library and is not checked here."""
import doctest
import importlib.util
import inspect
import re
from pathlib import Path

import pytest

from fxad._docs import own_doc

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("docs_api", ROOT / "notes" / "docs_api.py")
docs_api = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docs_api)

MODULES = docs_api.public_modules()

def _undocumented(mod):
    out = []
    for name in docs_api.public_names(mod):
        obj = getattr(mod, name)
        if docs_api.is_foreign(obj) or not callable(obj):
            continue
        if own_doc(obj) is None:
            out.append(name)
    return out


def test_the_walk_finds_the_public_modules():
    names = {n for n, _ in MODULES}
    assert {"fxad", "fxad.numpy", "fxad.numpy.linalg", "fxad.numpy.fft", "fxad.lax",
            "fxad.lax.linalg", "fxad.nn", "fxad.nn.initializers", "fxad.random",
            "fxad.scipy.special", "fxad.scipy.stats", "fxad.scipy.stats.norm",
            "fxad.tree_util", "fxad.test_util", "fxad.debug", "fxad.typing",
            "fxad.example_libraries.stax"} <= names


@pytest.mark.parametrize("name,mod", MODULES, ids=[n for n, _ in MODULES])
def test_every_public_module_defines_all(name, mod):
    assert isinstance(getattr(mod, "__all__", None), (list, tuple)), f"{name} has no __all__"
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing, f"{name}.__all__ names what it does not define: {missing}"


@pytest.mark.parametrize("name,mod", MODULES, ids=[n for n, _ in MODULES])
def test_every_public_callable_has_a_docstring(name, mod):
    missing = _undocumented(mod)
    assert not missing, f"{name}: {len(missing)} public callables without a docstring: {missing}"


@pytest.mark.parametrize("name,mod", MODULES, ids=[n for n, _ in MODULES])
def test_summary_lines_close_their_code_spans(name, mod):
    """The API tables show each docstring's first sentence, cut at the first period followed
    by a space (as Sphinx's autosummary cuts it): a cut inside a code span would leave it
    open, which the site's build (warnings as errors) refuses."""
    bad = []
    for n in docs_api.public_names(mod):
        doc = own_doc(getattr(mod, n))
        first = re.split(r"\.\s", " ".join((doc or "").split("\n\n")[0].split()))[0]
        if first.count("`") % 2:
            bad.append(f"{n}: {first!r}")
    assert not bad, f"{name}: summary sentences with an open code span: {bad}"


def _examples():
    """(name, doctest) for every example (>>> lines) in a public callable's docstring."""
    finder, seen, out = doctest.DocTestFinder(recurse=False), set(), []
    for modname, mod in MODULES:
        for name in docs_api.public_names(mod):
            obj = getattr(mod, name)
            if id(obj) in seen or docs_api.is_foreign(obj) or not callable(obj):
                continue
            seen.add(id(obj))
            out += [(f"{modname}.{name}", t) for t in finder.find(obj, name, globs={})
                    if t.examples]
    return out


EXAMPLES = _examples()


def test_there_are_examples():
    assert {"fxad.grad", "fxad.vmap", "fxad.jit"} <= {n for n, _ in EXAMPLES}


@pytest.mark.parametrize("name,test", EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_docstring_examples_print_what_they_say(name, test):
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)


def test_own_doc_is_the_objects_own():
    import functools

    def f(x):
        return x
    p = functools.partial(f, 1)
    assert own_doc(p) is None  # functools.partial's docstring is not the object's
    p.__doc__ = "f at 1."
    assert own_doc(p) == "f at 1."
    assert own_doc(f) is None
    assert inspect.getdoc(p)

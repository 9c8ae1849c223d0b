"""Docstrings of functions that mirror a NumPy or SciPy function.

fxad's own paragraph (what the function computes, how its parameters differ from the
original's, what is differentiable) is the function's docstring, written where it is defined.
`mirrors` appends, at import time, the original's documentation under one marker line, so that
`help(fxad.numpy.sort)` shows both. The original's text is appended as it is (no reformatting:
that would cost import time); the site (notes/docs_api.py) replaces it with a link.
"""
import inspect

__all__ = ["ORIGINAL_MARKER", "mirrors", "original_url", "own_doc"]

ORIGINAL_MARKER = "The documentation of the original follows: "

_URLS = {
    "numpy": "https://numpy.org/doc/stable/reference/generated/{}.html",
    "scipy": "https://docs.scipy.org/doc/scipy/reference/generated/{}.html",
}


def mirrors(original, name=None):
    """Decorator: append `original`'s docstring (NumPy's or SciPy's) under the function's own.

    `name` is the original's public dotted name when its ``__module__`` is not (NumPy's
    ufuncs, functions defined in private submodules)."""
    if name is None:
        mod = getattr(original, "__module__", None) or "numpy"
        name = f"{mod}.{original.__name__}"

    def attach(fn):
        own = fn.__doc__
        if not own:
            raise TypeError(f"{fn.__name__}: write fxad's own docstring before appending "
                            f"{name}'s")
        fn.__doc__ = (f"{inspect.cleandoc(own)}\n\n{ORIGINAL_MARKER}{name}\n\n"
                      f"{original.__doc__ or ''}")
        return fn
    return attach


def original_url(name):
    """The web page of NumPy's or SciPy's documentation of `name` (None for another library)."""
    pattern = _URLS.get(name.partition(".")[0])
    return pattern.format(name) if pattern else None


def own_doc(obj):
    """The docstring fxad wrote for obj, without an appended original (None if there is none).

    A function's or class's own ``__doc__``; for a callable object (a partial, a `custom_jvp`
    function, ...) the docstring set on the object itself, not its class's."""
    if inspect.isroutine(obj) or inspect.isclass(obj):
        doc = obj.__doc__
    else:
        doc = vars(obj).get("__doc__") if hasattr(obj, "__dict__") else None
    if not isinstance(doc, str):
        return None
    return inspect.cleandoc(doc).partition(ORIGINAL_MARKER)[0].strip() or None

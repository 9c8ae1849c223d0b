"""What the documentation of fxad's public callables is made of.

Each public function, class and callable object has a docstring of fxad's own, written where it
is defined: what it computes, how its parameters differ from NumPy's, SciPy's or JAX's, and in
which arguments it is differentiable. `own_doc` reads it the way the documentation test
(tests/project/test_docstrings.py) and the site (notes/docs_api.py) do.
"""
import inspect

__all__ = ["own_doc"]


def own_doc(obj):
    """The docstring fxad wrote for obj (None if there is none).

    A function's or class's own ``__doc__``; for a callable object (a partial, a `custom_jvp`
    function, ...) the docstring set on the object itself, not its class's."""
    if inspect.isroutine(obj) or inspect.isclass(obj):
        doc = obj.__doc__
    else:
        doc = vars(obj).get("__doc__") if hasattr(obj, "__dict__") else None
    if not isinstance(doc, str):
        return None
    return inspect.cleandoc(doc).strip() or None

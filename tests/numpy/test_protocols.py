"""NumPy's dispatch protocols on tracers: functions are matched by module as well as name,
so a NumPy function is never replaced by a same-named fxad function with other semantics."""
import numpy as np
import pytest
import scipy.special as sc

import fxad
from fxad.errors import ConcretizationError, FxadTypeError

X = np.arange(18.0).reshape(2, 3, 3)


@pytest.mark.parametrize("fn", [np.emath.sqrt, np.emath.log, np.emath.log10],
                         ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_same_name_other_module_is_refused_not_confused(fn):
    with pytest.raises(FxadTypeError, match=f"{fn.__module__}.{fn.__name__}"):
        fxad.jit(fn)(X)


def test_numpy_trace_and_linalg_functions_dispatch_to_their_counterparts():
    np.testing.assert_allclose(fxad.jit(np.trace)(X), np.trace(X))
    # numpy.linalg.trace sums over the LAST two axes: its own counterpart, not numpy.trace
    np.testing.assert_allclose(fxad.jit(np.linalg.trace)(X), np.linalg.trace(X))
    np.testing.assert_array_equal(fxad.jit(np.linalg.diagonal)(X), np.linalg.diagonal(X))
    np.testing.assert_allclose(fxad.grad(lambda w: np.linalg.norm(w))(np.ones(3)),
                               np.ones(3) / np.sqrt(3))
    np.testing.assert_allclose(fxad.grad(lambda w: np.linalg.det(w))(np.eye(3)), np.eye(3))


def test_scipy_special_ufuncs_dispatch_or_name_themselves():
    w = np.array([0.5, -1.0])
    np.testing.assert_allclose(fxad.grad(lambda v: np.sum(sc.expit(v)))(w),
                               sc.expit(w) * (1 - sc.expit(w)))
    with pytest.raises(FxadTypeError, match="scipy.special.ellipk"):  # one fxad lacks
        fxad.grad(lambda v: np.sum(sc.ellipk(v)))(w)


def test_copy_is_the_value_and_item_tolist_refuse_like_float():
    w = np.array([1.0, 2.0])
    np.testing.assert_allclose(fxad.grad(lambda v: np.sum(np.copy(v) ** 2))(w), 2 * w)
    np.testing.assert_allclose(fxad.grad(lambda v: (v.copy() ** 2).sum())(w), 2 * w)
    for method in ("item", "tolist"):
        with pytest.raises(ConcretizationError, match="drop its derivative"):
            fxad.grad(lambda v: getattr(v, method)())(1.0)
        with pytest.raises(ConcretizationError, match=f"{method}\\(\\) needs a concrete value"):
            fxad.jit(lambda v: getattr(v, method)())(1.0)


@pytest.mark.parametrize("call,kw", [(lambda x: np.clip(x, 0, 1, out=None), "out="),
                                     (lambda x: np.ptp(x, out=None), "out="),
                                     (lambda x: np.nancumsum(x, out=None), "out=")])
def test_numpy_options_fxad_lacks_are_named(call, kw):
    with pytest.raises(FxadTypeError, match=f"does not support {kw}"):
        fxad.grad(lambda x: np.sum(call(x)))(np.ones(3))


def _tracer_classes():
    import importlib
    import pkgutil

    import fxad.interpreters
    from fxad.core import Tracer
    for m in pkgutil.iter_modules(fxad.interpreters.__path__):
        importlib.import_module(f"fxad.interpreters.{m.name}")
    importlib.import_module("fxad.ir.staging")
    found, stack = set(), [Tracer]
    while stack:
        for sub in stack.pop().__subclasses__():
            found.add(sub)
            stack.append(sub)
    return sorted((k for k in found if k.__module__.startswith("fxad.")),
                  key=lambda k: f"{k.__module__}.{k.__name__}")


def test_no_tracer_attribute_hides_an_ndarray_method():
    # a tracer's own slot or attribute named like an ndarray method hides the method under
    # that transformation (jit's tracer kept its jaxpr variable in `var`: x.var() raised
    # "'Var' object is not callable" under jit only)
    methods = {n for n in dir(np.ndarray) if not n.startswith("_")}
    clashes = {f"{k.__module__}.{k.__name__}": sorted(
        methods & (set(getattr(k, "__slots__", ())) | set(vars(k)))) for k in _tracer_classes()}
    assert not {k: v for k, v in clashes.items() if v}
    x = np.arange(4.0)
    for method in ("var", "std", "mean", "sum", "max", "cumsum", "round", "conj"):
        np.testing.assert_allclose(fxad.jit(lambda a: getattr(a, method)())(x),
                                   getattr(x, method)())


_M = np.array([[1.5, -2.0, 0.25, 3.0], [0.5, 4.0, -1.0, 2.0]])


@pytest.mark.parametrize("call", [
    lambda a: a.sum(where=a > 0), lambda a: a.sum(1, None, None, True),
    lambda a: a.prod(where=a > 0, initial=1.5), lambda a: a.mean(1, np.float32, None, True),
    lambda a: a.var(0, None, None, 1), lambda a: a.std(1, None, None, 1, True),
    lambda a: a.var(mean=a.mean(axis=1, keepdims=True), axis=1),
    lambda a: a.max(initial=10.0), lambda a: a.max(0, None, True),
    lambda a: a.min(1, where=a > 0, initial=9.0), lambda a: a.argmax(1, keepdims=True),
    lambda a: a.cumsum(1, np.float32, None), lambda a: a.any(1, None, keepdims=True),
    lambda a: a.clip(min=0.0), lambda a: a.clip(-1.0, max=2.0),
    lambda a: a.take(np.array([5, -1]), mode="wrap"), lambda a: a.take(np.array([0, 9]), 1, None, "clip"),
    lambda a: a.argsort(kind="stable"), lambda a: a.argsort(0, stable=True)])
def test_methods_take_ndarray_signatures(call):
    # ndarray's positional order (out before keepdims / ddof) and its keywords where= /
    # initial= / mean=, under jit and vmap
    want = call(_M)
    got = fxad.jit(call)(_M)
    assert (np.shape(got), np.asarray(got).dtype) == (np.shape(want), np.asarray(want).dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(fxad.vmap(call)(_M[None])[0], want, rtol=1e-6)

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

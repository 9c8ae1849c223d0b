"""fxad.debug_nans: the first primitive that makes a NaN from NaN-free inputs raises
FloatingPointError naming it and the user's line; everywhere else nothing changes.
fxad.debug_infs: the same for infinities, independently of the NaN check."""
import threading
import warnings

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import core, lax

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def log_sum(x):
    return fnp.sum(fnp.log(x))  # NaN for negative entries


X = np.array([1.0, -1.0])


def test_off_by_default_returns_nan():
    assert np.isnan(log_sum(X))
    assert core._nan_hook is None


CASES = {"eager": (log_sum, X), "jit": (fxad.jit(log_sum), X),
         "jit(jit)": (fxad.jit(fxad.jit(log_sum)), X),
         "vmap": (fxad.vmap(log_sum), X[None, :]),
         "jvp": (lambda x: fxad.jvp(log_sum, (x,), (np.ones(2),)), X)}


@pytest.mark.parametrize("name", CASES)
def test_names_the_primitive_and_the_user_line(name):
    f, arg = CASES[name]
    with fxad.debug_nans():
        with pytest.raises(FloatingPointError, match=r"'log'.*test_nans\.py:\d+"):
            f(arg)
    assert core._nan_hook is None  # removed again when the block exits by an exception


def test_nan_made_in_the_backward_pass():
    # sqrt'(0) = inf, times the zero cotangent of `* 0`: the NaN appears only in reverse mode.
    g = fxad.grad(lambda x: fnp.sum(fnp.sqrt(x) * 0.0))
    assert np.isnan(g(np.array([0.0, 1.0]))).any()
    with fxad.debug_nans(), pytest.raises(FloatingPointError, match="primitive '(mul|div)'"):
        g(np.array([0.0, 1.0]))


def test_inside_a_scan_body():
    def f(x):
        return lax.scan(lambda c, a: (c + fnp.log(a), None), 0.0, x)[0]
    with fxad.debug_nans(), pytest.raises(FloatingPointError, match="'log'"):
        f(np.array([1.0, 2.0, -3.0]))


def test_nan_inputs_from_the_user_are_not_blamed_on_a_primitive():
    with fxad.debug_nans():
        assert np.isnan(fnp.sin(np.array([np.nan, 1.0]))).any()


def test_config_flag_checks_every_thread_and_context_only_this_one():
    errors = []

    def other():
        try:
            log_sum(X)
        except FloatingPointError as e:
            errors.append(e)

    with fxad.debug_nans():  # this thread only
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert errors == []
    fxad.config.debug_nans = True
    try:
        t = threading.Thread(target=other)
        t.start()
        t.join()
    finally:
        fxad.config.debug_nans = False
    assert len(errors) == 1 and "'log'" in str(errors[0])
    assert core._nan_hook is None


def test_correct_results_while_checking():
    x = np.array([0.3, 0.7])
    with warnings.catch_warnings(), fxad.debug_nans():
        got = fxad.jit(fxad.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2)))(x)
    np.testing.assert_allclose(got, 2 * np.tanh(x) / np.cosh(x) ** 2, rtol=1e-13)


def exp_sum(x):
    return fnp.sum(fnp.exp(x))  # inf for entries past ~709.8


BIG = np.array([1.0, 1000.0])
INF_CASES = {"eager": (exp_sum, BIG), "jit": (fxad.jit(exp_sum), BIG),
             "vmap": (fxad.vmap(exp_sum), BIG[None, :]),
             "grad": (fxad.grad(lambda x: fnp.sum(fnp.sqrt(x))), np.array([0.0, 1.0]))}


@pytest.mark.parametrize("name", INF_CASES)
def test_debug_infs_names_the_primitive_and_the_user_line(name):
    f, arg = INF_CASES[name]
    assert not np.isfinite(f(arg)).all()  # off: the infinity comes back
    with fxad.debug_infs():
        with pytest.raises(FloatingPointError, match=r"debug_infs: primitive '(exp|div|"
                           r"integer_pow|rsqrt|pow)' produced an infinity.*test_nans\.py:\d+"):
            f(arg)
    assert core._nan_hook is None


def test_debug_infs_and_debug_nans_are_independent():
    with fxad.debug_infs():
        assert np.isnan(log_sum(X))  # a NaN is not an infinity
        assert fnp.isinf(fnp.exp(np.array([np.inf]))).all()  # an inf input is not blamed
    with fxad.debug_nans():
        assert np.isinf(exp_sum(BIG))
    with fxad.debug_nans(), fxad.debug_infs():
        with pytest.raises(FloatingPointError, match="debug_nans"):
            log_sum(X)
        with pytest.raises(FloatingPointError, match="debug_infs"):
            exp_sum(BIG)
    with fxad.debug_infs(False):
        assert np.isinf(exp_sum(BIG))
    assert core._nan_hook is None


def test_debug_infs_config_flag_checks_every_thread():
    errors = []

    def other():
        try:
            exp_sum(BIG)
        except FloatingPointError as e:
            errors.append(e)
    fxad.config.debug_infs = True
    try:
        assert fxad.config.debug_infs and not fxad.config.debug_nans
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert np.isnan(log_sum(X))  # NaNs still pass
    finally:
        fxad.config.debug_infs = False
    assert len(errors) == 1 and "'exp'" in str(errors[0])
    assert core._nan_hook is None

"""solve_ivp's events and dense_output: SciPy's values when nothing is transformed, a clear
error under a transformation."""
import numpy as np
import pytest
import scipy.integrate

import fxad
import fxad.numpy as fnp
from fxad.scipy.integrate import solve_ivp


def fall(t, y, g):
    return fnp.stack([y[1], -g + 0 * y[0]])


def fall_np(t, y, g):
    return [y[1], -g]


def ground(t, y, g):
    return y[0]


ground.terminal, ground.direction = True, -1


def half(t, y, g):
    return y[0] - 5.0


def _events():
    return [("terminal", ground), ("two", [half, ground])]


@pytest.mark.parametrize("method", ["RK45", "BDF", "Radau"])
@pytest.mark.parametrize("name,events", _events(), ids=[e[0] for e in _events()])
def test_events_and_dense_output_match_scipy(method, name, events):
    kw = dict(args=(9.81,), events=events, dense_output=True, rtol=1e-10, atol=1e-10,
              method=method)
    got = solve_ivp(fall, (0.0, 10.0), [10.0, 0.0], **kw)
    want = scipy.integrate.solve_ivp(fall_np, (0.0, 10.0), [10.0, 0.0], **kw)
    assert got.status == want.status == 1
    assert len(got.t_events) == len(want.t_events)
    for a, b in zip(got.t_events, want.t_events):
        np.testing.assert_allclose(a, b, rtol=1e-8)
    for a, b in zip(got.y_events, want.y_events):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(got.t_events[-1], [np.sqrt(2 * 10 / 9.81)], rtol=1e-8)
    ts = np.linspace(0.0, 1.4, 5)
    np.testing.assert_allclose(got.sol(ts)[0], 10 - 9.81 * ts ** 2 / 2, rtol=1e-7)


def test_t_eval_reported_as_without_events():
    got = solve_ivp(fall, (0.0, 1.2), [10.0, 0.0], args=(9.81,), events=half,
                    t_eval=np.array([0.0, 0.5, 1.0]), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got.t, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(got.y[0], 10 - 9.81 * got.t ** 2 / 2, rtol=1e-8)
    assert got.t_events[0].size == 1


@pytest.mark.parametrize("option", ["events", "dense_output"])
@pytest.mark.parametrize("transform", ["grad", "jit"])
def test_refused_under_transformation(option, transform):
    kw = {"events": ground} if option == "events" else {"dense_output": True}

    def f(g):
        return fnp.sum(solve_ivp(fall, (0.0, 1.0), [10.0, 0.0], args=(g,), **kw).y)
    with pytest.raises(fxad.errors.FxadValueError, match=f"{option} under a transformation"):
        getattr(fxad, transform)(f)(9.81)

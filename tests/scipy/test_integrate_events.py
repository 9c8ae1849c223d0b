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


@pytest.mark.parametrize("option,transform", [("events", "jit"), ("events", "vmap"),
                                              ("dense_output", "grad"),
                                              ("dense_output", "jit")])
def test_refused_under_transformation(option, transform):
    kw = {"events": ground} if option == "events" else {"dense_output": True}
    if transform == "vmap":
        with pytest.raises(fxad.errors.FxadValueError, match="events under a transformation"):
            fxad.vmap(lambda g: solve_ivp(fall, (0.0, 1.0), [10.0, 0.0], args=(g,),
                                          **kw).y)(np.array([9.81, 9.0]))
        return

    def f(g):
        return fnp.sum(solve_ivp(fall, (0.0, 1.0), [10.0, 0.0], args=(g,), **kw).y)
    with pytest.raises(fxad.errors.FxadValueError, match=f"{option} under a transformation"):
        getattr(fxad, transform)(f)(9.81)


def impact(g, what="t"):
    sol = solve_ivp(fall, (0.0, 10.0), fnp.stack([10.0, 0.0]), args=(g,), events=ground,
                    rtol=1e-10, atol=1e-10, t_eval=np.linspace(0.0, 10.0, 11))
    return sol.t_events[0][0] if what == "t" else sol.y_events[0][0, 1]


def test_event_time_derivatives_by_implicit_function_theorem():
    g = 9.81
    # t* = sqrt(20 / g), v* = -sqrt(20 g)
    np.testing.assert_allclose(fxad.grad(impact)(g), -0.5 * np.sqrt(20) * g ** -1.5,
                               rtol=1e-7)
    np.testing.assert_allclose(fxad.jvp(impact, (g,), (1.0,))[1],
                               -0.5 * np.sqrt(20) * g ** -1.5, rtol=1e-7)
    np.testing.assert_allclose(fxad.hessian(impact)(g), 0.75 * np.sqrt(20) * g ** -2.5,
                               rtol=1e-6)
    np.testing.assert_allclose(fxad.grad(lambda g: impact(g, "v"))(g),
                               -np.sqrt(20) / (2 * np.sqrt(g)), rtol=1e-7)


def test_traced_result_matches_eager_and_stops_at_terminal_event():
    got = {}

    def f(g):
        sol = solve_ivp(fall, (0.0, 10.0), fnp.stack([10.0, 0.0]), args=(g,),
                        events=[half, ground], rtol=1e-10, atol=1e-10,
                        t_eval=np.linspace(0.0, 10.0, 11))
        got.update(t=sol.t, status=sol.status, n=[e.shape[0] for e in sol.t_events])
        return fnp.sum(sol.y[0]) + sol.t_events[0][0]
    fxad.grad(f)(9.81)
    want = solve_ivp(fall, (0.0, 10.0), [10.0, 0.0], args=(9.81,), events=[half, ground],
                     rtol=1e-10, atol=1e-10, t_eval=np.linspace(0.0, 10.0, 11))
    np.testing.assert_allclose(np.asarray(got["t"]), want.t)
    assert got["status"] == want.status == 1 and got["n"] == [1, 1]

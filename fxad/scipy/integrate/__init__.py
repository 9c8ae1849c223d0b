"""scipy.integrate's names, differentiable: SciPy's own integrators run underneath.

odeint, solve_ivp   ODE solutions, differentiable in the initial state, the times and the
                    parameters (adjoint method in reverse mode, forward sensitivities in
                    forward mode; notes/08_scipy_solvers.md)
quad                a definite integral, differentiable in its limits and parameters
trapezoid, simpson, cumulative_trapezoid   composite rules over samples (fxad.numpy)
"""
from ._ode import OdeResult, odeint, solve_ivp  # noqa: F401
from ._quad import quad  # noqa: F401
from ._composite import cumulative_trapezoid, simpson, trapezoid  # noqa: F401

__all__ = ["OdeResult", "cumulative_trapezoid", "odeint", "quad", "simpson", "solve_ivp",
           "trapezoid"]

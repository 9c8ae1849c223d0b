"""scipy.integrate's names, differentiable: SciPy's own integrators run underneath.

odeint, solve_ivp   ODE solutions, differentiable in the initial state, the times and the
                    parameters (adjoint method in reverse mode, forward sensitivities in
                    forward mode; notes/08_scipy_solvers.md)
"""
from ._ode import OdeResult, odeint, solve_ivp  # noqa: F401

"""The README's quick start, runnable: python examples/quickstart.py"""
import numpy as np

import fxad
import fxad.numpy as fnp


def f(x):
    return fnp.sum(fnp.tanh(x) ** 2)


x = np.linspace(-1.0, 1.0, 3)
v = np.ones(3)

print(fxad.grad(f)(x))                      # reverse mode
print(fxad.jvp(f, (x,), (v,)))              # forward mode: (f(x), J v)
y, f_jvp = fxad.linearize(f, x)             # primal now, linear tangent program for later
print(f_jvp(v))
print(f_jvp.jaxpr)                          # the linear program: no tanh in it
print(fxad.hessian(f)(x))                   # forward over reverse
print(fxad.vmap(fxad.grad(f))(np.stack([x, 2 * x])))   # per-example gradients
print(fxad.make_jaxpr(fxad.grad(f))(x))     # read the program fxad built

# Ordinary Python control flow works: the graph is built as the function runs.
def g(x):
    return fnp.sin(x) if x > 0 else x ** 3
print(fxad.grad(g)(0.5), fxad.grad(fxad.grad(g))(-2.0))

# Plain NumPy code differentiates too, through NumPy's dispatch protocols.
print(fxad.grad(lambda w: np.sum(np.exp(w) * w))(x))

# ruff: noqa: E402, F811  (the notebook imports in its cells and redefines f, hvp, ...)
"""JAX's *Autodiff Cookbook*, run on fxad: every code cell of the notebook, in order, each
line as JAX's documentation writes it except the few marked `# CHANGED:` (the list, with
the reason for each, is in notes/07_differences.md, "Porting JAX's documentation").

Source: https://github.com/jax-ml/jax/blob/main/docs/notebooks/autodiff_cookbook.md
(commit 4a8420bbc5d9899794be26e5956947c2b6993e47), by the JAX authors (alexbw@, mattjj@),
Copyright 2018 The JAX Authors, Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0).
The code cells are copied for this port, as the issue asks; the prose is not.

    python examples/jax_autodiff_cookbook.py           # with the notebook's %timeit cells
    python examples/jax_autodiff_cookbook.py --smoke   # each timed expression runs once
"""
import sys
import time

import numpy as np

# --- fxad's stand-ins for what a notebook or JAX provides (added lines) ----------------------

SMOKE = "--smoke" in sys.argv


def timeit(fn, n=10, r=3):
    """IPython's `%timeit -n10 -r3 expr` as a function call (smoke runs: once)."""
    if SMOKE:
        fn()
        return
    best = min(_time(fn, n) for _ in range(r))
    print(f"{best * 1e3:.3f} ms per loop (best of {r} runs, {n} loops each)")


def _time(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


class random:
    """jax.random's calls used below (key, split, normal, uniform), backed by NumPy's
    generator: fxad.random is not part of this change. The numbers differ from JAX's."""

    @staticmethod
    def key(seed):
        return np.random.SeedSequence(seed)

    PRNGKey = key

    @staticmethod
    def split(key, num=2):
        return tuple(key.spawn(num))

    @staticmethod
    def normal(key, shape=()):
        return np.random.default_rng(key).standard_normal(shape)

    @staticmethod
    def uniform(key, shape=()):
        return np.random.default_rng(key).uniform(size=shape)


# --- cell JTYyZkSO6vuy -----------------------------------------------------------------------
import fxad.numpy as jnp  # CHANGED: import jax.numpy as jnp
from fxad import grad, jit, vmap  # CHANGED: from jax import grad, jit, vmap
# CHANGED: from jax import random   (the NumPy-backed `random` class above)

key = random.key(0)

# --- cell 0NLO4Wfknzmk -----------------------------------------------------------------------
grad_tanh = grad(jnp.tanh)
print(grad_tanh(2.0))

# --- cell RDGk1GDsoawu -----------------------------------------------------------------------
print(grad(grad(jnp.tanh))(2.0))
print(grad(grad(grad(jnp.tanh)))(2.0))


# --- cell 27TcOT2i6vu5 -----------------------------------------------------------------------
def sigmoid(x):
    return 0.5 * (jnp.tanh(x / 2) + 1)

# Outputs probability of a label being true.
def predict(W, b, inputs):
    return sigmoid(jnp.dot(inputs, W) + b)

# Build a toy dataset.
inputs = jnp.array([[0.52, 1.12,  0.77],
                   [0.88, -1.08, 0.15],
                   [0.52, 0.06, -1.30],
                   [0.74, -2.49, 1.39]])
targets = jnp.array([True, True, False, True])

# Training loss is the negative log-likelihood of the training examples.
def loss(W, b):
    preds = predict(W, b, inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))

# Initialize random model coefficients
key, W_key, b_key = random.split(key, 3)
W = random.normal(W_key, (3,))
b = random.normal(b_key, ())

# --- cell bpmd8W8-6vu6 -----------------------------------------------------------------------
# Differentiate `loss` with respect to the first positional argument:
W_grad = grad(loss, argnums=0)(W, b)
print('W_grad', W_grad)

# Since argnums=0 is the default, this does the same thing:
W_grad = grad(loss)(W, b)
print('W_grad', W_grad)

# But we can choose different values too, and drop the keyword:
b_grad = grad(loss, 1)(W, b)
print('b_grad', b_grad)

# Including tuple values
W_grad, b_grad = grad(loss, (0, 1))(W, b)
print('W_grad', W_grad)
print('b_grad', b_grad)


# --- cell IY82kdAe6vu_ -----------------------------------------------------------------------
def loss2(params_dict):
    preds = predict(params_dict['W'], params_dict['b'], inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))

print(grad(loss2)({'W': W, 'b': b}))

# --- cell RsQSyT5p7OJW -----------------------------------------------------------------------
from fxad import value_and_grad  # CHANGED: from jax import value_and_grad
loss_value, Wb_grad = value_and_grad(loss, (0, 1))(W, b)
print('loss value', loss_value)
print('loss value', loss(W, b))

# --- cell R8q5RiY3l7Fw -----------------------------------------------------------------------
# Set a step size for finite differences calculations
eps = 1e-4

# Check b_grad with scalar finite differences
b_grad_numerical = (loss(W, b + eps / 2.) - loss(W, b - eps / 2.)) / eps
print('b_grad_numerical', b_grad_numerical)
print('b_grad_autodiff', grad(loss, 1)(W, b))

# Check W_grad with finite differences in a random direction
key, subkey = random.split(key)
vec = random.normal(subkey, W.shape)
unitvec = vec / jnp.sqrt(jnp.vdot(vec, vec))
W_grad_numerical = (loss(W + eps / 2. * unitvec, b) - loss(W - eps / 2. * unitvec, b)) / eps
print('W_dirderiv_numerical', W_grad_numerical)
print('W_dirderiv_autodiff', jnp.vdot(grad(loss)(W, b), unitvec))

# --- cell 6Ok2LEfQmOuy -----------------------------------------------------------------------
from fxad.test_util import check_grads  # CHANGED: from jax.test_util import check_grads
check_grads(loss, (W, b), order=2)  # check up to 2nd order derivatives


# --- cell Ou5OU-gU9epm -----------------------------------------------------------------------
def hvp(f, x, v):
    return grad(lambda x: jnp.vdot(grad(f)(x), v))(x)

# --- cell cbETzAvKvf5I -----------------------------------------------------------------------
from fxad import jacfwd, jacrev  # CHANGED: from jax import jacfwd, jacrev

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

J = jacfwd(f)(W)
print("jacfwd result, with shape", J.shape)
print(J)

J = jacrev(f)(W)
print("jacrev result, with shape", J.shape)
print(J)


# --- cell eH46Xnm88bfm -----------------------------------------------------------------------
def predict_dict(params, inputs):
    return predict(params['W'], params['b'], inputs)

J_dict = jacrev(predict_dict)({'W': W, 'b': b}, inputs)
for k, v in J_dict.items():
    print("Jacobian from {} to logits is".format(k))
    print(v)


# --- cell n155ypD9rfIZ -----------------------------------------------------------------------
def hessian(f):
    return jacfwd(jacrev(f))

H = hessian(f)(W)
print("hessian, with shape", H.shape)
print(H)

# --- cell pTncYR6F6vvG -----------------------------------------------------------------------
from fxad import jvp  # CHANGED: from jax import jvp

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

key, subkey = random.split(key)
v = random.normal(subkey, W.shape)

# Push forward the vector `v` along `f` evaluated at `W`
y, u = jvp(f, (W,), (v,))

# --- cell 1tFcRuEzkGRR -----------------------------------------------------------------------
from fxad import vjp  # CHANGED: from jax import vjp

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

y, vjp_fun = vjp(f, W)

key, subkey = random.split(key)
u = random.normal(subkey, y.shape)

# Pull back the covector `u` along `f` evaluated at `W`
v = vjp_fun(u)

# --- cell (vector-valued gradients) ----------------------------------------------------------
from fxad import vjp  # CHANGED: from jax import vjp

def vgrad(f, x):
  y, vjp_fn = vjp(f, x)
  return vjp_fn(jnp.ones(y.shape))[0]

print(vgrad(lambda x: 3*x**2, jnp.ones((2, 2))))


# --- cell C70CA-7wdelL -----------------------------------------------------------------------
def hvp(f, x, v):
    return grad(lambda x: jnp.vdot(grad(f)(x), v))(x)

# --- cell rq3C0reVfAaI -----------------------------------------------------------------------
from fxad import jvp, grad  # CHANGED: from jax import jvp, grad

# forward-over-reverse
def hvp(f, primals, tangents):
  return jvp(grad(f), primals, tangents)[1]


# --- cell bmpuQa5_f1Al -----------------------------------------------------------------------
def f(X):
  return jnp.sum(jnp.tanh(X)**2)

key, subkey1, subkey2 = random.split(key, 3)
X = random.normal(subkey1, (30, 40))
V = random.normal(subkey2, (30, 40))

ans1 = hvp(f, (X,), (V,))
ans2 = jnp.tensordot(hessian(f)(X), V, 2)

print(jnp.allclose(ans1, ans2, 1e-4, 1e-4))


# --- cell YxwmXZH2XQrw -----------------------------------------------------------------------
# reverse-over-forward
def hvp_revfwd(f, primals, tangents):
  g = lambda primals: jvp(f, primals, tangents)[1]
  return grad(g)(primals)


# --- cell lxfv25qTX5gZ -----------------------------------------------------------------------
# reverse-over-reverse, only works for single arguments
def hvp_revrev(f, primals, tangents):
  x, = primals
  v, = tangents
  return grad(lambda x: jnp.vdot(grad(f)(x), v))(x)


print("Forward over reverse")
timeit(lambda: hvp(f, (X,), (V,)))  # CHANGED: %timeit -n10 -r3 hvp(f, (X,), (V,))
print("Reverse over forward")
timeit(lambda: hvp_revfwd(f, (X,), (V,)))  # CHANGED: %timeit -n10 -r3 hvp_revfwd(...)
print("Reverse over reverse")
timeit(lambda: hvp_revrev(f, (X,), (V,)))  # CHANGED: %timeit -n10 -r3 hvp_revrev(...)

print("Naive full Hessian materialization")
timeit(lambda: jnp.tensordot(hessian(f)(X), V, 2))  # CHANGED: %timeit -n10 -r3 ...

# --- cell asAWvxVaCmsx -----------------------------------------------------------------------
# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

# Pull back the covectors `m_i` along `f`, evaluated at `W`, for all `i`.
# First, use a list comprehension to loop over rows in the matrix M.
def loop_mjp(f, x, M):
    y, vjp_fun = vjp(f, x)
    return jnp.vstack([vjp_fun(mi) for mi in M])

# Now, use vmap to build a computation that does a single fast matrix-matrix
# multiply, rather than an outer loop over vector-matrix multiplies.
def vmap_mjp(f, x, M):
    y, vjp_fun = vjp(f, x)
    outs, = vmap(vjp_fun)(M)
    return outs

key = random.key(0)
num_covecs = 128
U = random.normal(key, (num_covecs,) + y.shape)

loop_vs = loop_mjp(f, W, M=U)
print('Non-vmapped Matrix-Jacobian product')
timeit(lambda: loop_mjp(f, W, M=U))  # CHANGED: %timeit -n10 -r3 loop_mjp(f, W, M=U)

print('\nVmapped Matrix-Jacobian product')
vmap_vs = vmap_mjp(f, W, M=U)
timeit(lambda: vmap_mjp(f, W, M=U))  # CHANGED: %timeit -n10 -r3 vmap_mjp(f, W, M=U)

assert jnp.allclose(loop_vs, vmap_vs), 'Vmap and non-vmapped Matrix-Jacobian Products should be identical'


# --- cell TDaxsJrlDraK -----------------------------------------------------------------------
def loop_jmp(f, W, M):
    # jvp immediately returns the primal and tangent values as a tuple,
    # so we'll compute and select the tangents in a list comprehension
    return jnp.vstack([jvp(f, (W,), (mi,))[1] for mi in M])

def vmap_jmp(f, W, M):
    _jvp = lambda s: jvp(f, (W,), (s,))[1]
    return vmap(_jvp)(M)

num_vecs = 128
S = random.normal(key, (num_vecs,) + W.shape)

loop_vs = loop_jmp(f, W, M=S)
print('Non-vmapped Jacobian-Matrix product')
timeit(lambda: loop_jmp(f, W, M=S))  # CHANGED: %timeit -n10 -r3 loop_jmp(f, W, M=S)
vmap_vs = vmap_jmp(f, W, M=S)
print('\nVmapped Jacobian-Matrix product')
timeit(lambda: vmap_jmp(f, W, M=S))  # CHANGED: %timeit -n10 -r3 vmap_jmp(f, W, M=S)

assert jnp.allclose(loop_vs, vmap_vs), 'Vmap and non-vmapped Jacobian-Matrix products should be identical'

# --- cell HBEzsDH1U5_4 -----------------------------------------------------------------------
from fxad import jacrev as builtin_jacrev  # CHANGED: from jax import jacrev as builtin_jacrev

def our_jacrev(f):
    def jacfun(x):
        y, vjp_fun = vjp(f, x)
        # Use vmap to do a matrix-Jacobian product.
        # Here, the matrix is the Euclidean basis, so we get all
        # entries in the Jacobian at once.
        J, = vmap(vjp_fun, in_axes=0)(jnp.eye(len(y)))
        return J
    return jacfun

assert jnp.allclose(builtin_jacrev(f)(W), our_jacrev(f)(W)), 'Incorrect reverse-mode Jacobian results!'

# --- cell Qd9gVZ5t6vvP -----------------------------------------------------------------------
from fxad import jacfwd as builtin_jacfwd  # CHANGED: from jax import jacfwd as builtin_jacfwd

def our_jacfwd(f):
    def jacfun(x):
        _jvp = lambda s: jvp(f, (x,), (s,))[1]
        Jt = vmap(_jvp, in_axes=1)(jnp.eye(len(x)))
        return jnp.transpose(Jt)
    return jacfun

assert jnp.allclose(builtin_jacfwd(f)(W), our_jacfwd(f)(W)), 'Incorrect forward-mode Jacobian results!'


# --- cell _5jDflC08bgB -----------------------------------------------------------------------
def f(x):
    try:
        if x < 3:
            return 2 * x ** 3
        else:
            raise ValueError
    except ValueError:
        return jnp.pi * x

y, f_vjp = vjp(f, 4.)
print(jit(f_vjp)(1.))


# --- cell OaqZ2MuP8bgF -----------------------------------------------------------------------
def f(z):
  x, y = jnp.real(z), jnp.imag(z)
  return u(x, y) + v(x, y) * 1j

def g(x, y):
  return (u(x, y), v(x, y))


# --- cell BGZV__zupIMS -----------------------------------------------------------------------
def check(seed):
  key = random.key(seed)

  # random coeffs for u and v
  key, subkey = random.split(key)
  a, b, c, d = random.uniform(subkey, (4,))

  def fun(z):
    x, y = jnp.real(z), jnp.imag(z)
    return u(x, y) + v(x, y) * 1j

  def u(x, y):
    return a * x + b * y

  def v(x, y):
    return c * x + d * y

  # primal point
  key, subkey = random.split(key)
  x, y = random.uniform(subkey, (2,))
  z = x + y * 1j

  # tangent vector
  key, subkey = random.split(key)
  c, d = random.uniform(subkey, (2,))
  z_dot = c + d * 1j

  # check jvp
  _, ans = jvp(fun, (z,), (z_dot,))
  expected = (grad(u, 0)(x, y) * c +
              grad(u, 1)(x, y) * d +
              grad(v, 0)(x, y) * c * 1j+
              grad(v, 1)(x, y) * d * 1j)
  print(jnp.allclose(ans, expected))

# --- cell I2OBU3OGp-CY -----------------------------------------------------------------------
check(0)
check(1)
check(2)


# --- cell 4J7edvIBttcU -----------------------------------------------------------------------
def check(seed):
  key = random.key(seed)

  # random coeffs for u and v
  key, subkey = random.split(key)
  a, b, c, d = random.uniform(subkey, (4,))

  def fun(z):
    x, y = jnp.real(z), jnp.imag(z)
    return u(x, y) + v(x, y) * 1j

  def u(x, y):
    return a * x + b * y

  def v(x, y):
    return c * x + d * y

  # primal point
  key, subkey = random.split(key)
  x, y = random.uniform(subkey, (2,))
  z = x + y * 1j

  # cotangent vector
  key, subkey = random.split(key)
  c, d = random.uniform(subkey, (2,))
  z_bar = jnp.array(c + d * 1j)  # for dtype control

  # check vjp
  _, fun_vjp = vjp(fun, z)
  ans, = fun_vjp(z_bar)
  expected = (grad(u, 0)(x, y) * c +
              grad(v, 0)(x, y) * (-d) +
              grad(u, 1)(x, y) * c * (-1j) +
              grad(v, 1)(x, y) * (-d) * (-1j))
  assert jnp.allclose(ans, expected, atol=1e-5, rtol=1e-5)

# --- cell RieNCdXgtzs7 -----------------------------------------------------------------------
check(0)
check(1)
check(2)


# --- cell xz_9lK61wGdm -----------------------------------------------------------------------
def f(z):
  x, y = jnp.real(z), jnp.imag(z)
  return x**2 + y**2

z = 3. + 4j
grad(f)(z)


# --- cell Y3n9hPVrwvXx -----------------------------------------------------------------------
def f(z):
  return jnp.sin(z)

z = 3. + 4j
grad(f, holomorphic=True)(z)


# --- cell th9xhwp2xaeU -----------------------------------------------------------------------
def f(z):
  return jnp.conjugate(z)

z = 3. + 4j
grad(f, holomorphic=True)(z)  # f is not actually holomorphic!

# --- cell WrDHHfKI8bgM -----------------------------------------------------------------------
A = jnp.array([[5.,    2.+3j,    5j],
              [2.-3j,   7.,  1.+7j],
              [-5j,  1.-7j,    12.]])

def f(X):
    L = jnp.linalg.cholesky(X)
    return jnp.sum((L - jnp.sin(L))**2)

grad(f, holomorphic=True)(A)

# --- fxad: the notebook's displayed values (its cells end in an expression), checked -------
np.testing.assert_allclose(grad(lambda z: jnp.real(z)**2 + jnp.imag(z)**2)(3. + 4j), 6. - 8j)
np.testing.assert_allclose(grad(jnp.sin, holomorphic=True)(3. + 4j), np.cos(3. + 4j))
np.testing.assert_allclose(grad(jnp.conjugate, holomorphic=True)(3. + 4j), 1.)
print("autodiff cookbook: every cell ran")

"""`fxad.example_libraries.optimizers`: JAX's example optimizers, for programs that import
`jax.example_libraries.optimizers`.

An optimizer is a triple of functions (an `Optimizer` named tuple):

    opt_state = init_fun(params)                    # params: any pytree of arrays
    opt_state = update_fun(step, grads, opt_state)  # grads: a pytree like params
    params = get_params(opt_state)

The state is an `OptimizerState` pytree, so it passes through `jit`, `lax.scan` and
`fori_loop`. Each optimizer is written for one array and lifted to pytrees by the
`optimizer` decorator. The update formulas are JAX's, operation for operation, so a ported
training loop gives JAX's numbers (to rounding). Step sizes may be numbers or schedules
(functions of the step index): `exponential_decay`, `piecewise_constant`, ...

Unlike JAX's arrays, fxad's values are NumPy arrays, which `+=` changes in place: these
updates always build new arrays, so an old state is never modified.
"""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

from .. import numpy as fnp
from ..errors import FxadTypeError, FxadValueError
from ..tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
# One child, the per-leaf states' leaves; the structures are static node data.
register_pytree_node(OptimizerState,
                     lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
                     lambda defs, children: OptimizerState(children[0], *defs))

Array = Any
Params = Any  # a pytree of arrays
State = Any  # one array's optimizer state
Updates = Params  # gradients: a pytree like the parameters
InitFn = Callable[[Params], OptimizerState]
Step = int
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
Schedule = Callable[[Step], float]


class Optimizer(NamedTuple):
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _flatten_each(trees):
    """(tuple of leaf lists, tuple of treedefs) of a sequence of pytrees."""
    pairs = [tree_flatten(t) for t in trees]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def optimizer(opt_maker: Callable[..., Any]) -> Callable[..., Optimizer]:
    """Decorator: opt_maker(...) returns (init, update, get_params) for one array; the
    decorated maker returns an Optimizer whose functions take pytrees of arrays, applying
    those to each leaf. The state stores each leaf's state flattened, with the structures."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            states_flat, subtrees = _flatten_each([init(x0) for x0 in x0_flat])
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_tree_def = tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise FxadTypeError(f"optimizer update: the gradient's tree structure "
                                f"{grad_tree_def} differs from the parameters' {tree}, with "
                                "which the optimizer was initialized")
            if len(states_flat) != len(grad_flat):
                raise FxadTypeError(f"optimizer update: {len(grad_flat)} gradient leaves for "
                                f"{len(states_flat)} parameter states")
            states = [tree_unflatten(t, s) for t, s in zip(subtrees, states_flat)]
            new_flat, new_subtrees = _flatten_each(
                [update(i, g, s) for g, s in zip(grad_flat, states)])
            for old, new in zip(subtrees, new_subtrees):
                if new != old:
                    raise FxadTypeError(f"optimizer update: the update returned a state of "
                                    f"structure {new}, but it was given {old}")
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            return tree_unflatten(tree, [get_params(tree_unflatten(t, s))
                                         for t, s in zip(subtrees, states_flat)])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# --- optimizers (each for one array; `optimizer` lifts them to pytrees) ------------------------

def _params_first(state):
    return state[0]


def _inv_sqrt_or_zero(a):
    """1 / sqrt(a) where a > 0, else 0 (without dividing by zero where a is 0)."""
    positive = a > 0
    return fnp.where(positive, 1.0 / fnp.sqrt(fnp.where(positive, a, 1.0)), 0.0)


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x <- x - step_size(i) * g."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x
    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size: Schedule, mass: float):
    """Gradient descent with momentum: v <- mass * v + g; x <- x - step_size(i) * v."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return init, update, _params_first


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """Nesterov momentum: v <- mass * v + g; x <- x - step_size(i) * (mass * v + g)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity
    return init, update, _params_first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi, Hazan and Singer, JMLR 2011), with momentum on the scaled gradient:
    the gradient is divided by the root of the running sum of its squares."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + fnp.square(g)
        g_sq_inv_sqrt = _inv_sqrt_or_zero(g_sq)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return init, update, _params_first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: the gradient divided by the root of a decaying average of its squares."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / fnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return init, update, _params_first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the scaled step."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / fnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return init, update, _params_first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba, 2015): decaying averages of the gradient (b1) and of its
    square (b2), bias-corrected at step i + 1."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * fnp.square(g) + b2 * v
        m_hat = m / (1 - fnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - fnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (fnp.sqrt(v_hat) + eps), m, v
    return init, update, _params_first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm (a decaying maximum of |g|) for the scale."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = fnp.maximum(b2 * u, fnp.abs(g))
        rate = step_size(i) / (1 - fnp.asarray(b1, m.dtype) ** (i + 1))
        return x - rate * m / (u + eps), m, u
    return init, update, _params_first


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil, Gupta, Koren and Singer, 2019): Adagrad whose accumulator is covered by
    one vector per axis (memory linear in the sum of the dimensions, not their product)."""
    step_size = make_schedule(step_size)

    def along(ndim, v, axis):
        """v, a vector for `axis`, shaped to broadcast against an ndim-array (for a scalar
        parameter, ndim 0, it stays a vector of length 1, as the parameter's state does)."""
        shape = [1] * ndim
        shape[axis:axis + 1] = [-1]
        return fnp.reshape(v, tuple(shape))

    def init(x0):
        x_shape = x0.shape
        x0 = fnp.atleast_1d(x0)
        vs = [fnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, fnp.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        vs = [along(fnp.ndim(g), v, a) for a, v in enumerate(vs)]
        accum = functools.reduce(fnp.minimum, vs) + fnp.square(g)
        accum_inv_sqrt = _inv_sqrt_or_zero(accum)
        m = (1.0 - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        nd = fnp.ndim(x)
        vs = [fnp.max(accum, axis=tuple(a for a in range(nd) if a != j)) for j in range(nd)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return fnp.reshape(x, x_shape)
    return init, update, get_params


# --- step-size schedules -----------------------------------------------------------------------

def constant(step_size) -> Schedule:
    """The schedule that gives step_size at every step i."""
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """step_size * decay_rate ** (i / decay_steps)."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """step_size / (1 + decay_rate * i / decay_steps) (with `staircase`, i / decay_steps
    rounded down)."""
    def schedule(i):
        if staircase:
            return step_size / (1 + decay_rate * fnp.floor(i / decay_steps))
        return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From step_size to final_step_size in decay_steps steps along (1 - t) ** power."""
    def schedule(step_num):
        step_num = fnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any):
    """values[0] up to boundaries[0], values[k] for boundaries[k-1] < i <= boundaries[k],
    values[-1] after the last boundary."""
    boundaries, values = fnp.array(boundaries), fnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise FxadValueError("piecewise_constant: boundaries and values must be sequences")
    if boundaries.shape[0] != values.shape[0] - 1:
        raise FxadValueError("piecewise_constant: there must be one value more than boundaries")

    def schedule(i):
        return values[fnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule as is; a number as the constant schedule."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if fnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise FxadTypeError(f"a step size must be a number or a schedule (a function of the step), "
                    f"got {type(scalar_or_schedule).__name__}")


# --- utilities ---------------------------------------------------------------------------------

def l2_norm(tree):
    """The l2 norm of all the leaves of a pytree of arrays together."""
    leaves, _ = tree_flatten(tree)
    return fnp.sqrt(sum(fnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """The gradients scaled down so that their joint l2 norm is at most max_norm."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: fnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


# --- serialization -----------------------------------------------------------------------------

class JoinPoint:
    """Marks where an outer pytree (the parameters) holds an inner one (a leaf's state)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):  # iterable like a container, for serializers that walk containers
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An OptimizerState as a plain pytree: the parameters' structure, with a JoinPoint
    holding each leaf's state (for serializing)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_unflatten(t, s) for t, s in zip(subtree_defs, states_flat)]
    return tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
    """The inverse of unpack_optimizer_state."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise FxadTypeError("pack_optimizer_state: every leaf must be a JoinPoint (the output of "
                        "unpack_optimizer_state)")
    states_flat, subtree_defs = _flatten_each([s.subtree for s in sentinels])
    return OptimizerState(states_flat, tree_def, subtree_defs)


__all__ = ["Optimizer", "OptimizerState", "JoinPoint", "optimizer", "sgd", "momentum",
           "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3",
           "constant", "exponential_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "make_schedule", "l2_norm", "clip_grads",
           "unpack_optimizer_state", "pack_optimizer_state"]

"""A list (or tuple) of traced values is an array_like wherever fxad.numpy takes one, as a
list of numbers is: the function gives the same value and the same derivatives as on the
stacked array, in every mode (eager tape, staged linearize, jit, vmap). Also a plain list next
to a traced operand."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp

X = np.array([0.3, 0.5, 0.7])

# Functions of one array_like, called on [x0, x1, x2] (a list of traced 0-d values).
UNARY = {
    "sin": fnp.sin, "exp": fnp.exp, "tanh": fnp.tanh, "sqrt": fnp.sqrt, "square": fnp.square,
    "negative": fnp.negative, "real": fnp.real, "conj": fnp.conj, "abs": fnp.abs,
    "sign_times": lambda a: fnp.sign(a) * fnp.asarray(a), "cumsum": fnp.cumsum,
    "sort": fnp.sort, "flip": fnp.flip, "diff": fnp.diff, "ravel": fnp.ravel,
    "transpose": fnp.transpose, "atleast_2d": fnp.atleast_2d, "diag": fnp.diag,
    "vander": fnp.vander, "gradient": fnp.gradient, "trapezoid": fnp.trapezoid,
    "cov": lambda a: fnp.cov(fnp.stack([fnp.asarray(a), fnp.square(a)])),
    "where": lambda a: fnp.where(np.array([True, False, True]), a, 1.0),
    "append": lambda a: fnp.append(a, 4.0), "round_sum": lambda a: fnp.sum(a) + fnp.round(0.2),
    "linalg.norm": fnp.linalg.norm, "fft.rfft_abs": lambda a: fnp.abs(fnp.fft.rfft(a)),
    "mean": fnp.mean, "std": fnp.std,
}

# Binary functions: a list of traced values on one side, a plain list on the other.
OTHER = [0.4, 1.5, 2.0]
BINARY = {
    "add": fnp.add, "multiply": fnp.multiply, "power": fnp.power,
    "float_power": fnp.float_power, "arctan2": fnp.arctan2, "maximum": fnp.maximum,
    "dot": fnp.dot, "outer": fnp.outer, "cross": fnp.cross, "convolve": fnp.convolve,
}


def _as_list(x):
    return [x[0], x[1], x[2]]


def _total(out):
    return fnp.sum(fnp.asarray(out))


def _modes(f_list, f_arr):
    """(name, value computed through a list, value computed through the array) per mode."""
    grad_l, grad_a = fxad.grad(f_list), fxad.grad(f_arr)
    yield "value", f_list(X), f_arr(X)
    yield "grad (tape)", grad_l(X), grad_a(X)
    yield "jit(grad)", fxad.jit(grad_l)(X), grad_a(X)
    yield "jvp", fxad.jvp(f_list, (X,), (X[::-1],))[1], fxad.jvp(f_arr, (X,), (X[::-1],))[1]
    yield "linearize", fxad.linearize(f_list, X)[1](X[::-1]), \
        fxad.linearize(f_arr, X)[1](X[::-1])
    xs = np.stack([X, X + 0.1])
    yield "vmap(grad)", fxad.vmap(grad_l)(xs), fxad.vmap(grad_a)(xs)
    yield "hessian", fxad.hessian(f_list)(X), fxad.hessian(f_arr)(X)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_on_a_list_of_traced_values(name):
    f = UNARY[name]
    for mode, got, want in _modes(lambda x: _total(f(_as_list(x))), lambda x: _total(f(x))):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=mode)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("side", [0, 1])
def test_binary_with_lists(name, side):
    f = BINARY[name]

    def call(a, other):
        return f(a, other) if side == 0 else f(other, a)
    # a list of traced values next to a plain list; a traced array next to a plain list
    for a_list in (True, False):
        for mode, got, want in _modes(
                lambda x: _total(call(_as_list(x) if a_list else x, OTHER)),
                lambda x: _total(call(x, np.array(OTHER)))):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                       err_msg=f"{mode}, traced list: {a_list}")


def test_a_tuple_index_is_not_an_array():
    # lists are stacked only where an array is expected: an index tuple keeps its meaning
    def f(x):
        return x[(0, 1)] if x.ndim == 2 else x[0]
    m = np.arange(6.0).reshape(2, 3)
    assert fxad.grad(lambda m: f(m))(m)[0, 1] == 1.0


def test_a_ragged_list_still_fails_clearly():
    with pytest.raises((ValueError, fxad.errors.TracerArrayConversionError)):
        fxad.grad(lambda x: fnp.sum(fnp.sin([x[0], x[1:]])))(X)


# Functions whose list argument is a sequence of arrays, not one array.
TAKE_SEQUENCES = {"array", "asarray", "concatenate", "concat", "stack", "vstack", "hstack",
                  "dstack", "column_stack", "row_stack", "block", "einsum", "select",
                  "piecewise", "choose", "lexsort", "ix_", "meshgrid", "broadcast_arrays",
                  "multi_dot", "savez", "apply_along_axis", "apply_over_axes", "vectorize",
                  "frompyfunc", "fromfunction", "einsum_path", "histogramdd"}
# Helpers of fxad.numpy.linalg that scipy.linalg shares (not NumPy's names).
HELPERS = {"as_float", "hermitian_matrices", "identity_like", "normalize_axes", "safe_l2",
           "solve_operands", "stack_traced_lists"}


@pytest.mark.parametrize("space", ["numpy", "numpy.linalg", "numpy.fft"])
def test_every_python_function_stacks_lists_where_it_is_defined(space):
    """Each public function written in Python (and those of rules/ that read the dtype first)
    is decorated where it is defined (`@stack_traced_lists`), not rebound on import."""
    import types
    ns = {"numpy": fnp, "numpy.linalg": fnp.linalg, "numpy.fft": fnp.fft}[space]
    missing = [name for name, f in vars(ns).items()
               if not name.startswith("_") and name not in TAKE_SEQUENCES | HELPERS
               and isinstance(f, types.FunctionType)
               and (f.__module__.startswith("fxad.numpy")
                    or name in ("real", "imag", "conj", "conjugate", "sign", "angle"))
               and not getattr(f, "_stacks_lists", False)]
    assert not missing, missing

"""Errors a user reads: the class (catchable as fxad.errors.FxadError and as the built-in), and
a message naming what went wrong, where, and the fix."""
import inspect
import re

import numpy as np
import pytest

import fxad
import fxad.errors as E
import fxad.numpy as fnp


def _names_shape(msg, shape):
    """True if `msg` names `shape` in any of the usual spellings: (2, 3), [2,3], f64[2,3]."""
    spellings = {str(tuple(shape)), "[" + ",".join(map(str, shape)) + "]",
                 "[" + ", ".join(map(str, shape)) + "]"}
    return any(s in msg for s in spellings)


def _names_dtype(msg, dtype):
    short = {"float64": "f64", "float32": "f32", "int64": "i64", "int32": "i32"}
    name = np.dtype(dtype).name
    return name in msg or re.search(rf"\b{short.get(name, name)}\[", msg) is not None


# --- the hierarchy ----------------------------------------------------------------------------

def test_all_error_classes_derive_from_fxad_error():
    classes = [c for _, c in inspect.getmembers(E, inspect.isclass)
               if issubclass(c, BaseException) and c.__module__ == E.__name__]
    assert len(classes) >= 7
    for c in classes:
        assert issubclass(c, E.FxadError), c
    assert issubclass(E.FxadTypeError, TypeError)
    assert issubclass(E.FxadValueError, ValueError)
    assert issubclass(E.ConcretizationError, TypeError)
    assert issubclass(E.TracerArrayConversionError, TypeError)
    assert issubclass(E.RuleNotImplementedError, NotImplementedError)


# --- grad -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3,), (2, 3), (1,)])
def test_grad_of_non_scalar_output(shape):
    x = np.ones(shape)
    with pytest.raises(TypeError) as info:
        fxad.grad(lambda x: fnp.sin(x))(x)
    assert isinstance(info.value, E.FxadError)
    msg = str(info.value)
    assert _names_shape(msg, shape), msg
    assert "jacrev" in msg, msg


def test_value_and_grad_of_non_scalar_output():
    with pytest.raises(TypeError) as info:
        fxad.value_and_grad(lambda x: x * 2.0)(np.ones(4))
    assert isinstance(info.value, E.FxadError)
    assert _names_shape(str(info.value), (4,)) and "jacrev" in str(info.value)


@pytest.mark.parametrize("arg", [3, np.arange(3), np.array([1, 2], dtype=np.int32)])
def test_grad_with_integer_input(arg):
    with pytest.raises(TypeError) as info:
        fxad.grad(lambda x: fnp.sum(x * 1.0))(arg)
    assert isinstance(info.value, E.FxadError)
    msg = str(info.value)
    assert "dtype" in msg, msg
    assert _names_dtype(msg, np.asarray(arg).dtype), msg


def test_grad_with_integer_input_in_argnums_tuple():
    with pytest.raises(TypeError) as info:
        fxad.grad(lambda x, n: fnp.sum(x * n), argnums=(0, 1))(np.ones(2), np.arange(2))
    assert "dtype" in str(info.value) and "int" in str(info.value)


def test_grad_has_aux_without_pair():
    with pytest.raises(TypeError) as info:
        fxad.grad(lambda x: fnp.sin(x), has_aux=True)(1.0)
    assert isinstance(info.value, E.FxadError)


def test_grad_argnums_out_of_range():
    with pytest.raises(ValueError) as info:
        fxad.grad(lambda x: x, argnums=2)(1.0)
    assert isinstance(info.value, E.FxadError)
    assert "argnums" in str(info.value)


# --- jvp --------------------------------------------------------------------------------------

def test_jvp_tangent_wrong_shape():
    with pytest.raises(TypeError) as info:
        fxad.jvp(fnp.sin, (np.ones(3),), (np.ones(4),))
    assert isinstance(info.value, E.FxadError)
    msg = str(info.value)
    assert _names_shape(msg, (3,)) and _names_shape(msg, (4,)), msg


def test_jvp_tangent_wrong_rank():
    with pytest.raises(TypeError) as info:
        fxad.jvp(fnp.sin, (np.ones((2, 3)),), (np.ones(6),))
    msg = str(info.value)
    assert _names_shape(msg, (2, 3)) and _names_shape(msg, (6,)), msg


@pytest.mark.parametrize("tdtype", [np.float32, np.int64])
def test_jvp_tangent_wrong_dtype(tdtype):
    with pytest.raises(TypeError) as info:
        fxad.jvp(fnp.sin, (np.ones(3),), (np.ones(3, dtype=tdtype),))
    assert isinstance(info.value, E.FxadError)
    msg = str(info.value)
    assert _names_dtype(msg, np.float64) and _names_dtype(msg, tdtype), msg


def test_f_jvp_from_linearize_checks_tangent():
    _, f_jvp = fxad.linearize(fnp.sin, np.ones(3))
    with pytest.raises(TypeError) as info:
        f_jvp(np.ones(2))
    msg = str(info.value)
    assert _names_shape(msg, (3,)) and _names_shape(msg, (2,)), msg


@pytest.mark.parametrize("primals,tangents", [
    (np.ones(3), (np.ones(3),)),
    ((np.ones(3),), np.ones(3)),
    (1.0, 1.0),
    (np.ones(3), np.ones(3)),
])
def test_jvp_primals_not_a_tuple(primals, tangents):
    with pytest.raises(TypeError) as info:
        fxad.jvp(fnp.sin, primals, tangents)
    assert isinstance(info.value, E.FxadError)
    assert "tuple" in str(info.value)


def test_jvp_structure_mismatch():
    with pytest.raises(TypeError):
        fxad.jvp(lambda a, b: a * b, (1.0, 2.0), (1.0,))


def test_f_vjp_wrong_cotangent_shape():
    _, f_vjp = fxad.vjp(fnp.sin, np.ones(3))
    with pytest.raises(TypeError) as info:
        f_vjp(np.ones(5))
    msg = str(info.value)
    assert _names_shape(msg, (5,)) and _names_shape(msg, (3,)), msg


# --- escaped tracers --------------------------------------------------------------------------

def _leak(transform):
    """Run `transform` on a function that stores its traced input in a list; return it."""
    leaked = []

    def f(x):
        leaked.append(x)
        return fnp.sum(fnp.sin(x))
    x = np.array([0.5, 1.0])
    if transform == "grad":
        fxad.grad(f)(x)
    elif transform == "vjp":
        fxad.vjp(f, x)
    elif transform == "linearize":
        fxad.linearize(f, x)
    elif transform == "jvp":
        fxad.jvp(f, (x,), (np.ones(2),))
    elif transform == "vmap":
        fxad.vmap(f)(np.ones((3, 2)))
    elif transform == "make_jaxpr":
        fxad.make_jaxpr(f)(x)
    assert len(leaked) == 1 and isinstance(leaked[0], fxad.Tracer)
    return leaked


# what an error may call each transformation (grad is implemented by linearize)
TRANSFORM_NAMES = {
    "grad": ("grad", "vjp", "linearize"),
    "vjp": ("vjp", "linearize"),
    "linearize": ("linearize",),
    "jvp": ("jvp",),
    "vmap": ("vmap",),
    "make_jaxpr": ("make_jaxpr",),
}

USES = {
    "add": (lambda t: t + 1, "add"),
    "radd": (lambda t: 1.0 + t, "add"),
    "mul": (lambda t: t * np.ones(2), "mul"),
    "sin": (lambda t: fnp.sin(t), "sin"),
    "np.sin": (lambda t: np.sin(t), "sin"),
}


@pytest.mark.parametrize("transform", list(TRANSFORM_NAMES))
@pytest.mark.parametrize("use", list(USES))
def test_escaped_tracer(transform, use):
    leaked = _leak(transform)
    op, prim = USES[use]
    with pytest.raises(E.EscapedTracerError) as info:
        op(leaked[0])
    assert isinstance(info.value, E.FxadError)
    msg = str(info.value)
    assert any(f"'{n}'" in msg or re.search(rf"\b{n}\b", msg)
               for n in TRANSFORM_NAMES[transform]), msg
    assert re.search(rf"\b{prim}\b", msg), msg


@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap", "make_jaxpr"])
def test_escaped_tracer_used_inside_another_transformation(transform):
    leaked = _leak(transform)
    with pytest.raises(E.EscapedTracerError):
        fxad.grad(lambda y: fnp.sum(y * leaked[0]))(np.ones(2))
    with pytest.raises(E.EscapedTracerError):
        fxad.jvp(lambda y: y + leaked[0], (np.ones(2),), (np.ones(2),))


@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap", "make_jaxpr"])
def test_escaped_tracer_concretization(transform):
    leaked = _leak(transform)
    with pytest.raises(E.EscapedTracerError):
        bool(leaked[0])
    with pytest.raises(E.EscapedTracerError):
        leaked[0][0]


def test_tracer_leaked_from_inner_transformation_used_in_outer():
    leaked = []

    def outer(x):
        fxad.jvp(lambda y: (leaked.append(y), y * 2)[1], (x,), (x,))
        return leaked[0] + x
    with pytest.raises(E.EscapedTracerError) as info:
        fxad.grad(outer)(1.0)
    assert "jvp" in str(info.value) and "add" in str(info.value)
    leaked.clear()

    def outer2(x):
        fxad.vmap(lambda y: (leaked.append(y), y * x)[1])(np.ones(3))
        return fnp.sum(leaked[0] * x)
    with pytest.raises(E.EscapedTracerError) as info:
        fxad.grad(outer2)(1.0)
    assert "vmap" in str(info.value) and "mul" in str(info.value)


# --- concretization and conversions ---------------------------------------------------------

@pytest.mark.parametrize("conv", [float, int, complex])
def test_float_of_traced_float_inside_grad(conv):
    def f(x):
        return x * conv(x)
    with pytest.raises(E.FxadError) as info:
        fxad.grad(f)(1.5)
    assert isinstance(info.value, TypeError)
    assert "stop_gradient" in str(info.value) or "trace" in str(info.value)


def test_float_of_traced_value_inside_make_jaxpr():
    with pytest.raises(E.ConcretizationError):
        fxad.make_jaxpr(lambda x: x * float(x))(1.5)


@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap", "make_jaxpr"])
@pytest.mark.parametrize("convert", ["asarray", "array", "np.sum-of-list"])
def test_np_asarray_of_tracer(transform, convert):
    def f(x):
        if convert == "asarray":
            a = np.asarray(x)
        elif convert == "array":
            a = np.array(x)
        else:
            a = np.asarray([x[0], x[1]])
        return fnp.sum(a)
    x = np.array([0.5, 2.0])
    with pytest.raises(E.TracerArrayConversionError) as info:
        if transform == "grad":
            fxad.grad(f)(x)
        elif transform == "jvp":
            fxad.jvp(f, (x,), (x,))
        elif transform == "vmap":
            fxad.vmap(f)(np.stack([x, x]))
        else:
            fxad.make_jaxpr(f)(x)
    assert isinstance(info.value, TypeError)
    assert "fxad.numpy" in str(info.value)


@pytest.mark.parametrize("transform", ["grad", "vmap", "make_jaxpr"])
def test_setitem_on_tracer_mentions_at(transform):
    def f(x):
        x[0] = 1.0
        return fnp.sum(x)
    x = np.array([0.5, 2.0])
    with pytest.raises(E.FxadError) as info:
        if transform == "grad":
            fxad.grad(f)(x)
        elif transform == "vmap":
            fxad.vmap(f)(np.stack([x, x]))
        else:
            fxad.make_jaxpr(f)(x)
    assert isinstance(info.value, TypeError)
    assert ".at" in str(info.value), str(info.value)


def test_setitem_error_suggestion_x_at_works():
    """The error above tells the user to write x.at[idx].set(v); that must then work."""
    c = np.array([2.0, 3.0, 5.0])

    def f(x):
        return fnp.sum(x.at[0].set(1.0) * c)
    x = np.array([0.5, 2.0, -1.0])
    np.testing.assert_allclose(fxad.jvp(f, (x,), (np.ones(3),))[0], 2.0 + 3.0 * 2.0 - 5.0)
    np.testing.assert_allclose(fxad.grad(f)(x), [0.0, 3.0, 5.0])

    def g(x):
        return fnp.sum(x.at[1].add(x[0]) ** 2)  # y = (x0, x1 + x0, x2)
    np.testing.assert_allclose(
        fxad.grad(g)(x), [2 * x[0] + 2 * (x[1] + x[0]), 2 * (x[1] + x[0]), 2 * x[2]])


def _python_if(x):
    if x > 0:
        return fnp.sin(x)
    return fnp.cos(x)


def _python_while(x):
    while x < 10:
        x = x * 2
    return x


def _python_and(x):
    return (x > 0 and x < 1) * x


@pytest.mark.parametrize("f", [_python_if, _python_while, _python_and],
                         ids=["if", "while", "and"])
def test_python_control_flow_under_make_jaxpr(f):
    with pytest.raises(E.ConcretizationError) as info:
        fxad.make_jaxpr(f)(0.5)
    assert isinstance(info.value, TypeError) and isinstance(info.value, E.FxadError)
    msg = str(info.value)
    assert "where" in msg or "cond" in msg, msg
    assert "make_jaxpr" in msg, msg


@pytest.mark.parametrize("f", [_python_if, _python_while], ids=["if", "while"])
def test_python_control_flow_under_vmap(f):
    with pytest.raises(E.ConcretizationError) as info:
        fxad.vmap(f)(np.array([0.5, -0.5]))
    msg = str(info.value)
    assert "where" in msg or "cond" in msg, msg
    assert "vmap" in msg, msg


def test_concretization_error_suggestions_exist_and_where_works():
    """Every fxad.lax.* / fxad.numpy.* function the message recommends must exist, and the
    fnp.where rewrite of the `if` must stage and batch."""
    with pytest.raises(E.ConcretizationError) as info:
        fxad.make_jaxpr(_python_if)(0.5)
    msg = str(info.value)
    import importlib
    for mod, name in re.findall(r"\b(fxad\.(?:lax|numpy))\.(\w+)", msg):
        assert hasattr(importlib.import_module(mod), name), f"{mod}.{name} suggested in: {msg}"

    def fixed(x):
        return fnp.where(x > 0, fnp.sin(x), fnp.cos(x))
    names = [e.primitive.name for e in fxad.make_jaxpr(fixed)(0.5).jaxpr.eqns]
    assert "sin" in names and "cos" in names
    xs = np.array([0.5, -0.5])
    np.testing.assert_allclose(fxad.vmap(fixed)(xs), np.where(xs > 0, np.sin(xs), np.cos(xs)))


def test_python_if_under_make_jaxpr_of_grad():
    with pytest.raises(E.ConcretizationError):
        fxad.make_jaxpr(fxad.grad(_python_if))(0.5)


def test_python_if_under_grad_is_fine_but_not_under_grad_of_vmap():
    assert np.isclose(fxad.grad(_python_if)(0.5), np.cos(0.5))
    with pytest.raises(E.ConcretizationError):
        fxad.grad(lambda x: fnp.sum(fxad.vmap(_python_if)(x)))(np.array([0.5, 1.0]))


# --- vmap -------------------------------------------------------------------------------------

def test_vmap_inconsistent_axis_sizes():
    with pytest.raises(ValueError) as info:
        fxad.vmap(lambda a, b: a + b)(np.ones(3), np.ones(5))
    assert isinstance(info.value, E.FxadError)
    msg = str(info.value)
    assert re.search(r"\b3\b", msg) and re.search(r"\b5\b", msg), msg


def test_vmap_inconsistent_axis_sizes_with_in_axes():
    with pytest.raises(ValueError) as info:
        fxad.vmap(lambda a, b: a @ b, in_axes=(0, 1))(np.ones((4, 2)), np.ones((2, 7)))
    msg = str(info.value)
    assert re.search(r"\b4\b", msg) and re.search(r"\b7\b", msg), msg


def test_vmap_in_axes_out_of_range():
    with pytest.raises(ValueError) as info:
        fxad.vmap(fnp.sin, in_axes=2)(np.ones((2, 3)))
    assert isinstance(info.value, E.FxadError)


def test_vmap_without_mapped_input():
    with pytest.raises(ValueError) as info:
        fxad.vmap(fnp.sin, in_axes=None)(np.ones(3))
    assert isinstance(info.value, E.FxadError)


# --- arguments fxad cannot use ---------------------------------------------------------------

def test_non_array_argument():
    with pytest.raises(TypeError) as info:
        fxad.grad(lambda x: 1.0)(object())
    assert isinstance(info.value, E.FxadError)

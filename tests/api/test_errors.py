"""Errors a user reads: the class (catchable as fxad.errors.FxadError and as the built-in), and
a message naming what went wrong, where, and the fix."""
import inspect
import re

import numpy as np
import pytest

import fxad
import fxad.errors as E
import fxad.numpy as fnp
import fxad.scipy.linalg as fsl


def _names_shape(msg, shape):
    """True if `msg` names `shape` in any of the usual spellings: (2, 3), [2,3], f64[2,3]."""
    spellings = {str(tuple(shape)), "[" + ",".join(map(str, shape)) + "]",
                 "[" + ", ".join(map(str, shape)) + "]"}
    return any(s in msg for s in spellings)


def _names_dtype(msg, dtype):
    short = {"float64": "f64", "float32": "f32", "int64": "i64", "int32": "i32",
             "complex128": "c128", "complex64": "c64"}
    name = np.dtype(dtype).name
    return name in msg or re.search(rf"\b{short.get(name, name)}\[", msg) is not None


# --- the hierarchy ----------------------------------------------------------------------------

def test_all_error_classes_derive_from_fxad_error():
    classes = [c for _, c in inspect.getmembers(E, inspect.isclass)
               if issubclass(c, BaseException) and not issubclass(c, Warning)
               and c.__module__ == E.__name__]
    assert len(classes) >= 7
    assert issubclass(E.CompilationWarning, UserWarning)  # (a warning, not an error)
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
    assert "jacrev" in msg and "sum" in msg, msg


def test_value_and_grad_of_non_scalar_output():
    with pytest.raises(TypeError) as info:
        fxad.value_and_grad(lambda x: x * 2.0)(np.ones(4))
    assert isinstance(info.value, E.FxadError)
    assert _names_shape(str(info.value), (4,)) and "jacrev" in str(info.value)


@pytest.mark.parametrize("arg", [3, np.arange(3), np.array([1, 2], dtype=np.int32), True,
                                 np.array([True, False])],
                         ids=["int", "int64[3]", "int32[2]", "bool", "bool[2]"])
def test_grad_with_integer_or_boolean_input(arg):
    with pytest.raises(TypeError) as info:
        fxad.grad(lambda x: fnp.sum(x * 1.0))(arg)
    assert isinstance(info.value, E.FxadTypeError)
    msg = str(info.value)
    assert "dtype" in msg and "floating-point" in msg, msg
    assert _names_dtype(msg, np.asarray(arg).dtype), msg
    assert "astype(float)" in msg, msg  # the fix


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev", "hessian"])
@pytest.mark.parametrize("arg", [np.arange(3), np.array([True, False])], ids=["int", "bool"])
def test_jacobians_with_integer_or_boolean_input(jac, arg):
    """Like grad (they returned a zero Jacobian of integer dtype)."""
    with pytest.raises(TypeError) as info:
        getattr(fxad, jac)(lambda x: fnp.sum(x * 2.0) * x)(arg)
    msg = str(info.value)
    assert isinstance(info.value, E.FxadTypeError)
    assert "floating-point" in msg and _names_dtype(msg, arg.dtype), msg
    assert "astype(float)" in msg, msg  # the fix


def test_grad_with_integer_input_in_argnums_tuple():
    with pytest.raises(TypeError) as info:
        fxad.grad(lambda x, n: fnp.sum(x * n), argnums=(0, 1))(np.ones(2), np.arange(2))
    assert "dtype" in str(info.value) and "int" in str(info.value)


@pytest.mark.parametrize("transform", ["grad", "value_and_grad"])
def test_grad_of_complex_output_needs_holomorphic(transform):
    f = lambda z: z * z  # noqa: E731
    t = getattr(fxad, transform)
    for arg in (1.5, 1.0 + 2.0j):  # a real input with a complex output, and a complex one
        with pytest.raises(TypeError) as info:
            t(lambda x: f(x) * (1 + 0j))(arg)
        assert isinstance(info.value, E.FxadTypeError)
        msg = str(info.value)
        assert "complex" in msg and "holomorphic=True" in msg and ".real" in msg, msg
    # the fix the message names works: d(z²)/dz = 2z
    g = fxad.grad(f, holomorphic=True)(1.0 + 2.0j)
    assert g == 2.0 + 4.0j
    # and holomorphic=True with a real input is refused, naming the fix
    with pytest.raises(TypeError, match=r"holomorphic=True\) needs complex inputs[\s\S]*"
                       r"float64[\s\S]*astype\(complex\)"):
        fxad.grad(f, holomorphic=True)(1.5)


def test_grad_has_aux_without_pair():
    with pytest.raises(TypeError) as info:
        fxad.grad(lambda x: fnp.sin(x), has_aux=True)(1.0)
    assert isinstance(info.value, E.FxadError)


ARGNUM_TRANSFORMS = {
    "grad": lambda f, a: fxad.grad(f, argnums=a),
    "value_and_grad": lambda f, a: fxad.value_and_grad(f, argnums=a),
    "jacfwd": lambda f, a: fxad.jacfwd(f, argnums=a),
    "jacrev": lambda f, a: fxad.jacrev(f, argnums=a),
    "hessian": lambda f, a: fxad.hessian(f, argnums=a),
}


@pytest.mark.parametrize("name", list(ARGNUM_TRANSFORMS))
@pytest.mark.parametrize("argnums", [2, -3, (0, 2)])
def test_argnums_out_of_range(name, argnums):
    with pytest.raises(ValueError) as info:
        ARGNUM_TRANSFORMS[name](lambda x, y: x * y, argnums)(1.0, 2.0)
    assert isinstance(info.value, E.FxadValueError)
    msg = str(info.value)
    assert msg.startswith(name + ":") and "argnums" in msg and "out of range" in msg, msg
    assert "2 positional arguments" in msg, msg


@pytest.mark.parametrize("name", list(ARGNUM_TRANSFORMS))
@pytest.mark.parametrize("argnums", [1.0, "0", None, True, (), (0, "1")],
                         ids=["float", "str", "None", "bool", "empty", "str-in-tuple"])
def test_argnums_of_the_wrong_type(name, argnums):
    with pytest.raises(TypeError) as info:
        ARGNUM_TRANSFORMS[name](lambda x, y: x * y, argnums)(1.0, 2.0)
    assert isinstance(info.value, E.FxadTypeError)
    msg = str(info.value)
    assert msg.startswith(name + ":") and "argnums must be an int" in msg, msg
    assert repr(argnums) in msg, msg


@pytest.mark.parametrize("name", list(ARGNUM_TRANSFORMS))
def test_argnums_naming_an_argument_twice(name):
    """(0, 0) used to give a zero first derivative: the second copy shadowed the first."""
    for argnums in [(0, 0), (1, -1)]:
        with pytest.raises(ValueError) as info:
            ARGNUM_TRANSFORMS[name](lambda x, y: x * y, argnums)(1.0, 2.0)
        assert isinstance(info.value, E.FxadValueError)
        assert "twice" in str(info.value) and repr(argnums) in str(info.value)


# --- jvp --------------------------------------------------------------------------------------

def test_jvp_tangent_wrong_shape():
    with pytest.raises(TypeError) as info:
        fxad.jvp(fnp.sin, (np.ones(3),), (np.ones(4),))
    assert isinstance(info.value, E.FxadTypeError)
    msg = str(info.value)
    assert _names_shape(msg, (3,)) and _names_shape(msg, (4,)), msg
    assert "tangent 0" in msg and "must have the primal's shape and dtype" in msg, msg


def test_jvp_names_which_tangent_is_wrong():
    with pytest.raises(TypeError, match=r"tangent 2 has f64\[2\] but its primal has f64\[3\]"):
        fxad.jvp(lambda a, b: a * b[0], (1.0, (2.0, np.ones(3))), (1.0, (1.0, np.ones(2))))


def test_jvp_tangent_wrong_rank():
    with pytest.raises(TypeError) as info:
        fxad.jvp(fnp.sin, (np.ones((2, 3)),), (np.ones(6),))
    msg = str(info.value)
    assert _names_shape(msg, (2, 3)) and _names_shape(msg, (6,)), msg


@pytest.mark.parametrize("tdtype", [np.float32, np.int64])
def test_jvp_tangent_wrong_dtype(tdtype):
    with pytest.raises(TypeError) as info:
        fxad.jvp(fnp.sin, (np.ones(3),), (np.ones(3, dtype=tdtype),))
    assert isinstance(info.value, E.FxadTypeError)
    msg = str(info.value)
    assert _names_dtype(msg, np.float64) and _names_dtype(msg, tdtype), msg
    assert "must have the primal's shape and dtype" in msg, msg


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


# --- vjp: the cotangent must look like the output ---------------------------------------------

def test_f_vjp_wrong_cotangent_shape():
    _, f_vjp = fxad.vjp(fnp.sin, np.ones(3))
    with pytest.raises(TypeError) as info:
        f_vjp(np.ones(5))
    assert isinstance(info.value, E.FxadTypeError)
    msg = str(info.value)
    assert _names_shape(msg, (5,)) and _names_shape(msg, (3,)), msg
    assert "must have the output's shape and dtype" in msg, msg


@pytest.mark.parametrize("ct_dtype", [np.int64, np.bool_, np.float32, np.complex128])
def test_f_vjp_wrong_cotangent_dtype(ct_dtype):
    """An integer, lower-precision or complex cotangent of a float64 output used to be
    accepted silently (the complex one losing its imaginary part)."""
    _, f_vjp = fxad.vjp(fnp.sin, np.ones(3))
    with pytest.raises(TypeError) as info:
        f_vjp(np.ones(3, dtype=ct_dtype))
    assert isinstance(info.value, E.FxadTypeError)
    msg = str(info.value)
    assert _names_dtype(msg, ct_dtype) and _names_dtype(msg, np.float64), msg
    assert "cotangent 0" in msg, msg


def test_f_vjp_wrong_cotangent_structure():
    _, f_vjp = fxad.vjp(lambda x: (fnp.sin(x), {"a": x}), np.ones(3))
    with pytest.raises(TypeError) as info:
        f_vjp((np.ones(3), np.ones(3)))
    assert isinstance(info.value, E.FxadTypeError)
    assert "structure" in str(info.value) and "'a'" in str(info.value)
    # the second leaf is the one with the wrong shape: the message says which
    with pytest.raises(TypeError, match=r"cotangent 1 has f64\[2\]"):
        f_vjp((np.ones(3), {"a": np.ones(2)}))


def test_f_vjp_accepts_python_numbers_and_exact_dtypes():
    """The check is not stricter than it needs to be: a Python number stands in for a 0-d
    cotangent of a float output (as grad's own 1.0 does)."""
    _, f_vjp = fxad.vjp(lambda x: fnp.sum(fnp.sin(x)), np.ones(3, np.float32))
    assert f_vjp(1.0)[0].dtype == np.float32
    assert f_vjp(np.float32(2.0))[0].dtype == np.float32
    _, f_vjp = fxad.vjp(lambda z: z * z, 1.0 + 1.0j)
    np.testing.assert_allclose(f_vjp(1)[0], 2 * (1.0 + 1.0j))  # JAX: ct · f'(z), no conj
    with pytest.raises(TypeError):  # a bool is not a number here
        fxad.vjp(lambda x: fnp.sum(x), np.ones(2))[1](True)


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
    elif transform == "jit":
        fxad.jit(f)(x)
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
    "jit": ("jit",),
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


@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap", "make_jaxpr", "jit"])
def test_escaped_tracer_used_inside_another_transformation(transform):
    leaked = _leak(transform)
    with pytest.raises(E.EscapedTracerError):
        fxad.grad(lambda y: fnp.sum(y * leaked[0]))(np.ones(2))
    with pytest.raises(E.EscapedTracerError):
        fxad.jvp(lambda y: y + leaked[0], (np.ones(2),), (np.ones(2),))


@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap", "make_jaxpr", "jit"])
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


@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap", "make_jaxpr", "jit"])
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
        elif transform == "jit":
            fxad.jit(f)(x)
        else:
            fxad.make_jaxpr(f)(x)
    assert isinstance(info.value, TypeError)
    msg = str(info.value)
    assert "fxad.numpy" in msg, msg
    assert any(f"under '{n}'" in msg for n in TRANSFORM_NAMES[transform]), msg


@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap", "make_jaxpr", "jit"])
def test_setitem_on_tracer_mentions_at(transform):
    def f(x):
        x[0] = 1.0
        return fnp.sum(x)
    x = np.array([0.5, 2.0])
    with pytest.raises(E.FxadError) as info:
        if transform == "grad":
            fxad.grad(f)(x)
        elif transform == "jvp":
            fxad.jvp(f, (x,), (x,))
        elif transform == "vmap":
            fxad.vmap(f)(np.stack([x, x]))
        elif transform == "jit":
            fxad.jit(f)(x)
        else:
            fxad.make_jaxpr(f)(x)
    assert isinstance(info.value, TypeError)
    msg = str(info.value)
    assert "x[idx] = v" in msg and "x.at[idx].set(v)" in msg, msg


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


# (Python code on a traced value, argument dtype); each must raise ConcretizationError
CONCRETIZE = {
    "if": (_python_if, np.float64),
    "while": (_python_while, np.float64),
    "and": (_python_and, np.float64),
    "bool()": (lambda x: x * bool(x), np.float64),
    "int()-of-int": (lambda x: x * int(x), np.int64),
    "range(int)": (lambda n: sum(range(n)) * n, np.int64),
    "int()-of-float": (lambda x: x * int(x), np.float64),
    "float()": (lambda x: x * float(x), np.float64),
}


@pytest.mark.parametrize("transform", ["jit", "vmap"])
@pytest.mark.parametrize("case", list(CONCRETIZE))
def test_python_control_flow_and_conversions_under_jit_and_vmap(transform, case):
    """float()/int() of a traced float used to say it 'would drop its derivative' and to
    suggest stop_gradient here, which does not help under jit or vmap."""
    f, dtype = CONCRETIZE[case]
    x = np.array([2, 3], dtype=dtype)
    with pytest.raises(E.ConcretizationError) as info:
        if transform == "jit":
            fxad.jit(f)(x[0])
        else:
            fxad.vmap(f)(x)
    assert isinstance(info.value, TypeError) and isinstance(info.value, E.FxadError)
    msg = str(info.value)
    assert f"'{transform}'" in msg, msg  # where
    assert "concrete" in msg, msg  # what
    assert "fxad.numpy.where" in msg and "static_argnums" in msg, msg  # the fixes


def test_static_argnums_fix_named_by_the_jit_error_works():
    f = fxad.jit(lambda x, n: x * sum(range(n)), static_argnums=1)
    assert f(2.0, 4) == 12.0
    assert f(2.0, 5) == 20.0


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
    assert isinstance(info.value, E.FxadValueError)
    msg = str(info.value)
    assert re.search(r"\bsize 3\b", msg) and re.search(r"\bsize 5\b", msg), msg
    assert "in_axes=None" in msg, msg  # the fix for an argument that is not batched


def test_vmap_inconsistent_axis_sizes_with_in_axes():
    with pytest.raises(ValueError) as info:
        fxad.vmap(lambda a, b: a @ b, in_axes=(0, 1))(np.ones((4, 2)), np.ones((2, 7)))
    assert isinstance(info.value, E.FxadValueError)
    msg = str(info.value)
    assert re.search(r"\bsize 4\b", msg) and re.search(r"\bsize 7\b", msg), msg
    assert "leaf 0 (axis 0)" in msg and "leaf 1 (axis 1)" in msg, msg


def test_vmap_axis_size_disagrees_with_inputs():
    with pytest.raises(ValueError) as info:
        fxad.vmap(fnp.sin, axis_size=4)(np.ones(3))
    assert isinstance(info.value, E.FxadValueError)
    assert "axis_size=4" in str(info.value) and "size 3" in str(info.value)


# (in_axes, arguments, what the message must contain)
BAD_IN_AXES = {
    "out-of-range": (2, (np.ones((2, 3)),), ["2", "2 dimensions", "valid: -2 to 1"]),
    "negative-out-of-range": (-3, (np.ones((2, 3)),), ["-3", "out of range"]),
    "float": (0.5, (np.ones(3),), ["ints or None", "0.5"]),
    "str": ("0", (np.ones(3),), ["ints or None", "'0'"]),
    "too-few": ((0,), (np.ones(3), np.ones(3)), ["1 entries", "2 arguments"]),
    "too-many": ([0, 0, None], (np.ones(3), np.ones(3)), ["3 entries", "2 arguments"]),
    "wrong-structure": (({"a": 0},), ((np.ones(3),),), ["does not match the structure",
                                                         "pytree prefix"]),
    "wrong-keys": (({"a": 0, "c": None},), ({"a": np.ones(3), "b": np.ones(3)},),
                   ["does not match the structure", "'c'"]),
}


@pytest.mark.parametrize("case", list(BAD_IN_AXES))
def test_vmap_bad_in_axes(case):
    in_axes, args, needles = BAD_IN_AXES[case]
    with pytest.raises(ValueError) as info:
        fxad.vmap(lambda *a: a, in_axes=in_axes)(*args)
    assert isinstance(info.value, E.FxadValueError)
    msg = str(info.value)
    assert "in_axes" in msg, msg
    for n in needles:
        assert n in msg, (n, msg)


@pytest.mark.parametrize("out_axes,needle", [(2, "out of range"), (1.0, "ints or None"),
                                             ((0, 0), "does not match the structure")])
def test_vmap_bad_out_axes(out_axes, needle):
    with pytest.raises(ValueError) as info:
        fxad.vmap(fnp.sin, out_axes=out_axes)(np.ones((3, 2)))
    assert isinstance(info.value, E.FxadValueError)
    assert "out_axes" in str(info.value) and needle in str(info.value), str(info.value)


def test_vmap_without_mapped_input():
    with pytest.raises(ValueError) as info:
        fxad.vmap(fnp.sin, in_axes=None)(np.ones(3))
    assert isinstance(info.value, E.FxadError)


# --- arguments fxad cannot use ---------------------------------------------------------------

def test_non_array_argument():
    with pytest.raises(TypeError) as info:
        fxad.grad(lambda x: 1.0)(object())
    assert isinstance(info.value, E.FxadError)


# --- custom rules returning the wrong thing ---------------------------------------------------
# Every message names the custom function (the user may have many) and what was expected.

XC = np.array([0.5, 1.0, 2.0])


def _custom_jvp_fn(rule):
    @fxad.custom_jvp
    def my_custom_sin(x):
        return fnp.sin(x)
    my_custom_sin.defjvp(rule)
    return my_custom_sin


def _sin_rule(primal=None, tangent=None):
    def rule(primals, tangents):
        (x,), (t,) = primals, tangents
        y, ty = fnp.sin(x), fnp.cos(x) * t
        return (primal(y) if primal else y), (tangent(ty) if tangent else ty)
    return rule


# (rule, what the message must contain besides the function's name)
BAD_JVP_RULES = {
    "not-a-pair": (lambda p, t: fnp.sin(p[0]), ["must return a pair"]),
    "tangent-structure": (_sin_rule(tangent=lambda t: (t,)), ["tangent_out", "structure"]),
    "tangent-shape": (_sin_rule(tangent=lambda t: t[:2]), ["tangent_out", "(2,)", "(3,)"]),
    "tangent-dtype-f32": (_sin_rule(tangent=lambda t: t.astype(np.float32)),
                          ["tangent_out", "float32", "float64"]),
    "tangent-dtype-complex": (_sin_rule(tangent=lambda t: t * 1j),
                              ["tangent_out", "complex128", "float64"]),
    "tangent-dtype-int": (lambda p, t: (fnp.sin(p[0]), np.ones(3, int)),
                          ["tangent_out", "int64", "float64"]),
    "primal-structure": (_sin_rule(primal=lambda y: (y,), tangent=lambda t: (t,)),
                         ["primal output", "structure", "itself returns"]),
    "primal-shape": (_sin_rule(primal=lambda y: y[:2], tangent=lambda t: t[:2]),
                     ["primal output", "(2,)", "itself returns (3,)"]),
    "primal-dtype": (_sin_rule(primal=lambda y: y.astype(np.float32),
                               tangent=lambda t: t.astype(np.float32)),
                     ["primal output", "float32", "itself returns float64"]),
}


@pytest.mark.parametrize("transform", ["jvp", "grad", "jacfwd"])
@pytest.mark.parametrize("case", list(BAD_JVP_RULES))
def test_custom_jvp_rule_returning_the_wrong_thing(case, transform):
    """The primal/dtype cases used to pass silently: e.g. a rule returning y[:2] made grad
    return [1, 1, 0], a complex tangent made grad return 0."""
    rule, needles = BAD_JVP_RULES[case]
    f = _custom_jvp_fn(rule)
    with pytest.raises(TypeError) as info:
        if transform == "jvp":
            fxad.jvp(f, (XC,), (np.ones(3),))
        elif transform == "grad":
            fxad.grad(lambda x: fnp.sum(fnp.ravel(fnp.asarray(f(x)))))(XC)
        else:
            fxad.jacfwd(f)(XC)
    assert isinstance(info.value, E.FxadTypeError)
    msg = str(info.value)
    assert "'my_custom_sin'" in msg, msg
    for n in needles:
        assert n in msg, (n, msg)


def test_custom_jvp_checks_do_not_reject_good_rules():
    """Python-number tangents, rules for functions that cannot be staged (opaque NumPy:
    nothing to compare the primal output with), and float32 all still work."""
    @fxad.custom_jvp
    def opaque(x):
        return np.float64(np.sin(np.asarray(x)))  # NumPy only: custom_jvp makes it usable
    opaque.defjvp(lambda p, t: (opaque(p[0]), np.cos(p[0]) * t[0]))
    assert np.isclose(fxad.grad(opaque)(0.3), np.cos(0.3))
    f = _custom_jvp_fn(_sin_rule())
    x32 = XC.astype(np.float32)
    assert fxad.jvp(f, (x32,), (np.ones(3, np.float32),))[1].dtype == np.float32

    @fxad.custom_jvp
    def scalar_fn(x):
        return x * 2.0
    scalar_fn.defjvp(lambda p, t: (p[0] * 2.0, 2.0))  # a Python number as the tangent
    assert fxad.jvp(scalar_fn, (1.0,), (1.0,))[1] == 2.0


def _custom_vjp_fn(fwd, bwd):
    @fxad.custom_vjp
    def my_custom_cube(x):
        return x ** 3
    my_custom_cube.defvjp(fwd, bwd)
    return my_custom_cube


def _fwd(x):
    return x ** 3, x


def _bwd(x, ct):
    return (3 * x ** 2 * ct,)


BAD_VJP_RULES = {
    "fwd-not-a-pair": (lambda x: x ** 3, _bwd, ["fwd", "must return a pair"]),
    "fwd-out-structure": (lambda x: ((x ** 3,), x), _bwd, ["fwd's primal output",
                                                           "structure", "itself returns"]),
    "fwd-out-shape": (lambda x: (x[:2] ** 3, x), _bwd, ["fwd's primal output", "(2,)",
                                                        "itself returns (3,)"]),
    "fwd-out-dtype": (lambda x: ((x ** 3).astype(np.float32), x), _bwd,
                      ["fwd's primal output", "float32", "itself returns float64"]),
    "bwd-not-a-tuple": (_fwd, lambda x, ct: 3 * x ** 2 * ct, ["bwd", "tuple", "(1)"]),
    "bwd-too-many": (_fwd, lambda x, ct: (ct, ct), ["bwd", "(1)", "got 2"]),
    "bwd-structure": (_fwd, lambda x, ct: ((ct,),), ["bwd", "structure", "expected"]),
    "bwd-shape": (_fwd, lambda x, ct: (ct[:2],), ["bwd", "(2,)", "(3,)"]),
    "bwd-dtype-int": (_fwd, lambda x, ct: (np.ones(3, int),), ["bwd", "int64", "float64"]),
    "bwd-dtype-bool": (_fwd, lambda x, ct: (np.ones(3, bool),), ["bwd", "bool", "float64"]),
    "bwd-dtype-complex": (_fwd, lambda x, ct: (ct * 1j,), ["bwd", "complex128", "float64"]),
}


@pytest.mark.parametrize("case", list(BAD_VJP_RULES))
def test_custom_vjp_rule_returning_the_wrong_thing(case):
    """fwd's output used to be unchecked (wrong shapes surfaced as a confusing bwd error,
    wrong structure or dtype not at all); int/bool cotangents from bwd were cast."""
    fwd, bwd, needles = BAD_VJP_RULES[case]
    f = _custom_vjp_fn(fwd, bwd)
    with pytest.raises(TypeError) as info:
        fxad.grad(lambda x: fnp.sum(fnp.ravel(fnp.asarray(f(x)))))(XC)
    assert isinstance(info.value, E.FxadTypeError)
    msg = str(info.value)
    assert "'my_custom_cube'" in msg, msg
    for n in needles:
        assert n in msg, (n, msg)
    if case.startswith("fwd-out"):  # forward mode runs fwd too, and checks it the same way
        with pytest.raises(TypeError, match="my_custom_cube"):
            fxad.jvp(f, (XC,), (np.ones(3),))


def test_custom_vjp_checks_do_not_reject_good_rules():
    f = _custom_vjp_fn(_fwd, _bwd)
    np.testing.assert_allclose(fxad.grad(lambda x: fnp.sum(f(x)))(XC), 3 * XC ** 2)
    # a float32 cotangent for a float64 argument is cast (documented leniency), not refused
    g = _custom_vjp_fn(_fwd, lambda x, ct: ((3 * x ** 2 * ct).astype(np.float32),))
    np.testing.assert_allclose(fxad.grad(lambda x: fnp.sum(g(x)))(XC), 3 * XC ** 2, rtol=1e-6)


# --- jit --------------------------------------------------------------------------------------

@pytest.mark.parametrize("static", [[1, 2], {"a": 1}, np.arange(2)], ids=["list", "dict", "array"])
def test_jit_unhashable_static_argument(static):
    f = fxad.jit(lambda x, s: x * 2.0, static_argnums=1)
    with pytest.raises(TypeError) as info:
        f(1.0, static)
    assert isinstance(info.value, E.FxadTypeError)
    msg = str(info.value)
    assert "static argument 1" in msg and type(static).__name__ in msg, msg
    assert "not hashable" in msg and "tuple" in msg, msg  # what, and the fix
    assert f(1.0, (1, 2)) == 2.0  # the fix works


def test_jit_unhashable_static_argname():
    f = fxad.jit(lambda x, opts=None: x * 2.0, static_argnames="opts")
    with pytest.raises(TypeError) as info:
        f(1.0, opts=[1])
    assert isinstance(info.value, E.FxadTypeError)
    assert "opts" in str(info.value) and "not hashable" in str(info.value)


# --- missing rules: one uniform message -------------------------------------------------------

def _test_primitive(name, linear=False, jvp=False, shape=True):
    """A primitive local to this test (invisible to the rule-matrix tests): impl always,
    the other rules as asked."""
    from fxad.core import Primitive
    p = Primitive(name)
    p.def_impl(lambda x: x * 2.0)
    if shape:
        p.def_abstract_eval(lambda a: a)
    if jvp:
        p.jvp = lambda primals, tangents: (p.bind(*primals), p.bind(*tangents))
    p.linear = linear
    return p


MISSING = {
    "Differentiation/jvp": ("Differentiation", lambda p: fxad.jvp(p.bind, (1.0,), (1.0,)), {}),
    "Differentiation/grad": ("Differentiation", lambda p: fxad.grad(p.bind)(1.0), {}),
    "Differentiation/jacfwd": ("Differentiation", lambda p: fxad.jacfwd(p.bind)(XC), {}),
    "Batching/vmap": ("Batching", lambda p: fxad.vmap(p.bind)(XC), {}),
    "Transpose/grad": ("Transpose", lambda p: fxad.grad(p.bind)(1.0),
                       {"linear": True, "jvp": True}),
    "Transpose/linear_transpose": ("Transpose",
                                   lambda p: fxad.linear_transpose(p.bind, 1.0)(1.0),
                                   {"linear": True}),
    "Shape/make_jaxpr": ("Shape", lambda p: fxad.make_jaxpr(p.bind)(1.0), {"shape": False}),
    "Shape/jit": ("Shape", lambda p: fxad.jit(p.bind)(1.0), {"shape": False}),
}


@pytest.mark.parametrize("case", list(MISSING))
def test_missing_rule_uniform_message(case):
    kind, run, opts = MISSING[case]
    p = _test_primitive("my_test_prim", **opts)
    assert p.bind(1.5) == 3.0  # eagerly it works: only the transformation needs a rule
    with pytest.raises(NotImplementedError) as info:
        run(p)
    assert isinstance(info.value, E.RuleNotImplementedError)
    assert str(info.value) == f"{kind} rule for 'my_test_prim' not implemented"


@pytest.mark.parametrize("call, match", [
    (lambda: fnp.linalg.solve(np.ones((2, 3)), np.ones(2)), r"solve: expected square matrices .* \(2, 3\)"),
    (lambda: fxad.grad(lambda a: fnp.sum(fnp.linalg.solve(a, np.ones(2))))(np.ones((2, 3))),
     r"solve: expected square"),
    (lambda: fnp.linalg.solve(np.eye(3), np.ones(2)), r"right-hand side of shape \(2,\) .* 3 rows"),
    (lambda: fnp.linalg.solve(np.eye(3), np.ones((2, 2))), r"right-hand side of shape \(2, 2\)"),
    (lambda: fnp.linalg.inv(np.ones((2, 3))), "inv: expected square"),
    (lambda: fnp.linalg.det(np.ones((3, 2))), "det: expected square"),
    (lambda: fnp.linalg.cholesky(np.ones((2, 3))), "cholesky: expected square"),
    (lambda: fnp.linalg.eigh(np.ones((2, 3))), "eigh: expected square"),
    (lambda: fsl.lu_factor(np.ones((2, 3))), "lu_factor: expected square"),
    (lambda: fsl.solve_triangular(np.ones((2, 3)), np.ones(2)), "solve_triangular: expected square"),
    (lambda: fsl.expm(np.ones((2, 3))), "expm: expected square"),
], ids=["solve", "solve_grad", "solve_b", "solve_B", "inv", "det", "cholesky", "eigh",
        "lu_factor", "solve_triangular", "expm"])
def test_linalg_shape_errors_are_checked_before_lapack(call, match):
    """Eagerly LAPACK would factor a rectangular matrix and fail later with an f2py message
    (solve under grad did: after a 'singular matrix' warning)."""
    with pytest.raises(E.FxadValueError, match=match):
        call()


@pytest.mark.parametrize("name", list(ARGNUM_TRANSFORMS))
def test_argnums_checked_once_per_signature_still_refuse_lookalikes(name):
    """A checked argnums is remembered per (transformation, argument count, argnums of
    exact ints): values equal to a remembered one (True == 1, np.int64(1) == 1) are not
    taken from it, and a call with another argument count is checked again."""
    f = lambda x, y: x * y  # noqa: E731
    for argnums in (1, (0, 1), -1):
        ARGNUM_TRANSFORMS[name](f, argnums)(1.0, 2.0)
    for argnums in (True, (True, 1), (0, 1.0)):
        with pytest.raises(TypeError, match="argnums must be an int"):
            ARGNUM_TRANSFORMS[name](f, argnums)(1.0, 2.0)
    ARGNUM_TRANSFORMS[name](f, np.int64(1))(1.0, 2.0)
    with pytest.raises(ValueError, match="out of range"):
        ARGNUM_TRANSFORMS[name](lambda x: x * x, 1)(1.0)
    np.testing.assert_allclose(fxad.grad(f, argnums=-1)(3.0, 2.0), 3.0)
    np.testing.assert_allclose(fxad.grad(f, argnums=(-1, 0))(3.0, 2.0), (3.0, 2.0))

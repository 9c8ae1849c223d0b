"""Every public transformation over a table of bad inputs: each must raise the right error
class (an fxad error that is also the built-in a user catches) with a message that names the
fix, never run on and return something wrong."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.errors import FxadError

x = np.ones(3)
xi = np.arange(3)
f = lambda x: fnp.sum(x ** 2)  # noqa: E731
lin = lambda x: 2.0 * x  # noqa: E731

# name: (call, error class, a fragment of the fix the message must name)
CASES = {
    # --- inputs ------------------------------------------------------------------------------
    "grad of an integer input": (lambda: fxad.grad(f)(xi), TypeError, "astype(float)"),
    "grad of a string input": (lambda: fxad.grad(f)("abc"), TypeError, "numeric arrays"),
    "grad of an object input": (lambda: fxad.grad(f)(object()), TypeError, "numeric arrays"),
    "jacfwd of an integer input": (lambda: fxad.jacfwd(lin)(xi), TypeError, "use jvp"),
    "jacrev of an integer input": (lambda: fxad.jacrev(lin)(xi), TypeError, "use vjp"),
    "hessian of an integer input": (lambda: fxad.hessian(f)(xi), TypeError, "astype(float)"),
    "grad with argnums out of range": (lambda: fxad.grad(f, argnums=3)(x), ValueError,
                                       "out of range"),
    "grad with float argnums": (lambda: fxad.grad(f, argnums=0.5)(x), TypeError,
                                "must be an int"),
    "grad of a non-function": (lambda: fxad.grad(3)(x), TypeError, "fxad.grad(f)"),
    "vmap of a non-function": (lambda: fxad.vmap(3)(x), TypeError, "fxad.vmap(f)"),
    "jit of a non-function": (lambda: fxad.jit(3), TypeError, "expects a function"),
    "jvp of a non-function": (lambda: fxad.jvp(3, (x,), (x,)), TypeError, "fxad.jvp(f)"),
    "stop_gradient of a string": (lambda: fxad.stop_gradient("s"), TypeError, "numeric"),
    # --- outputs -----------------------------------------------------------------------------
    "grad of a vector output": (lambda: fxad.grad(lin)(x), TypeError, "use jacrev"),
    "value_and_grad of a vector output": (lambda: fxad.value_and_grad(lin)(x), TypeError,
                                          "sum the output"),
    "grad of a complex output": (lambda: fxad.grad(lambda x: fnp.sum(x * 1j))(x), TypeError,
                                 "holomorphic=True"),
    "grad with has_aux, not a pair": (lambda: fxad.grad(f, has_aux=True)(x), TypeError,
                                      "pair (output, aux)"),
    "jvp of a string output": (lambda: fxad.jvp(lambda x: (x, "s"), (x,), (x,)), TypeError,
                               "has_aux=True"),
    "vjp of a string output": (lambda: fxad.vjp(lambda x: (x, "s"), x), TypeError,
                               "has_aux=True"),
    "jacfwd of a string output": (lambda: fxad.jacfwd(lambda x: (x, "s"))(x), TypeError,
                                  "has_aux=True"),
    "jacrev of a string output": (lambda: fxad.jacrev(lambda x: (x, "s"))(x), TypeError,
                                  "has_aux=True"),
    "linearize of a string output": (lambda: fxad.linearize(lambda x: "s", x), TypeError,
                                     "has_aux=True"),
    "vmap of a string output": (lambda: fxad.vmap(lambda x: (x, "s"))(x), TypeError,
                                "has_aux=True"),
    "jit of a string output": (lambda: fxad.jit(lambda x: (x, "s"))(x), TypeError,
                               "has_aux=True"),
    "make_jaxpr of a string output": (lambda: fxad.make_jaxpr(lambda x: "s")(x), TypeError,
                                      "has_aux=True"),
    # --- tangents and cotangents -------------------------------------------------------------
    "jvp primals not a tuple": (lambda: fxad.jvp(f, x, x), TypeError, "jvp(f, (x,), (v,))"),
    "jvp tangent of the wrong shape": (lambda: fxad.jvp(f, (x,), (np.ones(4),)), TypeError,
                                       "primal's shape and dtype"),
    "jvp tangent of the wrong dtype": (lambda: fxad.jvp(f, (x,), (x.astype(np.float32),)),
                                       TypeError, "primal's shape and dtype"),
    "jvp tangent of another structure": (lambda: fxad.jvp(f, (x,), ((x, x),)), TypeError,
                                         "same structure"),
    "jvp string tangent": (lambda: fxad.jvp(f, (x,), ("abc",)), TypeError, "numeric"),
    "linearize's f_jvp, wrong shape": (lambda: fxad.linearize(f, x)[1](np.ones(2)), TypeError,
                                       "primal's shape and dtype"),
    "linearize's f_jvp, complex": (lambda: fxad.linearize(f, x)[1](x + 0j), TypeError,
                                   "primal's shape and dtype"),
    "linearize's f_jvp, two tangents": (lambda: fxad.linearize(f, x)[1](x, x), TypeError,
                                        "structure"),
    "vjp's f_vjp, wrong shape": (lambda: fxad.vjp(lin, x)[1](np.ones(2)), TypeError,
                                 "output's shape and dtype"),
    "vjp's f_vjp, complex": (lambda: fxad.vjp(lin, x)[1](x + 0j), TypeError,
                             "output's shape and dtype"),
    "vjp's f_vjp, wrong structure": (lambda: fxad.vjp(lin, x)[1]((x,)), TypeError,
                                     "output's structure"),
    "linear_transpose, wrong shape": (lambda: fxad.linear_transpose(lin, x)(np.ones(2)),
                                      TypeError, "output's shape and dtype"),
    "linear_transpose, complex": (lambda: fxad.linear_transpose(lin, x)(x + 0j), TypeError,
                                  "output's shape and dtype"),
    "linear_transpose, wrong structure": (lambda: fxad.linear_transpose(lin, x)((x, x)),
                                          TypeError, "structure"),
    "linear_transpose of a nonlinear f": (lambda: fxad.linear_transpose(lambda v: v * v, x)(x),
                                          TypeError, "not linear"),
    "hvp primals not a tuple": (lambda: fxad.hvp(f, x, x), TypeError, "hvp(f, (x,), (v,))"),
    "hvp tangent of the wrong shape": (lambda: fxad.hvp(f, (x,), (np.ones(2),)), TypeError,
                                       "primal's shape"),
    # --- vmap --------------------------------------------------------------------------------
    "vmap, inconsistent sizes": (lambda: fxad.vmap(lambda a, b: a + b)(x, np.ones(4)),
                                 ValueError, "in_axes=None"),
    "vmap of a scalar": (lambda: fxad.vmap(lambda a: a)(1.0), ValueError, "use None"),
    "vmap, in_axes out of range": (lambda: fxad.vmap(lambda a: a, in_axes=2)(x), ValueError,
                                   "valid: -1 to 0"),
    "vmap, in_axes of the wrong length": (lambda: fxad.vmap(lambda a: a, in_axes=(0, 0))(x),
                                          ValueError, "2 entries"),
    "vmap, float in_axes": (lambda: fxad.vmap(lambda a: a, in_axes=0.5)(x), ValueError,
                            "ints or None"),
    "vmap, out_axes=None of a batched output": (
        lambda: fxad.vmap(lambda a: a, out_axes=None)(x), ValueError, "not to depend"),
    # --- jit ---------------------------------------------------------------------------------
    "jit, unhashable static argument": (
        lambda: fxad.jit(lambda x, n: x, static_argnums=1)(x, [1]), TypeError,
        "tuple instead of a list"),
    "jit, static_argnums out of range": (lambda: fxad.jit(lambda x: x, static_argnums=5),
                                         ValueError, "static_argnums are positions"),
    "jit, unknown static_argnames": (lambda: fxad.jit(lambda x: x, static_argnames="y"),
                                     ValueError, "not a named parameter"),
    "jit, Python if on a traced value": (
        lambda: fxad.jit(lambda x: x if x[0] > 0 else -x)(x), TypeError, "static_argnums"),
    # --- control flow ------------------------------------------------------------------------
    "switch with a float index": (lambda: lax.switch(1.7, [lambda v: v, lambda v: 2 * v], 1.0),
                                  TypeError, "astype(int)"),
    "switch with a vector index": (lambda: lax.switch(np.array([0, 1]), [lambda v: v], 1.0),
                                   TypeError, "integer scalar"),
    "switch with no branches": (lambda: lax.switch(0, [], 1.0), ValueError, "at least one"),
    "cond with a vector predicate": (lambda: lax.cond(x > 0, lin, lin, x), TypeError,
                                     "fxad.numpy.where"),
    "cond, branches disagree": (lambda: lax.cond(True, lambda v: v, lambda v: v[0], x),
                                TypeError, "same structure, shapes and dtypes"),
    "while_loop, float cond_fun": (lambda: lax.while_loop(lambda c: c - 5.0,
                                                          lambda c: c + 1.0, 0.0),
                                   TypeError, "x < 5"),
    "while_loop, vector cond_fun": (lambda: lax.while_loop(lambda c: c < 5.0, lambda c: c + 1.0,
                                                           x), TypeError, "fxad.numpy.any"),
    "while_loop, body changes dtype": (lambda: lax.while_loop(lambda c: c < 3,
                                                              lambda c: c + 1.0, 0),
                                       TypeError, "must match"),
    "scan, carry changes dtype": (lambda: lax.scan(lambda c, v: (c + v, v), 0, x), TypeError,
                                  "start from 0.0"),
    "scan body not a pair": (lambda: lax.scan(lambda c, v: c, 0.0, x), TypeError,
                             "pair (carry, y)"),
    "fori_loop, body changes structure": (lambda: lax.fori_loop(0, 3, lambda i, c: (c, c), 0.0),
                                          TypeError, "fori_loop"),
    # --- custom rules ------------------------------------------------------------------------
    "custom_jvp without a rule": (lambda: fxad.custom_jvp(lambda v: v)(1.0), TypeError,
                                  ".defjvp"),
    "custom_vjp without a rule": (lambda: fxad.custom_vjp(lambda v: v)(1.0), TypeError,
                                  ".defvjp(fwd, bwd)"),
    "custom_jvp, unknown keyword": (lambda: _softplus()(x, bogus=1.0), TypeError,
                                    "unexpected keyword"),
    # --- traced values -----------------------------------------------------------------------
    "float() of a traced value": (lambda: fxad.grad(lambda v: float(v))(1.0), TypeError,
                                  "stop_gradient"),
    "np.asarray of a traced value": (lambda: fxad.grad(lambda v: np.asarray(v).sum())(x),
                                     TypeError, "fxad.numpy"),
    "in-place update of a traced value": (lambda: fxad.grad(lambda v: v.__setitem__(0, 1.0))(x),
                                          TypeError, ".at[idx].set(v)"),
}


def _softplus():
    @fxad.custom_jvp
    def softplus(v):
        return fnp.log1p(fnp.exp(v))

    @softplus.defjvp
    def _(p, t):
        return softplus(p[0]), t[0] / (1 + fnp.exp(-p[0]))
    return softplus


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_raises_a_clear_error(name):
    call, error, fix = CASES[name]
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, FxadError), f"{type(info.value).__name__}: {info.value}"
    assert fix in str(info.value), str(info.value)

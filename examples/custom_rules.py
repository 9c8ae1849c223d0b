"""Custom derivative rules, and the programs fxad builds from them.

1. custom_vjp whose fwd computes the primal differently from the function: a sigmoid whose
   fwd evaluates exp(-x) once and saves only the OUTPUT y, because dy/dx = y (1 - y).
   Its bwd is ordinary fxad code, so it is itself differentiable (second derivatives work),
   and forward mode runs through it too (jvp of a custom_vjp is the jvp of fwd).
2. custom_jvp for a norm that is safe at zero: sqrt(sum(x^2)) has a 0/0 = NaN gradient at
   x = 0; the rule returns the subgradient 0 there. Reverse mode is the transpose of the
   (linear in the tangent) rule: no separate VJP is written.

    python examples/custom_rules.py   (--smoke accepted; it is already fast)
"""
import argparse

import numpy as np

import fxad
import fxad.numpy as fnp


# --- 1. custom_vjp ---------------------------------------------------------------------------

@fxad.custom_vjp
def sigmoid(x):
    return 1.0 / (1.0 + fnp.exp(-x))


def sigmoid_fwd(x):
    e = fnp.exp(-x)          # the one transcendental, shared by the primal and the derivative
    y = 1.0 / (1.0 + e)
    return y, y              # residual: the output, not the input


def sigmoid_bwd(y, ct):
    return (ct * y * (1.0 - y),)   # no exp here


sigmoid.defvjp(sigmoid_fwd, sigmoid_bwd)


def naive_sigmoid(x):
    return 1.0 / (1.0 + fnp.exp(-x))


def count(jaxpr, prim):
    return sum(e.primitive.name == prim for e in jaxpr.eqns)


# --- 2. custom_jvp ---------------------------------------------------------------------------

@fxad.custom_jvp
def safe_norm(x):
    return fnp.sqrt(fnp.sum(x * x))


@safe_norm.defjvp
def safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = fnp.sqrt(fnp.sum(x * x))
    denom = fnp.where(n == 0, 1.0, n)        # avoid 0/0; the numerator is 0 there anyway
    return n, fnp.sum(x * t) / denom          # linear in t, so grad can transpose it


def naive_norm(x):
    return fnp.sqrt(fnp.sum(x * x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="accepted for CI; nothing to shrink")
    ap.parse_args()
    x = np.array([-2.0, 0.0, 3.0])

    print("== custom_vjp sigmoid ==")
    loss = lambda x: fnp.sum(sigmoid(x))             # noqa: E731
    naive_loss = lambda x: fnp.sum(naive_sigmoid(x))  # noqa: E731
    g, g_ref = fxad.grad(loss)(x), fxad.grad(naive_loss)(x)
    print("grad:", g, " (naive:", g_ref, ")")
    assert np.allclose(g, g_ref)

    jx = fxad.make_jaxpr(fxad.grad(loss))(x)
    jx_naive = fxad.make_jaxpr(fxad.grad(naive_loss))(x)
    print("make_jaxpr(grad(sum . sigmoid)) with the custom rule:")
    print(jx)
    print("...and without it (autodiff of the formula):")
    print(jx_naive)
    # fxad's own exp rule also reuses its output, so both programs have one exp; the custom
    # rule's gain is the shorter backward pass from the saved output: y * (1 - y).
    print(f"exp in the program: custom {count(jx, 'exp')}, naive {count(jx_naive, 'exp')}; "
          f"equations: custom {len(jx.eqns)}, naive {len(jx_naive.eqns)}")
    assert count(jx, "exp") == 1

    # the rule composes: bwd is differentiated for the second derivative, fwd for jvp
    s = 1 / (1 + np.exp(-x))
    d2 = fxad.vmap(fxad.grad(fxad.grad(sigmoid)))(x)
    _, t = fxad.jvp(sigmoid, (x,), (np.ones(3),))
    print("second derivative (grad of bwd):", d2)
    print("forward mode (jvp of fwd):      ", t)
    assert np.allclose(d2, s * (1 - s) * (1 - 2 * s)) and np.allclose(t, s * (1 - s))
    assert np.allclose(fxad.hessian(loss)(x), np.diag(s * (1 - s) * (1 - 2 * s)))

    print("\n== custom_jvp safe_norm ==")
    z = np.zeros(3)
    with np.errstate(invalid="ignore", divide="ignore"):
        naive = fxad.grad(naive_norm)(z)
    print("grad at 0: naive", naive, " safe", fxad.grad(safe_norm)(z))
    assert np.all(np.isnan(naive)) and np.all(fxad.grad(safe_norm)(z) == 0)
    assert np.allclose(fxad.grad(safe_norm)(x), x / np.linalg.norm(x))
    print("grad at", x, ":", fxad.grad(safe_norm)(x))
    print("make_jaxpr(grad(safe_norm)): the user's JVP rule, linearized and transposed")
    print(fxad.make_jaxpr(fxad.grad(safe_norm))(x))
    # Hessian (forward over reverse through the rule) against the closed form
    n = np.linalg.norm(x)
    H_ref = (np.eye(3) - np.outer(x, x) / n ** 2) / n
    assert np.allclose(fxad.hessian(safe_norm)(x), H_ref)
    print("hessian(safe_norm) matches (I - x x^T / |x|^2) / |x|")


if __name__ == "__main__":
    main()

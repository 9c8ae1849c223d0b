"""The properties every program is checked for: the transformations against each other and
against finite differences (see the package docstring for the list)."""
from __future__ import annotations

import numpy as np

import fxad
import fxad.numpy as fnp
from fxad.test_util import check_grads, check_jet
from fxad.tree_util import tree_flatten

from .program import B, EXACT_RTOL


def _leaves(tree):
    return [np.asarray(x) for x in tree_flatten(tree)[0]]


def assert_close(what, got, want, rtol=EXACT_RTOL):
    """got == want up to rounding: max error <= rtol * max(1, max |want|)."""
    gl, gt = tree_flatten(got)
    wl, wt = tree_flatten(want)
    if gt != wt:
        raise AssertionError(f"{what}: tree structure {gt} != {wt}")
    gl, wl = [np.asarray(x) for x in gl], [np.asarray(x) for x in wl]
    scale = max([1.0] + [float(np.max(np.abs(w), initial=0.0)) for w in wl])
    for k, (a, b) in enumerate(zip(gl, wl)):
        if a.shape != b.shape:
            raise AssertionError(f"{what}: leaf {k} shape {a.shape} != {b.shape}")
        err = float(np.max(np.abs(a - b), initial=0.0))
        if not err <= rtol * scale:
            raise AssertionError(f"{what}: leaf {k} max error {err:.3g} > {rtol:.0e} * "
                                 f"{scale:.3g}\n  got  {a.ravel()[:12]}\n  want {b.ravel()[:12]}")


def _scalar(f):
    def g(*xs):
        out = f(*xs)
        leaves = out if isinstance(out, tuple) else (out,)
        s = fnp.sum(leaves[0])
        for x in leaves[1:]:
            s = s + fnp.sum(x)
        return s
    return g


def _stack(outs, axis):
    flat = [tree_flatten(o) for o in outs]
    tree = flat[0][1]
    from fxad.tree_util import tree_unflatten
    return tree_unflatten(tree, [np.stack([np.asarray(f[0][k]) for f in flat], axis=axis)
                                 for k in range(len(flat[0][0]))])


def prop_grads(p, f):
    try:
        check_grads(f, p.x0(), order=2, modes=("fwd", "rev"))
    except AssertionError:
        # A steep program (derivatives ~100x its values: the stencils' smoothness guard allows
        # length scales down to H) leaves eps=1e-5 differences a truncation error above the
        # tolerance, which is relative to the values. That error shrinks as eps^2, a wrong
        # derivative's does not: the check at eps=1e-6 decides.
        check_grads(f, p.x0(), order=2, modes=("fwd", "rev"), eps=1e-6)


def prop_linearize(p, f):
    x = p.x0()
    v = tuple(np.random.default_rng(1).standard_normal(np.shape(a)) for a in x)
    y, t = fxad.jvp(f, x, v)
    y2, f_jvp = fxad.linearize(f, *x)
    assert_close("linearize: primal == f", y2, y)
    assert_close("linearize: f_jvp(v) == jvp(f)(v)", f_jvp(*v), t)


def prop_jacobians(p, f):
    nums = tuple(range(p.n_in))
    assert_close("jacfwd == jacrev", fxad.jacfwd(f, argnums=nums)(*p.x0()),
                 fxad.jacrev(f, argnums=nums)(*p.x0()))


def prop_jit(p, f):
    assert_close("jit(f) == f", fxad.jit(f)(*p.x0()), f(*p.x0()))


def _reverse_under_jit_ok(p):
    return "while_loop" not in p.ops()


def prop_jit_grad(p, f):
    g, nums = _scalar(f), tuple(range(p.n_in))
    want = fxad.grad(g, argnums=nums)(*p.x0())
    if not _reverse_under_jit_ok(p):
        return
    assert_close("jit(grad(g)) == grad(g)", fxad.jit(fxad.grad(g, argnums=nums))(*p.x0()), want)
    assert_close("grad(jit(g)) == grad(g)", fxad.grad(fxad.jit(g), argnums=nums)(*p.x0()), want)


def _loop(p, fn):
    outs = []
    for b in range(B):
        outs.append(fn(*[x[b] if ax is not None else x[0]
                         for x, ax in zip(p.inputs, p.in_axes)]))
    return outs


def prop_vmap(p, f):
    got = fxad.vmap(f, in_axes=p.in_axes, out_axes=p.out_axes)(*p.batched())
    want = _stack(_loop(p, f), p.out_axes)
    assert_close(f"vmap(f, in_axes={p.in_axes}, out_axes={p.out_axes}) == loop", got, want)
    got = fxad.jit(fxad.vmap(f, in_axes=p.in_axes, out_axes=p.out_axes))(*p.batched())
    assert_close(f"jit(vmap(f, in_axes={p.in_axes}, out_axes={p.out_axes})) == loop", got, want)


def prop_vmap_grad(p, f):
    gr = fxad.grad(_scalar(f), argnums=tuple(range(p.n_in)))
    got = fxad.vmap(gr, in_axes=p.in_axes)(*p.batched())
    assert_close(f"vmap(grad(g), in_axes={p.in_axes}) == loop", got, _stack(_loop(p, gr), 0))


def prop_hessians(p, f):
    g, nums = _scalar(f), tuple(range(p.n_in))
    x = p.x0()
    ref = fxad.jacfwd(fxad.jacrev(g, argnums=nums), argnums=nums)(*x)
    for name, outer, inner in [("jacrev(jacrev)", fxad.jacrev, fxad.jacrev),
                               ("jacfwd(jacfwd)", fxad.jacfwd, fxad.jacfwd),
                               ("jacrev(jacfwd)", fxad.jacrev, fxad.jacfwd)]:
        assert_close(f"hessian {name} == jacfwd(jacrev)", outer(inner(g, argnums=nums),
                                                                argnums=nums)(*x), ref)
    if _reverse_under_jit_ok(p):
        assert_close("jit(hessian) == hessian", fxad.jit(fxad.hessian(g, argnums=nums))(*x),
                     ref)


def _dtypes(tree):
    return [np.asarray(x).dtype for x in tree_flatten(tree)[0]]


def prop_dtypes(p, f):
    """On float32 inputs every transformation gives the dtypes eager evaluation gives."""
    x = tuple(a.astype(np.float32) for a in p.x0())
    try:
        want = _dtypes(f(*x))
    except Exception:  # noqa: BLE001  e.g. a scan carry that float64 constants promote
        return
    for name, got in [("jit(f)", fxad.jit(f)(*x)),
                      ("jvp(f) primal", fxad.jvp(f, x, x)[0]),
                      ("jvp(f) tangent", fxad.jvp(f, x, x)[1]),
                      ("vmap(f)", fxad.vmap(f, in_axes=p.in_axes, out_axes=p.out_axes)(
                          *[a.astype(np.float32) for a in p.batched()]))]:
        if _dtypes(got) != want:
            raise AssertionError(f"dtypes on float32 inputs: {name} gives {_dtypes(got)}, "
                                 f"eager f gives {want}")
    nums = tuple(range(p.n_in))
    gr = fxad.grad(_scalar(f), argnums=nums)(*x)
    if _dtypes(gr) != [np.dtype(np.float32)] * p.n_in:
        raise AssertionError(f"dtypes on float32 inputs: grad gives {_dtypes(gr)}")


def prop_tape(p, f):
    """Eager grad and vjp on the tape of derived pullbacks == the staged path (linearize,
    then transpose), the reference, to rounding."""
    nums = tuple(range(p.n_in))
    g = fxad.grad(_scalar(f), argnums=nums)
    out, f_vjp = fxad.vjp(f, *p.x0())
    ct = fxad.tree_util.tree_map(lambda o: np.ones_like(np.asarray(o)), out)
    got = (g(*p.x0()), f_vjp(ct))
    fxad.config.eager_tape = False
    try:
        out, f_vjp = fxad.vjp(f, *p.x0())
        want = (g(*p.x0()), f_vjp(ct))
    finally:
        fxad.config.eager_tape = True
    assert_close("tape vs staged grad and vjp", got, want)


def _dense_jacobian(jac, outs, ins):
    """fxad.jacfwd's nested result (outputs x argnums) as one (m, n) matrix."""
    blocks = jac if isinstance(jac, tuple) and len(outs) > 1 else (jac,)
    rows = []
    for o, blk in zip(outs, blocks):
        m = int(np.prod(np.shape(o)))
        rows.append(np.concatenate([np.asarray(b).reshape(m, int(np.prod(np.shape(x))))
                                    for b, x in zip(blk, ins)], axis=1))
    return np.concatenate(rows, axis=0)


def prop_sparsity(p, f):
    """fxad.sparse's global patterns contain every nonzero of the dense Jacobian of f and of
    the Hessian of its sum (at the program's points)."""
    import fxad.sparse
    x, nums = p.x0(), tuple(range(p.n_in))
    out = f(*x)
    outs = out if isinstance(out, tuple) else (out,)
    J = _dense_jacobian(fxad.jacfwd(f, argnums=nums)(*x), outs, x)
    P = fxad.sparse.jacobian_sparsity(f, *x).toarray()
    if P.shape != J.shape:
        raise AssertionError(f"jacobian_sparsity: pattern {P.shape}, Jacobian {J.shape}")
    if np.any((J != 0) & ~P):
        raise AssertionError("jacobian_sparsity misses nonzeros of jacfwd at "
                             f"{np.argwhere((J != 0) & ~P)[:5].tolist()}")
    g = _scalar(f)
    H = fxad.hessian(g, argnums=nums)(*x)
    H = np.concatenate([np.concatenate([np.asarray(H[i][j]).reshape(np.size(x[i]),
                                                                    np.size(x[j]))
                                        for j in nums], axis=1) for i in nums], axis=0)
    PH = fxad.sparse.hessian_sparsity(g, *x).toarray()
    if PH.shape != H.shape:
        raise AssertionError(f"hessian_sparsity: pattern {PH.shape}, Hessian {H.shape}")
    if np.any((H != 0) & ~PH):
        raise AssertionError("hessian_sparsity misses nonzeros of hessian at "
                             f"{np.argwhere((H != 0) & ~PH)[:5].tolist()}")


def prop_jet(p, f):
    """Taylor mode: jet(f) along a random line == 3 nested jvps (exact derivatives both)."""
    check_jet(f, p.x0(), order=3, rtol=1e-9, atol=1e-9)


PROPERTIES = {"grads": prop_grads, "jet": prop_jet, "tape": prop_tape,
              "linearize": prop_linearize, "jacobians": prop_jacobians, "jit": prop_jit,
              "jit_grad": prop_jit_grad, "vmap": prop_vmap, "vmap_grad": prop_vmap_grad,
              "hessians": prop_hessians, "dtypes": prop_dtypes, "sparsity": prop_sparsity}

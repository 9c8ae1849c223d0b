"""The user-facing transformations. Each is thin: flatten pytrees, run an interpreter on flat
values, unflatten. The interpreters live in fxad/interpreters, the IR in fxad/ir."""
from __future__ import annotations

from typing import Any, Callable, Sequence, Union

import numpy as np

from .core import (_PY_SCALARS, Tracer, check_output, describe_type, get_aval, is_float,
                   new_trace)
from .errors import FxadTypeError, FxadValueError
from .interpreters.batching import BatchTrace
from .rules.helpers import broadcast_batched, moveaxis
from .interpreters.jvp import Zero, jvp_flat
from .interpreters.partial_eval import linearize_flat
from .interpreters.transpose import backward_pass, vjp_flat
from .ir.jaxpr import ClosedJaxpr, eval_jaxpr
from .ir.staging import stage
from .tree_util import broadcast_prefix, tree_flatten, tree_unflatten

Argnums = Union[int, Sequence[int]]  # which positional arguments to differentiate

# --- plumbing ---------------------------------------------------------------------------------


def _leaf(x):
    """Inputs become arrays (Python scalars and lists too); tracers pass through."""
    if isinstance(x, Tracer) or (type(x) is np.ndarray and x.dtype.kind in "biufc"):
        return x
    arr = np.asarray(x)
    if arr.dtype.kind not in "biufc":
        raise FxadTypeError(f"fxad cannot use an argument of type {describe_type(x, arr)}: "
                            "arguments must be numeric arrays, numbers, or pytrees of them")
    return arr


def _check_callable(name, f):
    if not callable(f):
        raise FxadTypeError(f"{name} expects a function as its first argument, got "
                            f"{type(f).__name__}; e.g. fxad.{name}(f)")


def _result(x):
    """Outputs are plain NumPy values: materialize symbolic zeros, copy read-only views."""
    if type(x) is Zero:
        return np.zeros(x.aval.shape, x.aval.dtype)
    if type(x) is np.ndarray and not x.flags.writeable:
        return x.copy()
    return x


def _flat_fun(f, in_tree, has_aux=False, where="the transformation"):
    """A function of flat leaves; after a call, `store` holds the output tree(s). Output
    leaves must be numeric (checked: a string has no tangent). With `has_aux`, numeric aux
    leaves are appended to the outputs (so they are unboxed like them); others (strings,
    objects) are kept aside as they are."""
    store = {}

    def flat(*leaves):
        out = f(*tree_unflatten(in_tree, leaves))
        numeric_aux = []
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise FxadTypeError("with has_aux=True the function must return a pair "
                                    f"(output, aux); it returned {type(out).__name__}")
            out, aux = out
            aux_leaves, store["aux"] = tree_flatten(aux)
            store["aux_kept"] = [None if _numeric(x) else x for x in aux_leaves]
            numeric_aux = [x for x in aux_leaves if _numeric(x)]
        out_leaves, store["out"] = tree_flatten(out)
        out_leaves = [check_output(o, i, where) for i, o in enumerate(out_leaves)]
        store["n_out"] = len(out_leaves)
        return out_leaves + numeric_aux
    return flat, store


def _numeric(x):
    try:
        check_output(x, 0, "")
        return True
    except FxadTypeError:
        return False


def _split_aux(leaves, store, has_aux):
    n = store["n_out"]
    out = tree_unflatten(store["out"], [_result(x) for x in leaves[:n]])
    if not has_aux:
        return out, None
    it = iter(leaves[n:])
    aux = [_result(next(it)) if k is None else k for k in store["aux_kept"]]
    return out, tree_unflatten(store["aux"], aux)


def _check_tuple(name, what, x):
    if not isinstance(x, (tuple, list)):
        raise FxadTypeError(f"{name} expects {what} as a tuple or list (one entry per "
                            f"argument), got {type(x).__name__}; e.g. {name}(f, (x,), (v,))")


def _check_tangent(name, p, t, i):
    pa, ta = get_aval(p), get_aval(t)
    if pa.shape != ta.shape or (is_float(pa.dtype) and pa.dtype != ta.dtype):
        raise FxadTypeError(
            f"{name}: tangent {i} has {ta.str_short()} but its primal has {pa.str_short()}; "
            "a tangent must have the primal's shape and dtype")


# --- forward mode -----------------------------------------------------------------------------

def jvp(f: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False) -> tuple:
    """(f(*primals), J·tangents) by forward mode."""
    return _jvp(f, primals, tangents, has_aux, "jvp")


def _jvp(f, primals, tangents, has_aux, name):
    """jvp; `name` is the transformation named in errors (jacfwd, hvp, ... call this)."""
    _check_callable(name, f)
    _check_tuple(name, "primals", primals)
    _check_tuple(name, "tangents", tangents)
    flat_p, tree_p = tree_flatten(tuple(primals))
    flat_t, tree_t = tree_flatten(tuple(tangents))
    if tree_p != tree_t:
        raise FxadTypeError(f"{name}: primals and tangents must have the same structure, got "
                            f"{tree_p} and {tree_t}")
    flat_p, flat_t = [_leaf(p) for p in flat_p], [_leaf(t) for t in flat_t]
    for i, (p, t) in enumerate(zip(flat_p, flat_t)):
        _check_tangent(name, p, t, i)
    flat_t = [t if is_float(get_aval(p).dtype) else Zero(get_aval(p))
              for p, t in zip(flat_p, flat_t)]
    fun, store = _flat_fun(f, tree_p, has_aux, name)
    outs, touts = jvp_flat(fun, flat_p, flat_t)
    out, aux = _split_aux(outs, store, has_aux)
    tout = tree_unflatten(store["out"], [_result(t) for t in touts[:store["n_out"]]])
    return (out, tout, aux) if has_aux else (out, tout)


def linearize(f: Callable, *primals: Any) -> tuple[Any, Callable]:
    """(f(*primals), f_jvp) where f_jvp evaluates only the staged linear tangent program."""
    _check_callable("linearize", f)
    flat_p, tree_p = tree_flatten(primals)
    flat_p = [_leaf(p) for p in flat_p]
    fun, store = _flat_fun(f, tree_p, where="linearize")
    outs, lin = linearize_flat(fun, flat_p)
    lin.jaxpr = lin.jaxpr.snapshot()  # f_jvp outlives this call: its residuals are its own

    def f_jvp(*tangents):
        flat_t, tree_t = tree_flatten(tangents)
        if tree_t != tree_p:
            raise FxadTypeError(f"f_jvp expects tangents with the structure {tree_p}, got "
                                f"{tree_t}")
        for i, (p, t) in enumerate(zip(flat_p, flat_t)):
            _check_tangent("f_jvp", p, t, i)
        ins = [_leaf(t) for t, m in zip(flat_t, lin.in_mask) if m]
        res = iter(eval_jaxpr(lin.jaxpr.jaxpr, lin.jaxpr.consts, *ins))
        flat_out = [next(res) if m else np.zeros(a.shape, a.dtype)
                    for a, m in zip(lin.out_avals, lin.out_mask)]
        return tree_unflatten(store["out"], [_result(x) for x in flat_out])
    f_jvp.jaxpr = lin.jaxpr  # the linear program, for reading: print(f_jvp.jaxpr)
    return tree_unflatten(store["out"], [_result(x) for x in outs]), f_jvp


# --- reverse mode -----------------------------------------------------------------------------

def vjp(f: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """(f(*primals), f_vjp[, aux]); f_vjp(ct) returns a tuple with one cotangent per primal."""
    _check_callable("vjp", f)
    flat_p, tree_p = tree_flatten(primals)
    return _vjp_leaves(f, [_leaf(p) for p in flat_p], tree_p, has_aux, "vjp", snapshot=True)


def _vjp_leaves(f, flat_p, tree_p, has_aux, name, snapshot=False):
    """vjp of f at the primals given as leaves (already arrays) and their tree. With
    `snapshot`, f_vjp (which outlives the call) keeps private copies of its residuals; grad
    and jacrev use it at once and need none."""
    fun, store = _flat_fun(f, tree_p, has_aux, name)
    outs, pullback, lin = vjp_flat(fun, flat_p)
    if snapshot:
        lin.jaxpr = lin.jaxpr.snapshot()
    out, aux = _split_aux(outs, store, has_aux)
    n_out = store["n_out"]

    def f_vjp(ct):
        flat_ct, tree_ct = tree_flatten(ct)
        if tree_ct != store["out"]:
            raise FxadTypeError(f"f_vjp expects a cotangent with the output's structure "
                                f"{store['out']}, got {tree_ct}")
        for i, (o, c) in enumerate(zip(lin.out_avals[:n_out], flat_ct)):
            _check_cotangent("f_vjp", i, o, get_aval(c))
        return trusted([_leaf(c) for c in flat_ct])

    def trusted(flat_ct):  # flat cotangents known to match the outputs (grad's own ones)
        cts = pullback(flat_ct + [Zero(a) for a in lin.out_avals[n_out:]])
        return tree_unflatten(tree_p, [_result(c) for c in cts])
    f_vjp._trusted = trusted
    return (out, f_vjp, aux) if has_aux else (out, f_vjp)


def _is_index(a):
    return isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))


_WEAK_OK = {"f": (int, float), "c": (int, float, complex)}  # Python scalars a dtype accepts


def _check_cotangent(name, i, o, ca):
    """A cotangent has its output's shape and, for a float output, its dtype (a Python
    number may stand in for a 0-d one): a mismatch would be silently cast or, for a complex
    cotangent of a real output, lose its imaginary part."""
    if ca.shape != o.shape or (is_float(o.dtype) and ca.dtype != o.dtype
                               and ca.weak not in _WEAK_OK[o.dtype.kind]):
        raise FxadTypeError(f"{name}: cotangent {i} has {ca.str_short()} but the output has "
                            f"{o.str_short()}; a cotangent must have the output's shape and "
                            "dtype")


def _argnums_split(fname, args, argnums):
    single = _is_index(argnums)
    nums = (argnums,) if single else \
        tuple(argnums) if isinstance(argnums, (tuple, list)) else None
    if not nums or not all(_is_index(a) for a in nums):
        raise FxadTypeError(f"{fname}: argnums must be an int or a non-empty tuple of ints "
                            f"(positions of the arguments to differentiate), got {argnums!r}")
    for a in nums:
        if not -len(args) <= a < len(args):
            raise FxadValueError(f"{fname}: argnums {a} is out of range for a call with "
                                 f"{len(args)} positional arguments")
    nums = tuple(int(a) % len(args) for a in nums)
    if len(set(nums)) != len(nums):  # the later copy would shadow the earlier: wrong result
        raise FxadValueError(f"{fname}: argnums {argnums!r} names an argument twice; list "
                             "each argument once")
    return single, nums


def _argument_of(dyn, nums, k):
    """The position (in the call) of the differentiated argument holding flat leaf `k`; only
    for error messages, so it may re-flatten."""
    for i, x in zip(nums, dyn):
        k -= len(tree_flatten(x)[0])
        if k < 0:
            return i
    raise AssertionError("leaf index out of range")  # pragma: no cover


def _check_inputs(name, dyn, nums, flat_p, holomorphic, instead="vjp"):
    """Differentiated inputs (`flat_p`, the leaves of the arguments `dyn` at positions
    `nums`) must be floats, and complex with `holomorphic`: an integer has no derivative, and
    a zero one would be silently wrong."""
    for k, x in enumerate(flat_p):
        dt = get_aval(x).dtype
        if dt.kind not in "fc" or (holomorphic and dt.kind != "c"):
            i = _argument_of(dyn, nums, k)
            if holomorphic and dt.kind != "c":
                raise FxadTypeError(
                    f"{name}(holomorphic=True) needs complex inputs, but argument {i} "
                    f"has dtype {dt}. Convert it with .astype(complex), or drop "
                    "holomorphic=True.")
            raise FxadTypeError(
                f"{name} requires floating-point inputs, but argument {i} has dtype "
                f"{dt}. Convert it with .astype(float), or use {instead}, which accepts "
                "integer inputs.")


def _partial(f, args, nums, kwargs):
    def g(*dyn):
        full = list(args)
        for i, x in zip(nums, dyn):
            full[i] = x
        return f(*full, **kwargs)
    return g


def _value_and_grad(f, argnums, has_aux, holomorphic, name):
    _check_callable(name, f)
    splits = {}  # number of positional arguments -> checked (single, nums)

    def vg(*args, **kwargs):
        split = splits.get(len(args))
        if split is None:
            split = splits[len(args)] = _argnums_split(name, args, argnums)
        single, nums = split
        dyn = tuple(args[i] for i in nums)
        flat_p, tree_p = tree_flatten(dyn)
        flat_p = [_leaf(p) for p in flat_p]
        _check_inputs(name, dyn, nums, flat_p, holomorphic)
        res = _vjp_leaves(_partial(f, args, nums, kwargs), flat_p, tree_p, has_aux, name)
        out, f_vjp = res[0], res[1]
        a = get_aval(_leaf(out)) if not isinstance(out, (tuple, list, dict)) else None
        if a is None or a.shape != ():
            what = f"shape {a.shape}" if a is not None else f"type {type(out).__name__}"
            raise FxadTypeError(
                f"{name} requires a scalar output, but the output had {what}; use "
                "jacrev (or vjp) for a non-scalar output, or sum the output")
        if a.dtype.kind == "c" and not holomorphic:
            raise FxadTypeError(f"{name} requires a real-valued output, got a complex one "
                                f"({a.str_short()}); use holomorphic=True for a holomorphic "
                                "function, or take .real")
        if a.dtype.kind not in "fc":
            raise FxadTypeError(f"{name} requires a floating-point output, got {a.dtype}")
        g = f_vjp._trusted([np.ones((), a.dtype)])  # the output was just checked: 0-d, float
        g = g[0] if single else g
        return ((out, res[2]), g) if has_aux else (out, g)
    return vg


def value_and_grad(f: Callable, argnums: Argnums = 0, has_aux: bool = False,
                   holomorphic: bool = False) -> Callable:
    """(f(*args), ∇f(*args)) for a scalar-valued f, by reverse mode."""
    return _value_and_grad(f, argnums, has_aux, holomorphic, "value_and_grad")


def grad(f: Callable, argnums: Argnums = 0, has_aux: bool = False,
         holomorphic: bool = False) -> Callable:
    """∇f for a scalar-valued f (reverse mode: linearize, then transpose)."""
    vg = _value_and_grad(f, argnums, has_aux, holomorphic, "grad")

    def g(*args, **kwargs):
        (_, *aux), gr = vg(*args, **kwargs) if has_aux else ((None,), vg(*args, **kwargs)[1])
        return (gr, aux[0]) if has_aux else gr
    return g


def linear_transpose(f: Callable, *primals: Any) -> Callable:
    """The transpose of a linear f; `primals` give the input shapes and dtypes only."""
    _check_callable("linear_transpose", f)
    flat_p, tree_p = tree_flatten(primals)
    avals = [get_aval(_leaf(p)) for p in flat_p]
    fun, store = _flat_fun(f, tree_p, where="linear_transpose")
    closed = stage(fun, avals, name="linear_transpose").snapshot()

    def f_t(ct):
        flat_ct, tree_ct = tree_flatten(ct)
        if tree_ct != store["out"]:
            raise FxadTypeError(f"the transpose expects a cotangent with structure "
                                f"{store['out']}, got {tree_ct}")
        flat_ct = [_leaf(c) for c in flat_ct]
        for i, (o, c) in enumerate(zip(closed.out_avals, flat_ct)):
            _check_cotangent("linear_transpose", i, o, get_aval(c))
        cts = backward_pass(closed.jaxpr, closed.consts, flat_ct)
        return tree_unflatten(tree_p, [_result(c) for c in cts])
    return f_t


# --- staging ----------------------------------------------------------------------------------

def make_jaxpr(f: Callable, static_argnums: Argnums = ()) -> Callable[..., ClosedJaxpr]:
    """make_jaxpr(f)(*args) -> the ClosedJaxpr fxad builds for f at these argument types."""
    _check_callable("make_jaxpr", f)
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def make(*args, **kwargs):
        dyn_idx = [i for i in range(len(args)) if i not in static]
        g = _partial(f, args, dyn_idx, kwargs)
        flat, tree = tree_flatten(tuple(args[i] for i in dyn_idx))
        fun, _ = _flat_fun(g, tree, where="make_jaxpr")
        return stage(fun, [get_aval(x if type(x) in _PY_SCALARS else _leaf(x))
                           for x in flat]).snapshot()
    return make


# --- vmap and the Jacobians built on it -------------------------------------------------------

def _norm_axis(ax, nd, what):
    if ax is None:
        return None
    if not _is_index(ax):
        raise FxadValueError(f"vmap {what}_axes entries must be ints or None, got {ax!r}")
    n = nd + (what == "out")  # an output axis may be inserted after the last one
    if n == 0:
        raise FxadValueError(f"vmap {what}_axes value {ax} given for a scalar, which has no "
                             "axis to map over; use None for it (unbatched)")
    if not -n <= ax < n:
        raise FxadValueError(f"vmap {what}_axes value {ax} is out of range for an array with "
                             f"{nd} dimensions (valid: {-n} to {n - 1}, or None)")
    return int(ax) % n


def _axes_for(axes, tree, n_leaves, what):
    """One axis per leaf of `tree` (which has `n_leaves`) from the in_axes/out_axes prefix,
    or an error naming it."""
    if axes is None or _is_index(axes):  # the common cases, without walking the tree
        return [axes] * n_leaves
    if isinstance(axes, (tuple, list)) and isinstance(tree, (tuple, list)) and \
            len(axes) == len(tree) and all(a is None or _is_index(a) for a in axes) and \
            all(type(t) is np.ndarray or type(t) in _PY_SCALARS for t in tree):
        return list(axes)  # one int/None per array argument
    try:
        return broadcast_prefix(tuple(axes) if isinstance(axes, list) else axes, tree)
    except ValueError as e:
        raise FxadValueError(f"vmap {what}_axes={axes!r} does not match the structure of the "
                             f"{'arguments' if what == 'in' else 'outputs'}: it must be an "
                             f"int, None, or a pytree prefix of them.\n{e}") from None


def vmap(f: Callable, in_axes: Any = 0, out_axes: Any = 0,
         axis_size: int | None = None) -> Callable:
    """Vectorize f over a mapped axis of its inputs (JAX semantics for in_axes/out_axes)."""
    _check_callable("vmap", f)
    def vf(*args, **kwargs):
        flat, in_tree = tree_flatten(args)
        # Python scalars stay Python scalars (weakly typed, as eagerly): an unbatched 2.0
        # must not turn float32 results into float64. A batched one is an error below.
        flat = [x if type(x) in _PY_SCALARS else _leaf(x) for x in flat]
        if isinstance(in_axes, (tuple, list)) and len(in_axes) != len(args):
            raise FxadValueError(f"vmap in_axes has {len(in_axes)} entries but the "
                                 f"function was called with {len(args)} arguments")
        axes = _axes_for(in_axes, args, len(flat), "in")
        axes = [_norm_axis(a, get_aval(x).ndim, "in") for a, x in zip(axes, flat)]
        sizes = {}
        for i, (x, a) in enumerate(zip(flat, axes)):
            if a is not None:
                sizes.setdefault(get_aval(x).shape[a], []).append(f"leaf {i} (axis {a})")
        if len(sizes) > 1:
            detail = "; ".join(f"size {n}: {', '.join(w)}" for n, w in sizes.items())
            raise FxadValueError(f"vmap got inconsistent sizes for the mapped axis: {detail}. "
                                 "Every mapped input needs the same size along its in_axes "
                                 "axis; use in_axes=None for an argument that is not batched")
        n = next(iter(sizes)) if sizes else axis_size
        if n is None:
            raise FxadValueError("vmap needs at least one argument with a mapped axis, or "
                                 "axis_size= for a function with no batched input")
        if axis_size is not None and n != axis_size:
            raise FxadValueError(f"vmap axis_size={axis_size} but the mapped inputs have size "
                                 f"{n}; leave axis_size out when an input is mapped")
        with new_trace(BatchTrace, "vmap", axis_size=n) as trace:
            out = f(*tree_unflatten(in_tree, [trace.box(x, a) for x, a in zip(flat, axes)]),
                    **kwargs)
            flat_out, out_tree = tree_flatten(out)
            flat_out = [check_output(o, i, "vmap") for i, o in enumerate(flat_out)]
            oaxes = _axes_for(out_axes, out, len(flat_out), "out")
            res = []
            for o, oa in zip(flat_out, oaxes):
                v, d = trace.unbox(o)
                if oa is None:
                    if d is not None:
                        raise FxadValueError("vmap out_axes=None requires the output not to "
                                             "depend on the mapped inputs, but it does")
                    res.append(v)
                    continue
                if d is None:
                    v, d = broadcast_batched(v, None, n), 0
                res.append(moveaxis(v, d, _norm_axis(oa, get_aval(v).ndim - 1, "out")))
        return tree_unflatten(out_tree, [_result(x) for x in res])
    return vf


def _std_basis(leaves):
    """Identity columns split across the leaves: leaf i gets shape (N, *leaf_shape)."""
    avals = [get_aval(x) for x in leaves]
    sizes = [a.size for a in avals]
    n = sum(sizes)
    dtype = np.result_type(*[a.dtype for a in avals]) if avals else np.float64
    eye = np.eye(n, dtype=dtype)
    out, start = [], 0
    for a, s in zip(avals, sizes):
        out.append(eye[:, start:start + s].reshape((n,) + a.shape).astype(a.dtype, copy=False))
        start += s
    return out, n


def _blocks(mat, in_leaves, in_tree):
    """Split one output leaf's forward-mode Jacobian, shape out_shape + (n,), into one block
    per input leaf, each of shape out_shape + in_shape (JAX's layout)."""
    from . import lax
    out_shape = tuple(get_aval(mat).shape[:-1])
    blocks, start = [], 0
    for x in in_leaves:
        xs = get_aval(x).shape
        size = int(np.prod(xs, dtype=np.int64))
        blocks.append(_result(lax.reshape(mat[..., start:start + size], out_shape + xs)))
        start += size
    return tree_unflatten(in_tree, blocks)


def _add_axis(tree, where):
    """Every leaf with a new axis of size 1 at the front (0) or the back (-1), as the vmap
    over a one-element basis would have made it."""
    from . import lax
    leaves, t = tree_flatten(tree)
    shapes = [get_aval(x).shape for x in leaves]
    return tree_unflatten(t, [lax.reshape(x, (1,) + s if where == 0 else s + (1,))
                              for x, s in zip(leaves, shapes)])


def _check_complex(name, holomorphic, leaves, what, real_only):
    """A Jacobian with respect to (or of) complex values is a complex matrix only for a
    holomorphic function; otherwise forward and reverse mode would silently disagree
    (d/dx against d/dx - i d/dy), so complex values need `holomorphic=True` where JAX asks
    for it: jacfwd's inputs, jacrev's outputs. (Inputs: see also _check_inputs.)"""
    for x in leaves:
        dt = get_aval(x).dtype
        if holomorphic and dt.kind != "c":
            raise FxadTypeError(f"{name}(holomorphic=True) needs complex {what}, got {dt}")
        if real_only and not holomorphic and dt.kind == "c":
            raise FxadTypeError(
                f"{name} needs real-valued {what}, got {dt}: unless f is holomorphic there is "
                f"no complex Jacobian. Pass holomorphic=True for a holomorphic f; otherwise "
                f"differentiate the real and imaginary parts as separate real values, or use "
                f"{'jvp' if name == 'jacfwd' else 'vjp'} directly.")


def jacfwd(f: Callable, argnums: Argnums = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """Jacobian by forward mode: one vmap of jvp over the standard basis of the inputs."""
    return _jacfwd(f, argnums, has_aux, holomorphic, "jacfwd")


def _jacfwd(f, argnums, has_aux, holomorphic, name):
    _check_callable(name, f)

    def jac(*args, **kwargs):
        single, nums = _argnums_split(name, args, argnums)
        flat_in, in_tree = tree_flatten(args[nums[0]] if single else
                                        tuple(args[i] for i in nums))
        flat_in = [_leaf(x) for x in flat_in]
        _check_inputs(name, tuple(args[i] for i in nums), nums, flat_in, holomorphic, "jvp")
        _check_complex(name, holomorphic, flat_in, "inputs", real_only=True)
        primal = tree_unflatten(in_tree, flat_in)
        g = _partial(f, args, nums, kwargs)
        call = g if single else (lambda d: g(*d))
        basis, _ = _std_basis(flat_in)

        def push(*tangent_leaves):
            res = _jvp(call, (primal,), (tree_unflatten(in_tree, list(tangent_leaves)),),
                       has_aux, name)
            return (res[1], res[2]) if has_aux else res[1]
        if sum(b.shape[0] for b in basis) == 1:  # one scalar input: no vmap level needed
            touts = push(*[b[0] for b in basis])
            touts, aux = touts if has_aux else (touts, None)
            touts = _add_axis(touts, -1)
        else:
            touts = vmap(push, out_axes=(-1, None) if has_aux else -1)(*basis)
            touts, aux = touts if has_aux else (touts, None)
        flat_t, out_tree = tree_flatten(touts)  # each: out_shape + (n,)
        _check_complex(name, holomorphic, flat_t, "outputs", real_only=False)
        jac_tree = tree_unflatten(out_tree, [_blocks(t, flat_in, in_tree) for t in flat_t])
        return (jac_tree, aux) if has_aux else jac_tree
    return jac


def jacrev(f: Callable, argnums: Argnums = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """Jacobian by reverse mode: one vmap of the pullback over the basis of the outputs."""
    _check_callable("jacrev", f)

    def jac(*args, **kwargs):
        single, nums = _argnums_split("jacrev", args, argnums)
        dyn = tuple(args[i] for i in nums)
        flat_p, tree_p = tree_flatten(dyn)
        flat_p = [_leaf(p) for p in flat_p]
        _check_inputs("jacrev", dyn, nums, flat_p, holomorphic)
        res = _vjp_leaves(_partial(f, args, nums, kwargs), flat_p, tree_p, has_aux, "jacrev")
        out, f_vjp = res[0], res[1]
        flat_out, out_tree = tree_flatten(out)
        flat_out = [_leaf(o) for o in flat_out]
        _check_complex("jacrev", holomorphic, flat_out, "outputs", real_only=True)
        basis, _ = _std_basis(flat_out)
        if sum(b.shape[0] for b in basis) == 1:  # one scalar output (a gradient): no vmap
            cts = _add_axis(f_vjp(tree_unflatten(out_tree, [b[0] for b in basis])), 0)
        else:
            cts = vmap(lambda *b: f_vjp(tree_unflatten(out_tree, list(b))))(*basis)
        flat_ct, in_tree = tree_flatten(cts[0] if single else cts)  # each: (m, *in_shape)
        from . import lax
        rows, start = [], 0
        for o in flat_out:  # rows start:start+size of every block belong to output leaf o
            os = get_aval(o).shape
            size = int(np.prod(os, dtype=np.int64))
            rows.append(tree_unflatten(in_tree, [
                _result(lax.reshape(c[start:start + size], os + get_aval(c).shape[1:]))
                for c in flat_ct]))
            start += size
        jac_tree = tree_unflatten(out_tree, rows)
        return (jac_tree, res[2]) if has_aux else jac_tree
    return jac


def hessian(f: Callable, argnums: Argnums = 0, holomorphic: bool = False) -> Callable:
    """jacfwd(jacrev(f)): forward over reverse."""
    _check_callable("hessian", f)
    h = _jacfwd(jacrev(f, argnums, holomorphic=holomorphic), argnums, False, holomorphic,
                "hessian")

    def hess(*args, **kwargs):
        _argnums_split("hessian", args, argnums)  # so a bad argnums error names hessian
        return h(*args, **kwargs)
    return hess


def hvp(f: Callable, primals: Sequence, tangents: Sequence) -> Any:
    """Hessian-vector product H·v by forward over reverse, without forming H. Returns the
    product with the structure of `primals` (a tuple, one entry per argument)."""
    _check_callable("hvp", f)
    _check_tuple("hvp", "primals", primals)
    _check_tuple("hvp", "tangents", tangents)
    g = grad(f, argnums=tuple(range(len(primals))))
    return _jvp(g, tuple(primals), tuple(tangents), False, "hvp")[1]


def stop_gradient(x: Any) -> Any:
    """x, with zero derivative at every order."""
    from .lax import stop_gradient as sg
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [sg(_leaf(v) if type(v) not in _PY_SCALARS else v)
                                 for v in leaves])

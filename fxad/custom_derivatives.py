"""custom_jvp and custom_vjp: user-written derivative rules that compose with everything.
(The primitives and their rules are in fxad/rules/control/custom.py; this is the user's side:
decorators, argument handling, checks of what the rules return, checkpoint.)

custom_jvp: the call is the primitive `custom_jvp_call`; its JVP rule runs the user's rule.
Reverse mode needs nothing more: linearize stages the rule's tangent computation, which
transpose then reverses (so the rule must be linear in the tangents; if it is not, the
error names the function).

custom_vjp goes beyond JAX. The call is `custom_vjp_call`; its JVP rule runs `fwd` now and
stages one `custom_lin` equation, linear in the tangents:
  - its impl is the JVP of fwd's primal output: forward mode (jvp, jacfwd, hessian) works;
  - its transpose is the user's `bwd(residuals, ct)`: reverse mode uses the custom rule;
  - `fwd` runs on whatever values it is given, so under an outer transformation (say the
    forward pass of a Hessian) the residuals are that transformation's tracers and `bwd` is
    differentiated through them: correct higher-order derivatives with no recompute trick.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from .core import ShapedArray, Tracer, avals_key, get_aval, trace_stack
from .errors import FxadTypeError
from .interpreters.transpose import vjp_flat
from .ir.jaxpr import eval_jaxpr
from .ir.staging import lift_tracer_consts, stage
from .rules.control.custom import custom_jvp_call_p, custom_vjp_call_p
from .rules.control.custom_linear import linear_call as _linear_call
from .rules.helpers import unbroadcast
from .tree_util import cache_key, tree_flatten, tree_unflatten


__all__ = ["checkpoint", "custom_gradient", "custom_jvp", "custom_vjp", "linear_call"]


def _signature(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):  # a builtin or C function: positional calls only
        return None


def resolve_args(sig, args, kwargs, name):
    """The call's arguments as positional ones, defaults filled in (JAX resolves them the
    same way), so nondiff_argnums and the rules' (primals, tangents) see one layout however
    the function was called. (A non-numeric default, say a string, must therefore be in
    nondiff_argnums, as in JAX.)"""
    if sig is None:
        if kwargs:
            raise FxadTypeError(f"'{name}' was called with keyword arguments, but its "
                                "signature cannot be inspected; pass them positionally")
        return args
    if not kwargs and len(args) >= _n_positional(sig):
        return args
    try:
        ba = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise FxadTypeError(f"'{name}'{sig}: {e}") from None
    ba.apply_defaults()
    if ba.kwargs:
        raise FxadTypeError(f"'{name}' got keyword-only arguments {sorted(ba.kwargs)}, which "
                            "custom rules cannot pass on; make them positional parameters or "
                            "bind them first with functools.partial")
    return ba.args


def _n_positional(sig):
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               for p in sig.parameters.values())


def _nondiff_positions(sig, nums, names, fun):
    """nondiff_argnums with the positions of the parameters named in nondiff_argnames
    added (JAX resolves names against the signature the same way)."""
    nums = tuple(int(i) for i in nums)
    names = (names,) if isinstance(names, str) else tuple(names)
    if not names:
        return nums
    fname = getattr(fun, "__name__", "the function")
    params = [] if sig is None else [p for p in sig.parameters.values()
                                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    where = {p.name: i for i, p in enumerate(params)}
    for n in names:
        if n not in where:
            raise FxadTypeError(f"nondiff_argnames contains {n!r}, which is not a positional "
                                f"parameter of {fname}; name one of {sorted(where)}")
    return tuple(dict.fromkeys(nums + tuple(where[n] for n in names)))


def _split_nondiff(args, nondiff):
    return [a for i, a in enumerate(args) if i in nondiff], \
        [a for i, a in enumerate(args) if i not in nondiff]


def _merge(nondiff_vals, dyn, nondiff, n):
    it_s, it_d = iter(nondiff_vals), iter(dyn)
    return [next(it_s) if i in nondiff else next(it_d) for i in range(n)]


def _check_like(fname, what, got_leaves, got_tree, want_avals, want_tree, expected="expected"):
    """The rule's `what` must match `want` in structure, shapes and (float) dtypes: a
    mismatch would otherwise give wrong derivatives far from its cause."""
    if got_tree != want_tree:
        raise FxadTypeError(f"custom rule of '{fname}': {what} has structure {got_tree}, "
                            f"{expected} {want_tree}")
    for i, (g, w) in enumerate(zip(got_leaves, want_avals)):
        a = get_aval(g)
        if a.shape != w.shape:
            raise FxadTypeError(f"custom rule of '{fname}': {what} leaf {i} has shape "
                                f"{a.shape}, {expected} {w.shape}")
        if a.dtype != w.dtype and np.issubdtype(w.dtype, np.inexact) and a.weak is None:
            raise FxadTypeError(f"custom rule of '{fname}': {what} leaf {i} has dtype "
                                f"{a.dtype}, {expected} {w.dtype}")


def _fun_signature(obj, flat_fun, store, leaves, in_tree, nd_vals):
    """(out_tree, out_avals) of the custom function's own `fun` at these inputs, staged once
    per signature and cached on `obj`; None if `fun` cannot be staged (opaque NumPy or
    Python control flow inside, which is what custom rules are for), so no check is made."""
    avals = [get_aval(x) for x in leaves]
    key = (in_tree, avals_key(avals), tuple(nd_vals))
    try:
        hit = obj._signatures.get(key, False)
    except TypeError:  # unhashable non-differentiable values: stage every time
        key, hit = None, False
    if hit is not False:
        return hit
    try:
        out_avals = stage(flat_fun, avals).out_avals
        sig = (store["out"], [ShapedArray(a.shape, a.dtype) for a in out_avals])
    except Exception:  # noqa: BLE001  (best effort: the rule itself still runs)
        sig = None
    frozen = cache_key(in_tree) if key is not None else None
    if frozen is not None:  # a copy of mutable node data, not the user's object
        key = (frozen,) + key[1:]
        if len(obj._signatures) >= 64:
            obj._signatures.pop(next(iter(obj._signatures)))
        obj._signatures[key] = sig
    return sig


def _remember_signature(obj, leaves, in_tree, nd_vals, out_tree, outs):
    """After an evaluation of `fun` itself (no tracer among the inputs), its output signature
    at these inputs is known: cached, so that a rule calling the function (JAX's pattern
    `f_fwd = lambda x: (f(x), res)`) is checked without running `fun` once more."""
    if any(isinstance(x, Tracer) for x in leaves):
        return
    frozen = cache_key(in_tree)  # a copy of mutable node data, not the user's object
    if frozen is None:
        return
    try:
        key = (frozen, avals_key([get_aval(x) for x in leaves]), tuple(nd_vals))
        if key in obj._signatures:
            return
    except TypeError:
        return
    if len(obj._signatures) >= 64:
        obj._signatures.pop(next(iter(obj._signatures)))
    obj._signatures[key] = (out_tree, [ShapedArray(get_aval(o).shape, get_aval(o).dtype)
                                       for o in outs])


def _check_primal_out(obj, fname, rule, out_leaves, out_tree, sig_args):
    """A rule's primal output must be what `fun` returns (else derivatives are silently
    computed for a different function)."""
    sig = _fun_signature(obj, *sig_args)
    if sig is not None:
        _check_like(fname, f"{rule}'s primal output", out_leaves, out_tree, sig[1],
                    sig[0], expected=f"but '{fname}' itself returns")


# --- custom_jvp -------------------------------------------------------------------------------

class custom_jvp:
    """A function with a custom JVP rule: `@custom_jvp def f(x): ...`, then
    `@f.defjvp def f_jvp(primals, tangents): return f(*primals), tangent_out`."""

    def __init__(self, fun: Callable, nondiff_argnums: tuple[int, ...] = (),
                 nondiff_argnames: tuple[str, ...] = ()):
        self.fun = fun
        self.jvp = None
        self._signatures = {}
        self._sig = _signature(fun)
        self.nondiff_argnums = _nondiff_positions(self._sig, nondiff_argnums, nondiff_argnames,
                                                  fun)
        functools.update_wrapper(self, fun)

    def defjvp(self, jvp: Callable) -> Callable:
        self.jvp = jvp
        return jvp

    def defjvps(self, *rules: Callable | None) -> None:
        """One rule per differentiable argument: `rule(t, ans, *primals) -> contribution`
        (None for an argument with no dependence); contributions are summed."""
        def jvp(*args):
            nd, (primals, tangents) = args[:-2], args[-2:]
            full = _merge(nd, primals, self.nondiff_argnums, len(nd) + len(primals))
            ans = self.fun(*full)
            out = None
            for rule, t in zip(rules, tangents):
                if rule is not None:
                    c = rule(t, ans, *full)
                    out = c if out is None else out + c
            return ans, (out if out is not None else np.zeros_like(ans))
        self.jvp = jvp

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "custom_jvp")
        if self.jvp is None:
            raise FxadTypeError(f"custom_jvp function '{name}' has no JVP rule; define one "
                                f"with @{name}.defjvp")
        args = resolve_args(self._sig, args, kwargs, name)
        nd_vals, dyn = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(tuple(dyn))
        store = {}

        def flat_fun(*xs):
            out_leaves, store["out"] = tree_flatten(
                self.fun(*_merge(nd_vals, tree_unflatten(in_tree, xs), self.nondiff_argnums,
                                 len(args))))
            return out_leaves

        def flat_jvp(primals, tangents):
            p, t = tree_unflatten(in_tree, primals), tree_unflatten(in_tree, tangents)
            res = self.jvp(*nd_vals, tuple(p), tuple(t))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise FxadTypeError(f"the JVP rule of '{name}' must return a pair "
                                    "(primal_out, tangent_out)")
            out_leaves, out_tree = tree_flatten(res[0])
            t_leaves, t_tree = tree_flatten(res[1])
            _check_primal_out(self, name, "the JVP rule", out_leaves, out_tree,
                              (flat_fun, store, primals, in_tree, nd_vals))
            store["out"] = out_tree
            _check_like(name, "tangent_out", t_leaves, t_tree,
                        [get_aval(o) for o in out_leaves], out_tree)
            return out_leaves, t_leaves
        flat_fun.nondiff = nd_vals  # (their tracers may be closed over: see out_avals_of)
        outs = custom_jvp_call_p.bind(*leaves, fun=flat_fun, jvp=flat_jvp, name=name)
        _remember_signature(self, leaves, in_tree, nd_vals, store["out"], outs)
        return tree_unflatten(store["out"], outs)


# --- custom_vjp -------------------------------------------------------------------------------

class custom_vjp:
    """A function with a custom VJP: `f.defvjp(fwd, bwd)` with `fwd(*args) -> (out, res)`
    (res: any pytree) and `bwd(res, ct) -> tuple of cotangents, one per argument`."""

    def __init__(self, fun: Callable, nondiff_argnums: tuple[int, ...] = (),
                 nondiff_argnames: tuple[str, ...] = ()):
        self.fun = fun
        self.fwd = self.bwd = None
        self._signatures = {}
        self._sig = _signature(fun)
        self.nondiff_argnums = _nondiff_positions(self._sig, nondiff_argnums, nondiff_argnames,
                                                  fun)
        self._check_fwd = True  # off for checkpoint, whose fwd is fun itself
        self._remat = None  # checkpoint's function: its bwd differentiates only what is needed
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        self.fwd, self.bwd = fwd, bwd  # (returns None, as JAX's: a notebook shows nothing)

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "custom_vjp")
        if self.fwd is None:
            raise FxadTypeError(f"custom_vjp function '{name}' has no rule; define one with "
                                f"{name}.defvjp(fwd, bwd)")
        args = resolve_args(self._sig, args, kwargs, name)
        nondiff = self.nondiff_argnums
        nd_vals, dyn = _split_nondiff(args, nondiff)
        leaves, in_tree = tree_flatten(tuple(dyn))
        store = {}

        def full(xs):
            return _merge(nd_vals, tree_unflatten(in_tree, xs), nondiff, len(args))

        def flat_fun(*xs):
            out_leaves, store["out"] = tree_flatten(self.fun(*full(xs)))
            return out_leaves

        def flat_fwd(*xs):
            res = self.fwd(*full(xs))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise FxadTypeError(f"fwd of custom_vjp function '{name}' must return a pair "
                                    "(output, residuals)")
            out_leaves, out_tree = tree_flatten(res[0])
            if self._check_fwd:
                _check_primal_out(self, name, "fwd", out_leaves, out_tree,
                                  (flat_fun, store, xs, in_tree, nd_vals))
            store["out"] = out_tree
            res_leaves, store["res"] = tree_flatten(res[1])
            return out_leaves, res_leaves

        def flat_bwd(residuals, cts, needed=None):
            ct = tree_unflatten(store["out"], cts)
            if self._remat is not None:  # checkpoint: recompute, differentiate what is needed
                return self._remat(full, residuals, ct, needed)
            got = self.bwd(*nd_vals, tree_unflatten(store["res"], residuals), ct)
            if not isinstance(got, (tuple, list)) or len(got) != len(dyn):
                raise FxadTypeError(
                    f"bwd of custom_vjp function '{name}' must return a tuple with one "
                    f"cotangent per differentiable argument ({len(dyn)}), got "
                    f"{len(got) if isinstance(got, (tuple, list)) else type(got).__name__}")
            out = []
            for i, (arg, g) in enumerate(zip(dyn, got)):
                arg_leaves, arg_tree = tree_flatten(arg)
                if g is None:
                    out += [np.zeros(get_aval(a).shape, get_aval(a).dtype) for a in arg_leaves]
                    continue
                g_leaves, g_tree = tree_flatten(g)
                if g_tree != arg_tree:
                    raise FxadTypeError(f"bwd of '{name}': cotangent {i} has structure "
                                        f"{g_tree}, expected {arg_tree}")
                for a, c in zip(arg_leaves, g_leaves):
                    aa, ca = get_aval(a), get_aval(c)
                    if ca.shape != aa.shape:
                        raise FxadTypeError(
                            f"bwd of '{name}': cotangent {i} has shape {ca.shape} but the "
                            f"argument has shape {aa.shape} (expected {aa.str_short()})")
                    if ca.dtype != aa.dtype and np.issubdtype(aa.dtype, np.inexact):
                        # float precision may differ (cast); int/bool/complex-for-real no
                        if not (np.issubdtype(ca.dtype, np.inexact)
                                and np.can_cast(ca.dtype, aa.dtype, "same_kind")):
                            raise FxadTypeError(
                                f"bwd of '{name}': cotangent {i} has dtype {ca.dtype}, "
                                f"expected {aa.dtype}")
                        c = unbroadcast(c, aa)
                    out.append(c)
            return out
        flat_fun.nondiff = nd_vals  # (their tracers may be closed over: see out_avals_of)
        flat_fwd.owner = self  # forward mode recognizes fwd calling this function again
        outs = custom_vjp_call_p.bind(*leaves, fun=flat_fun, fwd=flat_fwd, bwd=flat_bwd,
                                      name=name)
        _remember_signature(self, leaves, in_tree, nd_vals, store["out"], outs)
        return tree_unflatten(store["out"], outs)


def _value_and_rule(fun, args):
    got = fun(*args)
    if not (isinstance(got, (tuple, list)) and len(got) == 2 and callable(got[1])):
        name = getattr(fun, "__name__", "function")
        raise FxadTypeError(f"custom_gradient function '{name}' must return a pair (value, "
                            "vjp), vjp a function from the output cotangent to the arguments' "
                            "cotangents")
    return got


def custom_gradient(fun: Callable) -> Callable:
    """JAX's `custom_gradient`: `fun(*args)` returns `(value, vjp)`, `vjp(ct)` the cotangents of
    the positional arguments (a tuple, one per argument; a single value for a one-argument
    function). Built on custom_vjp, so it composes with every transformation; forward mode
    differentiates `fun`'s value itself. The backward pass calls `fun` again on the saved
    arguments to get `vjp` (its residuals are the arguments: only arrays are kept across the
    passes, so it also works under jit)."""
    @functools.wraps(fun)
    def value(*args):
        return _value_and_rule(fun, args)[0]

    def fwd(*args):
        return _value_and_rule(fun, args)[0], args

    def bwd(args, ct):
        cts = _value_and_rule(fun, args)[1](ct)
        return tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)

    wrapped = custom_vjp(value)
    wrapped.defvjp(fwd, bwd)
    return wrapped


def checkpoint(fun: Callable, static_argnums: tuple[int, ...] = ()) -> Callable:
    """Rematerialization of everything inside `fun`: its residuals are not kept; the backward
    pass recomputes them from the inputs. A custom_vjp whose residuals are the inputs
    (`static_argnums` are its non-differentiable arguments). fxad.checkpoint (api/remat.py)
    adds policies on top of this."""

    # Built once per checkpoint() call and owned by the wrapper (no global cache that would
    # keep user closures alive).
    f = custom_vjp(fun, nondiff_argnums=static_argnums)
    f._check_fwd, f._remat = False, functools.partial(_remat_bwd, fun)
    f.defvjp(lambda *args: (fun(*args), [a for i, a in enumerate(args)
                                         if i not in f.nondiff_argnums]), None)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if trace_stack():  # under a transformation: fun may close over its traced values,
            # which must not hide in a closure its rules keep (they run later)
            lifted = _closure_lifted(fun, args, kwargs, f.nondiff_argnums)
            if lifted is not None:
                return lifted
        return f(*args, **kwargs)
    return wrapped


def _closure_lifted(fun, args, kwargs, static):
    """checkpoint(fun)(*args) when fun closes over values being traced by an enclosing
    transformation: fun staged, those values made explicit arguments of a checkpoint of
    the staged program (so they flow in, and are differentiated, as arguments). None when
    fun closes over no traced value."""
    n = len(args)
    pos = sorted({i % n for i in static if -n <= i < n})
    dyn = [a for i, a in enumerate(args) if i not in pos]
    leaves, tree = tree_flatten((dyn, kwargs))
    store = {}

    def flat(*xs):
        d, kw = tree_unflatten(tree, list(xs))
        it = iter(d)
        full = [args[i] if i in pos else next(it) for i in range(n)]
        out, store["tree"] = tree_flatten(fun(*full, **kw))
        return out
    closed, lifted = lift_tracer_consts(stage(flat, [get_aval(x) for x in leaves],
                                              name="checkpoint"))
    if not lifted:
        return None
    j, consts = closed.jaxpr, closed.consts
    g = checkpoint(lambda *zs: eval_jaxpr(j, consts, *zs))
    g.__name__ = getattr(fun, "__name__", "checkpoint")
    return tree_unflatten(store["tree"], g(*lifted, *leaves))


def _remat_bwd(fun, full, leaves, ct, needed=None):
    """checkpoint's backward pass (its residuals are the flat input leaves): recompute `fun`
    and differentiate it with respect to the inputs that carry tangents (`needed`, per leaf;
    None: all) only, so e.g. d/dx of a block that takes its weights as arguments builds no
    weight cotangents. Entries not needed are None."""
    idx = [i for i, m in enumerate(needed) if m] if needed is not None else range(len(leaves))

    def part(*sub):
        xs = list(leaves)
        for i, x in zip(idx, sub):
            xs[i] = x
        return tree_flatten(fun(*full(xs)))[0]
    _, pullback, _ = vjp_flat(part, [leaves[i] for i in idx], name="checkpoint")
    got = pullback(tree_flatten(ct)[0])
    out = [None] * len(leaves)
    for i, c in zip(idx, got):
        out[i] = c
    return out


def linear_call(fun: Callable, fun_transpose: Callable, residual_args: Any,
                linear_args: Any) -> Any:
    """fun(residual_args, linear_args), linear in linear_args, with the transpose given:
    fun_transpose(residual_args, out_cotangent) -> cotangent of linear_args (JAX's API).
    Reverse mode uses fun_transpose instead of transposing fun; derivatives in
    residual_args differentiate fun (and fun_transpose), so write both with fxad
    operations if the residuals carry derivatives (fxad/rules/control/custom_linear.py)."""
    name = getattr(fun, "__name__", "linear_call")
    res, res_tree = tree_flatten(residual_args)
    lin, lin_tree = tree_flatten(linear_args)
    res, lin = [_as_value(x) for x in res], [_as_value(x) for x in lin]
    n_res, store = len(res), {}

    def flat_fun(*args):
        out, store["out"] = tree_flatten(fun(tree_unflatten(res_tree, args[:n_res]),
                                             tree_unflatten(lin_tree, args[n_res:])))
        return out

    def flat_transpose(*args):
        ct = tree_unflatten(store["out"], args[n_res:])
        got, tree = tree_flatten(fun_transpose(tree_unflatten(res_tree, args[:n_res]), ct))
        if tree != lin_tree:
            raise FxadTypeError(f"the transpose of '{name}' returned {tree}, expected the "
                                f"structure of linear_args, {lin_tree}")
        return got
    avals = [ShapedArray(get_aval(x).shape, get_aval(x).dtype) for x in res + lin]
    out_avals = [ShapedArray(a.shape, a.dtype) for a in stage(flat_fun, avals).out_avals]
    outs = _linear_call(flat_fun, flat_transpose, n_res, out_avals, name, *res, *lin)
    return tree_unflatten(store["out"], outs)


def _as_value(x):
    return x if isinstance(x, (Tracer, np.ndarray)) else np.asarray(x)

"""vmap: one table of every fxad.numpy / fxad.lax operation, each checked against applying the
op to every slice (plain NumPy inputs, the eager path) and stacking the results; then the
compositions of vmap with itself and with the derivative transformations.

Each table row is (name, function, per-example argument shapes, domain). For each row we run
in_axes = 0 / 1 / -1 on every argument, with each argument unbatched (None) in turn, mixed
axes, and out_axes 1 / -1. The batch size B = 3 is deliberately not a dimension of any
per-example shape, so a batch axis confused with a data axis shows up as a shape error.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fxad
import fxad.lax as lax
import fxad.numpy as fnp
from fxad.tree_util import tree_flatten, tree_unflatten

B = 3  # batch size; no per-example shape below has a 3 in it
HSET = settings(max_examples=15, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --- the harness -------------------------------------------------------------------------------

def draw(rng, shape, domain):
    """A value of the given per-example shape drawn from a named domain."""
    if isinstance(domain, tuple):  # ("int", lo, hi): integer array, lo <= v < hi
        _, lo, hi = domain
        return rng.integers(lo, hi, size=shape).astype(np.int64)
    if domain == "real":
        return rng.uniform(-2.0, 2.0, shape)
    if domain == "pos":
        return rng.uniform(0.5, 3.0, shape)
    if domain == "unit":
        return rng.uniform(-0.9, 0.9, shape)
    if domain == "gt1":
        return rng.uniform(1.1, 3.0, shape)
    if domain == "nz":  # bounded away from zero, both signs
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)
    if domain == "tie":  # floats in {-1, 0, 1}: comparisons and extrema see many ties
        return rng.integers(-1, 2, size=shape).astype(np.float64)
    if domain == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if domain == "intv":
        return rng.integers(-4, 5, size=shape).astype(np.int64)
    raise ValueError(domain)


def insert_batch(rng, shape, domain, axis):
    """A batched argument: B examples stacked at `axis` (None: one unbatched example)."""
    if axis is None:
        return draw(rng, shape, domain)
    return np.stack([draw(rng, shape, domain) for _ in range(B)], axis=axis)


def take(x, axis, b):
    return x if axis is None else np.take(x, b, axis=axis)


def reference(fn, args, in_axes, out_axes):
    """Apply fn to each example's slices (plain NumPy) and stack leaf-wise at out_axes."""
    outs = [fn(*[take(a, ax, b) for a, ax in zip(args, in_axes)]) for b in range(B)]
    flat = [tree_flatten(o) for o in outs]
    tree = flat[0][1]
    leaves = [np.stack([np.asarray(f[0][i]) for f in flat], axis=out_axes)
              for i in range(len(flat[0][0]))]
    return tree_unflatten(tree, leaves)


def assert_tree_close(actual, expected, rtol=1e-12, atol=1e-12):
    a_leaves, a_tree = tree_flatten(actual)
    e_leaves, e_tree = tree_flatten(expected)
    assert a_tree == e_tree, f"tree structure {a_tree} != {e_tree}"
    for a, e in zip(a_leaves, e_leaves):
        assert isinstance(a, np.ndarray), f"vmap returned {type(a).__name__}, not ndarray"
        e = np.asarray(e)
        assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
        assert a.dtype == e.dtype, f"dtype {a.dtype} != expected {e.dtype}"
        if np.issubdtype(e.dtype, np.inexact):
            lo = np.finfo(e.dtype).eps > 1e-10  # float32/16: summation order shows at ~1e-7
            np.testing.assert_allclose(a, e, rtol=max(rtol, 1e-5 if lo else 0),
                                       atol=max(atol, 1e-5 if lo else 0))
        else:
            np.testing.assert_array_equal(a, e)


def check_vmap(fn, args, in_axes, out_axes=0, **kw):
    expected = reference(fn, args, in_axes, out_axes)
    ia = in_axes[0] if len(in_axes) == 1 else tuple(in_axes)  # 1 arg: pass a bare int
    actual = fxad.vmap(fn, in_axes=ia, out_axes=out_axes)(*args)
    assert_tree_close(actual, expected, **kw)


@dataclass
class Op:
    name: str
    fn: object
    shapes: list
    domain: object = "real"  # one domain for all arguments, or a list (one per argument)
    # The first argument must be a traced value (it is indexed with a traced index, or has a
    # method called on it): an unbatched one would be a plain ndarray, as in JAX.
    x_batched: bool = False

    def domains(self):
        return self.domain if isinstance(self.domain, list) else [self.domain] * len(self.shapes)


# --- the table -----------------------------------------------------------------------------------

M, T3, V = (4, 5), (2, 4, 5), (5,)  # a matrix, a 3-d array, a vector (no axis of size 3)
A = np.array  # constant index arrays in closures

OPS = [
    # elementwise unary (fxad.numpy names; rsqrt and logistic exist only in lax)
    Op("neg", fnp.negative, [M]),
    Op("neg_op", lambda x: -x, [T3]),
    Op("pos_op", lambda x: +x, [M]),
    Op("exp", fnp.exp, [M]),
    Op("log", fnp.log, [M], "pos"),
    Op("log1p", fnp.log1p, [M], "pos"),
    Op("expm1", fnp.expm1, [M]),
    Op("exp2", fnp.exp2, [M]),
    Op("log2", fnp.log2, [M], "pos"),
    Op("log10", fnp.log10, [T3], "pos"),
    Op("sqrt", fnp.sqrt, [T3], "pos"),
    Op("rsqrt", lax.rsqrt, [M], "pos"),
    Op("sin", fnp.sin, [M]),
    Op("cos", fnp.cos, [M]),
    Op("tan", fnp.tan, [M], "unit"),
    Op("tanh", fnp.tanh, [M]),
    Op("arcsin", fnp.arcsin, [M], "unit"),
    Op("arccos", fnp.arccos, [M], "unit"),
    Op("arctan", fnp.arctan, [M]),
    Op("sinh", fnp.sinh, [M]),
    Op("cosh", fnp.cosh, [M]),
    Op("arcsinh", fnp.arcsinh, [M]),
    Op("arccosh", fnp.arccosh, [M], "gt1"),
    Op("arctanh", fnp.arctanh, [M], "unit"),
    Op("abs", fnp.abs, [M], "tie"),
    Op("abs_op", lambda x: abs(x), [V]),
    Op("sign", fnp.sign, [M], "tie"),
    Op("floor", fnp.floor, [M]),
    Op("trunc", fnp.trunc, [M]),
    Op("cbrt", fnp.cbrt, [M]),
    Op("signbit", fnp.signbit, [M]),
    Op("ceil", fnp.ceil, [M]),
    Op("round", fnp.round, [M]),
    Op("round_decimals", lambda x: fnp.round(x, 1), [M]),
    Op("lax_round", lambda x: lax.round(x, 2), [M]),
    Op("logistic", lax.logistic, [M]),
    Op("square", fnp.square, [M]),
    Op("reciprocal", fnp.reciprocal, [M], "nz"),
    Op("isfinite", fnp.isfinite, [M]),
    Op("isnan", fnp.isnan, [M]),
    Op("logical_not", fnp.logical_not, [M], "bool"),
    Op("invert_op", lambda x: ~x, [M], "bool"),
    Op("exp_scalar", fnp.exp, [()]),
    Op("sin_vector", fnp.sin, [V]),
    Op("neg_int", fnp.negative, [M], ("int", -5, 5)),
    Op("abs_int", fnp.abs, [V], "intv"),
    Op("clip", lambda x: fnp.clip(x, -0.5, 0.7), [M]),
    Op("clip_method", lambda x: x.clip(-0.5), [M]),
    Op("np_dispatch_sin", np.sin, [M]),
    Op("np_dispatch_exp_mul", lambda x: np.exp(x) * x, [M]),
    # elementwise binary
    Op("add", fnp.add, [M, M]),
    Op("add_bcast", fnp.add, [M, V]),
    Op("add_bcast_rank", fnp.add, [T3, (4, 1)]),
    Op("add_scalar_arg", fnp.add, [M, ()]),
    Op("add_py_scalar", lambda x: x + 2.0, [M]),
    Op("radd_py_scalar", lambda x: 2.0 + x, [M]),
    Op("subtract", fnp.subtract, [M, V]),
    Op("rsub_op", lambda x: 1.0 - x, [M]),
    Op("multiply", fnp.multiply, [T3, M]),
    Op("multiply_op", lambda x, y: x * y, [V, M]),
    Op("divide", fnp.divide, [M, M], ["real", "nz"]),
    Op("rdiv_op", lambda x: 1.0 / x, [M], "nz"),
    Op("divide_int", fnp.divide, [M, M], [("int", -5, 5), ("int", 1, 4)]),
    Op("floor_divide", fnp.floor_divide, [M, V], ["real", "nz"]),
    Op("fmod", fnp.fmod, [M, V], ["real", "nz"]),
    Op("floordiv_op", lambda x, y: x // y, [M, M], ["real", "nz"]),
    Op("remainder", fnp.remainder, [M, V], ["real", "nz"]),
    Op("mod_op", lambda x: x % 0.7, [M]),
    Op("power_float", fnp.power, [M, M], ["pos", "real"]),
    Op("power_float_bcast", fnp.power, [M, ()], ["pos", "real"]),
    Op("power_float_const", lambda x: fnp.power(x, 2.5), [M], "pos"),
    Op("power_int_3", lambda x: fnp.power(x, 3), [M]),
    Op("power_int_neg", lambda x: x ** -2, [M], "nz"),
    Op("power_int_0", lambda x: x ** 0, [M]),
    Op("rpow_op", lambda x: 2.0 ** x, [M]),
    Op("integer_pow", lambda x: lax.integer_pow(x, 4), [M]),
    Op("pow_lax", lax.pow, [M, V], ["pos", "real"]),
    Op("arctan2", fnp.arctan2, [M, M], ["real", "nz"]),
    Op("complex", lambda x, y: lax.complex(x, y) * lax.complex(y, 1.0), [M, V]),
    Op("real-imag-conj", lambda x, y: lax.real(lax.conj(lax.complex(x, y)) ** 2)
       + lax.imag(lax.complex(y, x) ** 3), [M, M]),
    Op("arctan2_bcast", fnp.arctan2, [V, M], ["real", "nz"]),
    Op("hypot", fnp.hypot, [V, M], ["real", "nz"]),
    Op("float_power", lax.float_power, [M, V], ["pos", "real"]),
    Op("maximum", fnp.maximum, [M, M], "tie"),
    Op("minimum", fnp.minimum, [M, V], "tie"),
    Op("maximum_const", lambda x: fnp.maximum(x, 0.0), [M]),
    Op("equal", fnp.equal, [M, M], "tie"),
    Op("not_equal", fnp.not_equal, [M, V], "tie"),
    Op("less", fnp.less, [M, M], "tie"),
    Op("less_equal", fnp.less_equal, [M, M], "tie"),
    Op("greater", fnp.greater, [V, M], "tie"),
    Op("greater_equal", fnp.greater_equal, [M, M], "tie"),
    Op("lt_op", lambda x, y: x < y, [M, M], "tie"),
    Op("eq_op", lambda x, y: x == y, [M, V], "tie"),
    Op("gt_scalar_op", lambda x: x > 0.0, [M], "tie"),
    Op("where", fnp.where, [M, M, M], ["bool", "real", "real"]),
    Op("where_bcast", fnp.where, [M, V, ()], ["bool", "real", "real"]),
    Op("where_computed", lambda x: fnp.where(x > 0, x, 0.0), [M]),
    Op("select", lax.select, [M, M, M], ["bool", "real", "real"]),
    Op("logical_and", fnp.logical_and, [M, M], "bool"),
    Op("logical_or", fnp.logical_or, [M, V], "bool"),
    Op("and_op", lambda x, y: x & y, [M, M], "bool"),
    Op("or_op", lambda x, y: x | y, [M, M], "bool"),
    Op("add_int_float", fnp.add, [M, M], [("int", -5, 5), "real"]),
    # reductions
    *[Op(f"{r}_axis{ax}{'_keep' if kd else ''}",
         (lambda r, ax, kd: lambda x: getattr(fnp, r)(x, axis=ax, keepdims=kd))(r, ax, kd),
         [T3], "tie" if r in ("max", "min", "amax", "amin") else "real")
      for r in ("sum", "mean", "prod", "max", "min", "var", "std")
      for ax, kd in ((None, False), (0, False), (1, False), (-1, True), ((0, 2), False),
                     ((0, 2), True), (None, True))],
    Op("amax", lambda x: fnp.amax(x, axis=1), [M], "tie"),
    Op("amin", lambda x: fnp.amin(x, 0), [M], "tie"),
    Op("sum_vector", fnp.sum, [V]),
    Op("sum_scalar", fnp.sum, [()]),
    Op("sum_int", lambda x: fnp.sum(x, axis=0), [M], ("int", -5, 5)),
    Op("sum_dtype", lambda x: fnp.sum(x, dtype=np.float32), [M]),
    Op("mean_int", fnp.mean, [M], ("int", -5, 5)),
    Op("var_ddof", lambda x: fnp.var(x, axis=1, ddof=1), [M]),
    Op("std_ddof", lambda x: fnp.std(x, axis=(0, 1), ddof=1, keepdims=True), [T3]),
    Op("sum_method", lambda x: x.sum(axis=1), [M]),
    Op("mean_method", lambda x: x.mean(), [M]),
    Op("max_method", lambda x: x.max(axis=-1, keepdims=True), [M], "tie"),
    Op("np_dispatch_sum", lambda x: np.sum(x, axis=0), [M]),
    *[Op(f"{r}_axis{ax}{'_keep' if kd else ''}",
         (lambda r, ax, kd: lambda x: getattr(fnp, r)(x, axis=ax, keepdims=kd))(r, ax, kd),
         [T3], "tie")
      for r in ("argmax", "argmin")
      for ax, kd in ((None, False), (0, False), (1, False), (-1, False), (2, True),
                     (None, True))],
    Op("argmax_method", lambda x: x.argmax(axis=0), [M]),
    Op("lax_reduce_sum", lambda x: lax.reduce_sum(x, (0, 2), True), [T3]),
    Op("lax_reduce_max", lambda x: lax.reduce_max(x, (1,)), [T3], "tie"),
    Op("lax_reduce_min", lambda x: lax.reduce_min(x, (0, 1)), [T3], "tie"),
    Op("lax_reduce_prod", lambda x: lax.reduce_prod(x, (2,), True), [T3]),
    Op("lax_argmin", lambda x: lax.argmin(x, 1, True), [T3], "tie"),
    Op("lax_argmax", lambda x: lax.argmax(x, 0), [T3], "tie"),
    # structural
    Op("reshape", lambda x: fnp.reshape(x, (5, 4)), [M]),
    Op("reshape_minus1", lambda x: fnp.reshape(x, (-1,)), [T3]),
    Op("reshape_split_axis", lambda x: fnp.reshape(x, (2, 2, 5)), [M]),
    Op("reshape_scalar", lambda x: fnp.reshape(x, (1, 1)), [()]),
    Op("reshape_method", lambda x: x.reshape(8, 5), [T3]),
    Op("reshape_method_tuple", lambda x: x.reshape((4, -1)), [T3]),
    Op("transpose", fnp.transpose, [T3]),
    Op("transpose_perm", lambda x: fnp.transpose(x, (1, 0, 2)), [T3]),
    Op("transpose_neg_perm", lambda x: fnp.transpose(x, (-1, 0, 1)), [T3]),
    Op("T_property", lambda x: x.T, [M]),
    Op("mT_property", lambda x: x.mT, [T3]),
    Op("transpose_method", lambda x: x.transpose(2, 0, 1), [T3]),
    Op("broadcast_to", lambda x: fnp.broadcast_to(x, (4, 5)), [(1, 5)]),
    Op("broadcast_to_rank", lambda x: fnp.broadcast_to(x, (2, 4, 5)), [V]),
    Op("broadcast_to_scalar", lambda x: fnp.broadcast_to(x, (2, 4)), [()]),
    Op("broadcast_to_same", lambda x: fnp.broadcast_to(x, M), [M]),
    Op("expand_dims_0", lambda x: fnp.expand_dims(x, 0), [M]),
    Op("expand_dims_neg", lambda x: fnp.expand_dims(x, -1), [M]),
    Op("expand_dims_tuple", lambda x: fnp.expand_dims(x, (0, 2)), [M]),
    Op("newaxis", lambda x: x[:, fnp.newaxis], [M]),
    Op("squeeze_all", fnp.squeeze, [(4, 1, 5)]),
    Op("squeeze_axis", lambda x: fnp.squeeze(x, 1), [(4, 1, 1)]),
    Op("squeeze_method", lambda x: x.squeeze(-1), [(4, 1)]),
    Op("concatenate_0", lambda x, y: fnp.concatenate([x, y]), [M, (2, 5)]),
    Op("concatenate_1", lambda x, y: fnp.concatenate([x, y], axis=1), [M, (4, 2)]),
    Op("concatenate_neg", lambda x, y, z: fnp.concatenate((x, y, z), axis=-1),
       [M, (4, 1), (4, 2)]),
    Op("concatenate_none", lambda x, y: fnp.concatenate([x, y], axis=None), [M, V]),
    Op("concatenate_const", lambda x: fnp.concatenate([x, np.ones((1, 5))]), [M]),
    Op("lax_concatenate", lambda x, y: lax.concatenate([x, y], 1), [T3, (2, 1, 5)]),
    Op("stack_0", lambda x, y: fnp.stack([x, y]), [M, M]),
    Op("stack_1", lambda x, y, z: fnp.stack([x, y, z], axis=1), [M, M, M]),
    Op("stack_neg", lambda x, y: fnp.stack((x, y), axis=-1), [M, M]),
    Op("stack_scalars", lambda x, y: fnp.stack([x, y]), [(), ()]),
    Op("split_sections", lambda x: fnp.split(x, 2), [M]),
    Op("split_indices_axis1", lambda x: fnp.split(x, [1, 3], axis=1), [M]),
    Op("split_neg_axis", lambda x: fnp.split(x, 5, axis=-1), [T3]),
    Op("cumsum_1", lambda x: lax.cumsum(x, 1), [T3]),
    Op("cumprod_0", lambda x: lax.cumprod(x, 0), [M]),
    Op("argsort_last", lambda x: lax.argsort(x, 1), [M]),
    Op("searchsorted", lambda a, v: lax.searchsorted(fnp.sort(a), v), [V, M]),
    Op("convolve", lambda a, v: lax.convolve(a, v), [V, (2,)]),
    Op("convolve_long_kernel", lambda a, v: lax.convolve(a, v), [(2,), V]),
    Op("searchsorted_right", lambda a, v: lax.searchsorted(fnp.sort(a), v, "right"), [V, M]),
    Op("fnp_cumsum_flat", fnp.cumsum, [M]),
    Op("fnp_sort", lambda x: fnp.sort(x, 0), [M]),
    Op("flip_none", fnp.flip, [T3]),
    Op("flip_0", lambda x: fnp.flip(x, 0), [M]),
    Op("flip_tuple", lambda x: fnp.flip(x, (0, 2)), [T3]),
    Op("flip_neg", lambda x: fnp.flip(x, -1), [T3]),
    Op("moveaxis", lambda x: fnp.moveaxis(x, 0, -1), [T3]),
    Op("moveaxis_multi", lambda x: fnp.moveaxis(x, (0, 1), (2, 0)), [T3]),
    Op("swapaxes", lambda x: fnp.swapaxes(x, 0, 2), [T3]),
    Op("swapaxes_neg", lambda x: fnp.swapaxes(x, -1, -2), [T3]),
    Op("swapaxes_method", lambda x: x.swapaxes(0, 1), [M]),
    Op("ravel", fnp.ravel, [T3]),
    Op("flatten_method", lambda x: x.flatten(), [M]),
    Op("atleast_1d", fnp.atleast_1d, [()]),
    Op("lax_reshape", lambda x: lax.reshape(x, (20,)), [M]),
    Op("lax_transpose", lambda x: lax.transpose(x, (2, 0, 1)), [T3]),
    Op("lax_broadcast_to", lambda x: lax.broadcast_to(x, (2, 4, 5)), [(4, 1)]),
    Op("lax_flip", lambda x: lax.flip(x, (1,)), [T3]),
    # creation with traced values
    Op("full_traced", lambda x: fnp.full((2, 4), x), [()]),
    Op("full_like", lambda x: fnp.full_like(x, 2.0), [M]),
    Op("zeros_like", fnp.zeros_like, [M]),
    Op("ones_like", fnp.ones_like, [M]),
    Op("linspace_traced", lambda a, b: fnp.linspace(a, b, 5), [(), ()]),
    Op("array_of_tracers", lambda x, y: fnp.array([x, y, x]), [V, V]),
    Op("array_nested", lambda x, y: fnp.array([[x, y], [y, x]]), [(), ()]),
    Op("asarray_dtype", lambda x: fnp.asarray(x, np.float32), [M]),
    # basic indexing
    Op("index_int", lambda x: x[1], [M]),
    Op("index_neg_int", lambda x: x[-1], [T3]),
    Op("index_int_int", lambda x: x[1, -2], [M]),
    Op("index_int_scalar_all", lambda x: x[1, 2, 3], [T3]),
    Op("index_slice", lambda x: x[1:3], [M]),
    Op("index_slice_step", lambda x: x[::2], [V]),
    Op("index_neg_step", lambda x: x[::-1], [M]),
    Op("index_neg_step2", lambda x: x[3:0:-2], [M]),
    Op("index_neg_step_axis1", lambda x: x[:, ::-2], [T3]),
    Op("index_slice_neg_bounds", lambda x: x[-3:-1, 1:], [M]),
    Op("index_none", lambda x: x[None], [M]),
    Op("index_none_middle", lambda x: x[:, None, 1:], [M]),
    Op("index_ellipsis", lambda x: x[..., 1], [T3]),
    Op("index_ellipsis_none", lambda x: x[1, ..., None], [T3]),
    Op("index_ellipsis_middle", lambda x: x[0, ..., 2:4], [T3]),
    Op("index_empty_slice", lambda x: x[2:2], [M]),
    Op("index_vector_int", lambda x: x[2], [V]),
    Op("lax_getitem", lambda x: lax.getitem(x, (slice(None), 2)), [M]),
    # advanced indexing with constant integer arrays
    Op("index_array", lambda x: x[A([0, 2, 2])], [M]),
    Op("index_array_neg", lambda x: x[A([-1, 0, -1])], [M]),
    Op("index_array_2d", lambda x: x[A([[0, 1], [3, 3]])], [M]),
    Op("index_list", lambda x: x[[1, 0]], [M]),
    Op("index_slice_array", lambda x: x[:, A([0, 4, 1])], [M]),
    Op("index_two_arrays", lambda x: x[A([0, 1]), A([1, 2])], [M]),
    Op("index_arrays_bcast", lambda x: x[A([[0], [3]]), A([1, 4])], [M]),
    Op("index_adjacent_after_slice", lambda x: x[1:, A([0, 2]), A([1, 3])], [T3]),
    Op("index_adjacent_int_array", lambda x: x[:, 0, A([1, 2])], [T3]),
    Op("index_nonadjacent", lambda x: x[A([0, 1]), :, A([1, 2])], [T3]),
    Op("index_nonadjacent_int", lambda x: x[0, :, A([1, 2, 4])], [T3]),
    Op("index_nonadjacent_none", lambda x: x[A([1, 0]), None, A([2, 3])], [M]),
    Op("index_array_ellipsis", lambda x: x[..., A([4, 0])], [T3]),
    Op("index_array_then_slice", lambda x: x[A([1, 0]), 1:3], [T3]),
    Op("index_bool_mask", lambda x: x[A([True, False, True, True])], [M]),
    Op("index_bool_mask_axis1", lambda x: x[:, A([True, False, True, False, True])], [M]),
    # advanced indexing with index arrays as (possibly batched) arguments
    Op("index_arg", lambda x, i: x[i], [M, (2,)], ["real", ("int", -4, 4)], True),
    Op("index_arg_2d", lambda x, i: x[i], [M, (2, 2)], ["real", ("int", 0, 4)], True),
    Op("index_arg_slice_first", lambda x, i: x[:, i], [M, (2,)], ["real", ("int", 0, 5)],
       True),
    Op("index_arg_pair", lambda x, i, j: x[i, j], [M, (2,), (2,)],
       ["real", ("int", 0, 4), ("int", 0, 5)], True),
    Op("index_arg_nonadjacent", lambda x, i, j: x[i, :, j], [T3, (2,), (2,)],
       ["real", ("int", 0, 2), ("int", 0, 5)], True),
    Op("index_arg_adjacent_after_slice", lambda x, i, j: x[:, i, j], [T3, (4,), (1,)],
       ["real", ("int", 0, 4), ("int", 0, 5)], True),
    Op("index_arg_with_int", lambda x, i: x[1, :, i], [T3, (2,)], ["real", ("int", 0, 5)],
       True),
    Op("index_arg_scalar", lambda x, i: x[i], [M, ()], ["real", ("int", 0, 4)], True),
    Op("index_arg_ellipsis", lambda x, i: x[..., i], [T3, (2,)], ["real", ("int", 0, 5)],
       True),
    Op("index_arg_none", lambda x, i: x[None, i], [M, (2,)], ["real", ("int", 0, 4)], True),
    # ... and through lax.getitem, which also takes an unbatched (plain ndarray) operand
    Op("getitem_arg", lambda x, i: lax.getitem(x, i), [M, (2,)], ["real", ("int", -4, 4)]),
    Op("getitem_arg_pair", lambda x, i, j: lax.getitem(x, (i, j)), [M, (2,), (2,)],
       ["real", ("int", 0, 4), ("int", 0, 5)]),
    Op("getitem_arg_nonadjacent", lambda x, i, j: lax.getitem(x, (i, slice(None), j)),
       [T3, (2,), (2,)], ["real", ("int", 0, 2), ("int", 0, 5)]),
    Op("getitem_arg_adjacent_after_slice",
       lambda x, i, j: lax.getitem(x, (slice(1, None), i, j)),
       [T3, (2, 1), (2,)], ["real", ("int", 0, 4), ("int", 0, 5)]),
    # products
    Op("dot_mm", fnp.dot, [M, (5, 2)]),
    Op("dot_mv", fnp.dot, [M, V]),
    Op("dot_vm", fnp.dot, [(4,), M]),
    Op("dot_vv", fnp.dot, [V, V]),
    Op("dot_nd", fnp.dot, [T3, (4, 5, 2)]),
    Op("dot_scalar", fnp.dot, [(), M]),
    Op("dot_method", lambda x, y: x.dot(y), [M, V], x_batched=True),
    Op("np_dispatch_dot", np.dot, [M, V]),
    Op("matmul_mm", fnp.matmul, [M, (5, 2)]),
    Op("matmul_op", lambda x, y: x @ y, [M, (5, 2)]),
    Op("matmul_batch", fnp.matmul, [T3, (5, 2)]),
    Op("matmul_batch_both", fnp.matmul, [T3, (2, 5, 4)]),
    Op("matmul_bcast_batch", fnp.matmul, [(2, 1, 4, 5), (4, 5, 2)]),
    Op("matmul_vm", fnp.matmul, [(4,), M]),
    Op("matmul_mv", fnp.matmul, [M, V]),
    Op("matmul_v_batch", fnp.matmul, [(4,), T3]),
    Op("matmul_batch_v", fnp.matmul, [T3, V]),
    Op("matmul_vv", fnp.matmul, [V, V]),
    Op("tensordot_2", fnp.tensordot, [T3, M]),
    Op("tensordot_1", lambda a, b: fnp.tensordot(a, b, 1), [T3, (5, 2)]),
    Op("tensordot_0", lambda a, b: fnp.tensordot(a, b, 0), [(2,), V]),
    Op("tensordot_pairs", lambda a, b: fnp.tensordot(a, b, ([0, 2], [1, 0])), [T3, (5, 2)]),
    Op("tensordot_ints", lambda a, b: fnp.tensordot(a, b, (1, -1)), [T3, (2, 4)]),
    Op("einsum_matmul", lambda a, b: fnp.einsum("ij,jk->ik", a, b), [M, (5, 2)]),
    Op("einsum_implicit", lambda a, b: fnp.einsum("ij,jk", a, b), [M, (5, 2)]),
    Op("einsum_full_contract", lambda a, b: fnp.einsum("ij,ij->", a, b), [M, M]),
    Op("einsum_batch", lambda a, b: fnp.einsum("bij,bjk->bik", a, b), [T3, (2, 5, 4)]),
    Op("einsum_transpose_out", lambda a, b: fnp.einsum("ij,kj->jki", a, b), [M, (2, 5)]),
    Op("einsum_sum_axis", lambda a, b: fnp.einsum("ijk,k->i", a, b), [T3, V]),
    Op("einsum_outer", lambda a, b: fnp.einsum("i,j->ij", a, b), [(4,), V]),
    Op("einsum_unary", lambda a: fnp.einsum("ijk->kj", a), [T3]),
    Op("einsum_3_chain", lambda a, b, c: fnp.einsum("ij,jk,kl->il", a, b, c),
       [M, (5, 2), (2, 4)]),
    Op("einsum_3_quadratic", lambda a, b, c: fnp.einsum("i,ij,j->", a, b, c), [(4,), M, V]),
    Op("einsum_3_batch", lambda a, b, c: fnp.einsum("bi,bij,bj->b", a, b, c),
       [(2, 4), T3, (2, 5)]),
    Op("inner_vv", fnp.inner, [V, V]),
    Op("inner_mm", fnp.inner, [M, (2, 5)]),
    Op("inner_scalar", fnp.inner, [(), V]),
    Op("outer_vv", fnp.outer, [(4,), V]),
    Op("outer_mv", fnp.outer, [M, (2,)]),
    Op("vdot_vv", fnp.vdot, [V, V]),
    Op("vdot_mm", fnp.vdot, [M, M]),
    Op("dot_general_batch", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
       [T3, (2, 5, 4)]),
    Op("dot_general_free_only", lambda a, b: lax.dot_general(a, b, (((), ()), ((), ()))),
       [(2,), V]),
    # lax-only
    Op("convert_to_f32", lambda x: lax.convert_element_type(x, np.float32), [M]),
    Op("convert_to_int", lambda x: lax.convert_element_type(x, np.int32), [M]),
    Op("convert_bool_to_f64", lambda x: lax.convert_element_type(x, np.float64), [M], "bool"),
    Op("convert_int_to_f64", lambda x: lax.convert_element_type(x, np.float64), [M],
       ("int", -5, 5)),
    Op("astype_method", lambda x: x.astype(np.float32), [M]),
    Op("stop_gradient", lax.stop_gradient, [M]),
    Op("stop_gradient_api", lambda x: fxad.stop_gradient({"a": x, "b": x * 2}), [M]),
    Op("identity", lambda x: x, [M]),
    Op("constant_output", lambda x: 2.0, [M]),
    Op("unused_second_arg", lambda x, y: fnp.sin(x), [M, V]),
    # pytree outputs
    Op("tuple_output", lambda x, y: (x * y, fnp.sum(x)), [M, M]),
    Op("dict_output", lambda x: {"s": fnp.sin(x), "m": fnp.max(x, axis=0)}, [M]),
]

_names = [op.name for op in OPS]
assert len(_names) == len(set(_names)), "duplicate table names"


def _rng(name, cfg):
    return np.random.default_rng(zlib.crc32(f"{name}|{cfg}".encode()))


def _out_ndim(op):
    rng = _rng(op.name, "probe")
    out = op.fn(*[draw(rng, s, d) for s, d in zip(op.shapes, op.domains())])
    return min(np.ndim(leaf) for leaf in tree_flatten(out)[0])


def axes_configs(shapes):
    """in_axes to run for one row: 0 / 1 / -1 everywhere, each argument unbatched in turn,
    and rotating mixed axes. Axis 1 falls back to 0 for a 0-d argument."""
    nds = [len(s) for s in shapes]
    k = len(shapes)
    one = lambda n: 1 if n >= 1 else 0
    cfgs = [(0,) * k, tuple(one(n) for n in nds), (-1,) * k]
    if k >= 2:
        for i in range(k):
            cfgs.append(tuple(None if j == i else 0 for j in range(k)))
            cfgs.append(tuple(None if j == i else -1 for j in range(k)))
        cfgs.append(tuple((0, 1, -1)[j % 3] if nds[j] >= 1 else 0 for j in range(k)))
        cfgs.append(tuple((-1, 0, 1)[j % 3] if nds[j] >= 1 else -1 for j in range(k)))
    seen, out = set(), []
    for c in cfgs:
        if c not in seen:
            seen.add(c)
            out.append(c)
    return out


def _cases():
    for op in OPS:
        for cfg in axes_configs(op.shapes):
            if op.x_batched and cfg[0] is None:
                continue
            yield pytest.param(op, cfg, 0, id=f"{op.name}-in{cfg}".replace(" ", ""))
        nd = _out_ndim(op)
        for oa in ([1, -1] if nd >= 1 else [-1]):
            yield pytest.param(op, (0,) * len(op.shapes), oa, id=f"{op.name}-out{oa}")


@pytest.mark.parametrize("op,in_axes,out_axes", list(_cases()))
def test_vmap_table(op, in_axes, out_axes):
    rng = _rng(op.name, (in_axes, out_axes))
    args = [insert_batch(rng, s, d, ax) for s, d, ax in zip(op.shapes, op.domains(), in_axes)]
    check_vmap(op.fn, args, in_axes, out_axes)


# Spot-check the table with hypothesis-drawn values, batch sizes and axes on the
# value-sensitive rows (elementwise with domains, reductions with ties, indexing with arrays).
_HYPO_ROWS = [op for op in OPS if op.name in {
    "log", "sqrt", "arctanh", "abs", "sign", "round", "maximum", "minimum", "power_float",
    "arctan2", "where", "max_axis(0, 2)", "argmax_axisNone", "argmin_axis1", "prod_axis1",
    "std_axis(0, 2)", "index_arg_pair", "index_arg_nonadjacent", "matmul_bcast_batch",
    "einsum_3_chain", "floor_divide", "remainder"}]


@pytest.mark.parametrize("op", _HYPO_ROWS, ids=[op.name for op in _HYPO_ROWS])
@HSET
@given(data=st.data())
def test_vmap_table_hypothesis(op, data):
    global B
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    n = data.draw(st.integers(1, 4), label="batch size")
    rng = np.random.default_rng(seed)
    in_axes = [data.draw(st.sampled_from([None] + list(range(-len(s) - 1, len(s) + 1))),
                         label=f"in_axis {i}") for i, s in enumerate(op.shapes)]
    if all(a is None for a in in_axes) or (op.x_batched and in_axes[0] is None):
        in_axes[0] = 0
    old, B = B, n
    try:
        args = [insert_batch(rng, s, d, ax)
                for s, d, ax in zip(op.shapes, op.domains(), in_axes)]
        check_vmap(op.fn, args, in_axes, 0)
    finally:
        B = old


def test_table_covers_every_lax_function():
    """Every public function of fxad.lax is used by some table row, directly (lax.name) or
    through an fxad.numpy name bound to it (fnp.name). scatter_add is reached through grad."""
    import inspect
    import sys
    src = inspect.getsource(sys.modules[__name__])
    fnp_names = {n: getattr(fnp, n) for n in dir(fnp) if not n.startswith("_")}
    missing = []
    for n in dir(lax):
        f = getattr(lax, n)
        if n.startswith("_") or not callable(f) or not getattr(f, "__module__", "").startswith(
                "fxad.rules") or f.__module__.startswith("fxad.rules.collective"):
            continue  # collectives: against loops under vmap in tests/rules/collective
        aliases = [a for a, g in fnp_names.items()
                   if g is f or getattr(g, "__wrapped__", None) is f]  # (wrapped: lists)
        if f"lax.{n}(" in src or f"lax.{n}," in src or any(
                f"fnp.{a}(" in src or f"fnp.{a}," in src or f"fnp.{a}]" in src for a in aliases):
            continue
        missing.append(n)
    assert missing == ["scatter_add"], f"lax functions with no vmap table row: {missing}"


def test_integer_floor_divide_and_remainder_stay_integer():
    """NumPy: int // int and int % int are ints (and usable as indices); so per slice, and so
    under vmap."""
    i = np.arange(12).reshape(3, 4)
    out = fxad.vmap(lambda v: (v // 3, v % 3, fnp.remainder(v, 2), fnp.floor_divide(v, 2)))(i)
    for got, want in zip(out, (i // 3, i % 3, np.remainder(i, 2), np.floor_divide(i, 2))):
        assert got.dtype == want.dtype, f"{got.dtype} != {want.dtype}"
        np.testing.assert_array_equal(got, want)


def test_mixed_numpy_bool_and_traced_bool_operators():
    """`ndarray & tracer` and `ndarray | tracer` (NumPy bools on the left) behave like
    `tracer & ndarray`: NumPy dispatches np.bitwise_and/np.bitwise_or to the tracer."""
    m = np.array([True, False, True, False])
    t = np.array([[True, True, False, False]] * 3)
    np.testing.assert_array_equal(fxad.vmap(lambda y: m & y)(t), m & t)
    np.testing.assert_array_equal(fxad.vmap(lambda y: m | y)(t), m | t)


# --- error behaviour ----------------------------------------------------------------------------

def test_inconsistent_sizes_raise():
    with pytest.raises(fxad.errors.FxadValueError):
        fxad.vmap(fnp.add)(np.ones((3, 2)), np.ones((4, 2)))


def test_out_axes_none_on_batched_output_raises():
    with pytest.raises(fxad.errors.FxadValueError):
        fxad.vmap(fnp.sin, out_axes=None)(np.ones((3, 2)))


def test_in_axes_out_of_range_raises():
    with pytest.raises(fxad.errors.FxadValueError):
        fxad.vmap(fnp.sin, in_axes=2)(np.ones((3, 2)))


def test_out_axes_none_for_unbatched_output():
    w = np.arange(4.0)
    out = fxad.vmap(lambda x, w: (x * 2, w + 1), in_axes=(0, None), out_axes=(0, None))(
        np.ones((3, 2)), w)
    np.testing.assert_array_equal(out[0], 2 * np.ones((3, 2)))
    np.testing.assert_array_equal(out[1], w + 1)


# --- compositions --------------------------------------------------------------------------------

def f_mix(x, y):
    return fnp.sum(fnp.tanh(x) * y, axis=-1) + fnp.max(x) * fnp.mean(y ** 2)


@HSET
@given(seed=st.integers(0, 2**32 - 1), ax_out=st.sampled_from([0, 1, -1]),
       ax_in=st.sampled_from([0, 1, -1]))
def test_nested_vmap(seed, ax_out, ax_in):
    rng = np.random.default_rng(seed)
    # outer batch 2, inner batch 3, per-example (4,) and (4,)
    x = rng.normal(size=(2, 3, 4))
    y = rng.normal(size=(2, 3, 4))
    xo = np.moveaxis(x, 0, ax_out)  # outer axis placed at ax_out
    yo = y  # y: outer axis 0
    # inner axis of each outer slice moved to ax_in
    inner = fxad.vmap(f_mix, in_axes=(ax_in, 0))
    vv = fxad.vmap(lambda a, b: inner(np.moveaxis(a, 0, ax_in) if not isinstance(a, fxad.Tracer)
                                      else fnp.moveaxis(a, 0, ax_in), b),
                   in_axes=(ax_out, 0))
    out = vv(xo, yo)
    expected = np.array([[f_mix(x[i, j], y[i, j]) for j in range(3)] for i in range(2)])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_nested_vmap_outer_product_style():
    x, y = np.arange(3.0), np.arange(4.0) + 1.0
    out = fxad.vmap(fxad.vmap(lambda a, b: a * b + fnp.sin(a), in_axes=(None, 0)),
                    in_axes=(0, None))(x, y)
    np.testing.assert_allclose(out, x[:, None] * y[None, :] + np.sin(x)[:, None])


def test_nested_vmap_out_axes():
    x = np.random.default_rng(0).normal(size=(2, 3, 4))
    out = fxad.vmap(fxad.vmap(lambda v: v * 2.0, out_axes=1), in_axes=1, out_axes=-1)(x)
    # inner maps axis 0 of the (2, 4) slices, placing it at 1: (4, 2); outer at -1: (4, 2, 3)
    expected = np.stack([(x[:, j, :] * 2.0).T for j in range(3)], axis=-1)
    assert out.shape == expected.shape == (4, 2, 3)
    np.testing.assert_allclose(out, expected)


def test_triple_nested_vmap():
    x = np.random.default_rng(1).normal(size=(2, 3, 4, 5))
    out = fxad.vmap(fxad.vmap(fxad.vmap(fnp.sum)))(x)
    np.testing.assert_allclose(out, x.sum(-1))


def test_pytree_in_axes_dict_with_none():
    rng = np.random.default_rng(2)
    params = {"w": rng.normal(size=(4, 5)), "b": rng.normal(size=(3, 4))}

    def f(p, x):
        return fnp.tanh(p["w"] @ x + p["b"])

    xs = rng.normal(size=(5, 3))  # batch on axis 1
    out = fxad.vmap(f, in_axes=({"w": None, "b": 0}, 1))(params, xs)
    expected = np.stack([np.tanh(params["w"] @ xs[:, i] + params["b"][i]) for i in range(3)])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_pytree_in_axes_tuple_with_none():
    rng = np.random.default_rng(3)
    a, b, c = rng.normal(size=(4,)), rng.normal(size=(4, 3)), rng.normal(size=(3, 4))

    def f(pair, c):
        u, v = pair
        return {"dot": fnp.dot(u, v), "sum": u + c}

    out = fxad.vmap(f, in_axes=((None, 1), 0), out_axes={"dot": 0, "sum": 1})((a, b), c)
    exp_dot = np.array([a @ b[:, i] for i in range(3)])
    exp_sum = np.stack([a + c[i] for i in range(3)], axis=1)
    np.testing.assert_allclose(out["dot"], exp_dot)
    np.testing.assert_allclose(out["sum"], exp_sum)


def test_pytree_in_axes_list_prefix():
    x, y = np.ones((3, 2)), np.arange(2.0)
    out = fxad.vmap(lambda x, y: x + y, in_axes=[0, None])(x, y)
    np.testing.assert_allclose(out, x + y)


def test_axis_size_with_no_batched_input():
    w = np.arange(4.0)
    out = fxad.vmap(lambda w: fnp.sin(w) * 2.0, in_axes=None, axis_size=3)(w)
    np.testing.assert_allclose(out, np.broadcast_to(np.sin(w) * 2.0, (3, 4)))
    out = fxad.vmap(lambda: np.ones(2), axis_size=5)()
    assert out.shape == (5, 2)


def test_axis_size_mismatch_raises():
    with pytest.raises(fxad.errors.FxadValueError):
        fxad.vmap(fnp.sin, axis_size=4)(np.ones((3, 2)))


def test_no_batched_input_without_axis_size_raises():
    with pytest.raises(fxad.errors.FxadValueError):
        fxad.vmap(fnp.sin, in_axes=None)(np.ones((3, 2)))


def g_scalar(x):
    return fnp.sum(fnp.sin(x) * x ** 2) + fnp.prod(fnp.cos(x[:2])) + fnp.max(x)


def g_grad(x):
    """Analytic gradient of g_scalar (x has distinct entries, so max has one winner)."""
    g = np.cos(x) * x ** 2 + 2 * x * np.sin(x)
    c = np.cos(x[:2])
    g[0] += -np.sin(x[0]) * c[1]
    g[1] += -np.sin(x[1]) * c[0]
    g[np.argmax(x)] += 1.0
    return g


@HSET
@given(seed=st.integers(0, 2**32 - 1), axis=st.sampled_from([0, 1, -1]))
def test_vmap_of_grad(seed, axis):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3, 5))
    out = fxad.vmap(fxad.grad(g_scalar), in_axes=axis if axis == 0 else 1, out_axes=axis)(
        X if axis == 0 else X.T)
    expected = np.stack([g_grad(x) for x in X], axis=axis)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)


@HSET
@given(seed=st.integers(0, 2**32 - 1))
def test_grad_of_sum_of_vmap(seed):
    X = np.random.default_rng(seed).normal(size=(3, 5))
    out = fxad.grad(lambda X: fnp.sum(fxad.vmap(g_scalar)(X)))(X)
    np.testing.assert_allclose(out, np.stack([g_grad(x) for x in X]), rtol=1e-10, atol=1e-12)


def test_grad_of_vmap_in_axes_1():
    X = np.random.default_rng(4).normal(size=(5, 3))
    out = fxad.grad(lambda X: fnp.sum(fxad.vmap(g_scalar, in_axes=1)(X) ** 2))(X)
    vals = np.array([g_scalar(X[:, i]) for i in range(3)])
    expected = np.stack([2 * vals[i] * g_grad(X[:, i]) for i in range(3)], axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)


def h_vec(x):
    return fnp.tanh(x) * fnp.sum(x ** 2)


def h_jac(x):
    t = np.tanh(x)
    return np.diag((1 - t ** 2) * np.sum(x ** 2)) + np.outer(t, 2 * x)


@HSET
@given(seed=st.integers(0, 2**32 - 1))
def test_jvp_of_vmap(seed):
    rng = np.random.default_rng(seed)
    X, V_ = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    out, tout = fxad.jvp(fxad.vmap(h_vec), (X,), (V_,))
    np.testing.assert_allclose(out, np.stack([h_vec(x) for x in X]), rtol=1e-12)
    np.testing.assert_allclose(tout, np.stack([h_jac(x) @ v for x, v in zip(X, V_)]),
                               rtol=1e-10, atol=1e-12)


@HSET
@given(seed=st.integers(0, 2**32 - 1))
def test_vmap_of_jvp(seed):
    rng = np.random.default_rng(seed)
    X, V_ = rng.normal(size=(3, 4)), rng.normal(size=(4, 3))  # tangents batched on axis 1
    out, tout = fxad.vmap(lambda x, v: fxad.jvp(h_vec, (x,), (v,)), in_axes=(0, 1))(X, V_)
    np.testing.assert_allclose(out, np.stack([h_vec(x) for x in X]), rtol=1e-12)
    np.testing.assert_allclose(tout, np.stack([h_jac(x) @ V_[:, i] for i, x in enumerate(X)]),
                               rtol=1e-10, atol=1e-12)


def test_vmap_of_jvp_unbatched_primal():
    rng = np.random.default_rng(5)
    x, Vs = rng.normal(size=4), rng.normal(size=(3, 4))
    tout = fxad.vmap(lambda v: fxad.jvp(h_vec, (x,), (v,))[1])(Vs)
    np.testing.assert_allclose(tout, Vs @ h_jac(x).T, rtol=1e-10, atol=1e-12)


@HSET
@given(seed=st.integers(0, 2**32 - 1))
def test_vmap_of_linearized_function(seed):
    rng = np.random.default_rng(seed)
    x, Vs = rng.normal(size=4), rng.normal(size=(3, 4))
    y, f_jvp = fxad.linearize(h_vec, x)
    np.testing.assert_allclose(y, h_vec(x))
    out = fxad.vmap(lambda v: fxad.linearize(h_vec, x)[1](v))(Vs)
    np.testing.assert_allclose(out, Vs @ h_jac(x).T, rtol=1e-10, atol=1e-12)
    out2 = fxad.vmap(f_jvp, in_axes=1, out_axes=1)(Vs.T)
    np.testing.assert_allclose(out2, h_jac(x) @ Vs.T, rtol=1e-10, atol=1e-12)


def test_vmap_of_vjp():
    rng = np.random.default_rng(6)
    x, Cs = rng.normal(size=4), rng.normal(size=(3, 4))
    _, f_vjp = fxad.vjp(h_vec, x)
    out = fxad.vmap(lambda c: f_vjp(c)[0])(Cs)
    np.testing.assert_allclose(out, Cs @ h_jac(x), rtol=1e-10, atol=1e-12)


def logistic_loss(w, x, y):
    z = fnp.dot(x, w)
    return fnp.log1p(fnp.exp(-fnp.abs(z))) + fnp.maximum(z, 0.0) - y * z


@HSET
@given(seed=st.integers(0, 2**32 - 1))
def test_per_example_gradients_logistic_regression(seed):
    rng = np.random.default_rng(seed)
    w, X = rng.normal(size=5), rng.normal(size=(7, 5))
    y = (rng.uniform(size=7) < 0.5).astype(np.float64)
    out = fxad.vmap(fxad.grad(logistic_loss), in_axes=(None, 0, 0))(w, X, y)
    loop = np.stack([fxad.grad(logistic_loss)(w, X[i], y[i]) for i in range(7)])
    analytic = (1.0 / (1.0 + np.exp(-X @ w)) - y)[:, None] * X
    np.testing.assert_allclose(out, loop, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out, analytic, rtol=1e-10, atol=1e-12)


def test_per_example_gradients_batch_axis_1():
    rng = np.random.default_rng(7)
    w, X, y = rng.normal(size=5), rng.normal(size=(5, 6)), (rng.uniform(size=6) < .5) * 1.0
    out = fxad.vmap(fxad.grad(logistic_loss), in_axes=(None, 1, 0), out_axes=1)(w, X, y)
    loop = np.stack([fxad.grad(logistic_loss)(w, X[:, i], y[i]) for i in range(6)], axis=1)
    np.testing.assert_allclose(out, loop, rtol=1e-12, atol=1e-14)


# scatter_add (the transpose of getitem) is reached through grad of an indexing function.

def _index_grad_ref(x_shape, idx_fn, x, w):
    """Gradient of sum(w * x[idx]) by hand: np.add.at of w into zeros."""
    g = np.zeros(x_shape)
    np.add.at(g, idx_fn(), w)
    return g


@pytest.mark.parametrize("index", [
    lambda i: (i,),
    lambda i: (slice(None), i),
    lambda i: (slice(1, None), i, 2),
    lambda i: (i, slice(None), i + 1),  # non-adjacent advanced indices
    lambda i: (Ellipsis, i),
], ids=["rows", "cols", "mixed", "nonadjacent", "ellipsis"])
@pytest.mark.parametrize("x_ax,i_ax", [(0, None), (None, 0), (0, 0), (None, 1), (-1, 1)],
                         ids=["x", "idx", "both", "idx_axis1", "both_axes_last"])
def test_vmap_grad_through_scatter_add(index, x_ax, i_ax):
    rng = np.random.default_rng(8)
    x_shape = (4, 4, 4)
    X = rng.normal(size=(3,) + x_shape)
    I = np.array([[0, 2, 2], [1, 1, 0], [2, 0, 0]])  # repeated indices: add.at accumulates
    W = rng.normal(size=np.zeros(x_shape)[index(I[0])].shape)

    def loss(x, i):
        return fnp.sum(fnp.sin(x[index(i)]) * W)

    xs = X[0] if x_ax is None else np.moveaxis(X, 0, x_ax)
    idx = I[0] if i_ax is None else np.moveaxis(I, 0, i_ax)
    out = fxad.vmap(fxad.grad(loss), in_axes=(x_ax, i_ax))(xs, idx)
    expected = []
    for b in range(3):
        xb = X[0] if x_ax is None else X[b]
        ib = I[0] if i_ax is None else I[b]
        g = np.zeros(x_shape)
        np.add.at(g, index(ib), np.cos(xb[index(ib)]) * W)
        expected.append(g)
    np.testing.assert_allclose(out, np.stack(expected), rtol=1e-12, atol=1e-14)


def test_vmap_grad_scatter_add_batch_axis_last():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(5, 4, 3))  # batch axis last
    I = np.array([[0, 0, 4], [1, 3, 3]]).T  # (3, 2): batch axis 0
    loss = lambda x, i: fnp.sum(x[i] ** 2)
    out = fxad.vmap(fxad.grad(loss), in_axes=(-1, 0), out_axes=-1)(X, I)
    expected = []
    for b in range(3):
        g = np.zeros((5, 4))
        np.add.at(g, I[b], 2 * X[..., b][I[b]])
        expected.append(g)
    np.testing.assert_allclose(out, np.stack(expected, axis=-1), rtol=1e-12)


def test_vmap_of_jacrev_and_hessian():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(3, 4))
    J = fxad.vmap(fxad.jacrev(h_vec))(X)
    np.testing.assert_allclose(J, np.stack([h_jac(x) for x in X]), rtol=1e-10, atol=1e-12)
    J2 = fxad.vmap(fxad.jacfwd(h_vec))(X)
    np.testing.assert_allclose(J2, J, rtol=1e-10, atol=1e-12)
    H = fxad.vmap(fxad.hessian(lambda x: fnp.sum(x ** 3)))(X)
    np.testing.assert_allclose(H, np.stack([np.diag(6 * x) for x in X]), rtol=1e-12)


def test_numpy_array_indexed_by_traced_indices_through_take():
    """take/take_along_axis accept a plain NumPy array with traced (batched) indices."""
    a = np.arange(12.0).reshape(3, 4)
    idx = np.array([0, 2, 1])
    got = fxad.vmap(lambda i: fnp.take(a, i, axis=1))(idx)
    np.testing.assert_array_equal(got, np.stack([a[:, i] for i in idx]))
    got = fxad.vmap(lambda i: fnp.take(a, i))(idx)
    np.testing.assert_array_equal(got, a.ravel()[idx])
    ii = np.array([[[1], [0], [3]], [[2], [2], [0]]])
    got = fxad.vmap(lambda i: fnp.take_along_axis(a, i, 1))(ii)
    np.testing.assert_array_equal(got, np.stack([np.take_along_axis(a, i, 1) for i in ii]))


def test_python_scalars_stay_weak_under_vmap_and_make_jaxpr():
    x32 = np.ones((2, 2), np.float32)
    f = lambda x, s: x * s  # noqa: E731
    assert fxad.vmap(f, in_axes=(0, None))(x32, 2.0).dtype == np.float32
    assert fxad.make_jaxpr(f)(x32, 2.0).out_avals[0].dtype == np.float32
    with pytest.raises(ValueError, match="scalar, which has no axis to map over; use None"):
        fxad.vmap(f, in_axes=(0, 0))(x32, 2.0)
